// Command pause is the sandbox ("pause") container of fabricmap's kubelet test harness: it holds a pod's
// namespaces by sleeping until told to stop. It exits 0 on SIGTERM or SIGINT and, as PID 1 of a pod that
// shares its process namespace, reaps the zombie children it inherits.
//
// Build it static (CGO_ENABLED=0); its image is FROM scratch (see the Dockerfile beside it).
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "-v", "--version", "version":
			fmt.Println("pause (fabricmap test harness)")
			return
		}
	}
	sig := make(chan os.Signal, 8)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range sig {
		if s == syscall.SIGCHLD {
			reap()
			continue
		}
		os.Exit(0)
	}
}

// reap collects every child that has exited, without blocking. Several exits can arrive as one SIGCHLD,
// so it loops until none is left.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
	}
}
