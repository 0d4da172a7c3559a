package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/fabricmap/fabricmap/sources/ufm"
	"github.com/fabricmap/fabricmap/sources/ufm/ufmtest"
)

// ufmHost is the host only UFM knows (no agent runs on it), behind the InfiniBand leaf ufmLeaf.
const (
	ufmHost = "e2e-n4"
	ufmLeaf = "ib-leaf-x"
)

// fakeUFM serves, on 127.0.0.1, UFM's answers for one InfiniBand leaf with one host, with basic
// authentication; while mode holds "500" it answers 500s, while "garbage" a body that is no JSON.
type fakeUFM struct {
	url, userFile, passFile string
	mode                    atomic.Value
}

func newFakeUFM(t *testing.T) *fakeUFM {
	t.Helper()
	const leafGUID, hostGUID = "b83fd2030e000001", "946dae030e000100"
	answers := map[string]any{
		"systems": []ufm.System{
			{SystemGUID: leafGUID, GUID: leafGUID, Name: leafGUID, SystemName: ufmLeaf, Type: "switch", Model: "MQM9700"},
			{SystemGUID: hostGUID, GUID: hostGUID, Name: hostGUID, SystemName: ufmHost, Type: "host", Ports: []string{hostGUID + "_1"}},
		},
		"links": []ufm.Link{{SourceGUID: hostGUID, SourcePort: "1", DestinationGUID: leafGUID, DestinationPort: "1",
			SourceNodeDescription: ufmHost + " mlx5_0", DestinationNodeDescription: ufmLeaf + ":1"}},
		// UFM answers /resources/ports too, which every poll reads.
		"ports": []ufm.Port{
			{Name: hostGUID + "_1", GUID: hostGUID, SystemID: hostGUID, SystemName: ufmHost, NodeDescription: ufmHost + " mlx5_0", Module: "N/A"},
			{Name: leafGUID + "_1", GUID: leafGUID, SystemID: leafGUID, SystemName: ufmLeaf, NodeDescription: ufmLeaf + ":1", Module: "N/A"},
		},
	}
	bodies := ufmtest.Answers{}
	for k, v := range answers {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		bodies[k] = b
	}
	u := &fakeUFM{}
	u.mode.Store("")
	ufmAPI := ufmtest.Handler("e2e", "e2e-pass", bodies)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch u.mode.Load() {
		case "500":
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		case "garbage":
			_, _ = w.Write([]byte("<html>maintenance</html>"))
			return
		}
		ufmAPI.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	u.url, u.userFile, u.passFile = srv.URL, filepath.Join(dir, "username"), filepath.Join(dir, "password")
	for path, v := range map[string]string{u.userFile: "e2e", u.passFile: "e2e-pass"} {
		if err := os.WriteFile(path, []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return u
}

// args are the aggregator flags that read this UFM every second.
func (u *fakeUFM) args() []string {
	return []string{"--ufm-url=" + u.url, "--ufm-username-file=" + u.userFile, "--ufm-password-file=" + u.passFile,
		"--ufm-interval=1s", "--ufm-timeout=2s"}
}
