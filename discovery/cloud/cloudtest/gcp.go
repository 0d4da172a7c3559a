package cloudtest

import (
	"net/http"
	"strings"
	"testing"
)

// GCP is what the Compute Engine stand-in says about its instance; an empty field is an entry it does not
// have (404).
type GCP struct {
	// ID is instance/id, a number.
	ID string
	// Zone is instance/zone, as projects/<number>/zones/<zone>.
	Zone string
	// MachineType is instance/machine-type, as projects/<number>/machineTypes/<type>.
	MachineType string
	// PhysicalHostTopology is instance/attributes/physical_host_topology, a JSON object of cluster, block,
	// subBlock and host.
	PhysicalHostTopology string
}

// NewGCP starts a stand-in of Compute Engine's metadata server for inst: every request under
// /computeMetadata/v1/ must say Metadata-Flavor: Google and carry no X-Forwarded-For, or gets 403; every
// answer says Metadata-Flavor: Google.
func NewGCP(t testing.TB, inst GCP) *Server {
	t.Helper()
	return start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Metadata-Flavor", "Google")
		if r.Header.Get("Metadata-Flavor") != "Google" || r.Header.Get("X-Forwarded-For") != "" {
			http.Error(w, "missing Metadata-Flavor: Google header", http.StatusForbidden)
			return
		}
		entry, ok := strings.CutPrefix(r.URL.Path, "/computeMetadata/v1/instance/")
		if !ok || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		answer(w, map[string]string{
			"id":                                inst.ID,
			"zone":                              inst.Zone,
			"machine-type":                      inst.MachineType,
			"attributes/physical_host_topology": inst.PhysicalHostTopology,
		}[entry])
	}))
}
