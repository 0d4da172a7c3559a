package metricdef

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
)

// family is what a test compares of a gathered metric family.
type family struct {
	Name, Help, Type string
	Labels           []string
	Buckets          []float64
}

// gathered summarises the one family reg gathers.
func gathered(t *testing.T, reg *prometheus.Registry) family {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(mfs) != 1 || len(mfs[0].GetMetric()) != 1 {
		t.Fatalf("gathered %v, want one family of one series", mfs)
	}
	mf, series := mfs[0], mfs[0].GetMetric()[0]
	f := family{Name: mf.GetName(), Help: mf.GetHelp(), Type: mf.GetType().String()}
	for _, l := range series.GetLabel() {
		f.Labels = append(f.Labels, l.GetName())
	}
	for _, b := range series.GetHistogram().GetBucket() {
		f.Buckets = append(f.Buckets, b.GetUpperBound())
	}
	return f
}

func TestRegisterBuildsEachKind(t *testing.T) {
	var (
		counter    prometheus.Counter
		counterVec *prometheus.CounterVec
		gauge      prometheus.Gauge
		gaugeVec   *prometheus.GaugeVec
		hist       prometheus.Histogram
		histVec    *prometheus.HistogramVec
	)
	for _, tc := range []struct {
		name string
		def  Def
		use  func() // makes one series of what Register stored in def.Into
		want family
	}{
		{
			name: "counter",
			def:  Def{Kind: Counter, Name: "writes_total", Help: "Writes.", Into: &counter},
			use:  func() { counter.Inc() },
			want: family{Name: "fabricmap_test_writes_total", Help: "Writes.", Type: "COUNTER"},
		},
		{
			name: "counter with labels",
			def:  Def{Kind: Counter, Name: "conflicts_total", Help: "Conflicts.", Labels: []string{"kept", "dropped"}, Into: &counterVec},
			use:  func() { counterVec.WithLabelValues("a", "b").Inc() },
			want: family{Name: "fabricmap_test_conflicts_total", Help: "Conflicts.", Type: "COUNTER", Labels: []string{"dropped", "kept"}},
		},
		{
			name: "gauge",
			def:  Def{Kind: Gauge, Name: "reports", Help: "Reports.", Into: &gauge},
			use:  func() { gauge.Set(3) },
			want: family{Name: "fabricmap_test_reports", Help: "Reports.", Type: "GAUGE"},
		},
		{
			name: "gauge with labels",
			def:  Def{Kind: Gauge, Name: "domains", Help: "Domains, by tier.", Labels: []string{"tier"}, Into: &gaugeVec},
			use:  func() { gaugeVec.WithLabelValues("1").Set(2) },
			want: family{Name: "fabricmap_test_domains", Help: "Domains, by tier.", Type: "GAUGE", Labels: []string{"tier"}},
		},
		{
			name: "histogram",
			def: Def{Kind: Histogram, Name: "latency_seconds", Help: "Latency.",
				Buckets: prometheus.ExponentialBuckets(0.05, 2, 3), Into: &hist},
			use:  func() { hist.Observe(0.1) },
			want: family{Name: "fabricmap_test_latency_seconds", Help: "Latency.", Type: "HISTOGRAM", Buckets: []float64{0.05, 0.1, 0.2}},
		},
		{
			name: "histogram with labels",
			def: Def{Kind: Histogram, Name: "probe_duration_seconds", Help: "Probe time.", Labels: []string{"probe"},
				Buckets: []float64{0.001, 1}, Into: &histVec},
			use: func() { histVec.WithLabelValues("lldp").Observe(0.5) },
			want: family{Name: "fabricmap_test_probe_duration_seconds", Help: "Probe time.", Type: "HISTOGRAM",
				Labels: []string{"probe"}, Buckets: []float64{0.001, 1}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			table := Table{Subsystem: "test", Defs: []Def{tc.def}}
			if err := table.Register(reg); err != nil {
				t.Fatal(err)
			}
			tc.use()
			if diff := cmp.Diff(tc.want, gathered(t, reg)); diff != "" {
				t.Errorf("gathered family (-want +got):\n%s", diff)
			}
			if got := table.FullName(tc.def); got != tc.want.Name {
				t.Errorf("FullName = %q, want %q", got, tc.want.Name)
			}
			if c := tc.def.Collector(); c == nil || !reg.Unregister(c) {
				t.Errorf("Collector = %v, want the collector registered", c)
			}
		})
	}
}

