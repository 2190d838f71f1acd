//go:build faults

package faults_test

import (
	"context"
	"encoding/json"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/agent"
	"github.com/acme/quartermaster/agent/report"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// The agent's service unreachable for a minute loses no sample. The agent's outbox (the one
// quartermaster-agent runs) reports every 50 ms to serve through a proxy that refuses
// connections for 1.2 s: 24 sampling periods, a minute at the default 10 s interval is 6. Every
// report made meanwhile reaches the database, in order, once the service is reachable again.
func TestAgentServiceUnreachableLosesNoSample(t *testing.T) {
	storetest.RequirePostgres(t)
	db := storetest.Postgres(t)
	policy, people := teamsPolicy(t, 1, 1, "sim")
	api := newSlackAPI(t, people)
	s := startServe(t, baseEnv(t, policy, db, api), true)
	out, err := exec.Command(binary, "agent-token", "create", "l40s-01", "--db", db).Output()
	if err != nil {
		t.Fatalf("agent-token create: %v", err)
	}
	token := strings.TrimSpace(string(out))

	var mu sync.Mutex
	refusing := false
	target := strings.TrimPrefix(s.url, "http://")
	proxy := storetest.Serve(t, func(c net.Conn) {
		mu.Lock()
		r := refusing
		mu.Unlock()
		if r {
			c.Close()
			return
		}
		up, err := net.Dial("tcp", target)
		if err != nil {
			c.Close()
			return
		}
		go func() { defer up.Close(); _, _ = copyConn(up, c) }()
		defer c.Close()
		_, _ = copyConn(c, up)
	})
	const interval = 50 * time.Millisecond
	o := agent.NewOutbox(agent.OutboxConfig{URL: "http://" + proxy, Token: token, Window: agent.DefaultWindow})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go o.Run(ctx)

	start := time.Now().UTC().Truncate(time.Second)
	util := 40.0
	n := 0
	push := func() {
		n++
		r := report.Report{Version: report.Version, Node: "l40s-01", At: start.Add(time.Duration(n) * time.Second), Seq: uint64(n), Interval: interval.Seconds(),
			GPUs: []report.GPU{{Index: 0, UUID: "GPU-fault-0", Util: &util, MemTotal: 48 << 30}}}
		b, _ := json.Marshal(r)
		o.Push(b)
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	phase := func(d time.Duration) {
		end := time.Now().Add(d)
		for time.Now().Before(end) {
			<-tick.C
			push()
		}
	}
	phase(time.Second)
	mu.Lock()
	refusing = true
	mu.Unlock()
	before := n
	phase(24 * interval)
	during := n - before
	mu.Lock()
	refusing = false
	mu.Unlock()
	phase(time.Second)

	var got int
	if !waitFor(30*time.Second, func() bool {
		got = len(storetest.Query(t, db, "SELECT at FROM agent_samples WHERE node = 'l40s-01'"))
		return got == n
	}) {
		q, sent, refused, dropped := o.Stats()
		t.Fatalf("%d of %d reports reached the database (agent: %d queued, %d sent, %d refused, %d dropped)", got, n, q, sent, refused, dropped)
	}
	rows := storetest.Query(t, db, "SELECT at FROM agent_samples WHERE node = 'l40s-01' ORDER BY at")
	for i, r := range rows {
		at, _ := time.Parse(time.RFC3339Nano, r[0])
		if want := start.Add(time.Duration(i+1) * time.Second); !at.Equal(want) {
			t.Fatalf("sample %d is at %s, want %s: a sample was lost or repeated", i+1, r[0], want)
		}
	}
	_, _, _, dropped := o.Stats()
	t.Logf("service unreachable for %d sampling periods: %d reports, %d made during the outage, all %d in the database, %d dropped", 24, n, during, got, dropped)
}

func copyConn(dst, src net.Conn) (int64, error) {
	buf := make([]byte, 32<<10)
	var total int64
	for {
		k, err := src.Read(buf)
		if k > 0 {
			if _, werr := dst.Write(buf[:k]); werr != nil {
				return total, werr
			}
			total += int64(k)
		}
		if err != nil {
			return total, err
		}
	}
}
