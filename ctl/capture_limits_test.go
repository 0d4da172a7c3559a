package ctl

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabricmap/fabricmap/ib/ibtest"
)

// fabricmap topology reads a capture through the aggregator's reader, within the same limits: a hostile
// capture (a gzip bomb, descriptions of 65,000 bytes) is refused with an error naming the file, the limit and
// the flag that raises it, and prints no topology.
func TestTopologyRefusesHostileCaptures(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   ibtest.Hostile
		args []string
		want []string
	}{
		{"65,000-byte descriptions", ibtest.SwitchesNamingCAs(65_000, 4<<20), nil,
			[]string{"Limits.DescriptionBytes", "is it a capture?"}},
		{"a gzip bomb", ibtest.RepeatedRecord(16 << 20), []string{"--capture-max-mib", "8"},
			[]string{"over the limit of 8 MiB (Limits.TextBytes)", "raise --capture-max-mib"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "capture.gz")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			zw := gzip.NewWriter(f)
			if err := tc.in.Write(zw); err != nil {
				t.Fatal(err)
			}
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			out, _, err := run(t, append([]string{"topology", "--from-ibnetdiscover", path, "-o", "json"}, tc.args...)...)
			if err == nil {
				t.Fatalf("no error; output %q", out)
			}
			for _, s := range append([]string{"--from-ibnetdiscover " + path, "the capture is refused"}, tc.want...) {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if strings.TrimSpace(out) != "" {
				t.Errorf("a refused capture printed %q", out)
			}
		})
	}
}
