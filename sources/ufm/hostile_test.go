package ufm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
)

// Sizes of the hostile answers, and the bound on the heap while one is read.
const (
	hostileSmall  = 32 << 20
	hostileLarge  = 200 << 20
	hostileBudget = 256 << 20
)

// hostileAnswer is a UFM answer made as it is served, never held whole, so that the heap measured while
// reading it is the client's alone: head, then count pieces (piece(dst, i) appends the i-th to dst), then tail.
type hostileAnswer struct {
	name     string
	endpoint string
	head     string
	piece    func(dst []byte, i, count int) []byte
	tail     string
	// most caps the pieces, when set, whatever the size.
	most int
	// want is what reading the answer of each size (hostileSmall, hostileLarge) gives: the error's text, or
	// "" for an answer read within the limits, whose entries ok checks.
	want [2]string
	ok   func(entries, pieces int) bool
}

// hostileAnswers are answers no UFM gives: a list of a million entries or more, one string or list of 32 MB or
// 200 MB in a member fabricmap keeps or in one it does not, arrays nested millions deep, a huge envelope.
var hostileAnswers = []hostileAnswer{{
	name: "ports/many entries", endpoint: EndpointPorts, head: "[", tail: "]",
	piece: func(dst []byte, i, _ int) []byte {
		return fmt.Appendf(comma(dst, i), `{"name":"%016x_1","systemID":"%016x"}`, i, i/8)
	},
	want: [2]string{"", "passes 80 MiB at entry"}, // 559,000 ports are kept; 3.9 million are not
	ok:   func(entries, pieces int) bool { return entries == pieces },
}, {
	name: "ports/empty entries", endpoint: EndpointPorts, head: "[", tail: "]",
	piece: func(dst []byte, i, _ int) []byte { return append(comma(dst, i), "{}"...) },
	want:  [2]string{"more than 786432 ports (Limits.Ports)", "more than 786432 ports (Limits.Ports)"},
}, {
	// The worst an answer within the limits can do: as many entries as allowed, each as large as can be kept.
	name: "ports/as many empty entries as allowed", endpoint: EndpointPorts, head: "[", tail: "]", most: DefaultMaxPorts,
	piece: func(dst []byte, i, _ int) []byte { return append(comma(dst, i), "{}"...) },
	ok:    func(entries, pieces int) bool { return entries == pieces },
}, {
	name: "ports/one string", endpoint: EndpointPorts, head: `"`, tail: `"`,
	piece: func(dst []byte, _, _ int) []byte { return append(dst, strings.Repeat("a", 64)...) },
	want:  [2]string{"got a JSON string, want an array", "got a JSON string, want an array"},
}, {
	name: "systems/a huge kept string", endpoint: EndpointSystems,
	head:  `[{"system_guid":"0002c90300e4a000","type":"host","system_name":"`,
	piece: func(dst []byte, _, _ int) []byte { return append(dst, strings.Repeat("a", 64)...) },
	tail:  `"}]`,
	want: [2]string{`entry 0: "system_name" is longer than 1024 bytes (Limits.StringBytes)`,
		`entry 0: "system_name" is longer than 1024 bytes (Limits.StringBytes)`},
}, {
	name: "systems/a huge unread string", endpoint: EndpointSystems,
	head:  `[{"system_guid":"0002c90300e4a000","type":"host","system_name":"gpu-01","remarks":"`,
	piece: func(dst []byte, _, _ int) []byte { return append(dst, strings.Repeat("a", 64)...) },
	tail:  `"}]`,
	ok:    func(entries, _ int) bool { return entries == 1 },
}, {
	name: "systems/a huge kept list", endpoint: EndpointSystems,
	head: `[{"system_guid":"0002c90300e4a000","type":"switch","ports":[`,
	piece: func(dst []byte, i, _ int) []byte {
		return fmt.Appendf(comma(dst, i), `"0002c90300e4a000_%d"`, i)
	},
	tail: `]}]`,
	want: [2]string{`entry 0: "ports" has more than 16384 elements (Limits.ListElements)`,
		`entry 0: "ports" has more than 16384 elements (Limits.ListElements)`},
}, {
	name: "systems/a huge unread list", endpoint: EndpointSystems,
	head: `[{"system_guid":"0002c90300e4a000","type":"switch","capabilities":[`,
	piece: func(dst []byte, i, _ int) []byte {
		return fmt.Appendf(comma(dst, i), `{"name":"burn_cables_transceivers_%d","levels":[1,2,{"a":null}]}`, i)
	},
	tail: `]}]`,
	ok:   func(entries, _ int) bool { return entries == 1 },
}, {
	name: "links/deep nesting", endpoint: EndpointLinks, head: `{"data":[{"name":"a","cable_info":`,
	piece: func(dst []byte, i, count int) []byte {
		if i < count/2 {
			return append(dst, strings.Repeat("[", 64)...)
		}
		return append(dst, strings.Repeat("]", 64)...)
	},
	tail: `}]}`,
	want: [2]string{"nested deeper than 64 levels at byte 96 (Limits.Depth)", "nested deeper than 64 levels at byte 96 (Limits.Depth)"},
}, {
	name: "links/a huge envelope", endpoint: EndpointLinks, head: `{"page_number":1,"meta":[`,
	piece: func(dst []byte, i, _ int) []byte {
		return fmt.Appendf(comma(dst, i), `{"note":"%d","more":{"deeper":["x"]}}`, i)
	},
	tail: `],"data":[{"name":"a_1:b_1","source_guid":"a","destination_guid":"b"}]}`,
	ok:   func(entries, _ int) bool { return entries == 1 },
}}

