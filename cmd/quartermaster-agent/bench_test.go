package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acme/quartermaster/agent/nvml"
)

// BenchmarkAgentFootprint runs the built agent as people run it — `run` on a fake DGX A100 (8 GPUs,
// four of them busy with processes whose cgroups name Slurm jobs and a pod), sampling every second,
// reporting each sample over HTTP to a stand-in service, and serving /metrics, scraped every 15 s —
// for QM_BENCH_AGENT_SECONDS (default 60) after 5 s of warm-up, and reads its resident memory and
// CPU time from /proc. rss-MB is the largest resident set seen (VmHWM), cpu-% the CPU time over
// the wall time, in percent of one core.
func BenchmarkAgentFootprint(b *testing.B) {
	if _, err := nvml.NewFake("dgxa100", "x", nil); err != nil {
		b.Skipf("no fake in this build: %v", err)
	}
	secs := 60
	if v, err := strconv.Atoi(os.Getenv("QM_BENCH_AGENT_SECONDS")); err == nil && v > 0 {
		secs = v
	}
	bin := filepath.Join(b.TempDir(), "quartermaster-agent")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	var reports atomic.Int64
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		reports.Add(1)
		_, _ = io.WriteString(w, `{"accepted":true}`)
	}))
	defer svc.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	for range b.N {
		cmd := exec.Command(bin, "run", "--fake", "dgxa100", "--node", "dgx-01", "--interval", "1s", "--listen", addr,
			"--service", svc.URL, "--proc-root", "../../agent/testdata/proc",
			"--fake-util", "0 90 mem=30000 pids=4242; 1 75 pids=4243; 2 60 pids=4244; 3 40 pids=4245,4246; * 0")
		cmd.Env = append(os.Environ(), "QM_AGENT_TOKEN=qma_bench")
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		time.Sleep(5 * time.Second)
		scrape := func() {
			resp, err := http.Get("http://" + addr + "/metrics")
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
		scrape()
		cpu0, wall0, sent0 := cpuTime(b, cmd.Process.Pid), time.Now(), reports.Load()
		for s := 1; s <= secs; s++ {
			time.Sleep(time.Second)
			if s%15 == 0 {
				scrape()
			}
		}
		cpu, wall, sent := cpuTime(b, cmd.Process.Pid)-cpu0, time.Since(wall0), reports.Load()-sent0
		hwm := procStatus(b, cmd.Process.Pid, "VmHWM")
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if sent < int64(secs)-2 {
			b.Fatalf("the agent sent %d reports in %d s", sent, secs)
		}
		b.ReportMetric(float64(hwm)/1024, "rss-MB")
		b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "cpu-%")
		b.ReportMetric(float64(sent)/wall.Seconds(), "reports/s")
	}
	b.ReportMetric(0, "ns/op")
}

// cpuTime is a process's user and system CPU time so far, from /proc/PID/stat.
func cpuTime(b *testing.B, pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64) // fields 14 and 15 of stat, counted from 1
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	const ticks = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticks
}

// procStatus reads a kB field of /proc/PID/status.
func procStatus(b *testing.B, pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}
