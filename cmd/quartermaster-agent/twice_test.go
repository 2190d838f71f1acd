package main

import (
	"net"
	"strings"
	"testing"
	"time"
)

// A second agent started on a node by mistake finds the /metrics port taken by the first: it says
// that another agent most likely runs there (one per node: both would report the node), rather
// than only to give it another port, and an example port it gives is not the taken one.
func TestASecondAgentOnTheNodeIsToldAnotherRuns(t *testing.T) {
	needFake(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	code, stderr := runWithin([]string{"run", "--fake", "dgxh100", "--node", "hx-31", "--listen", addr}, 5*time.Second)
	var said string // the line the agent ends with
	for l := range strings.Lines(stderr) {
		if strings.HasPrefix(l, "quartermaster-agent: ") {
			said = strings.TrimSpace(l)
		}
	}
	_, example, _ := strings.Cut(said, "e.g. ")
	if code == 0 || !strings.Contains(said, "another quartermaster-agent") || !strings.Contains(example, "--listen ") ||
		strings.HasSuffix(example, " "+addr) || strings.HasSuffix(example, ":"+addr[strings.LastIndexByte(addr, ':')+1:]) {
		t.Errorf("a second agent on the port of the first: exit %d, %q", code, stderr)
	}
}
