package aggregatorapp

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/sources/clouds"
	"github.com/fabricmap/fabricmap/sources/ibfabric"
	"github.com/fabricmap/fabricmap/sources/labels"
	"github.com/fabricmap/fabricmap/sources/ufm"
)

// The capture's former flag names still set it; the sources come from the one list in their order.
func TestSourceFlags(t *testing.T) {
	for name, args := range map[string][]string{
		"current":    {"--capture-file=/c/fabric.txt", "--capture-recheck=5m"},
		"deprecated": {"--ibnetdiscover-file=/c/fabric.txt", "--fabric-recheck=5m"},
	} {
		t.Run(name, func(t *testing.T) {
			var srcs sources.Options
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			fs.SetOutput(io.Discard)
			srcs.AddFlags(fs)
			srcs.AddPollFlags(fs)
			addDeprecatedCaptureFlags(fs, &srcs.Capture)
			args := append(args, "--ufm-url=https://ufm.example.com", "--ufm-token-file=/t", "--label-source-keys=a,b")
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(ibfabric.CaptureOptions{File: "/c/fabric.txt", Recheck: 5 * time.Minute}, srcs.Capture); diff != "" {
				t.Errorf("capture options (-want +got):\n%s", diff)
			}
			specs, err := srcs.Specs(sources.Deps{Log: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range specs {
				got = append(got, s.Source.Name())
			}
			if diff := cmp.Diff([]string{ufm.Name, ibfabric.Name, labels.Name}, got); diff != "" {
				t.Errorf("sources (-want +got):\n%s", diff)
			}
		})
	}
}

// A negative --unplaced-label-hold stops the aggregator before it connects, naming the flag.
func TestUnplacedLabelHoldFlag(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"negative", []string{"--unplaced-label-hold=-1m"}, "--unplaced-label-hold -1m0s is negative"},
		{"not a duration", []string{"--unplaced-label-hold=soon"}, `invalid argument "soon" for "--unplaced-label-hold"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Main(nil)(t.Context(), tc.args)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Main(%v) = %v, want an error with %q", tc.args, err, tc.want)
			}
		})
	}
}

// The aggregator takes the cloud sources' flags only from the Extra its main gives: the released binaries'
// (clouds.Kinds) parse --from-aws and go on to the next check; the demo's (nil) refuse it as unknown.
func TestExtraSourceFlags(t *testing.T) {
	args := []string{"--from-aws", "--aws-region=us-east-1", "--unplaced-label-hold=-1m"}
	for _, tc := range []struct {
		name  string
		extra sources.Extra
		want  string
	}{
		{"clouds", clouds.Kinds, "--unplaced-label-hold -1m0s is negative"},
		{"none", nil, "unknown flag: --from-aws"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Main(tc.extra)(t.Context(), args)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Main(%v) = %v, want an error with %q", args, err, tc.want)
			}
		})
	}
}
