package aws

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/fabricmap/fabricmap/sources/aws/awstest"
	"github.com/fabricmap/fabricmap/sources/cloudsource"
	"github.com/fabricmap/fabricmap/sources/nodes"
	"github.com/fabricmap/fabricmap/topology"
)

// isolate keeps the SDK off the machine's AWS settings and off any metadata endpoint (awstest.Offline).
func isolate(t testing.TB) {
	t.Helper()
	awstest.Offline(t)
}

// standIn serves a stand-in EC2 describing instances on 127.0.0.1.
func standIn(t testing.TB, instances ...awstest.Instance) (*awstest.EC2, string) {
	t.Helper()
	e := awstest.New(instances...)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return e, srv.URL
}

// list is a Lister of fixed Nodes.
func list(ns []nodes.Node) nodes.Lister {
	return func(context.Context) ([]nodes.Node, error) { return ns, nil }
}

// newSource returns a source of the stand-in at url with static credentials and short backoffs, changed by
// mod, and the buffer its JSON log goes to.
func newSource(t testing.TB, url string, ns []nodes.Node, mod func(*Options)) (*Source, *bytes.Buffer) {
	t.Helper()
	isolate(t)
	o := Options{Enabled: true, Endpoint: url, Retry: cloudsource.Retry{MaxBackoff: 5 * time.Millisecond},
		Credentials: credentials.NewStaticCredentialsProvider("AKIDSTANDIN", "stand-in-secret", "")}
	if mod != nil {
		mod(&o)
	}
	var buf bytes.Buffer
	s, err := o.Source(slog.New(slog.NewJSONHandler(&buf, nil)), list(ns))
	if err != nil {
		t.Fatal(err)
	}
	return s, &buf
}

// logLine is one JSON log line of the source.
type logLine struct {
	Level string   `json:"level"`
	Msg   string   `json:"msg"`
	Count int      `json:"count"`
	First []string `json:"first"`
}

// logLines decodes the log lines in buf.
func logLines(t *testing.T, buf *bytes.Buffer) []logLine {
	t.Helper()
	var out []logLine
	dec := json.NewDecoder(bytes.NewReader(buf.Bytes()))
	for dec.More() {
		var l logLine
		if err := dec.Decode(&l); err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
	return out
}

// nvlink maps each node of in that has an NVLink domain to it.
func nvlink(in topology.Input) map[string]string {
	out := map[string]string{}
	for _, n := range in.Nodes {
		if n.NVLinkDomain != "" {
			out[n.Node] = n.NVLinkDomain
		}
	}
	return out
}