func TestRegisterRefusesWrongTables(t *testing.T) {
	var (
		counter    prometheus.Counter
		counterVec *prometheus.CounterVec
		gauge      prometheus.Gauge
	)
	ok := Def{Kind: Counter, Name: "writes_total", Help: "Writes.", Into: &counter}
	for _, tc := range []struct {
		name    string
		table   Table
		wantErr string
	}{
		{"no subsystem", Table{Defs: []Def{ok}}, "without a subsystem"},
		{"duplicate name", Table{Subsystem: "test", Defs: []Def{ok, {Kind: Gauge, Name: "writes_total", Help: "Again.", Into: &gauge}}},
			"fabricmap_test_writes_total declared twice"},
		{"no name", Table{Subsystem: "test", Defs: []Def{{Kind: Gauge, Help: "Nameless.", Into: &gauge}}}, "no name"},
		{"no help", Table{Subsystem: "test", Defs: []Def{{Kind: Gauge, Name: "reports", Into: &gauge}}}, "no help text"},
		{"unknown kind", Table{Subsystem: "test", Defs: []Def{{Kind: "summary", Name: "x", Help: "X.", Into: &gauge}}}, `unknown kind "summary"`},
		{"histogram without buckets", Table{Subsystem: "test", Defs: []Def{{Kind: Histogram, Name: "x_seconds", Help: "X."}}},
			"a histogram without buckets"},
		{"buckets on a gauge", Table{Subsystem: "test", Defs: []Def{{Kind: Gauge, Name: "x", Help: "X.", Buckets: []float64{1}, Into: &gauge}}},
			"buckets on a gauge"},
		{"no Into", Table{Subsystem: "test", Defs: []Def{{Kind: Counter, Name: "x_total", Help: "X."}}},
			"a counter with no labels cannot be stored in a <nil>"},
		{"Into of another kind", Table{Subsystem: "test", Defs: []Def{{Kind: Counter, Name: "x_total", Help: "X.", Into: &gauge}}},
			"a counter with no labels cannot be stored in a *prometheus.Gauge"},
		{"labels into a single series", Table{Subsystem: "test", Defs: []Def{{Kind: Counter, Name: "x_total", Help: "X.", Labels: []string{"k"}, Into: &counter}}},
			`a counter with labels ["k"] cannot be stored in a *prometheus.Counter`},
		{"a vector without labels", Table{Subsystem: "test", Defs: []Def{{Kind: Counter, Name: "x_total", Help: "X.", Into: &counterVec}}},
			"a counter with no labels cannot be stored in a **prometheus.CounterVec"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			counter, counterVec, gauge = nil, nil, nil
			reg := prometheus.NewPedanticRegistry()
			err := tc.table.Register(reg)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Register = %v, want an error with %q", err, tc.wantErr)
			}
			for _, d := range tc.table.Defs {
				if d.Collector() != nil {
					t.Errorf("%s: a collector was stored from a refused table", d.Name)
				}
			}
			if mfs, _ := reg.Gather(); len(mfs) != 0 {
				t.Errorf("a refused table registered %d families", len(mfs))
			}
		})
	}
}

func TestRegisterReportsTheRegistrysRefusal(t *testing.T) {
	var first, second prometheus.Counter
	reg := prometheus.NewPedanticRegistry()
	Table{Subsystem: "test", Defs: []Def{{Kind: Counter, Name: "writes_total", Help: "Writes.", Into: &first}}}.MustRegister(reg)
	err := Table{Subsystem: "test", Defs: []Def{{Kind: Counter, Name: "writes_total", Help: "Writes.", Into: &second}}}.Register(reg)
	if err == nil {
		t.Fatal("a second table with the same full name registered on one registry")
	}
	defer func() {
		if recover() == nil {
			t.Error("MustRegister did not panic on a refused table")
		}
	}()
	Table{Subsystem: "test", Defs: []Def{{Kind: Counter, Name: "writes_total", Help: "Writes."}}}.MustRegister(reg)
}
