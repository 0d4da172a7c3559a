package clouds

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/fabricmap/fabricmap/sources"
	"github.com/fabricmap/fabricmap/wellknown"
)

// TestNamesAreWellKnownOrder: the registry with the clouds is wellknown.SourceOrder, the default priority the
// pipeline reads without linking the registry; a source added to one and not the other, or moved, fails here.
func TestNamesAreWellKnownOrder(t *testing.T) {
	if diff := cmp.Diff(wellknown.SourceOrder, sources.Names(Kinds)); diff != "" {
		t.Errorf("the registry's sources differ from wellknown.SourceOrder (-wellknown +registry):\n%s", diff)
	}
}

// TestKindsOwnTheirSettings: each call of Kinds binds fresh settings, so that two binaries' flag sets (two
// roots of the CLI in one test process) do not share a value; the flags set the source they name.
func TestKindsOwnTheirSettings(t *testing.T) {
	first, second := sources.NewOptions(Kinds), sources.NewOptions(Kinds)
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	first.AddFlags(fs)
	first.AddPollFlags(fs)
	if err := fs.Parse([]string{"--from-gcp=ml-train-1", "--from-oci=ocid1.compartment.oc1..aaaa"}); err != nil {
		t.Fatal(err)
	}
	given := func(o *sources.Options) map[string]bool {
		out := map[string]bool{}
		for _, k := range o.Kinds() {
			out[k.Name] = k.Settings.Given()
		}
		return out
	}
	for _, tc := range []struct {
		name string
		opts *sources.Options
		want map[string]bool
	}{
		{"parsed", &first, map[string]bool{"ufm": false, "ibnetdiscover": false, "labels": false, "aws": false, "gcp": true, "oci": true}},
		{"another call", &second, map[string]bool{"ufm": false, "ibnetdiscover": false, "labels": false, "aws": false, "gcp": false, "oci": false}},
	} {
		if diff := cmp.Diff(tc.want, given(tc.opts)); diff != "" {
			t.Errorf("%s: sources given (-want +got):\n%s", tc.name, diff)
		}
	}
}
