//go:build unix

package ibnetdiscover

import (
	"os/exec"
	"syscall"
)

// killGroupOnCancel runs the tool in its own process group and has cancellation kill the whole group, so
// that a wrapper script's children die with it instead of holding the output pipe open.
func killGroupOnCancel(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
