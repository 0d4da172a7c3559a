package health

import (
	"testing"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

// TestConditionNames keeps health's spelling of the agent's link conditions that of the API.
func TestConditionNames(t *testing.T) {
	for _, tc := range []struct{ health, api string }{
		{conditionDegraded, string(v1alpha1.LinkDegraded)},
		{conditionDown, string(v1alpha1.LinkDown)},
	} {
		if tc.health != tc.api {
			t.Errorf("health spells a condition %q, the API %q", tc.health, tc.api)
		}
	}
}
