package ctl

import (
	"encoding/json"
	"io"

	"sigs.k8s.io/yaml"
)

// writeObject writes v as indented JSON, or as YAML when format is "yaml".
func writeObject(w io.Writer, v any, format string) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if format == "yaml" {
		if b, err = yaml.JSONToYAML(b); err != nil {
			return err
		}
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
