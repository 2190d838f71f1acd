package commands

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/workload"
	"github.com/acme/quartermaster/reports/showback"
)

// cardField is the value of a field of a reply's lease card; "" where it has none.
func cardField(r bot.Reply, label string) string {
	for _, s := range r.Sections {
		for _, f := range s.Fields {
			if f.Label == label {
				return f.Value
			}
		}
	}
	return ""
}

// A lease of a template that runs on CPUs only holds no GPU: its card says CPU only, it is billed
// nothing and says so in words, it takes nothing of its team's GPU quota, and it ends at its
// end time with a notice that bills no GPU-hours.
func TestACPUOnlyLeaseHoldsAndBillsNoGPU(t *testing.T) {
	h := templatesOn(t, orbitPolicy)
	r := mustOK(t, h.say("kim@orbit.example", "/gpu submit data-prep input=raw/a output=ds/a for=2h"))
	id := leaseIn(t, r.Text[strings.Index(r.Text, "lease "):])
	l := h.lease(id)
	if l.State != qm.Active || l.GPUs != 0 || len(l.GPUIndex) != 0 {
		t.Fatalf("the CPU-only lease is %s with %d GPUs %v, want active with none", l.State, l.GPUs, l.GPUIndex)
	}
	if strings.Contains(r.Text, "GPU-hour") || strings.Contains(r.Text, "EUR") || strings.Contains(r.Text, "GPU 0") || !strings.Contains(r.Text, "no GPU") {
		t.Errorf("the reply bills or places a GPU, or does not say it holds none: %s", r.Text)
	}
	if g := cardField(r, "GPUs"); !strings.Contains(g, "CPU only") || strings.Contains(g, "1 ×") {
		t.Errorf("the card's GPUs are %q, want CPU only", g)
	}
	if c := cardField(r, "Cost so far"); c != "" {
		t.Errorf("the card bills %s for a lease that holds no GPU", c)
	}
	u, _, err := h.svc.TeamUsage(context.Background(), "robotics")
	if err != nil {
		t.Fatal(err)
	}
	if u.GPUs["duo"] != 0 || u.GPUHoursWeek != 0 {
		t.Errorf("the team's quota counts %d duo GPUs and %.2f GPU-hours for a CPU-only job", u.GPUs["duo"], u.GPUHoursWeek)
	}
	st := mustOK(t, h.say("kim@orbit.example", "/gpu status "+id.String()))
	if g := cardField(st, "GPUs"); !strings.Contains(g, "CPU only") {
		t.Errorf("/gpu status shows GPUs %q, want CPU only", g)
	}
	h.advance(3 * time.Hour)
	sent := h.notices("kim@orbit.example")
	ns := texts(sent)
	if l := h.lease(id); l.State != qm.Expired {
		t.Fatalf("the CPU-only lease is %s after its end, want expired", l.State)
	}
	if !strings.Contains(ns, "expired") || strings.Contains(ns, "GPU-hours") || strings.Contains(ns, "EUR") || !strings.Contains(ns, "no GPU") {
		t.Errorf("the end notice bills GPU-hours, or does not say the lease held no GPU:\n%s", ns)
	}
	// Its Request again asks for the same CPU-only job, which is granted.
	again := ""
	for _, n := range sent {
		for _, a := range n.Actions {
			if a.Label == "Request again" {
				again = a.Command
			}
		}
	}
	if again == "" {
		t.Fatalf("the end notice offers no Request again:\n%s", ns)
	}
	r = mustOK(t, h.say("kim@orbit.example", again))
	if l := h.lease(leaseIn(t, r.Text[strings.Index(r.Text, "lease "):])); l.GPUs != 0 || l.Template != "data-prep" {
		t.Errorf("%s asks for %d GPUs of template %q, want the CPU-only job again", again, l.GPUs, l.Template)
	}
}

