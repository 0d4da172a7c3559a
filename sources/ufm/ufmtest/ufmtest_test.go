package ufmtest

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/sources/ufm"
)

// The stand-in answers fabricmap's client as the dump it serves reads: the same fabric both ways, for a dump
// with ports.json and one without; wrong credentials are refused.
func TestHandlerServesTheDumpAsUFM(t *testing.T) {
	for _, dir := range []string{"../testdata/railopt", "../testdata/chassis", "../testdata/lab"} {
		t.Run(dir, func(t *testing.T) {
			answers, err := DumpAnswers(dir)
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(Handler("u", "p", answers))
			t.Cleanup(srv.Close)
			want, err := ufm.LoadDump(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				password string
				fails    bool
			}{{"p", false}, {"wrong", true}} {
				c, err := ufm.NewClient(ufm.Config{BaseURL: srv.URL, Username: "u", Password: tc.password})
				if err != nil {
					t.Fatal(err)
				}
				got, err := c.Fabric(context.Background())
				if (err != nil) != tc.fails {
					t.Fatalf("password %q: err = %v, want failure %v", tc.password, err, tc.fails)
				}
				if err == nil {
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("served fabric differs from the dump (-dump +served):\n%s", diff)
					}
				}
			}
		})
	}
}
