//go:build faults

package faults_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/agent/report"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// nodeAgent reports, every second, the GPUs of a Slurm node as a node agent would: the process of
// each running lease's job on the lease's GPU, idle (0 %, memory that does not change) for the
// leases idle says, busy for the others. Reports go to the replicas in turn.
func nodeAgent(ctx context.Context, t *testing.T, db, node string, targets []string, idle func(lease string) bool) {
	out, err := exec.Command(binary, "agent-token", "create", node, "--db", db).Output()
	if err != nil {
		t.Errorf("agent-token create: %v", err)
		return
	}
	token := strings.TrimSpace(string(out))
	topo := &report.Topology{}
	for i := 0; i < 12; i++ {
		links := make([]int, 12)
		pcie := make([]string, 12)
		for j := range pcie {
			pcie[j] = "SYS"
		}
		pcie[i] = "X"
		topo.GPUs = append(topo.GPUs, report.TopologyGPU{Index: i, UUID: fmt.Sprintf("GPU-%s-%d", node, i), Minor: i, NVLinks: links, PCIe: pcie})
	}
	cl := &http.Client{Timeout: 5 * time.Second}
	for seq := uint64(1); ; seq++ {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		busy, zero := 60.0, 0.0
		gpus := make([]report.GPU, 12)
		for i := range gpus {
			gpus[i] = report.GPU{Index: i, UUID: topo.GPUs[i].UUID, Util: &zero, MemTotal: 48 << 30}
		}
		for _, r := range storetest.Query(t, db, "SELECT id, ref, gpu_index FROM leases WHERE state IN ('active', 'idle_warned') AND ref <> '' AND node = $1", node) {
			i := 0
			if f := strings.FieldsFunc(r[2], func(c rune) bool { return c < '0' || c > '9' }); len(f) > 0 {
				i, _ = strconv.Atoi(f[0])
			}
			if i >= len(gpus) {
				continue
			}
			gpus[i].Processes = append(gpus[i].Processes, report.Process{PID: uint32(1000 + len(gpus[i].Processes)), MemUsed: 1 << 30, Job: r[1]})
			gpus[i].MemUsed = 1 << 30
			if !idle("L-" + r[0]) {
				gpus[i].Util = &busy
			}
		}
		rep := report.Report{Version: report.Version, Node: node, At: time.Now().UTC(), Seq: seq, Interval: 1, GPUs: gpus,
			TopologyHash: topo.Hash(), Topology: topo}
		b, _ := json.Marshal(rep)
		req, _ := http.NewRequest(http.MethodPost, targets[int(seq)%len(targets)]+report.Path, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		if resp, err := cl.Do(req); err == nil {
			resp.Body.Close()
		}
	}
}
