package gcp

import (
	"fmt"
	"strings"
)

// providerScheme is the scheme of a Compute Engine instance's providerID, as the GCE cloud provider (and GKE)
// writes it: gce://<project>/<zone>/<instance name>.
const providerScheme = "gce"

// instanceRef names one Compute Engine instance.
type instanceRef struct {
	Project, Zone, Name string
}

// String writes the reference as a providerID does.
func (r instanceRef) String() string {
	return providerScheme + "://" + r.Project + "/" + r.Zone + "/" + r.Name
}

// parseProviderID reads gce://<project>/<zone>/<instance>. The project may be domain-scoped
// (example.com:my-project); each of the three parts must be there and none may hold white space.
func parseProviderID(providerID string) (instanceRef, error) {
	rest, ok := strings.CutPrefix(providerID, providerScheme+"://")
	if !ok {
		return instanceRef{}, fmt.Errorf("providerID %q is not a Compute Engine instance's (gce://<project>/<zone>/<instance>)", providerID)
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" || strings.ContainsFunc(rest, isSpace) {
		return instanceRef{}, fmt.Errorf("providerID %q: want gce://<project>/<zone>/<instance>", providerID)
	}
	return instanceRef{Project: parts[0], Zone: parts[1], Name: parts[2]}, nil
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }
