package qm_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// openTxStore counts the transactions in progress.
type openTxStore struct {
	qm.Store
	open atomic.Int32
}

func (s *openTxStore) Update(ctx context.Context, locks []string, fn func(qm.Tx) error) error {
	s.open.Add(1)
	defer s.open.Add(-1)
	return s.Store.Update(ctx, locks, fn)
}

func (s *openTxStore) View(ctx context.Context, fn func(qm.Tx) error) error {
	s.open.Add(1)
	defer s.open.Add(-1)
	return s.Store.View(ctx, fn)
}

// pausingRules evaluates the policy's rules; the first time it evaluates a request of user, it
// first runs during: the test acts while that request's rules are being evaluated.
type pausingRules struct {
	p      *policy.Policy
	user   string
	once   sync.Once
	during func()
}

func (r *pausingRules) RulesCost() uint64 { return r.p.RulesCost() }

// costlyPolicy is the example policy with a rule that matches a pattern against each of the user's
// groups: costly enough to be evaluated outside the admitting transaction.
func costlyPolicy(t *testing.T) *policy.Policy {
	t.Helper()
	example, err := os.ReadFile("../../docs/quartermaster.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.Load([]byte(strings.Replace(string(example), "exceptions:\n",
		"exceptions:\n  - name: pattern\n    when: \"user.groups.exists(g, g.matches('^contract.*ors$'))\"\n", 1)), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (r *pausingRules) Evaluate(ctx context.Context, in policy.RuleInput) []policy.Match {
	if in.User.Name == r.user {
		r.once.Do(r.during)
	}
	return r.p.Evaluate(ctx, in)
}

// TestOtherUsersCommandsCompleteWhileARuleIsEvaluated: costly exception rules are evaluated with
// no transaction open, so while one user's request meets a costly rule (on SQLite, one writer at a
// time) another user's request is granted and listed; then the first request goes on to its
// approver as before.
func TestOtherUsersCommandsCompleteWhileARuleIsEvaluated(t *testing.T) {
	p := costlyPolicy(t)
	st := &openTxStore{Store: storetest.Open(t, storetest.SQLite(t))}
	svc := newService(t, p, st)
	ctx := context.Background()
	var during []string
	rules := &pausingRules{p: p, user: "bob@acme.example"}
	rules.during = func() {
		if n := st.open.Load(); n != 0 {
			t.Errorf("bob's rules are evaluated inside %d open transaction(s): every other command waits for them", n)
			return
		}
		out, err := svc.Request(ctx, qm.LeaseRequest{User: "alice@acme.example", Class: "interactive", Duration: time.Hour})
		if err != nil || out.Lease.State != qm.Active {
			t.Errorf("alice's request while bob's rules ran: %+v %v", out, err)
			return
		}
		mine, err := svc.List(ctx, qm.LeaseFilter{User: "alice@acme.example"})
		if err != nil || len(mine) != 1 {
			t.Errorf("alice's list while bob's rules ran: %v %v", mine, err)
		}
		during = append(during, fmt.Sprint("alice granted ", out.Lease.ID))
	}
	svc.Rules = rules
	out, err := svc.Request(ctx, qm.LeaseRequest{User: "bob@acme.example", Class: "train", GPUs: 16, Duration: time.Hour})
	if err != nil || out.Lease.State != qm.PendingApproval || len(out.Matches) == 0 || out.Matches[0].Rule != "large-request" {
		t.Fatalf("bob's request: %+v %v", out, err)
	}
	if len(during) != 1 {
		t.Fatalf("alice was not served while bob's rules ran: %v", during)
	}
}

