package qm_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// TestApprovalRacePostgres: 200 times, a budget owner approves and a fallback approver denies the
// same request at the same moment. Each time exactly one decision stands, the other approver is
// told who decided first, and the lease's state and history match the decision that stood.
func TestApprovalRacePostgres(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, storetest.Postgres(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, err := policy.LoadFile("../../docs/quartermaster.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	svc := newService(t, p, st)
	const owner, fallback = "dana@acme.example", "platform-leads@acme.example"
	wins := map[string]int{}
	for i := 0; i < 200; i++ {
		out, err := svc.Request(ctx, qm.LeaseRequest{User: "carl@contractor.example", Class: "interactive", GPUs: 1})
		if err != nil || out.Lease.State != qm.PendingApproval {
			t.Fatalf("round %d: contractor request %v %v", i, err, out)
		}
		id := out.Lease.ID
		var wg sync.WaitGroup
		gate := make(chan struct{})
		errs := make([]error, 2)
		for j, who := range []string{owner, fallback} {
			wg.Add(1)
			go func(j int, who string) {
				defer wg.Done()
				<-gate
				_, errs[j] = svc.Decide(ctx, who, id, who == owner, "no budget left")
			}(j, who)
		}
		close(gate)
		wg.Wait()
		var winner, loser string
		switch {
		case errs[0] == nil && errs[1] != nil:
			winner, loser = owner, fallback
		case errs[1] == nil && errs[0] != nil:
			winner, loser = fallback, owner
		default:
			t.Fatalf("round %d: want exactly one decision, got errors %v", i, errs)
		}
		lerr := errs[0]
		if loser == fallback {
			lerr = errs[1]
		}
		if qm.ErrorCode(lerr) != qm.ECONFLICT || !strings.Contains(lerr.Error(), "already decided by "+winner) {
			t.Fatalf("round %d: the second approver was told %v", i, lerr)
		}
		wins[winner]++
		l, err := svc.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if l.DecidedBy != winner {
			t.Fatalf("round %d: decided by %q, want %q", i, l.DecidedBy, winner)
		}
		if winner == owner && l.State != qm.Active && l.State != qm.Queued {
			t.Fatalf("round %d: approved lease is %s", i, l.State)
		}
		if winner == fallback && (l.State != qm.Denied || !strings.Contains(l.Reason, "no budget left")) {
			t.Fatalf("round %d: denied lease is %s (%s)", i, l.State, l.Reason)
		}
		ev, _ := svc.History(ctx, id)
		decisions := 0
		for _, e := range ev {
			if e.Actor == owner || e.Actor == fallback {
				decisions++
			}
		}
		if decisions != 1 {
			t.Fatalf("round %d: %d decision events", i, decisions)
		}
		if l.State.Live() {
			if _, err := svc.Release(ctx, l.User, id); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("wins: %v", wins)
}
