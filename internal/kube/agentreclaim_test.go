package kube_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/acme/quartermaster/agent/report"
	"github.com/acme/quartermaster/internal/ingest"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/qm/qmtest"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// tundraPolicy: a Kubernetes policy with none of the example's names, its shared class found by
// its own label, with its own idle timeout and grace, and a team whose name is no DNS label.
const tundraPolicy = `
organization: Tundra Works
currency: NOK
timezone: Europe/Oslo
classes:
  - name: sketch
    description: Shared L4 GPUs for notebooks
    sku: L4
    gpu_memory_gib: 24
    price_per_gpu_hour: 5
    isolation: shared
    max_gpus: 2
    max_duration: 10h
    idle_timeout: 40m
    idle_grace: 7m
    kubernetes: {resource: nvidia.com/gpu, node_selector: {tundra.example/pool: sketch}}
  - name: forge
    description: Exclusive H200 nodes
    sku: H200
    gpu_memory_gib: 141
    price_per_gpu_hour: 60
    isolation: exclusive
    max_gpus: 8
    max_duration: 24h
    idle_timeout: 2h
    idle_grace: 20m
    kubernetes: {resource: nvidia.com/gpu, node_selector: {tundra.example/pool: forge}}
default_quota: {gpus: {sketch: 1, forge: 0}, gpu_hours_per_week: 10}
idle: {utilization_below: 8}
teams:
  - name: kelp_lab
    idp_groups: [g-kelp]
    budget_owners: [oskar@tundra.example]
    quota: {gpus: {sketch: 2, forge: 8}, gpu_hours_per_week: 300}
    data_classes: [open]
    storage: {path: /data/kelp, quota_gib: 100, pvc: kelp-vol}
exceptions:
  - name: over-quota
    when: usage.gpus_in_use + request.gpus > team.quota.gpus[class.name]
    why: Beyond the team's quota
approvals: {timeout: 24h}
backend: kubernetes
directory:
  - {user: mira@tundra.example, groups: [g-kelp]}
  - {user: oskar@tundra.example, groups: [g-kelp]}
`

