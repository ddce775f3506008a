// Command pause is the first process of a pod's sandbox: it holds the pod's namespaces open, doing nothing,
// until SIGINT or SIGTERM ends it with status 0. As PID 1 of the pod's PID namespace it is the parent of every
// process orphaned there, so it reaps them on SIGCHLD (no zombie is left to fill the process table).
//
// Anywhere but PID 1 it refuses to run (a pause somewhere else is a mistake); `pause -v` prints its version.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// version is the sandbox image's tag this program is carried under (scripts/binary_image.py checks they agree).
const version = "3.10.1"

func main() {
	showVersion := flag.Bool("v", false, "print the version and exit")
	flag.Parse()
	if *showVersion {
		fmt.Printf("pause %s (binding-scheduler)\n", version)
		return
	}
	if os.Getpid() != 1 {
		fmt.Fprintf(os.Stderr, "pause: refusing to run as PID %d: it is a pod sandbox's PID 1 (-v prints the version)\n",
			os.Getpid())
		os.Exit(2)
	}
	// One channel each, buffered: a stop is never lost behind SIGCHLDs, and one pending SIGCHLD reaps all.
	stop := make(chan os.Signal, 1)
	children := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	signal.Notify(children, syscall.SIGCHLD)
	reap()
	for {
		select {
		case <-children:
			reap()
		case <-stop:
			return
		}
	}
}

// reap collects every child that has exited, without waiting for the others.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if pid <= 0 {
			return
		}
	}
}
