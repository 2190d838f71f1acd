package main

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// TestChangesOfGroupsAStoppedProcessLeftAreToldAtTheRestart: a process on this host wrote that
// alice left ai-vision and bob left ai-vision and was killed before it told them; a process on
// another host wrote that carol left ai-language and is still in the middle of its pass. The
// process that starts on this host tells alice and bob at its first re-check pass (not once the
// dead process's claim lapses), each once, and leaves carol's change to the other host's process.
func TestChangesOfGroupsAStoppedProcessLeftAreToldAtTheRestart(t *testing.T) {
	t.Parallel()
	w := newSSOWorld(t)
	ctx := context.Background()
	alice, bob, carol := w.person("alice", "ai-vision"), w.person("bob", "ai-vision"), w.person("carol", "ai-language")
	for _, p := range []*person{alice, bob, carol} {
		if page := w.follow(p, w.say(p, "/gpu login")); page.Status != http.StatusOK {
			t.Fatalf("%s's login: %d %s", p.idp.Email, page.Status, page.Body)
		}
	}
	// A process id that no process has now: a child that has exited.
	child := exec.Command("true")
	if err := child.Run(); err != nil {
		t.Skip("cannot run true to find a stopped process id:", err)
	}
	host, _ := os.Hostname()
	dead := host + "/" + strconv.Itoa(child.Process.Pid) + "@1764000000000000000"
	now := w.a.Clock.Now()
	for _, c := range []struct {
		p     *person
		by    string
		after string
	}{{alice, dead, "staff"}, {bob, dead, "staff"}, {carol, "elsewhere.example/4242@1", "staff"}} {
		before, err := w.a.Store.AccountLink(ctx, qm.Account{Platform: c.p.acct.Platform, Workspace: c.p.acct.Workspace, User: c.p.acct.User})
		if err != nil {
			t.Fatal(err)
		}
		after := *before
		after.Groups, after.CheckedAt = []string{c.after}, now
		if _, ok, err := w.a.Store.RecordGroupsChange(ctx, *before, &after, now, c.by, now.Add(10*time.Minute)); err != nil || !ok {
			t.Fatalf("the change of %s: %v %v", c.p.idp.Email, ok, err)
		}
	}

	releaseStoppedTellers(ctx, w.a, w.sso.Owner, w.a.Logger)
	if rep := w.recheck(); rep.Told != 2 {
		t.Fatalf("the first pass after the restart: %+v", rep)
	}
	for _, p := range []*person{alice, bob} {
		got := w.notices(p.idp.Email)
		if strings.Count(got, "You are no longer in team vision") != 1 {
			t.Fatalf("%s was told %q", p.idp.Email, got)
		}
	}
	if got := w.notices("carol@acme.example"); got != "" {
		t.Fatalf("carol was told while another host's process holds her change: %q", got)
	}
	if rep := w.recheck(); rep.Told != 0 {
		t.Fatalf("the next pass told again: %+v", rep)
	}
	if got := w.notices("alice@acme.example"); strings.Count(got, "You are no longer in team vision") != 1 {
		t.Fatalf("alice after the next pass: %q", got)
	}
}
