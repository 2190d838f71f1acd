package testkit

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
)

// TestSyncBufferKeepsEveryConcurrentWrite: writes from many goroutines all land, whole, and can
// be read while they go on (the race detector checks the rest).
func TestSyncBufferKeepsEveryConcurrentWrite(t *testing.T) {
	var b SyncBuffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 100 {
				fmt.Fprintf(&b, "w%d-%d\n", i, j)
				_ = b.String()
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 800 {
		t.Fatalf("%d lines, want 800", len(lines))
	}
	if !strings.Contains(b.String(), "w7-99\n") {
		t.Error("a write is missing")
	}
}

// TestFreePortCanBeListenedOn: the port it gives can be taken by a server.
func TestFreePortCanBeListenedOn(t *testing.T) {
	port := FreePort(t)
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatalf("port %d: %v", port, err)
	}
	ln.Close()
}
