//go:build tools

// Package tools pins Kueue's controller manager, which the Kueue integration tests build from source.
package tools

import (
	_ "sigs.k8s.io/kueue/cmd/kueue"
)
