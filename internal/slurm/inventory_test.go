package slurm_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/slurm"
)

// The inventory fixtures: testdata/sinfo-22.05.json is sinfo -N --json of the test cluster (Slurm
// 22.05.8, OpenAPI v0.0.38) while two jobs held 2 h100 and 1 l40s; its node vm is as Slurm printed
// it, and copies of it with other names, states, partitions and GRES stand for what one node
// cannot show (drained, down, not responding, another GPU type, a CPU node).
// testdata/scontrol-node-22.05.txt is scontrol show node -d -o of the same moment, with the same
// copies. testdata/sinfo-24.11.json is the same nodes in the shape Slurm 23.11 and later print
// ("sinfo" records per node and partition, state lists, gres.total and gres.used), written by
// hand after that shape.

// ownJobs is squeue -h -o '%N|%b|%k' at the moment of the fixtures: the service's own running
// jobs (comment qm:L-…), whose GPUs the service counts itself, and someone else's.
const ownJobs = `vm|gres:gpu:h100:2|qm:L-1
gpu2|gres/gpu:h100=3|qm:L-2
gpu[2,10]|gres:gpu:h100:1|qm:L-3
gpu10|gres:gpu:h100:1|(null)
vm|gres:gpu:l40s:1|someone else's qm:L-9
`

// wantInventory is what the fixtures hold for the example policy's classes (interactive:
// partition interactive, gpu:l40s; train: partition train, gpu:h100): the drained gpu3, the
// down gpu4, the not-responding gpu5, the a100 node gpu11 and the CPU node cpu1 are left out.
// Used is what jobs that are not the service's hold: gpu2's 8 allocated h100 less its own 3 and
// 1, gpu10's 3 less its own 1, vm's 2 less its own 2.
var wantInventory = []qm.Node{
	{Name: "gpu10", Class: "interactive", GPUs: 2, Used: 0, GRES: "gpu:l40s"},
	{Name: "vm", Class: "interactive", GPUs: 4, Used: 1, GRES: "gpu:l40s"},
	{Name: "gpu2", Class: "train", GPUs: 8, Used: 4, GRES: "gpu:h100"},
	{Name: "gpu10", Class: "train", GPUs: 4, Used: 2, GRES: "gpu:h100"},
	{Name: "vm", Class: "train", GPUs: 8, Used: 0, GRES: "gpu:h100"},
}

func readFixture(t testing.TB, name string) string {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestInventoryFromSinfo: the inventory lists each usable node under every class whose partition
// and GPU type it has, with its GPUs of that type and those other jobs than the service's hold,
// from each shape Slurm prints.
func TestInventoryFromSinfo(t *testing.T) {
	for _, c := range []struct {
		name, sinfo, scontrol string
	}{
		{"sinfo 22.05", readFixture(t, "sinfo-22.05.json"), ""},
		{"sinfo 24.11", readFixture(t, "sinfo-24.11.json"), ""},
		{"scontrol where sinfo has no JSON", "", readFixture(t, "scontrol-node-22.05.txt")},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &stub{reply: func(name string, args []string) (string, error) {
				switch {
				case name == "sinfo" && c.sinfo != "":
					return c.sinfo, nil
				case name == "sinfo":
					return "", errors.New("exit status 1: sinfo: error: unable to find plugin: serializer/json")
				case name == "scontrol" && c.scontrol != "":
					return c.scontrol, nil
				case name == "squeue" && strings.Join(args, " ") == "-h -t RUNNING,COMPLETING,SUSPENDED,STOPPED,CONFIGURING -o %N|%b|%k":
					return ownJobs, nil
				}
				return "", fmt.Errorf("unexpected %s %v", name, args)
			}}
			b := stubBackend(t, s)
			if inv := b.Inventory(); inv != nil {
				t.Fatalf("inventory before the first refresh: %v, want nil (unknown)", inv)
			}
			if err := b.RefreshInventory(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := b.Inventory(); !reflect.DeepEqual(got, wantInventory) {
				t.Errorf("inventory\n got %+v\nwant %+v", got, wantInventory)
			}
		})
	}
}

