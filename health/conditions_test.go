package health

import (
	"testing"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

// TestConditionNames keeps health's spelling of the agent's link conditions and reasons that of the API (health
// imports no API package, so that placement may use it without Kubernetes).
func TestConditionNames(t *testing.T) {
	for _, tc := range []struct{ health, api string }{
		{conditionDegraded, string(v1alpha1.LinkDegraded)},
		{conditionDown, string(v1alpha1.LinkDown)},
		{reasonLinkDowned, v1alpha1.ReasonLinkDowned},
		{reasonFlapping, v1alpha1.ReasonFlapping},
		{reasonSlowerThanCapable, v1alpha1.ReasonSlowerThanCapable},
		{reasonNarrowerThanCapable, v1alpha1.ReasonNarrowerThanCapable},
	} {
		if tc.health != tc.api {
			t.Errorf("health spells a condition %q, the API %q", tc.health, tc.api)
		}
	}
}