// A CPU-only lease is released like any other, and its release bills nothing.
func TestACPUOnlyLeaseIsReleasedAndBilledNothing(t *testing.T) {
	h := templatesOn(t, orbitPolicy)
	r := mustOK(t, h.say("kim@orbit.example", "/gpu submit data-prep input=raw/a output=ds/a for=2h"))
	id := leaseIn(t, r.Text[strings.Index(r.Text, "lease "):])
	h.advance(30 * time.Minute)
	rel := mustOK(t, h.say("kim@orbit.example", "/gpu release "+id.String()))
	if l := h.lease(id); l.State != qm.Released {
		t.Fatalf("the CPU-only lease is %s after its release", l.State)
	}
	if strings.Contains(rel.Text, "GPU-hours") || strings.Contains(rel.Text, "EUR") || !strings.Contains(rel.Text, "no GPU") {
		t.Errorf("the release bills GPU-hours, or does not say the lease held no GPU: %s", rel.Text)
	}
}

// A CPU-only job takes no GPU of its class: a request for every GPU of the class after it is
// granted at once.
func TestACPUOnlyLeaseLeavesItsClassGPUsFree(t *testing.T) {
	h := templatesOn(t, orbitPolicy)
	mustOK(t, h.say("kim@orbit.example", "/gpu submit data-prep class=hex input=raw/a output=ds/a for=2h"))
	r := mustOK(t, h.say("kim@orbit.example", "/gpu request 6 hex for 1h"))
	l := h.lease(leaseIn(t, r.Text))
	if l.State != qm.Active || l.GPUs != 6 {
		t.Errorf("a request for the 6 hex GPUs after a CPU-only job is %s: %s", l.State, r.Text)
	}
}

// A CPU-only lease has no GPU utilization to read, so it is never warned of or reclaimed as idle,
// however long its job runs.
func TestACPUOnlyLeaseIsNeverReclaimedAsIdle(t *testing.T) {
	h := templatesOn(t, orbitPolicy)
	r := mustOK(t, h.say("kim@orbit.example", "/gpu submit data-prep input=raw/a output=ds/a for=6h"))
	id := leaseIn(t, r.Text[strings.Index(r.Text, "lease "):])
	h.sim.SetUtilization(h.lease(id), 0)
	h.advance(5 * time.Hour)
	if l := h.lease(id); l.State != qm.Active {
		t.Errorf("the CPU-only lease is %s (%s) after 5h at 0%% GPU utilization, want active", l.State, l.Reason)
	}
	if ns := texts(h.notices("kim@orbit.example")); strings.Contains(ns, "idle") || strings.Contains(ns, "GPU activity") {
		t.Errorf("the owner of a CPU-only lease was told of idle GPUs:\n%s", ns)
	}
}

// The job of a CPU-only lease asks Slurm for no GPU and runs in its class's partition, pinned to
// no node and never asking for a whole one, on an exclusive class too: it holds no GPU, so the
// service places it nowhere and the scheduler runs it where CPUs are free. Kubernetes is asked for
// no GPU, no GPU node and no anti-affinity by team either.
func TestACPUOnlyLeaseJobAsksForNoGPU(t *testing.T) {
	for _, tc := range []struct{ class, words string }{{"duo", ""}, {"quad", "class=quad "}} {
		h := templatesOn(t, orbitPolicy)
		r := mustOK(t, h.say("kim@orbit.example", "/gpu submit data-prep "+tc.words+"input=raw/a output=ds/a for=2h"))
		l := h.lease(leaseIn(t, r.Text[strings.Index(r.Text, "lease "):]))
		if l.Class != tc.class || l.State != qm.Active {
			t.Fatalf("%s: the CPU-only lease is %s of %s (%s)", tc.class, l.State, l.Class, l.Reason)
		}
		w, err := workload.Render(h.bot.Templates.Catalog, h.svc.Policy, l, workload.Settings{NodeSize: h.svc.NodeSize})
		if err != nil {
			t.Fatal(err)
		}
		s := w.SlurmScript
		if strings.Contains(s, "--gres") || strings.Contains(s, "--exclusive") || !strings.Contains(s, "#SBATCH --partition="+tc.class+"\n") {
			t.Errorf("%s: the CPU-only job asks for a GPU or a whole node, or not for its class's partition:\n%s", tc.class, s)
		}
		if strings.Contains(s, "--nodelist") {
			t.Errorf("%s: the CPU-only job (lease on node %q) is pinned to a node:\n%s", tc.class, l.Node, s)
		}
		if k := w.KubernetesYAML; strings.Contains(k, "gpu") || strings.Contains(k, "podAntiAffinity") || strings.Contains(k, "operator: In\n") {
			t.Errorf("%s: the CPU-only pod asks for a GPU, a GPU node or another team's absence:\n%s", tc.class, k)
		}
	}
}