// TestAnIdlePodIsReclaimedFromItsNodesAgentReports walks a lease on Kubernetes through its node
// agent's reports: the agent on the pod's node reports the pod's process (by pod UID) on a GPU;
// while the GPU is busy the lease stays active; once it sits under the policy's threshold (8 %,
// with its memory unchanged) for the class's idle_timeout (40m), the owner is warned with the
// time of the reclaim; busy again in the grace, the warning is lifted; idle again for the
// timeout and the grace (7m), the lease is reclaimed and its Job deleted. A process of another
// pod on the same GPU keeps nothing busy that is not its own.
func TestAnIdlePodIsReclaimedFromItsNodesAgentReports(t *testing.T) {
	ctx := context.Background()
	p, err := policy.Load([]byte(tundraPolicy), "tundra.yaml")
	if err != nil {
		t.Fatal(err)
	}
	node := kaskadeNode("tundra-l4-3", "sketch", "nvidia.com/gpu", 2)
	node.Labels = map[string]string{"kubernetes.io/hostname": node.Name, "tundra.example/pool": "sketch"}
	cs := fake.NewClientset(pvc("qm-kelp-lab-2e8e3e09", "kelp-vol"), node)
	clock := sim.NewClock(time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC))
	db := storetest.Open(t, storetest.SQLite(t))
	notes := &qmtest.NoticeLog{}
	b := newBackend(t, p, cs)
	svc := &qm.Service{Policy: p, Store: db, Backend: b, Clock: clock, Directory: p, Notifier: notes,
		Telemetry: ingest.Telemetry{Store: db}, Logger: storetest.Logger(t)}
	w := &world{t: t, cs: cs, svc: svc, notes: notes}
	w.reconcile()

	out, err := svc.Request(ctx, qm.LeaseRequest{User: "mira@tundra.example", GPUs: 1, Class: "sketch", Duration: 8 * time.Hour, Template: "jupyterlab"})
	if err != nil {
		t.Fatal(err)
	}
	id := out.Lease.ID
	ns, job, ok := strings.Cut(strings.TrimPrefix(out.Lease.Ref, "job/"), "/")
	if !ok || out.Lease.State != qm.Provisioning {
		t.Fatalf("lease %s %q ref %q", out.Lease.State, out.Lease.Reason, out.Lease.Ref)
	}
	// The Job controller, scheduler and kubelet: the Job's pod runs on the node, with a UID.
	const podUID = "7c1e4b2a-9d3f-4a6b-8e2c-1f0a9b8c7d6e"
	k, err := cs.BatchV1().Jobs(ns).Get(ctx, job, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	started := clock.Now()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: job + "-q7x2k", Labels: k.Spec.Template.Labels, UID: types.UID(podUID),
		OwnerReferences: []metav1.OwnerReference{{Kind: "Job", Name: job, APIVersion: "batch/v1"}}},
		Spec: corev1.PodSpec{NodeName: node.Name},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "main",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Time{Time: started}}}}}}}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w.setJob(ns, job, func(j *batchv1.Job) { j.Status.StartTime = &metav1.Time{Time: started}; j.Status.Active = 1 })
	w.reconcile()
	if l := w.lease(id); l.State != qm.Active || !strings.EqualFold(l.Node, node.Name) {
		t.Fatalf("lease %s on %q (%q); want active on %s", l.State, l.Node, l.Reason, node.Name)
	}

	// The node's agent and the service's ingest, as serve wires them.
	ing := ingest.New(ingest.Config{Store: db, Clock: clock, IdleBelow: p.Idle.UtilizationBelow, Location: p.Location,
		Logger: storetest.Logger(t), IndexEvery: time.Nanosecond, PodUIDs: b.PodUIDs,
		Leases: func(ctx context.Context) ([]*qm.Lease, error) {
			return svc.List(ctx, qm.LeaseFilter{States: []qm.State{qm.Provisioning, qm.Active, qm.IdleWarned}})
		}})
	mux := http.NewServeMux()
	ing.Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	token, err := ingest.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateAgentToken(ctx, node.Name, ingest.HashToken(token), clock.Now()); err != nil {
		t.Fatal(err)
	}
	topo := &report.Topology{GPUs: []report.TopologyGPU{
		{Index: 0, UUID: "GPU-tundra-0", NVLinks: []int{0, 0}, PCIe: []string{"X", "PHB"}},
		{Index: 1, UUID: "GPU-tundra-1", NVLinks: []int{0, 0}, PCIe: []string{"PHB", "X"}}}}
	seq := uint64(0)
	// minute reports one minute of the agent: GPU 0 at util with the lease's pod on it, GPU 1
	// busy with a process of a pod no lease owns; then the service's pass.
	minute := func(util float64) {
		t.Helper()
		clock.Advance(time.Minute)
		seq++
		r := report.Report{Version: report.Version, Node: node.Name, At: clock.Now(), Seq: seq, Interval: 60, Topology: topo, TopologyHash: topo.Hash(),
			GPUs: []report.GPU{
				{Index: 0, UUID: "GPU-tundra-0", Util: &util, MemUsed: 6 << 30, MemTotal: 24 << 30,
					Processes: []report.Process{{PID: 4100, Pod: podUID, MemUsed: 6 << 30}}},
				{Index: 1, UUID: "GPU-tundra-1", Util: ptrTo(97.0), MemUsed: 20 << 30, MemTotal: 24 << 30,
					Processes: []report.Process{{PID: 5200, Pod: "0b9a8c7d-6e5f-4a3b-9c2d-1e0f9a8b7c6d", MemUsed: 20 << 30}}},
			}}
		body, _ := json.Marshal(r)
		req, _ := http.NewRequest(http.MethodPost, srv.URL+report.Path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var ans map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&ans)
		resp.Body.Close()
		if resp.StatusCode != 200 || ans["accepted"] != true {
			t.Fatalf("report %d: %d %v", seq, resp.StatusCode, ans)
		}
		if err := ing.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if err := svc.Tick(ctx); err != nil {
			t.Fatal(err)
		}
	}
	state := func() qm.State { return w.lease(id).State }

	for range 30 { // busy
		minute(55)
	}
	if s := state(); s != qm.Active || len(notes.Of(qm.NoticeIdleWarning, id)) != 0 {
		t.Fatalf("a busy pod's lease: %s, warnings %v", s, notes.Kinds(id))
	}
	// Idle (under 8 %, memory unchanged) for under the 40m timeout: nothing yet.
	for range 38 {
		minute(3)
	}
	if s := state(); s != qm.Active {
		t.Fatalf("after 38m idle: %s; want active until the 40m timeout", s)
	}
	for range 3 {
		minute(3)
	}
	if s := state(); s != qm.IdleWarned || len(notes.Of(qm.NoticeIdleWarning, id)) != 1 {
		t.Fatalf("after 41m idle: %s, notices %v; want one idle warning", s, notes.Kinds(id))
	}
	// Busy again within the grace: the warning is lifted, nothing reclaimed.
	minute(70)
	if s := state(); s != qm.Active || len(notes.Of(qm.NoticeBusyAgain, id)) != 1 {
		t.Fatalf("busy again in the grace: %s, notices %v", s, notes.Kinds(id))
	}
	// Idle for the timeout and the grace: reclaimed, its Job gone.
	for range 41 + 8 {
		minute(0)
	}
	l := w.lease(id)
	if l.State != qm.Reclaimed || len(notes.Of(qm.NoticeReclaimed, id)) != 1 {
		t.Fatalf("idle for the timeout and the grace: %s %q, notices %v; want reclaimed", l.State, l.Reason, notes.Kinds(id))
	}
	if _, err := cs.BatchV1().Jobs(ns).Get(ctx, job, metav1.GetOptions{}); err == nil {
		t.Errorf("the reclaimed lease's Job %s/%s is still there", ns, job)
	}
	t.Logf("reclaimed: %q at %s; notices %v", l.Reason, l.EndedAt, notes.Kinds(id))
}

func ptrTo(v float64) *float64 { return &v }
