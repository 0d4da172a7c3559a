package treeread

import (
	"fmt"

	"github.com/fabricmap/fabricmap/placement"
)

// inputErr builds a *placement.InputError with a formatted message.
func inputErr(field, format string, args ...any) error {
	return &placement.InputError{Field: field, Msg: fmt.Sprintf(format, args...)}
}
