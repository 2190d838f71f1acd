package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"syscall"
	"testing"
)

// policy check stops when Ctrl-C or SIGTERM comes, however long the file takes to check, and
// exits as a shell expects of a command a signal stopped (130 after SIGINT, 143 after SIGTERM),
// saying in one line that the file was not checked, rather than going on and calling it valid.
func TestPolicyCheckStopsOnASignal(t *testing.T) {
	for _, c := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		clearEnv(t)
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(stoppedBy{c.sig})
		var stdout, stderr bytes.Buffer
		code := run(ctx, []string{"policy", "check", "../../commands/testdata/tokyo.yaml"}, nil, &stdout, &stderr)
		msg := strings.TrimSpace(stderr.String())
		if code != c.code || strings.Contains(stdout.String(), "is valid") || strings.Count(msg, "\n") != 0 ||
			!strings.Contains(msg, "tokyo.yaml was not checked") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and one line saying the file was not checked", c.sig, code, stdout.String(), msg, c.code)
		}
	}
	// Without a signal it checks the file as before.
	var stdout bytes.Buffer
	if code := run(context.Background(), []string{"policy", "check", "../../commands/testdata/tokyo.yaml"}, nil, &stdout, io.Discard); code != 0 || !strings.Contains(stdout.String(), "is valid") {
		t.Errorf("exit %d, %q", code, stdout.String())
	}
}
