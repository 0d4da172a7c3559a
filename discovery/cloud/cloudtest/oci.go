package cloudtest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// OCI is what the OCI stand-in says about its instance; an empty field is an entry it does not have (404).
type OCI struct {
	// ID is instance/id, the instance's OCID.
	ID string
	// AvailabilityDomain is instance/availabilityDomain (Uocm:PHX-AD-1).
	AvailabilityDomain string
	// RDMATopologyData is host/rdmaTopologyData, a JSON object of customerHPCIslandId, customerNetworkBlock,
	// customerLocalBlock and customerGpuMemoryFabric.
	RDMATopologyData string
}

// NewOCI starts a stand-in of OCI's instance metadata service, version 2, for inst: every request under
// /opc/v2/ must carry Authorization: Bearer Oracle or gets 401; /opc/v1/ is off (404), as on an instance with
// IMDS v1 disabled. instance/ answers the instance's fields as one JSON object.
func NewOCI(t testing.TB, inst OCI) *Server {
	t.Helper()
	return start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entry, ok := strings.CutPrefix(r.URL.Path, "/opc/v2/")
		switch {
		case !ok || r.Method != http.MethodGet:
			http.NotFound(w, r)
		case r.Header.Get("Authorization") != "Bearer Oracle":
			http.Error(w, "unauthorized", http.StatusUnauthorized)
		case entry == "instance/":
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]string{"id": inst.ID, "availabilityDomain": inst.AvailabilityDomain})
		default:
			answer(w, map[string]string{
				"instance/id":                 inst.ID,
				"instance/availabilityDomain": inst.AvailabilityDomain,
				"host/rdmaTopologyData":       inst.RDMATopologyData,
			}[entry])
		}
	}))
}