// TestInventoryKeepsLastGood: a refresh that cannot read the nodes keeps the last inventory and
// says why; one whose classes match no node gives an empty inventory, not an unknown one.
func TestInventoryKeepsLastGood(t *testing.T) {
	var mu sync.Mutex
	sinfo := readFixture(t, "sinfo-22.05.json")
	fail := false
	s := &stub{reply: func(name string, _ []string) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if fail {
			return "", errors.New("exit status 1: slurm_load_node: Unable to contact slurm controller (connect failure)")
		}
		switch name {
		case "sinfo":
			return sinfo, nil
		case "squeue":
			return ownJobs, nil
		}
		return "", errors.New("unexpected " + name)
	}}
	b := stubBackend(t, s)
	ctx := context.Background()
	if err := b.RefreshInventory(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	fail = true
	mu.Unlock()
	err := b.RefreshInventory(ctx)
	if err == nil || !strings.Contains(err.Error(), "Unable to contact slurm controller") {
		t.Errorf("refresh with slurmctld down: %v", err)
	}
	if got := b.Inventory(); !reflect.DeepEqual(got, wantInventory) {
		t.Errorf("after a failed refresh the inventory is %+v, want the last one", got)
	}

	mu.Lock()
	fail = false
	sinfo = `{"nodes": [{"name": "cpu1", "state": "idle", "partitions": ["cpu"], "gres": "", "gres_used": ""}], "errors": []}`
	mu.Unlock()
	if err := b.RefreshInventory(ctx); err != nil {
		t.Fatal(err)
	}
	if got := b.Inventory(); got == nil || len(got) != 0 {
		t.Errorf("a cluster without GPU nodes of any class: %#v, want an empty, known inventory", got)
	}
}

// TestInventoryConcurrent: readers and a refresher at once (run with -race).
func TestInventoryConcurrent(t *testing.T) {
	sinfo := readFixture(t, "sinfo-22.05.json")
	b := stubBackend(t, &stub{reply: func(name string, _ []string) (string, error) {
		if name == "squeue" {
			return ownJobs, nil
		}
		return sinfo, nil
	}})
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if inv := b.Inventory(); inv != nil && len(inv) != len(wantInventory) {
					t.Errorf("a reader saw %d nodes", len(inv))
					return
				}
			}
		}()
	}
	for range 20 {
		if err := b.RefreshInventory(ctx); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
}

// TestInventoryOfTestCluster reads the real test cluster: its one node under both classes, with
// the GPUs a job outside Quartermaster holds counted as used, and those of the service's own
// running lease not (the service counts its leases itself).
func TestInventoryOfTestCluster(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if err := e.backend.RefreshInventory(ctx); err != nil {
		t.Fatal(err)
	}
	host := e.nodeName()
	want := []qm.Node{{Name: host, Class: "interactive", GPUs: 4, GRES: "gpu:l40s"}, {Name: host, Class: "train", GPUs: 8, GRES: "gpu:h100"}}
	if got := e.backend.Inventory(); !reflect.DeepEqual(got, want) {
		t.Fatalf("idle test cluster: %+v, want %+v", got, want)
	}
	l := e.request("alice@acme.example", 3, "train", time.Hour, "", nil).Lease
	e.waitLease(l.ID, qm.Active)
	out := e.slurmCmd("sbatch", "--parsable", "-p", "train", "--gres=gpu:h100:2", "-t", "10", "-o", "/dev/null", "--wrap", "sleep 600")
	other, _, _ := strings.Cut(strings.TrimSpace(out), ";")
	t.Cleanup(func() { _ = exec.Command("scancel", other).Run() })
	e.waitJob(other, "RUNNING")
	if err := e.backend.RefreshInventory(ctx); err != nil {
		t.Fatal(err)
	}
	want[1].Used = 2
	if got := e.backend.Inventory(); !reflect.DeepEqual(got, want) {
		t.Errorf("with 3 h100 leased and 2 held outside Quartermaster: %+v, want %+v", got, want)
	}
}

