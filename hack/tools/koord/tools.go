//go:build tools

// Package tools pins Koordinator's scheduler, built from source by hack/install-tools.sh koord.
package tools

import (
	_ "github.com/koordinator-sh/koordinator/cmd/koord-scheduler"
)
