package main

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"testing"
)

// A reader that went away (`ttftop … --json | head -c 100`) ends the run
// quietly: status 0, nothing on stderr (it printed "write /dev/stdout:
// broken pipe"). Other write errors are still said.
func TestClosedPipeEndsQuietly(t *testing.T) {
	var stderr bytes.Buffer
	epipe := fmt.Errorf("headless output: %w", &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.EPIPE})
	if code := exitCode(epipe, &stderr); code != 0 || stderr.Len() != 0 {
		t.Errorf("closed pipe: exit %d, stderr %q; want 0 and nothing", code, stderr.String())
	}
	full := &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.ENOSPC}
	if code := exitCode(full, &stderr); code != 1 || stderr.Len() == 0 {
		t.Errorf("disk full: exit %d, stderr %q; want 1 and the error", code, stderr.String())
	}
}
