package ib_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/ib"
	"github.com/fabricmap/fabricmap/ib/ibtest"
)

// stream gives h's text as a reader, written as it is read (never held whole); the caller closes it.
func stream(h ibtest.Hostile) *io.PipeReader {
	r, w := io.Pipe()
	go func() { w.CloseWithError(h.Write(w)) }()
	return r
}

func TestParseRefusesHostileCaptures(t *testing.T) {
	for _, tc := range []struct {
		name      string
		in        ibtest.Hostile
		limits    ib.Limits
		wantLimit string
	}{
		// The capture: a parser keeping 64 KiB a description took 446 KB of gzip to 1.2 GB of heap.
		{"65,000-byte descriptions", ibtest.SwitchesNamingCAs(65_000, 4<<20), ib.Limits{}, "DescriptionBytes"},
		{"a description just over 1 KiB", ibtest.CARecords(ib.MaxDescriptionBytes+1, 64<<10), ib.Limits{}, "DescriptionBytes"},
		{"one line of 1 MiB", ibtest.LongLine(1 << 20), ib.Limits{}, "DescriptionBytes"},
		{"a gzip bomb's text past the default cap", ibtest.RepeatedRecord(ib.DefaultMaxTextBytes + 1<<20), ib.Limits{}, "TextBytes"},
		// Smaller caps than the defaults, so that the test stays fast: the same judgement at any scale.
		{"1 KiB descriptions past what is kept", ibtest.SwitchesNamingCAs(1000, 8<<20), ib.Limits{TextBytes: 16 << 20, KeptBytes: 4 << 20}, "KeptBytes"},
		{"many records past what is kept", ibtest.CARecords(16, 8<<20), ib.Limits{TextBytes: 16 << 20, KeptBytes: 8 << 20}, "KeptBytes"},
		{"many records past the text cap", ibtest.CARecords(16, 3<<20), ib.Limits{TextBytes: 2 << 20, KeptBytes: 1 << 30}, "TextBytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := stream(tc.in)
			defer r.Close()
			f, _, err := ib.ParseContext(context.Background(), r, ib.ParseOptions{Limits: tc.limits})
			if f != nil {
				t.Errorf("a fabric of %d switches and %d CAs returned with %v: want none", len(f.Switches), len(f.CAs), err)
			}
			var lim *ib.LimitError
			if !errors.Is(err, ib.ErrOverLimit) || !errors.As(err, &lim) {
				t.Fatalf("err = %v, want a *LimitError", err)
			}
			if lim.Limit != tc.wantLimit || lim.Line < 1 || lim.Max <= 0 {
				t.Errorf("refused for %+v, want Limits.%s with its line and value", lim, tc.wantLimit)
			}
			if !strings.Contains(err.Error(), "Limits."+tc.wantLimit) || !strings.Contains(err.Error(), ib.ByteSize(lim.Max)) {
				t.Errorf("error %q does not name the limit and its value", err)
			}
		})
	}
}

// TestParseWithinLimits checks that the limits refuse no real capture, and that each holds at its value: a
// capture of exactly TextBytes is read, one byte more is refused, and so for a description.
func TestParseWithinLimits(t *testing.T) {
	var scale bytes.Buffer
	if _, err := ibtest.Scale(2048).WriteTo(&scale); err != nil {
		t.Fatal(err)
	}
	const desc = "MF0;ib-leaf-01:MQM9700/U1"
	doc := "switchguid=0xb83fd20300a10002\n" +
		"Switch\t65 \"S-b83fd20300a10002\"\t\t# \"" + desc + "\" enhanced port 0 lid 2 lmc 0\n" +
		"[1]\t\"S-b83fd20300a10003\"[1]\t\t# \"" + desc + "\" lid 3 4xNDR\n"
	for _, tc := range []struct {
		name   string
		in     string
		limits ib.Limits
		want   string // the limit passed; "" for none
	}{
		{"a 2,048-host capture, default limits", scale.String(), ib.Limits{}, ""},
		{"text of exactly the cap", doc, ib.Limits{TextBytes: int64(len(doc)), KeptBytes: 1 << 20}, ""},
		{"text one byte over the cap", doc, ib.Limits{TextBytes: int64(len(doc)) - 1, KeptBytes: 1 << 20}, "TextBytes"},
		{"text without a cap", doc, ib.Limits{TextBytes: -1}, ""},
		{"descriptions of exactly the cap", doc, ib.Limits{DescriptionBytes: len(desc)}, ""},
		{"a description one byte over the cap", doc, ib.Limits{DescriptionBytes: len(desc) - 1}, "DescriptionBytes"},
		{"keeping too much", doc, ib.Limits{KeptBytes: 100}, "KeptBytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _, err := ib.ParseContext(context.Background(), strings.NewReader(tc.in), ib.ParseOptions{Limits: tc.limits})
			var lim *ib.LimitError
			got := ""
			if errors.As(err, &lim) {
				got = lim.Limit
			} else if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("limit passed (-want +got):\n%s", diff)
			}
			if (f == nil) != (tc.want != "") {
				t.Errorf("fabric %v with error %v", f != nil, err)
			}
		})
	}
}
