package templates_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/workload"
)

// examplePolicy is the documented example policy, whose class train and team vision the golden
// files' leases are of.
const examplePolicy = "../../docs/quartermaster.example.yaml"

// serviceInput is what the service renders a lease of tp with on the example policy (its class
// class, team vision): the class's settings as workload.InputFor makes them of the lease (for a
// CPU-only one none of the class's node selector or tolerations), and the GPU nodes of the
// policy's simulated cluster, as quartermaster templates render previews it.
func serviceInput(t testing.TB, tp *templates.Template, class string, params templates.Params) templates.Input {
	t.Helper()
	p, err := policy.LoadFile(examplePolicy)
	if err != nil {
		t.Fatal(err)
	}
	ex := templates.ExampleInput(tp, class, params)
	l := &qm.Lease{ID: 42, User: ex.User, Team: ex.Team, Class: ex.Class, GPUs: ex.GPUs, Duration: ex.Duration, Template: tp.Name, Params: params}
	if tp.CPUOnly() {
		l.GPUs = 0
	}
	in, err := workload.InputFor(p, l, workload.Settings{GPUNodes: func() []string {
		return workload.GPUNodes(sim.New(p, sim.NewClock(time.Unix(0, 0))).Inventory())
	}})
	if err != nil {
		t.Fatal(err)
	}
	in.Params = params
	return in
}

// The golden manifest of a CPU-only template is what its lease really gets: rendered with the
// settings the service builds for it, so it shows none of the class's node selector and keeps
// off the GPU nodes, as the backend makes it.
func TestCPUOnlyGoldenIsWhatItsLeaseGets(t *testing.T) {
	found := false
	for _, tp := range catalog(t).List() {
		if !tp.CPUOnly() {
			continue
		}
		found = true
		out, err := tp.Render(serviceInput(t, tp, "", exampleParams(t, tp)))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("testdata", tp.Name+".kubernetes.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if string(want) != out.KubernetesYAML {
			t.Errorf("testdata/%s.kubernetes.yaml is not what a lease of it gets:\n%s", tp.Name, diff(string(want), out.KubernetesYAML))
		}
	}
	if !found {
		t.Skip("the catalog has no CPU-only template")
	}
}