// FuzzParseSinfo: any bytes give nodes or an error, never a panic, and the inventory built from
// them never says more GPUs are used than a node has.
func FuzzParseSinfo(f *testing.F) {
	// Small seeds in both shapes: the fuzzer minimizes every new input, slow on large ones.
	f.Add([]byte(`{"nodes": [{"name": "vm", "state": "mixed", "state_flags": ["DRAIN"], "partitions": ["interactive", "train"],
	 "gres": "gpu:h100:8,gpu:l40s:4", "gres_used": "gpu:h100:2(IDX:0-1),gpu:l40s:1(IDX:8)"}], "errors": []}`))
	f.Add([]byte(`{"sinfo": [{"nodes": {"nodes": ["gpu[01-03,7]"]}, "node": {"state": ["IDLE", "NOT_RESPONDING"]}, "partition": {"name": "train"},
	 "gres": {"total": "gpu:h100:8(S:0,1)", "used": "gpu:h100:9(IDX:0,2-3)"}}], "errors": []}`))
	p := examplePolicy(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		nodes, err := slurm.ParseSinfo(data)
		if err != nil {
			return
		}
		checkInventory(t, slurm.BuildInventory(p, nodes, nil))
	})
}

// FuzzParseScontrolNodes: the same for scontrol show node -d -o.
func FuzzParseScontrolNodes(f *testing.F) {
	f.Add([]byte("NodeName=vm CPUAlloc=2 Gres=gpu:h100:8,gpu:l40s:4 GresDrain=N/A GresUsed=gpu:h100:2(IDX:0-1),gpu:l40s:1(IDX:8) State=MIXED Partitions=interactive,train\n"))
	f.Add([]byte("NodeName=a State=IDLE*+DRAIN$ Partitions=train Gres=gpu:h100:x,gpu:h100:-1,gpu GresUsed=gpu:h100:99\n"))
	p := examplePolicy(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		nodes, err := slurm.ParseScontrolNodes(data)
		if err != nil {
			return
		}
		checkInventory(t, slurm.BuildInventory(p, nodes, nil))
	})
}

func checkInventory(t *testing.T, inv []qm.Node) {
	for _, n := range inv {
		if n.Name == "" || n.GPUs <= 0 || n.Used < 0 || n.Used > n.GPUs {
			t.Fatalf("inventory node %+v", n)
		}
	}
}

// FuzzParseOwnJobs: whatever squeue prints, the service's own jobs never make a node's use
// negative or more than the node has.
func FuzzParseOwnJobs(f *testing.F) {
	f.Add([]byte(ownJobs))
	f.Add([]byte("gpu[01-99999]|gres/gpu:h100=99,cpu=4|qm:L-1\n|||\n"))
	p := examplePolicy(f)
	nodes, err := slurm.ParseSinfo([]byte(readFixture(f, "sinfo-22.05.json")))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		own := slurm.ParseOwnJobs(data, func(c string) bool { return strings.HasPrefix(c, "qm:") })
		checkInventory(t, slurm.BuildInventory(p, nodes, own))
	})
}

// TestInventoryLeavesOutReservedNodes: a node in an administrator's reservation for others
// (sinfo: reserved; State=IDLE+RESERVED) runs no job of the service, which names no reservation:
// a lease placed there would wait in Slurm's queue (ReqNodeNotAvail) while the inventory shows
// its GPUs free. It is left out until the reservation ends.
func TestInventoryLeavesOutReservedNodes(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	host := e.nodeName()
	e.slurmCmd("scontrol", "create", "reservation", "ReservationName=qmtest-others", "StartTime=now", "Duration=10",
		"Users=nobody", "Nodes="+host, "Flags=IGNORE_JOBS")
	t.Cleanup(func() {
		cmd := exec.Command("scontrol", "delete", "ReservationName=qmtest-others")
		cmd.Env = append(os.Environ(), "SLURM_CONF="+e.conf)
		_ = cmd.Run()
	})
	e.eventually("the node to be reserved", func() bool {
		return strings.Contains(e.slurmCmd("scontrol", "show", "node", "-o", host), "RESERVED")
	})
	if err := e.backend.RefreshInventory(ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.backend.Inventory(); len(got) != 0 {
		t.Errorf("with the only node reserved for others: %+v, want no nodes", got)
	}
}
