//go:build !unix

package ibnetdiscover

import "os/exec"

// killGroupOnCancel leaves the default (kill the process only) where process groups do not exist.
func killGroupOnCancel(*exec.Cmd) {}
