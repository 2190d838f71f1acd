package kube_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/acme/quartermaster/internal/kube"
	"github.com/acme/quartermaster/internal/qm"
)

// TestInstancesSharingAClusterKeepTheirWorkspacesApart: two installations on one cluster (a
// production and a staging service, QM_KUBE_INSTANCE prod and Staging_2) both number their leases
// from L-1, and both put team vision's workspaces in qm-vision. Each one's L-1 gets a Job and a
// Service of its own: neither takes the other's Job for its own, each one's reconcile pass sees
// its workspace, each Service sends its user to its own workspace's pod only, and ending one
// lease leaves the other running. The default instance keeps its names (qm-l-1-ssh-shell).
func TestInstancesSharingAClusterKeepTheirWorkspacesApart(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset(pvc("qm-vision", "team-storage"))
	type install struct {
		b  *kube.Backend
		l  *qm.Lease
		st qm.Started
	}
	var installs []*install
	for _, instance := range []string{"prod", "Staging_2", ""} {
		b, err := kube.New(kube.Config{Policy: examplePolicy(t), Catalog: catalog(t), Client: cs, Instance: instance})
		if err != nil {
			t.Fatal(err)
		}
		in := &install{b: b, l: &qm.Lease{ID: 1, User: "alice@acme.example", Team: "vision", Class: "interactive", GPUs: 1, Duration: time.Hour}}
		if in.st, err = b.Start(ctx, in.l); err != nil {
			t.Fatalf("instance %q: %v", instance, err)
		}
		in.l.Ref = in.st.Ref
		installs = append(installs, in)
	}
	if got := installs[2].st.Ref; got != "job/qm-vision/qm-l-1-ssh-shell" {
		t.Errorf("the default instance's workspace is %s, want job/qm-vision/qm-l-1-ssh-shell", got)
	}
	refs := map[string]bool{}
	for _, in := range installs {
		if refs[in.st.Ref] {
			t.Errorf("two installations' L-1 share %s", in.st.Ref)
		}
		refs[in.st.Ref] = true
		name := in.st.Ref[strings.LastIndexByte(in.st.Ref, '/')+1:]
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 || len(name) > 52 {
			t.Errorf("object name %q: %v", name, errs)
		}
		if !strings.Contains(in.st.Connect, "@"+name+".qm-vision.svc") {
			t.Errorf("connect %q does not name the workspace's Service %s", in.st.Connect, name)
		}
		jobs, err := in.b.Jobs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) != 1 || jobs[0].Ref != in.st.Ref || jobs[0].Lease != 1 {
			t.Errorf("the reconcile pass of the installation that made %s sees %+v", in.st.Ref, jobs)
		}
	}
	// Each Service selects its own workspace's pods, not the other installations' L-1.
	for _, in := range installs {
		name := in.st.Ref[strings.LastIndexByte(in.st.Ref, '/')+1:]
		svc, err := cs.CoreV1().Services("qm-vision").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sel := labels.SelectorFromSet(svc.Spec.Selector)
		for _, other := range installs {
			oname := other.st.Ref[strings.LastIndexByte(other.st.Ref, '/')+1:]
			k, err := cs.BatchV1().Jobs("qm-vision").Get(ctx, oname, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := sel.Matches(labels.Set(k.Spec.Template.Labels)); got != (other == in) {
				t.Errorf("Service %s selects the pods of %s: %v", name, oname, got)
			}
		}
	}
	// Staging ends its L-1; production's and the default's stay.
	if err := installs[1].b.Stop(ctx, installs[1].l); err != nil {
		t.Fatal(err)
	}
	for i, in := range installs {
		jobs, err := in.b.Jobs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := 1; i == 1 {
			if len(jobs) != 0 {
				t.Errorf("stopped, %+v is left", jobs)
			}
		} else if len(jobs) != want {
			t.Errorf("%s is gone when another installation ended its L-1", in.st.Ref)
		}
	}
}
