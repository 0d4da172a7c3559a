package ctl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

// readReports reads every NodeFabricReport in the YAML and JSON files of dir: single objects, several
// documents per file, or Lists (none: an empty list). Objects of other kinds are skipped with a warning on
// errw; a file that is not YAML or JSON is an error naming it.
func readReports(dir string, errw io.Writer) ([]*v1alpha1.NodeFabricReport, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		switch strings.ToLower(filepath.Ext(e.Name())) {
		case ".yaml", ".yml", ".json":
			if !e.IsDir() {
				files = append(files, filepath.Join(dir, e.Name()))
			}
		}
	}
	sort.Strings(files)
	var out []*v1alpha1.NodeFabricReport
	for _, f := range files {
		reports, err := readReportFile(f, errw)
		if err != nil {
			return nil, err
		}
		out = append(out, reports...)
	}
	return out, nil
}

func readReportFile(path string, errw io.Writer) ([]*v1alpha1.NodeFabricReport, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*v1alpha1.NodeFabricReport
	for doc := 1; ; doc++ {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s, document %d: %w", path, doc, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		objs := []*unstructured.Unstructured{u}
		if u.IsList() {
			list, err := u.ToList()
			if err != nil {
				return nil, fmt.Errorf("%s, document %d: %w", path, doc, err)
			}
			objs = objs[:0]
			for i := range list.Items {
				objs = append(objs, &list.Items[i])
			}
		}
		for _, o := range objs {
			if o.GetKind() != "NodeFabricReport" {
				fmt.Fprintf(errw, "warning: %s, document %d: skipping a %s %q\n", path, doc, o.GetKind(), o.GetName())
				continue
			}
			r, err := decodeReport(o)
			if err != nil {
				return nil, fmt.Errorf("%s, document %d, report %q: %w", path, doc, o.GetName(), err)
			}
			out = append(out, &r)
		}
	}
}

// decodeReport converts a decoded document into a report; a field of the wrong type is named with its path
// and both types (the unstructured converter would say only "unrecognized type: int32").
func decodeReport(o *unstructured.Unstructured) (v1alpha1.NodeFabricReport, error) {
	var r v1alpha1.NodeFabricReport
	data, err := json.Marshal(o.Object)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(data, &r); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return r, fmt.Errorf("field %s: got a JSON %s, want %s", te.Field, te.Value, te.Type)
		}
		return r, err
	}
	return r, nil
}
