package agent

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
)

// mergePatch returns the JSON merge patch (RFC 7386) that turns have into want, two pointers to structs of the
// same type, as the API server would hold them: a field want lacks becomes null (removed), a field that
// differs takes want's value, lists whole (merge patches cannot address list items). Empty when they are
// equal.
func mergePatch(have, want any) (map[string]any, error) {
	h, err := runtime.DefaultUnstructuredConverter.ToUnstructured(have)
	if err != nil {
		return nil, err
	}
	w, err := runtime.DefaultUnstructuredConverter.ToUnstructured(want)
	if err != nil {
		return nil, err
	}
	return diffObjects(h, w), nil
}

// diffObjects is mergePatch on two JSON objects. A null in want counts as absent, as the API server prunes it.
func diffObjects(have, want map[string]any) map[string]any {
	patch := map[string]any{}
	for k, hv := range have {
		if wv, ok := want[k]; hv != nil && (!ok || wv == nil) {
			patch[k] = nil
		}
	}
	for k, wv := range want {
		if wv == nil {
			continue
		}
		hv := have[k]
		hm, hIsObject := hv.(map[string]any)
		wm, wIsObject := wv.(map[string]any)
		switch {
		case hIsObject && wIsObject:
			if sub := diffObjects(hm, wm); len(sub) > 0 {
				patch[k] = sub
			}
		case !reflect.DeepEqual(hv, wv):
			patch[k] = wv
		}
	}
	return patch
}
