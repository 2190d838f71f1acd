package commands

import (
	"context"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
)

// TestAKubernetesLeaseNamesNoGPUIndexes: on Kubernetes the device plugin picks the devices a pod
// gets (a MIG slice, or a GPU of a node); the service never learns which. A running workspace of
// 2 MIG slices reads its count and its node, not GPU numbers the service made up for its own
// bookkeeping ("mig-1 GPU 0,1"), in the message that it is ready, in its status and in its list.
func TestAKubernetesLeaseNamesNoGPUIndexes(t *testing.T) {
	k := newKubeHarness(t, "testdata/borealis-kube.yaml", append(borealisNodes(), borealisClaims()...)...)
	k.reconcile()
	const ines, ns = "ines@borealis.example", "qm-rl-agents-a4b8f902"
	id := leaseIn(t, k.say(ines, "/gpu request 2 slice 3h").Text)
	l, _ := k.svc.Get(context.Background(), id)
	job := l.Ref[strings.LastIndex(l.Ref, "/")+1:]
	k.addPod(ns, job, job+"-a", podRunsOn("mig-1", k.clock.Now()))
	k.reconcile()
	ready := k.notices(ines)
	if len(ready) != 1 {
		t.Fatalf("notices once it runs: %+v", ready)
	}
	status := k.say(ines, "/gpu status "+id.String()).PlainText()
	list := k.say(ines, "/gpu list").PlainText()
	for what, text := range map[string]string{"the ready notice": ready[0].Text, "status": status, "list": list} {
		if strings.Contains(text, "GPU 0") || strings.Contains(text, "GPU 1") || strings.Contains(text, "GPU 2") {
			t.Errorf("%s %q names GPU indexes the service does not know", what, text)
		}
		if !strings.Contains(text, "mig-1") {
			t.Errorf("%s %q does not name the node it runs on, mig-1", what, text)
		}
	}
	for what, text := range map[string]string{"the ready notice": ready[0].Text, "status": status} {
		if !strings.Contains(text, "2 × slice") {
			t.Errorf("%s %q does not say how many slices it holds", what, text)
		}
	}
	if l, _ := k.svc.Get(context.Background(), id); l.State != qm.Active {
		t.Errorf("%s is %s, want active", id, l.State)
	}
}
