package web

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"
)

func TestStart(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithCancel(context.Background())
	addr, err := Start(ctx, "127.0.0.1:0", Handler(fixture), log)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		run     func() error
		wantErr bool
	}{
		{"serves", func() error {
			res, err := http.Get("http://" + addr.String() + "/api/tree")
			if err == nil {
				res.Body.Close()
			}
			return err
		}, false},
		{"a taken port is an error at start", func() error {
			_, err := Start(ctx, addr.String(), Handler(fixture), log)
			return err
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.run(); (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
		})
	}
	cancel()
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := http.Get("http://" + addr.String() + "/")
		if err != nil {
			break // shut down with its context
		}
		res.Body.Close()
		if time.Now().After(deadline) {
			t.Fatal("the server still answers after its context ended")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