// The showback counts a CPU-only lease as a lease of its team, with no GPU-hours, cost or idle.
func TestShowbackCountsACPUOnlyLeaseWithoutGPUHours(t *testing.T) {
	h := templatesOn(t, orbitPolicy)
	svc := &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock}
	mustOK(t, h.say("kim@orbit.example", "/gpu submit data-prep input=raw/a output=ds/a for=2h"))
	h.advance(3 * time.Hour)
	w, err := svc.ParseWeek(context.Background(), "2026-W49")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := svc.Report(context.Background(), w, showback.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, row := range rep.Rows {
		if row.Team != "robotics" || row.Class != "duo" {
			continue
		}
		found = true
		if row.Leases != 1 || row.GPUHours != 0 || row.Cost != 0 || row.Idle() != 0 || row.PeakGPUs != 0 {
			t.Errorf("the showback's robotics duo row is %d leases, %.2f GPU-hours, %.2f EUR, %.2f idle, peak %d; want 1 lease and no GPU",
				row.Leases, row.GPUHours, row.Cost, row.Idle(), row.PeakGPUs)
		}
	}
	if !found {
		t.Errorf("the showback has no robotics duo row for the CPU-only lease")
	}
}

// /gpu template previews a CPU-only template as its job is really made: on Kubernetes none of the
// class's node selector, no pin or anti-affinity, and a node affinity that keeps it off every GPU
// node the backend knows; on Slurm no GPU, node or whole node.
func TestTemplatePreviewOfACPUOnlyTemplateIsWhatRuns(t *testing.T) {
	h := templatesOn(t, "../docs/quartermaster.example.yaml")
	r := mustOK(t, h.say("alice@acme.example", "/gpu template data-prep"))
	if len(r.Sections) < 2 {
		t.Fatalf("/gpu template data-prep has no previews: %+v", r)
	}
	slurm, kube := r.Sections[0].Text, r.Sections[1].Text
	for _, c := range h.svc.Policy.Classes {
		for k, v := range c.Kubernetes.NodeSelector {
			if strings.Contains(kube, k) && strings.Contains(kube, v) {
				t.Errorf("the Kubernetes preview picks class %s's nodes (%s=%s):\n%s", c.Name, k, v, kube)
			}
		}
	}
	if strings.Contains(kube, "nodeSelector:") || strings.Contains(kube, "podAntiAffinity") || !strings.Contains(kube, "NotIn") {
		t.Errorf("the Kubernetes preview has a node selector or anti-affinity, or does not keep off the GPU nodes:\n%s", kube)
	}
	inv := h.svc.Backend.Inventory()
	if len(inv) == 0 {
		t.Fatal("the backend reports no nodes")
	}
	for _, n := range inv {
		if n.GPUs > 0 && !strings.Contains(kube, `"`+n.Name+`"`) {
			t.Errorf("the Kubernetes preview does not keep off GPU node %s:\n%s", n.Name, kube)
		}
	}
	if strings.Contains(slurm, "--gres") || strings.Contains(slurm, "--nodelist") || strings.Contains(slurm, "--exclusive") {
		t.Errorf("the Slurm preview asks for a GPU, a node or a whole node:\n%s", slurm)
	}
}
