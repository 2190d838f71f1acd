package slurm_test

import (
	"context"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// kilnPolicy has two classes of its own names that count the same GPUs of the test cluster's
// node, its h100s, through its two partitions: kiln (exclusive) and loom (shared), in francs.
const kilnPolicy = `organization: Kiln Works
currency: CHF
timezone: Europe/Zurich
classes:
  - {name: kiln, sku: H100, price_per_gpu_hour: 3.3, isolation: exclusive, max_gpus: 8, max_duration: 24h, slurm: {partition: train, gres: "gpu:h100"}}
  - {name: loom, sku: H100, price_per_gpu_hour: 2.1, isolation: shared, max_gpus: 8, max_duration: 8h, slurm: {partition: interactive, gres: "gpu:h100"}}
teams:
  - {name: glas, idp_groups: [g-glas], budget_owners: [urs@kiln.example], quota: {gpus: {kiln: 8, loom: 8}, gpu_hours_per_week: 0}}
  - {name: holz, idp_groups: [g-holz], budget_owners: [vreni@kiln.example], quota: {gpus: {kiln: 8, loom: 8}, gpu_hours_per_week: 0}}
backend: slurm
directory:
  - {user: urs@kiln.example, groups: [g-glas]}
  - {user: vreni@kiln.example, groups: [g-holz]}
`

// usedGPUs is how many GPUs of type typ Slurm reports allocated on node (scontrol's GresUsed).
func (e *env) usedGPUs(node, typ string) int {
	e.t.Helper()
	m := regexp.MustCompile(`GresUsed=\S*gpu:` + regexp.QuoteMeta(typ) + `:(\d+)`).FindStringSubmatch(e.slurmCmd("scontrol", "show", "node", "-d", "-o", node))
	if m == nil {
		e.t.Fatalf("scontrol does not say how many %s GPUs of %s are used", typ, node)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// A lease of an exclusive class that is not a reservation holds the GPUs it is billed for, not
// its node whole: Slurm gives its job those GPUs alone (no --exclusive), so that the team's other
// leases of the class share the node. Another class that counts the same GPUs of the node sees
// them held, as Slurm does: the catalog shows as many of them free as Slurm has free, and a
// request for more of them waits in the service's queue rather than being handed to Slurm to
// wait there.
func TestAnExclusiveClassesLeaseHoldsItsGPUsForAnotherClassOfTheSameGPUs(t *testing.T) {
	p, err := policy.Load([]byte(kilnPolicy), "kiln.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvOn(t, onSlurm(t, p))
	ctx := context.Background()
	node := e.nodeName()
	l := e.request("urs@kiln.example", 1, "kiln", time.Hour, "", nil).Lease
	l = e.waitLease(l.ID, qm.Active)
	if o := e.jobField(l.Ref, "OverSubscribe"); o == "NO" {
		t.Errorf("the kiln lease's job %s holds its node whole (OverSubscribe=%s) though the lease is billed for 1 GPU", l.Ref, o)
	}
	slurmFree := 8 - e.usedGPUs(node, "h100")
	if slurmFree != 7 {
		t.Fatalf("Slurm has %d h100 free with the 1-GPU kiln lease running; the test needs 7", slurmFree)
	}
	if _, err := e.svc.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := e.svc.Catalog(ctx, "vreni@kiln.example")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st {
		if s.Class.Name == "loom" && s.Free != slurmFree {
			t.Errorf("the catalog shows %d of %d loom GPUs free; Slurm has %d of the node's h100 free", s.Free, s.Capacity, slurmFree)
		}
	}
	big := e.request("vreni@kiln.example", 8, "loom", time.Hour, "", nil).Lease
	if big = e.pass(big.ID); big.State != qm.Queued || big.Ref != "" {
		t.Errorf("a request for 8 loom GPUs while Slurm has %d free is %s with job %q (%s); want it queued in the service, nothing submitted",
			slurmFree, big.State, big.Ref, big.Reason)
	}
}

// A reservation of one class holds its node whole (--exclusive), in Slurm and in the service:
// another class that counts the same GPUs of the node shows none of them free in the catalog,
// and a request of it waits in the service's queue until the reservation ends.
func TestAReservationLeavesNoneFreeForAnotherClassOfTheSameGPUs(t *testing.T) {
	p, err := policy.Load([]byte(kilnPolicy), "kiln.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvOn(t, onSlurm(t, p))
	ctx := context.Background()
	out, err := e.svc.Request(ctx, qm.LeaseRequest{User: "urs@kiln.example", GPUs: 1, Class: "kiln", Duration: time.Hour, Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	l := e.waitLease(out.Lease.ID, qm.Active)
	if used := e.usedGPUs(e.nodeName(), "h100"); used != 8 {
		t.Fatalf("Slurm reports %d h100 used with the reservation %s running; the test needs 8", used, l.ID)
	}
	if _, err := e.svc.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := e.svc.Catalog(ctx, "vreni@kiln.example")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st {
		if s.Class.Name == "loom" && s.Free != 0 {
			t.Errorf("with the node reserved whole by %s, the catalog shows %d of %d loom GPUs free", l.ID, s.Free, s.Capacity)
		}
	}
	nb := e.request("vreni@kiln.example", 1, "loom", time.Hour, "", nil).Lease
	if nb = e.pass(nb.ID); nb.State != qm.Queued || nb.Ref != "" {
		t.Errorf("a request for 1 loom GPU while the node is reserved whole is %s with job %q (%s); want it queued in the service", nb.State, nb.Ref, nb.Reason)
	}
}
