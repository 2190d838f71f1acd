package main

import (
	"os/user"
	"strings"
	"testing"
)

// templates render prints the SSH workspace's address as the service gives it on Slurm: the job
// runs as the account that submits it, and its SSH server logs in only that account.
func TestRenderNamesTheAccountTheSSHWorkspaceRunsAs(t *testing.T) {
	t.Parallel()
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runQM("templates", "render", "ssh-shell", "--backend", "slurm")
	if code != 0 {
		t.Fatalf("render exited %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "connect (Slurm): ssh -p ") || !strings.Contains(stderr, " "+me.Username+"@NODE") {
		t.Errorf("render's address does not name %s, whom the job would run as:\n%s", me.Username, stderr)
	}
}
