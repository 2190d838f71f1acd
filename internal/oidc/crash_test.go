package oidc_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/acme/quartermaster/internal/oidc"
	"github.com/acme/quartermaster/internal/oidc/oidctest"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

var (
	bothStores = map[string]func(testing.TB) string{"sqlite": storetest.SQLite, "postgres": storetest.Postgres}
	carolAcct  = qm.Account{Platform: "discord", User: "3003"}
)

// told is what GroupsChanged was told, across services: who was told, and who was in
// vision-leads (a budget owners' group) and ai-vision as the telling service saw them then.
type told struct {
	mu  sync.Mutex
	got []string
}

func (w *told) by(name string, s *oidc.Service) func(context.Context, *qm.AccountLink, *qm.AccountLink) {
	return func(ctx context.Context, before, after *qm.AccountLink) {
		if ctx.Err() != nil {
			return // a stopping service's notices go nowhere: its sends fail
		}
		a := "revoked"
		if after != nil {
			a = strings.Join(after.Groups, ",")
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		w.got = append(w.got, fmt.Sprintf("%s: %s %s -> %s (vision-leads: %s; ai-vision: %s)", name, before.Email, strings.Join(before.Groups, ","), a,
			strings.Join(s.Members("vision-leads"), ","), strings.Join(s.Members("ai-vision"), ",")))
	}
}

func (w *told) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := slices.Clone(w.got)
	slices.Sort(out)
	return out
}

// what is what was told, whoever told it and whoever was in which group then, in order.
func (w *told) what() []string {
	var out []string
	for _, g := range w.all() {
		_, rest, _ := strings.Cut(g, ": ")
		rest, _, _ = strings.Cut(rest, " (")
		out = append(out, rest)
	}
	slices.Sort(out)
	return out
}

