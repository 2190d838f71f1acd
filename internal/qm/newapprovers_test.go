package qm_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/store/storetest"
)

const marshPolicy = `organization: Marsh Lab
classes:
  - {name: reed, sku: L4, max_gpus: 2, max_duration: 4h}
default_quota: {gpus: {reed: 1}}
teams:
  - {name: herons, idp_groups: [g-herons], budget_owners: [nia@marsh.example], quota: {gpus: {reed: 2}}}
exceptions:
  - name: long-run
    when: request.duration > class.max_duration
    why: Longer than the class allows
approvals:
  fallback_approvers: [desk@marsh.example]
directory:
  - {user: kim@marsh.example, groups: [g-herons]}
  - {user: nia@marsh.example, groups: [g-herons]}
  - {user: ole@marsh.example, groups: [g-herons]}
sim:
  nodes:
    - {name: l4, count: 1, class: reed, gpus: 2}
`

// Two replicas started on a policy that names another budget owner for a waiting request's team
// send the new owner its approval message once between them, and not again at a later start.
func TestNewApproversAreSentAWaitingRequestOnceAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, storetest.SQLite(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	old, err := policy.Load([]byte(marshPolicy), "marsh.yaml")
	if err != nil {
		t.Fatal(err)
	}
	svc := newService(t, old, st)
	out, err := svc.Request(ctx, qm.LeaseRequest{User: "kim@marsh.example", GPUs: 1, Class: "reed", Duration: 6 * time.Hour})
	if err != nil || out.Lease.State != qm.PendingApproval {
		t.Fatalf("request: %+v %v", out, err)
	}
	changed, err := policy.Load([]byte(strings.Replace(marshPolicy, "budget_owners: [nia@marsh.example]", "budget_owners: [ole@marsh.example]", 1)), "marsh.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var sent []qm.Notice
	var wg sync.WaitGroup
	replicas := []*qm.Service{newService(t, changed, st), newService(t, changed, st)}
	for _, r := range replicas {
		r.Notifier = qm.NotifierFunc(func(_ context.Context, n qm.Notice) {
			mu.Lock()
			defer mu.Unlock()
			if n.Kind == qm.NoticeApprovalRequest {
				sent = append(sent, n)
			}
		})
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := r.SendToNewApprovers(ctx, out.Lease.ID, []string{"nia@marsh.example"}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if ok, err := replicas[0].SendToNewApprovers(ctx, out.Lease.ID, []string{"nia@marsh.example"}); ok || err != nil {
		t.Errorf("a later start sent it again: %v %v", ok, err)
	}
	if len(sent) != 1 || len(sent[0].To) != 1 || sent[0].To[0] != "ole@marsh.example" || !strings.Contains(sent[0].Reason, "ole@marsh.example") {
		t.Fatalf("sent %+v; want the approval message to ole once", sent)
	}
}

// A policy that keeps a waiting request's budget owner, who holds its copy, and adds another sends
// the added one its approval message, saying the policy now also names them, once between two
// replicas; a later policy adding a third sends the third alone.
func TestAddedApproversAreSentAWaitingRequestOnceEach(t *testing.T) {
	eachStore(t, func(t *testing.T, url string) {
		ctx := context.Background()
		st := storetest.Open(t, url)
		old, err := policy.Load([]byte(marshPolicy), "marsh.yaml")
		if err != nil {
			t.Fatal(err)
		}
		out, err := newService(t, old, st).Request(ctx, qm.LeaseRequest{User: "kim@marsh.example", GPUs: 1, Class: "reed", Duration: 6 * time.Hour})
		if err != nil || out.Lease.State != qm.PendingApproval {
			t.Fatalf("request: %+v %v", out, err)
		}
		owners := func(list string) *policy.Policy {
			p, err := policy.Load([]byte(strings.Replace(marshPolicy, "budget_owners: [nia@marsh.example]", "budget_owners: ["+list+"]", 1)), "marsh.yaml")
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		var mu sync.Mutex
		var sent []qm.Notice
		start := func(p *policy.Policy) *qm.Service {
			r := newService(t, p, st)
			r.Notifier = qm.NotifierFunc(func(_ context.Context, n qm.Notice) {
				mu.Lock()
				defer mu.Unlock()
				if n.Kind == qm.NoticeApprovalRequest {
					sent = append(sent, n)
				}
			})
			return r
		}
		holders := []string{"nia@marsh.example"} // what was sent before is not known to the service
		added := owners("nia@marsh.example, ole@marsh.example")
		var wg sync.WaitGroup
		for _, r := range []*qm.Service{start(added), start(added)} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := r.SendToNewApprovers(ctx, out.Lease.ID, holders); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if ok, err := start(added).SendToNewApprovers(ctx, out.Lease.ID, holders); ok || err != nil {
			t.Errorf("a later start sent it again: %v %v", ok, err)
		}
		const says = "the policy now also names ole@marsh.example to decide the requests of team herons"
		if len(sent) != 1 || strings.Join(sent[0].To, ",") != "ole@marsh.example" || sent[0].Reason != says {
			t.Fatalf("sent %+v; want the approval message to ole once, saying %q", sent, says)
		}
		sent = nil
		// ole's copy is not recorded (the start ended before): the history still says ole was sent it.
		if ok, err := start(owners("nia@marsh.example, ole@marsh.example, desk@marsh.example")).SendToNewApprovers(ctx, out.Lease.ID, holders); !ok || err != nil {
			t.Fatalf("adding desk: %v %v", ok, err)
		}
		if len(sent) != 1 || strings.Join(sent[0].To, ",") != "desk@marsh.example" || !strings.Contains(sent[0].Reason, "also names desk@marsh.example to") {
			t.Fatalf("sent %+v; want the approval message to desk alone", sent)
		}
	})
}
