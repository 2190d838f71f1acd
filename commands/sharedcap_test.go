package commands

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/waits"
)

// twoSharedClasses is the other policy with a second shared class (lab, one node of 4 GPUs)
// under the same cap as dev: 24 GPUs in all, so the shared classes may hold 4 together.
func twoSharedClasses(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(otherPolicy)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(raw), "  - name: bigiron\n", `  - name: lab
    description: Shared T4 for tests
    sku: T4
    gpu_memory_gib: 16
    price_per_gpu_hour: 0.30
    isolation: shared
    max_gpus: 2
    max_duration: 6h
    idle_timeout: 20m
    idle_grace: 5m
    capacity_share: 0.20
    slurm: {partition: lab, gres: "gpu:t4"}
    kubernetes: {resource: nvidia.com/gpu, node_selector: {pool: lab}}
  - name: bigiron
`, 1)
	s = strings.ReplaceAll(s, "{gpus: {dev: 6, bigiron: 8}", "{gpus: {dev: 6, lab: 6, bigiron: 8}")
	s = strings.Replace(s, "    - {name: a100,", "    - {name: t4, count: 1, class: lab, gpus: 4, nvlink_islands: 4}\n    - {name: a100,", 1)
	p := filepath.Join(t.TempDir(), "twoshared.yaml")
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A request queued because another shared class fills the shared cap is told the wait until
// that class's leases free the cap, never that no wait is expected: with the predictor too,
// which knows only its own class's leases.
func TestAQueueUnderACapFilledByAnotherClassSaysItsWait(t *testing.T) {
	for _, model := range []bool{false, true} {
		t.Run(fmt.Sprintf("predictor=%v", model), func(t *testing.T) {
			h := newHarnessOn(t, twoSharedClasses(t))
			if model {
				h.svc.Waits = waits.New()
			}
			for _, u := range []string{"rita", "rolf", "sam", "sven"} {
				mustOK(t, h.say(u+"@borealis.example", "/gpu request 1 lab for 2h"))
			}
			for _, ask := range []string{"/gpu request 1 dev for 2h", "/gpu request 2 dev for 2h"} {
				r := mustOK(t, h.say("olga@borealis.example", ask))
				if !strings.Contains(r.Text, "is queued") || !strings.Contains(r.Text, "Predicted wait: about 2h") {
					t.Errorf("%s with the cap full of lab leases ending in 2h: %s", ask, r.Text)
				}
			}
			for _, ask := range []string{"/gpu estimate 1 dev 1h", "/gpu estimate 2 dev 1h"} {
				e := mustOK(t, h.say("vic@borealis.example", ask)).Text
				for _, bad := range []string{"none expected", "GPUs are free now", "probably none"} {
					if strings.Contains(e, bad) {
						t.Errorf("%s under a full cap is told %q: %s", ask, bad, e)
					}
				}
			}
		})
	}
}

// A request of several GPUs on a shared class whose own nodes have room, queued because the
// shared classes together fill the cap, is told the wait until the cap has room, not none.
func TestSeveralGPUsUnderAFullCapSayTheirWait(t *testing.T) {
	for _, model := range []bool{false, true} {
		t.Run(fmt.Sprintf("predictor=%v", model), func(t *testing.T) {
			h := newHarnessOn(t, twoSharedClasses(t))
			if model {
				h.svc.Waits = waits.New()
			}
			mustOK(t, h.say("rita@borealis.example", "/gpu request 2 dev for 2h"))
			mustOK(t, h.say("sam@borealis.example", "/gpu request 2 lab for 3h"))
			r := mustOK(t, h.say("olga@borealis.example", "/gpu request 2 dev for 2h"))
			if !strings.Contains(r.Text, "is queued") {
				t.Fatalf("2 dev GPUs with the cap full: %s", r.Text)
			}
			for _, bad := range []string{"none expected", "GPUs are free now", "probably none"} {
				if strings.Contains(r.Text, bad) {
					t.Errorf("queued under a full cap, yet told %q: %s", bad, r.Text)
				}
			}
		})
	}
}
