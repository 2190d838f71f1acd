package slack_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// andesPolicy is a policy of other names than the example's: organization Andes Research, pesos
// (CLP, no minor unit), America/Santiago, classes lab (shared) and cumbre (exclusive), teams
// glaciar (owner ana_maria@andes.example) and volcan (owners the group volcan-leads), people
// with _ and * in their addresses.
const andesPolicy = "testdata/andes.yaml"

// groupDirectory is the policy's directory that also lists a group's members, as the service's
// directory does, so a group of budget owners reaches them.
type groupDirectory struct{ directory }

func (d groupDirectory) Members(group string) []string { return d.p.Members(group) }

func newAndesEnv(t *testing.T) *env {
	t.Helper()
	p, err := policy.LoadFile(andesPolicy)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvOn(t, storetest.SQLite(t), p, []string{"glaciar", "volcan"})
	e.svc.Directory = groupDirectory{directory{p}}
	e.slack.setUsers(map[string]string{
		"UJUAN":   "juan_perez@andes.example",
		"UANA":    "ana_maria@andes.example",
		"USOFIA":  "sofia*rojas@andes.example",
		"UDIEGO":  "diego@andes.example",
		"UINFRA":  "infra_ops@andes.example",
		"UNOMAIL": "",
	})
	return e
}

// idleFor lets a lease sit idle for d, minute by minute, as the service's loops would see it.
func (e *env) idleFor(l *qm.Lease, d time.Duration) {
	e.t.Helper()
	clock := e.svc.Clock.(*sim.Clock)
	e.svc.Telemetry.(*sim.Cluster).SetUtilization(l, 0)
	for range int(d / time.Minute) {
		clock.Advance(time.Minute)
		if err := e.svc.Tick(context.Background()); err != nil {
			e.t.Fatal(err)
		}
	}
	e.wait()
}

// idleWarnings are the idle warnings DMed to user about lease id, oldest first.
func (e *env) idleWarnings(user, id string) []message {
	var out []message
	for _, m := range e.postsTo(dm(user)) {
		if strings.HasPrefix(m.Text, id+" has shown no GPU activity") {
			out = append(out, m)
		}
	}
	return out
}

// Keep on an idle warning that was pressed before, once the lease has been warned again, keeps
// the lease: it does not answer "Kept" from the first press while the new warning's grace runs
// out and the workspace is reclaimed. Once the lease has ended, the same button says so instead
// of "Kept".
func TestKeepPressedAgainOnAnOlderWarningKeepsTheLease(t *testing.T) {
	e := newAndesEnv(t)
	e.ask("UJUAN", "request 1 lab for 3h")
	l := e.leases()[0]
	id := l.ID.String()
	cls, _ := e.svc.Policy.Class("lab")

	e.idleFor(l, cls.IdleTimeout.Duration+time.Minute)
	first := e.idleWarnings("UJUAN", id)
	if len(first) != 1 {
		t.Fatalf("idle warnings after %s idle: %d", cls.IdleTimeout, len(first))
	}
	if got := e.press("UJUAN", first[0], findButton(t, first[0].Blocks, "/gpu keep "+id)); !strings.HasPrefix(got.Text, "Kept: "+id) {
		t.Fatalf("Keep answered %q", got.Text)
	}

	e.idleFor(l, cls.IdleTimeout.Duration+time.Minute)
	if n := len(e.idleWarnings("UJUAN", id)); n != 2 {
		t.Fatalf("idle warnings after a second idle period: %d, want 2", n)
	}
	if s := e.lease(id).State; s != qm.IdleWarned {
		t.Fatalf("after the second warning the lease is %s", s)
	}
	// Juan scrolls up and presses Keep on the first warning again.
	got := e.press("UJUAN", first[0], findButton(t, first[0].Blocks, "/gpu keep "+id))
	if !strings.HasPrefix(got.Text, "Kept: "+id) {
		t.Fatalf("Keep on the older warning answered %q", got.Text)
	}
	if s := e.lease(id).State; s != qm.Active {
		t.Fatalf("Keep answered %q but the lease is still %s", got.Text, s)
	}
	e.idleFor(l, cls.IdleGrace.Duration+time.Minute)
	if s := e.lease(id).State; s != qm.Active && s != qm.IdleWarned {
		t.Fatalf("the kept lease was %s within the grace after Keep", s)
	}

	// Once it has ended, no Keep says it was kept.
	if _, err := e.svc.Release(context.Background(), "juan_perez@andes.example", l.ID); err != nil {
		t.Fatal(err)
	}
	e.wait()
	got = e.press("UJUAN", first[0], findButton(t, first[0].Blocks, "/gpu keep "+id))
	if strings.Contains(got.Text, "Kept") || !strings.Contains(got.Text, "nothing to keep") {
		t.Fatalf("Keep on a released lease answered %q", got.Text)
	}
}
