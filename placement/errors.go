package placement

import (
	"errors"
	"fmt"
)

// InputError is bad input: a gang, tree or node list that no placement can be made for. Field names the
// offending field (gang.pods, gang.dp, gang.request[nvidia.com/gpu], gang.hardTierName, tree, …).
type InputError struct {
	// Field is the path of the field at fault.
	Field string
	// Msg says what is wrong with it.
	Msg string
}

// Error implements error: "field: message".
func (e *InputError) Error() string { return e.Field + ": " + e.Msg }

// inputErr builds an *InputError with a formatted message.
func inputErr(field, format string, args ...any) error {
	return &InputError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// ErrNoPlacement is returned when the gang is valid but its pods do not fit on the free capacity within its
// hard limit (Preempt may still find room).
var ErrNoPlacement = errors.New("no placement on free capacity within the hard limit")

// ErrNoPreemption is returned by Preempt when even evicting every eligible gang leaves no room.
var ErrNoPreemption = errors.New("no placement even after preempting every eligible gang")