// comma appends the comma before element i of a list.
func comma(dst []byte, i int) []byte {
	if i > 0 {
		return append(dst, ',')
	}
	return dst
}

// pieces is how many pieces make the answer size bytes long.
func (a hostileAnswer) pieces(size int) int {
	n := max(size/len(a.piece(nil, 1, 2)), 2) &^ 1
	if a.most > 0 {
		n = min(n, a.most)
	}
	return n
}

// reader serves the answer of size bytes.
func (a hostileAnswer) reader(size int) io.Reader {
	return &pieceReader{a: a, count: a.pieces(size), buf: []byte(a.head)}
}

// pieceReader reads a hostileAnswer, making it piece by piece.
type pieceReader struct {
	a       hostileAnswer
	count   int // pieces in the middle
	next    int // the next piece
	buf     []byte
	scratch []byte
	done    bool
}

func (r *pieceReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		switch {
		case r.done:
			return 0, io.EOF
		case r.next < r.count:
			r.scratch = r.a.piece(r.scratch[:0], r.next, r.count)
			r.buf = r.scratch
			r.next++
		default:
			r.buf, r.done = []byte(r.a.tail), true
		}
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// hostileUFM serves answer, of size bytes, on 127.0.0.1 for the test user, and the client reading it.
func hostileUFM(tb testing.TB, answer hostileAnswer, size int) *Client {
	tb.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if user, pass, ok := r.BasicAuth(); !ok || user != testUser || pass != testPassword {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		if r.URL.Path != "/"+prefixBasic+"/"+answer.endpoint {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.Copy(w, answer.reader(size)) // stops when the client hangs up
	}))
	tb.Cleanup(srv.Close)
	c, err := NewClient(Config{BaseURL: srv.URL, Username: testUser, Password: testPassword, MaxRetries: -1})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// readHostile reads answer's endpoint through c and returns the entries read, the error and the peak of the
// heap in use (runtime.MemStats.HeapInuse, sampled) while reading.
func readHostile(c *Client, answer hostileAnswer) (entries int, peak uint64, err error) {
	runtime.GC()
	h := startPeakOf(heapInuse)
	switch answer.endpoint {
	case EndpointSystems:
		var got []System
		got, err = c.Systems(context.Background())
		entries = len(got)
	case EndpointLinks:
		var got []Link
		got, err = c.Links(context.Background())
		entries = len(got)
	default:
		var got []Port
		got, err = c.Ports(context.Background())
		entries = len(got)
	}
	return entries, h.end(), err
}

// Every hostile answer, of 32 MB and of 200 MB, is refused with an error naming the endpoint and the limit,
// or read within the limits, and the heap in use stays under 256 MiB while it is read (the answer itself is
// made as it is served, so the heap is the client's). -short reads the 32 MB answers only.
func TestHostileAnswersAreRefusedOrCapped(t *testing.T) {
	sizes := []int{hostileSmall, hostileLarge}
	if testing.Short() {
		sizes = sizes[:1]
	}
	for _, answer := range hostileAnswers {
		for s, size := range sizes {
			t.Run(fmt.Sprintf("%s/%dMB", answer.name, size>>20), func(t *testing.T) {
				entries, peak, err := readHostile(hostileUFM(t, answer, size), answer)
				t.Logf("%d entries, peak heap in use %.1f MiB, error %v", entries, float64(peak)/(1<<20), err)
				switch want := answer.want[s]; {
				case want == "" && err != nil:
					t.Errorf("error %v, want the answer read within the limits", err)
				case want == "" && !answer.ok(entries, answer.pieces(size)):
					t.Errorf("%d entries read", entries)
				case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
					t.Errorf("error %v, want it to say %q", err, want)
				case want != "" && !strings.HasPrefix(err.Error(), "UFM "+answer.endpoint+": "):
					t.Errorf("error %q does not name %s", err, answer.endpoint)
				case want != "" && strings.Contains(want, "Limits.") && !errors.Is(err, errOverLimit):
					t.Errorf("error %v is not errOverLimit", err)
				}
				if peak > hostileBudget {
					t.Errorf("peak heap in use %.1f MiB, want at most %d MiB", float64(peak)/(1<<20), hostileBudget>>20)
				}
			})
		}
	}
}

// BenchmarkHostileAnswers reads each hostile answer of 32 MB and of 200 MB from a UFM on 127.0.0.1 through the
// client. Reported: peak-MiB, the peak of the heap in use (runtime.MemStats.HeapInuse, sampled every
// millisecond) while reading; target: under 256 MiB for every answer.
//
//	go test ./sources/ufm -run XXX -bench HostileAnswers -benchtime 1x
func BenchmarkHostileAnswers(b *testing.B) {
	for _, answer := range hostileAnswers {
		for _, size := range []int{hostileSmall, hostileLarge} {
			b.Run(fmt.Sprintf("%s/%dMB", strings.ReplaceAll(answer.name, " ", "_"), size>>20), func(b *testing.B) {
				c := hostileUFM(b, answer, size)
				var peak uint64
				for b.Loop() {
					_, p, _ := readHostile(c, answer)
					peak = max(peak, p)
				}
				b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
			})
		}
	}
}
