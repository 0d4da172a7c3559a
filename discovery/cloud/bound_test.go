package cloud

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabricmap/fabricmap/api/v1alpha1"
)

// bound keeps an instance within the CRD's limits and says what it left out; an ID past the limit is an error.
func TestBound(t *testing.T) {
	long := strings.Repeat("x", v1alpha1.MaxCloudIDLength+1)
	fit := strings.Repeat("x", v1alpha1.MaxCloudIDLength)
	nine := []string{"1", "2", "3", "4", "5", "6", "7", "8", "9"}
	for _, tc := range []struct {
		name      string
		in        v1alpha1.CloudInstance
		want      *v1alpha1.CloudInstance
		wantWarns []string
		wantErr   string
	}{{
		name: "values at the limits stay",
		in:   v1alpha1.CloudInstance{Provider: v1alpha1.CloudGCP, InstanceID: fit, Zone: fit, Layers: nine[:8], NVLinkDomain: fit},
		want: &v1alpha1.CloudInstance{Provider: v1alpha1.CloudGCP, InstanceID: fit, Zone: fit, Layers: nine[:8], NVLinkDomain: fit},
	}, {
		name: "an over-long zone and NVLink domain are left out",
		in:   v1alpha1.CloudInstance{Provider: v1alpha1.CloudOCI, InstanceID: "i", Zone: long, NVLinkDomain: long},
		want: &v1alpha1.CloudInstance{Provider: v1alpha1.CloudOCI, InstanceID: "i"},
		wantWarns: []string{"oci: zone of 256 characters is past the report's bound of 255: left out",
			"oci: NVLink domain of 256 characters is past the report's bound of 255: left out"},
	}, {
		name:      "the layers end above an over-long one",
		in:        v1alpha1.CloudInstance{Provider: v1alpha1.CloudOCI, InstanceID: "i", Layers: []string{"island", long, "local"}},
		want:      &v1alpha1.CloudInstance{Provider: v1alpha1.CloudOCI, InstanceID: "i", Layers: []string{"island"}},
		wantWarns: []string{"oci: layer 2 of 256 characters is past the report's bound of 255: left out"},
	}, {
		name:      "more layers than the report takes keep the top ones",
		in:        v1alpha1.CloudInstance{Provider: v1alpha1.CloudGCP, InstanceID: "i", Layers: nine},
		want:      &v1alpha1.CloudInstance{Provider: v1alpha1.CloudGCP, InstanceID: "i", Layers: nine[:8]},
		wantWarns: []string{"gcp: 9 layers, past the report's bound of 8: the bottom ones left out"},
	}, {
		name:    "an over-long ID is an error",
		in:      v1alpha1.CloudInstance{Provider: v1alpha1.CloudAWS, InstanceID: long},
		wantErr: "an instance ID of 256 characters is past the report's bound of 255",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, warns, err := bound(tc.in.DeepCopy())
			if gotErr := errString(err); gotErr != tc.wantErr {
				t.Fatalf("error %q, want %q", gotErr, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("instance (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantWarns, warns); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// layerPath keeps the layers a path from the top.
func TestLayerPath(t *testing.T) {
	names := []string{"cluster", "block", "subBlock"}
	for _, tc := range []struct {
		in, want  []string
		wantWarns []string
	}{
		{in: []string{"c", "b", "s"}, want: []string{"c", "b", "s"}},
		{in: []string{"c", "b", ""}, want: []string{"c", "b"}},
		{in: []string{"", "", ""}, want: []string{}},
		{in: []string{"c", "", "s"}, want: []string{"c"}, wantWarns: []string{"gcp: the topology gives subBlock but no block: the layers end above it"}},
		{in: []string{"", "b", ""}, want: []string{}, wantWarns: []string{"gcp: the topology gives block but no cluster: the layers end above it"}},
	} {
		got, warns := layerPath(v1alpha1.CloudGCP, names, tc.in...)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%q: layers (-want +got):\n%s", tc.in, diff)
		}
		if diff := cmp.Diff(tc.wantWarns, warns); diff != "" {
			t.Errorf("%q: warnings (-want +got):\n%s", tc.in, diff)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
