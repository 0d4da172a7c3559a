package outputs

import (
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/fabricmap/fabricmap/topology"
)

// Text returns what `fabricmap topology -o format` prints for k: its Print, or else its objects as YAML (one
// object as itself, several as a v1 List).
func (k Kind) Text(t *topology.Tree, env Env, format string) ([]byte, error) {
	if k.Print != nil {
		return k.Print(t, env, format)
	}
	if k.Build == nil {
		return nil, fmt.Errorf("-o %s: the output %s prints no text", format, k.Name)
	}
	objs, err := k.Build(t, env)
	if err != nil {
		return nil, err
	}
	var v any
	if len(objs) == 1 {
		v = objs[0].Object
	} else {
		items := make([]any, len(objs))
		for i, o := range objs {
			items[i] = o.Object
		}
		v = map[string]any{"apiVersion": "v1", "kind": "List", "items": items}
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("-o %s: %w", format, err)
	}
	return yaml.JSONToYAML(b)
}