// TestARuleThatCannotBeEvaluatedSendsTheRequestToAPerson: a rule that reaches the cost limit at
// run time (a user with far more groups than rules are estimated for) counts as fired: the
// request waits for a budget owner and is never granted silently; the requester, the lease and
// the approvers read that a person decides, never the evaluator's error, which goes to the log.
func TestARuleThatCannotBeEvaluatedSendsTheRequestToAPerson(t *testing.T) {
	example, err := os.ReadFile("../../docs/quartermaster.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(string(example), "exceptions:\n",
		"exceptions:\n  - name: contractor-like\n    when: \"user.groups.exists(g, g.contains('contractor'))\"\n    why: Contractor accounts need a budget owner\n", 1)
	p, err := policy.Load([]byte(src), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	groups := []string{"ai-vision"}
	for i := 0; i < 50*policy.RuleMaxGroups; i++ {
		groups = append(groups, fmt.Sprintf("g%06d-%s", i, strings.Repeat("x", 200)))
	}
	p.Directory = append(p.Directory, &policy.Identity{User: "many@acme.example", Groups: groups})
	var log bytes.Buffer
	var notes []qm.Notice
	svc := newService(t, p, storetest.Open(t, storetest.SQLite(t)))
	svc.Logger = slog.New(slog.NewTextHandler(&log, nil))
	svc.Notifier = notifierFunc(func(_ context.Context, n qm.Notice) { notes = append(notes, n) })
	out, err := svc.Request(context.Background(), qm.LeaseRequest{User: "many@acme.example", Class: "interactive", Duration: time.Hour})
	if err != nil || out.Lease.State != qm.PendingApproval {
		t.Fatalf("the request was not sent to a person: %+v %v", out, err)
	}
	told := []string{out.Lease.Reason}
	for _, m := range out.Matches {
		told = append(told, m.Why)
	}
	for _, n := range notes {
		told = append(told, n.Lease.Reason)
		for _, m := range n.Matches {
			told = append(told, m.Why)
		}
	}
	if len(notes) == 0 || !strings.Contains(out.Lease.Reason, "a person decides") {
		t.Fatalf("lease reason %q, %d notices", out.Lease.Reason, len(notes))
	}
	for _, s := range told {
		for _, bad := range []string{"cost", "limit", "exceeded", "evaluat"} {
			if strings.Contains(strings.ToLower(s), bad) {
				t.Errorf("chat reads %q", s)
			}
		}
	}
	if !strings.Contains(log.String(), "contractor-like") || !strings.Contains(log.String(), "cost limit") {
		t.Errorf("the log lacks the rule and its error:\n%s", log.String())
	}
}

type notifierFunc func(context.Context, qm.Notice)

func (f notifierFunc) Notify(ctx context.Context, n qm.Notice) { f(ctx, n) }

// TestRulesSeeTheUsageTheAdmissionWrites: rules are evaluated outside the admitting transaction,
// but on the usage it writes against: when the team's usage changes while a request's rules are
// evaluated, they are evaluated again, so a request that now goes over the quota waits for a
// budget owner.
func TestRulesSeeTheUsageTheAdmissionWrites(t *testing.T) {
	p := costlyPolicy(t)
	svc := newService(t, p, storetest.Open(t, storetest.SQLite(t)))
	ctx := context.Background()
	for i := 0; i < 3; i++ { // vision may hold 4 interactive GPUs
		if out, err := svc.Request(ctx, qm.LeaseRequest{User: "alice@acme.example", Class: "interactive", Duration: time.Hour}); err != nil || len(out.Matches) != 0 {
			t.Fatalf("alice's request %d: %+v %v", i+1, out, err)
		}
	}
	rules := &pausingRules{p: p, user: "bob@acme.example"}
	rules.during = func() {
		if out, err := svc.Request(ctx, qm.LeaseRequest{User: "alice@acme.example", Class: "interactive", Duration: time.Hour}); err != nil || len(out.Matches) != 0 {
			t.Errorf("alice's fourth request: %+v %v", out, err)
		}
	}
	svc.Rules = rules
	out, err := svc.Request(ctx, qm.LeaseRequest{User: "bob@acme.example", Class: "interactive", GPUs: 1, Duration: time.Hour})
	if err != nil || out.Lease.State != qm.PendingApproval || ruleOf(out.Matches) != "over-quota" {
		t.Fatalf("bob's request, over the quota once alice's fourth lease is counted: %+v %v", out, err)
	}
}

func ruleOf(ms []policy.Match) string {
	var names []string
	for _, m := range ms {
		names = append(names, m.Rule)
	}
	return strings.Join(names, ",")
}
