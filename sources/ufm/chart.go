package ufm

import "github.com/fabricmap/fabricmap/internal/chartsurface"

// Chart is what the UFM source needs of the Helm chart: its values (ufm.*, the Secret and CA it mounts); it
// reads no Kubernetes object.
var Chart = chartsurface.Surface{Values: []string{"ufm"}}
