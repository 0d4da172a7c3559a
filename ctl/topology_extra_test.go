package ctl

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/sources/clouds"
)

// `fabricmap topology` offers the sources of the Extra its main gives and no other: the released CLI's
// (clouds.Kinds) has --from-aws and names the clouds in its usage line and its error without a source; the
// demo's (nil) names only the reports and package sources' own sources, and refuses --from-aws as unknown.
func TestTopologyExtraSources(t *testing.T) {
	const own = "--from-ibnetdiscover FILE | --from-reports DIR | --from-ufm URL | --from-ufm-dump DIR | --from-labels KEYS"
	for _, tc := range []struct {
		name     string
		extra    sources.Extra
		use      string
		fromAWS  string // what `topology --from-aws` with a Nodes file that is not there fails with
		noSource string
	}{
		{name: "clouds", extra: clouds.Kinds,
			use:      "topology (" + own + " | --from-aws | --from-gcp PROJECT | --from-oci COMPARTMENT)",
			fromAWS:  "--from-aws aws",
			noSource: "give one of " + own + " | --from-aws | --from-gcp PROJECT | --from-oci COMPARTMENT"},
		{name: "none", extra: nil,
			use:      "topology (" + own + ")",
			fromAWS:  "unknown flag: --from-aws",
			noSource: "give one of " + own},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := NewRoot(tc.extra)
			topo, _, err := root.Find([]string{"topology"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.use, topo.Use); diff != "" {
				t.Errorf("usage line (-want +got):\n%s", diff)
			}
			for _, c := range []struct {
				args []string
				want string
			}{
				{[]string{"topology"}, tc.noSource},
				{[]string{"topology", "--from-aws", "--aws-region=us-east-1", "--aws-endpoint=http://127.0.0.1:1", "--nodes-file=/nonexistent"}, tc.fromAWS},
			} {
				root := NewRoot(tc.extra)
				var out bytes.Buffer
				root.SetOut(&out)
				root.SetErr(&out)
				root.SetArgs(c.args)
				err := root.ExecuteContext(context.Background())
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("%v: err = %v, want one with %q", c.args, err, c.want)
				}
			}
		})
	}
}
