package ingest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/acme/quartermaster/agent/report"
	"github.com/acme/quartermaster/internal/ingest"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// BenchmarkIngestPostgres: reports of 1,000 nodes (8 GPUs each, one Slurm job per node holding
// one lease) through the real HTTP handler into PostgreSQL, with every commit waiting for the disk
// (synchronous_commit=on, unless QM_BENCH_SYNC_COMMIT says otherwise), from QM_BENCH_INGEST_CLIENTS
// concurrent clients (default 16; the agents of a cluster report at once). Clients and server share
// the machine's cores. reports/s is reports per second of wall time; p50/p99 the request latency.
func BenchmarkIngestPostgres(b *testing.B) {
	const nodes = 1000
	url := strings.Replace(storetest.Postgres(b), "synchronous_commit=off", "synchronous_commit="+syncCommit(), 1)
	db := storetest.Open(b, url)
	ctx := context.Background()
	clock := sim.NewClock(time.Now().UTC())
	leases := make([]*qm.Lease, nodes)
	tokens := make([]string, nodes)
	for n := range nodes {
		node := fmt.Sprintf("gpu-%04d", n)
		leases[n] = &qm.Lease{ID: qm.LeaseID(n + 1), State: qm.Active, GPUs: 8, Ref: strconv.Itoa(100000 + n), Node: node}
		tok, _ := ingest.NewToken()
		if err := db.CreateAgentToken(ctx, node, ingest.HashToken(tok), clock.Now()); err != nil {
			b.Fatal(err)
		}
		tokens[n] = tok
	}
	ing := ingest.New(ingest.Config{Store: db, Clock: clock, IdleBelow: 5,
		Leases: func(context.Context) ([]*qm.Lease, error) { return leases, nil }})
	mux := http.NewServeMux()
	ing.Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	clients := 16
	if v, err := strconv.Atoi(os.Getenv("QM_BENCH_INGEST_CLIENTS")); err == nil && v > 0 {
		clients = v
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	topo := &report.Topology{}
	for g := range 8 {
		tg := report.TopologyGPU{Index: g, UUID: fmt.Sprintf("GPU-%d", g), NVLinks: make([]int, 8), PCIe: make([]string, 8)}
		for j := range 8 {
			tg.NVLinks[j], tg.PCIe[j] = 12, "SYS"
			if j == g {
				tg.NVLinks[j], tg.PCIe[j] = 0, "X"
			}
		}
		topo.GPUs = append(topo.GPUs, tg)
	}
	var seq atomic.Int64
	body := func(n int, at time.Time, withTopo bool) []byte {
		r := report.Report{Version: report.Version, Node: leases[n].Node, At: at, Seq: uint64(seq.Add(1)), Interval: 10, TopologyHash: topo.Hash()}
		if withTopo {
			r.Topology = topo
		}
		for g := range 8 {
			u := float64((n + g) % 100)
			r.GPUs = append(r.GPUs, report.GPU{Index: g, UUID: fmt.Sprintf("GPU-%d", g), Util: &u, MemUsed: 10 << 30, MemTotal: 80 << 30,
				Processes: []report.Process{{PID: uint32(1000 + g), Job: leases[n].Ref, MemUsed: 10 << 30}}})
		}
		b, _ := json.Marshal(r)
		return b
	}
	post := func(n int, b []byte) error {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+report.Path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+tokens[n])
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	base := clock.Now().Add(-time.Hour)
	for n := range nodes { // every node's first report brings its topology
		if err := post(n, body(n, base, true)); err != nil {
			b.Fatal(err)
		}
	}
	// Report i is node i%1000's report number i/1000+1 (each node's reports 10 ms apart, so any
	// b.N stays in the past), encoded ahead of time so that the clients' encoding is not measured.
	bodies := make([][]byte, b.N)
	for i := range b.N {
		bodies[i] = body(i%nodes, base.Add(time.Duration(i/nodes+1)*10*time.Millisecond), false)
	}
	lat := make([]time.Duration, b.N)
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Int64
	b.ResetTimer()
	self0, pg0 := cpuNow()
	start := time.Now()
	for range clients {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				t := time.Now()
				if err := post(i%nodes, bodies[i]); err != nil {
					failed.Add(1)
				}
				lat[i] = time.Since(t)
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	self1, pg1 := cpuNow()
	self, pg := self1-self0, pg1-pg0
	b.StopTimer()
	if failed.Load() > 0 {
		b.Fatalf("%d reports failed", failed.Load())
	}
	if c := ing.Counts(); c[ingest.Accepted] != int64(nodes+b.N) {
		b.Fatalf("accepted %d of %d", c[ingest.Accepted], nodes+b.N)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(b.N)/wall.Seconds(), "reports/s")
	b.ReportMetric(float64(lat[b.N/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[b.N*99/100].Microseconds())/1000, "p99-ms")
	// What the reports cost in CPU, this process and every PostgreSQL process together (others'
	// queries on the same server included, so it errs high), and the rate two otherwise idle
	// cores could sustain at that cost.
	perReport := (self + pg).Seconds() / float64(b.N)
	b.ReportMetric(perReport*1000, "cpu-ms/report")
	b.ReportMetric(pg.Seconds()*1000/float64(b.N), "pg-cpu-ms/report")
	b.ReportMetric(2/perReport, "reports/s@2-idle-cores")
	b.ReportMetric(0, "ns/op")
}

// cpuNow is the CPU time so far of this process, and of every process named postgres.
func cpuNow() (self, pg time.Duration) {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(data)
		open, shut := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || shut < open || s[open+1:shut] != "postgres" {
			continue
		}
		f := strings.Fields(s[shut+2:])
		utime, _ := strconv.ParseInt(f[11], 10, 64)
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		pg += time.Duration(utime+stime) * time.Second / 100 // USER_HZ
	}
	return self, pg
}

// syncCommit is "on" unless QM_BENCH_SYNC_COMMIT says otherwise (to see what the disk costs).
func syncCommit() string {
	if v := os.Getenv("QM_BENCH_SYNC_COMMIT"); v != "" {
		return v
	}
	return "on"
}
