package discovery

import (
	"io"
	"testing"

	"github.com/spf13/pflag"
)

// --lldp-listen takes a duration of whole seconds; the deprecated --lldp-listen-seconds its number.
func TestLLDPListenFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
		err  bool
	}{
		{nil, 35, false},
		{[]string{"--lldp-listen", "1m"}, 60, false},
		{[]string{"--lldp-listen=0s"}, 0, false},
		{[]string{"--lldp-listen-seconds", "12"}, 12, false},
		{[]string{"--lldp-listen", "1500ms"}, 0, true},
		{[]string{"--lldp-listen", "-5s"}, 0, true},
		{[]string{"--lldp-listen", "35"}, 0, true},
	} {
		var c Config
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		c.AddFlags(fs)
		err := fs.Parse(tc.args)
		if (err != nil) != tc.err || (!tc.err && c.LLDPListenSeconds != tc.want) {
			t.Errorf("%q: %d s, err %v; want %d s, error %v", tc.args, c.LLDPListenSeconds, err, tc.want, tc.err)
		}
	}
}
