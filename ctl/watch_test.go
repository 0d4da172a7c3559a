package ctl

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe to read while printOnChange writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestPrintOnChange(t *testing.T) {
	for _, tc := range []struct {
		output  string
		renders []string // what each render returns, in turn; "!" fails
		want    string
	}{
		{"yaml", []string{"a: 1\n", "a: 1\n", "a: 2\n"}, "a: 1\n---\na: 2\n"},
		{"json", []string{"{}\n", "!", "{\"a\":1}\n"}, "{}\n{\"a\":1}\n"},
		{"dot", []string{"digraph{}\n", "digraph{}\n"}, "digraph{}\n"},
		{"tree", []string{"x\n", "y\n"}, "x\n\n# "},
	} {
		t.Run(tc.output, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			changes := make(chan struct{})
			var out, errw syncBuffer
			var calls atomic.Int32
			render := func(w, _ io.Writer) error {
				r := tc.renders[calls.Add(1)-1]
				if r == "!" {
					return fmt.Errorf("API server away")
				}
				_, err := io.WriteString(w, r)
				return err
			}
			done := make(chan error, 1)
			go func() { done <- printOnChange(ctx, changes, render, tc.output, &out, &errw) }()
			for range tc.renders {
				changes <- struct{}{}
			}
			deadline := time.Now().Add(10 * time.Second)
			for int(calls.Load()) < len(tc.renders) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(50 * time.Millisecond)
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("printOnChange returned %v after the context ended", err)
			}
			if !strings.HasPrefix(out.String(), tc.want) {
				t.Errorf("printed %q, want it to start with %q", out.String(), tc.want)
			}
			if strings.Contains(strings.Join(tc.renders, ""), "!") != strings.Contains(errw.String(), "API server away") {
				t.Errorf("stderr %q", errw.String())
			}
		})
	}
}