// replica is another single sign-on service on e's database, as another process (a restart, or
// another replica) runs it.
func (e *env) replica(name string, w *told) *oidc.Service {
	e.t.Helper()
	s, err := oidc.New(e.sso.Config(), e.db, e.clock, storetest.Logger(e.t))
	if err != nil {
		e.t.Fatal(err)
	}
	s.GroupsChanged = w.by(name, s)
	if err := s.RefreshMembers(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	return s
}

// stopAt cancels a context at the n-th token request after it is armed, and fails that request,
// as a service stopped (SIGTERM) while a re-check waits for the provider.
type stopAt struct {
	n      atomic.Int64
	at     int64
	cancel atomic.Pointer[context.CancelFunc]
}

func (s *stopAt) RoundTrip(r *http.Request) (*http.Response, error) {
	if c := s.cancel.Load(); c != nil && r.URL.Path == mockoidc.TokenEndpoint && s.n.Add(1) == s.at {
		(*c)()
		return nil, errors.New("stopped")
	}
	return http.DefaultTransport.RoundTrip(r)
}

// crashEnv signs in alice (ai-vision), bob (ai-vision and vision-leads) and carol, in that
// order, then takes alice out of ai-vision and bob out of vision-leads at the provider: the next
// pass changes two links and checks carol's last.
func crashEnv(t *testing.T, url string, rt http.RoundTripper) *env {
	e := newEnvWith(t, url, time.Minute, "", func(c *oidc.Config) {
		if rt != nil {
			c.HTTPClient = &http.Client{Transport: rt, Timeout: 10 * time.Second}
		}
	})
	alice := oidctest.NewUser("sub-alice", "alice@acme.example", "ai-vision")
	bob := oidctest.NewUser("sub-bob", "bob@acme.example", "ai-vision", "vision-leads")
	carol := oidctest.NewUser("sub-carol", "carol@acme.example", "ai-language")
	e.login(alice, aliceAcct)
	e.clock.Advance(time.Second)
	e.login(bob, bobAcct)
	e.clock.Advance(time.Second)
	e.login(carol, carolAcct)
	alice.SetGroups("staff")
	bob.SetGroups("ai-vision")
	e.clock.Advance(90 * time.Second) // due again, and still current
	return e
}

// TestGroupsChangesAStoppedPassFoundAreToldOnceAfterTheRestart: a re-check pass that wrote two
// changes of groups is stopped (its context cancelled) before it tells them; the service started
// again on the same database tells each of them once, as things stand after the change (bob is
// no longer in vision-leads when alice's change is told), and nothing again at its next pass.
func TestGroupsChangesAStoppedPassFoundAreToldOnceAfterTheRestart(t *testing.T) {
	for name, url := range bothStores {
		t.Run(name, func(t *testing.T) {
			rt := &stopAt{at: 3} // alice's refresh, bob's, then carol's: the stop
			e := crashEnv(t, url(t), rt)
			var w told
			e.sso.GroupsChanged = w.by("stopped", e.sso)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			rt.cancel.Store(&cancel)
			rep, err := e.sso.Recheck(ctx)
			if !errors.Is(err, context.Canceled) || rep.Changed != 2 || rep.Checked != 2 || rep.Unchecked != 1 {
				t.Fatalf("the stopped pass: %+v %v", rep, err)
			}
			if l := e.linked(aliceAcct); strings.Join(l.Groups, ",") != "staff" {
				t.Fatalf("alice's new groups were not written before the stop: %v", l.Groups)
			}
			if got := w.all(); len(got) != 0 {
				t.Fatalf("told while stopping: %v", got)
			}

			restarted := e.replica("restarted", &w)
			rep, err = restarted.Recheck(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			want := []string{
				"restarted: alice@acme.example ai-vision -> staff (vision-leads: ; ai-vision: bob@acme.example)",
				"restarted: bob@acme.example ai-vision,vision-leads -> ai-vision (vision-leads: ; ai-vision: bob@acme.example)",
			}
			if got := w.all(); !slices.Equal(got, want) {
				t.Fatalf("told after the restart:\n got %q\nwant %q", got, want)
			}
			if rep.Told != 2 {
				t.Fatalf("the restarted pass: %+v", rep)
			}
			e.clock.Advance(2 * time.Minute)
			if _, err := restarted.Recheck(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := w.all(); !slices.Equal(got, want) {
				t.Fatalf("told again at the next pass: %q", got)
			}
		})
	}
}

// TestGroupsChangesAKilledPassFoundAreToldOnceByOneReplica: a re-check pass that changed two
// links (one taken out of a group, one whose sign-in the provider revoked and that was unlinked)
// is killed before it tells them. Two replicas on the same database then run passes at once: they
// leave the changes alone while the killed process's claim holds, and once it lapses each change
// is told once, by one of them.
func TestGroupsChangesAKilledPassFoundAreToldOnceByOneReplica(t *testing.T) {
	for name, url := range bothStores {
		t.Run(name, func(t *testing.T) {
			e := crashEnv(t, url(t), nil)
			var w told
			// The replicas run already: they saw bob in vision-leads.
			r1, r2 := e.replica("r1", &w), e.replica("r2", &w)
			if m := r1.Members("vision-leads"); len(m) != 1 {
				t.Fatalf("vision-leads before the pass: %v", m)
			}
			e.sso.GroupsChanged = w.by("killed", e.sso)
			oidc.Abandon(e.sso)
			// alice's refresh comes first: the provider refuses it.
			e.idp.QueueError(&mockoidc.ServerError{Code: http.StatusBadRequest, Error: "invalid_grant", Description: "Token is not active"})
			rep, err := e.sso.Recheck(context.Background())
			if err != nil || rep.Changed != 1 || rep.Revoked != 1 || e.linked(aliceAcct) != nil {
				t.Fatalf("the killed pass: %+v %v", rep, err)
			}
			if got := w.all(); len(got) != 0 {
				t.Fatalf("told by the killed pass: %v", got)
			}
			both := func() {
				t.Helper()
				var wg sync.WaitGroup
				for _, r := range []*oidc.Service{r1, r2} {
					wg.Go(func() {
						if _, err := r.Recheck(context.Background()); err != nil {
							t.Error(err)
						}
					})
				}
				wg.Wait()
			}
			both()
			if got := w.all(); len(got) != 0 {
				t.Fatalf("told while the killed process's claim holds: %v", got)
			}
			e.clock.Advance(11 * time.Minute)
			both()
			// (Who is in which group by then is beside the point: the links are no longer current
			// on this clock, eleven minutes on, and the provider's tokens expired.)
			want := []string{"alice@acme.example ai-vision -> revoked", "bob@acme.example ai-vision,vision-leads -> ai-vision"}
			if got := w.what(); !slices.Equal(got, want) {
				t.Fatalf("told after the claim lapsed:\n got %q\nwant %q", w.all(), want)
			}
			e.clock.Advance(11 * time.Minute)
			both()
			if again := w.all(); len(again) != 2 {
				t.Fatalf("told again: %q", again)
			}
		})
	}
}

// TestGroupsChangesTwoReplicasFindAreToldOnce: two replicas re-check the same due links at the
// same moment; each change of groups is written, and told, once.
func TestGroupsChangesTwoReplicasFindAreToldOnce(t *testing.T) {
	for name, url := range bothStores {
		t.Run(name, func(t *testing.T) {
			e := crashEnv(t, url(t), nil)
			var w told
			r1, r2 := e.replica("r1", &w), e.replica("r2", &w)
			var wg sync.WaitGroup
			var changed atomic.Int64
			for _, r := range []*oidc.Service{r1, r2} {
				wg.Go(func() {
					rep, err := r.Recheck(context.Background())
					if err != nil {
						t.Error(err)
					}
					changed.Add(int64(rep.Changed))
				})
			}
			wg.Wait()
			want := []string{"alice@acme.example ai-vision -> staff", "bob@acme.example ai-vision,vision-leads -> ai-vision"}
			if got := w.what(); !slices.Equal(got, want) || changed.Load() != 2 {
				t.Fatalf("told (%d changes written):\n got %q\nwant %q", changed.Load(), w.all(), want)
			}
		})
	}
}

// TestWhatAChangeTellsIsQueuedOnceWhenAnotherReplicaTookItOver: what a change of groups tells
// (GroupsNotices) goes into the outbox with the mark that it was told. A replica slow to tell
// (its claim lapsed meanwhile) while another took the changes over and told them queues nothing
// of its own: each message goes out once, from the replica that marked the change told, and
// Queued hears of those rows only.
func TestWhatAChangeTellsIsQueuedOnceWhenAnotherReplicaTookItOver(t *testing.T) {
	for name, url := range bothStores {
		t.Run(name, func(t *testing.T) {
			e := crashEnv(t, url(t), nil)
			oidc.Abandon(e.sso)
			if rep, err := e.sso.Recheck(context.Background()); err != nil || rep.Changed != 2 {
				t.Fatalf("the killed pass: %+v %v", rep, err)
			}
			var w told
			slow, quick := e.replica("slow", &w), e.replica("quick", &w)
			says := func(name string) func(context.Context, *qm.AccountLink, *qm.AccountLink) []qm.Notice {
				return func(_ context.Context, before, _ *qm.AccountLink) []qm.Notice {
					return []qm.Notice{{Kind: qm.NoticeMessage, To: []string{before.Email}, Message: []byte(`{"text":"` + name + `"}`)}}
				}
			}
			var queued sync.Map
			queue := func(name string) func(context.Context, []int64) {
				return func(_ context.Context, ids []int64) {
					for _, id := range ids {
						queued.Store(id, name)
					}
				}
			}
			quick.GroupsNotices, quick.Queued = says("quick"), queue("quick")
			var once sync.Once
			slow.Queued = queue("slow")
			slow.GroupsNotices = func(ctx context.Context, before, after *qm.AccountLink) []qm.Notice {
				once.Do(func() {
					// The slow replica's claim lapses while it works out what to tell, and the
					// quick one takes both changes over.
					e.clock.Advance(11 * time.Minute)
					if rep, err := quick.Recheck(context.Background()); err != nil || rep.Told != 2 {
						t.Errorf("the quick replica's pass: %+v %v", rep, err)
					}
				})
				return says("slow")(ctx, before, after)
			}
			e.clock.Advance(11 * time.Minute) // the killed process's claim lapsed
			rep, err := slow.Recheck(context.Background())
			if err != nil || rep.Told != 0 {
				t.Fatalf("the slow replica's pass: %+v %v", rep, err)
			}
			got, err := e.db.ClaimNotices(context.Background(), "sender", nil, e.clock.Now().Add(time.Hour), 10, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			var sent []string
			for _, q := range got {
				by, _ := queued.Load(q.ID)
				sent = append(sent, fmt.Sprintf("%s: %s (queued by %v)", q.Notice.To[0], q.Notice.Message, by))
			}
			slices.Sort(sent)
			want := []string{`alice@acme.example: {"text":"quick"} (queued by quick)`, `bob@acme.example: {"text":"quick"} (queued by quick)`}
			if !slices.Equal(sent, want) {
				t.Fatalf("the outbox holds\n %q\nwant\n %q", sent, want)
			}
		})
	}
}
