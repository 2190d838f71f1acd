package oidc_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/oidc/oidctest"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// composedGroupsPolicy is commands/testdata/kolkata.yaml with its teams' groups written as any
// editor writes them: letters with accents composed (Ö is one character, U+00D6).
func composedGroupsPolicy(t *testing.T) *policy.Policy {
	t.Helper()
	b, err := os.ReadFile("../../commands/testdata/kolkata.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), "idp_groups: [grp-geno]", "idp_groups: [\"\u00D6kologie-K\u00E4lte\"]", 1)
	text = strings.Replace(text, "idp_groups: [grp-nlp]", "idp_groups: [\"\u00C5ngstr\u00F6m-\u03A9\"]", 1)
	pol, err := policy.Load([]byte(text), "kolkata-composed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return pol
}

// TestGroupsInAnotherNormalFormAreTheSameGroups: a provider that sends a group's name with its
// accents as separate combining marks (O followed by U+0308, as some directories send it) places
// the person in the team whose idp_groups names it with the letter composed, at a sign-in and at
// a re-check, which finds no change in that. An email sent so is the email as typed composed. A
// Kelvin sign (U+212A), an angstrom sign (U+212B) or an ohm sign (U+2126) is not the letter it
// looks like: a group written with one is still another group.
func TestGroupsInAnotherNormalFormAreTheSameGroups(t *testing.T) {
	pol := composedGroupsPolicy(t)
	e := newEnvPolicy(t, pol, time.Minute)
	ctx := context.Background()
	var ch changes
	e.sso.GroupsChanged = ch.record
	teams := func(email string) []string {
		t.Helper()
		id, err := e.svc.Resolve(ctx, email)
		if err != nil {
			t.Fatalf("resolve %s: %v", email, err)
		}
		return id.Teams
	}

	geno, nlp := "O\u0308kologie-Ka\u0308lte", "A\u030Angstro\u0308m-\u03A9" // decomposed
	zoe := oidctest.NewUser("sub-zoe", "zoe\u0308@kestrel.example", geno, nlp)
	l := e.login(zoe, aliceAcct)
	if l == nil || l.Email != "zo\u00EB@kestrel.example" {
		t.Fatalf("link of an email sent decomposed: %+v", linkEmail(l))
	}
	if got := teams("zo\u00EB@kestrel.example"); !slices.Equal(got, []string{"genomics-2", "nlp"}) {
		t.Fatalf("teams of someone whose groups came decomposed: %q", got)
	}
	out, err := e.svc.Request(ctx, qm.LeaseRequest{User: "zo\u00EB@kestrel.example", GPUs: 1, Class: "nb-t4", Team: "genomics-2", Duration: time.Hour})
	if err != nil || out.Lease.Team != "genomics-2" {
		t.Fatalf("request for the team of a group that came decomposed: %+v %v", out, err)
	}

	// The same groups, composed at a re-check: no change to tell.
	zoe.SetGroups("\u00D6kologie-K\u00E4lte", "\u00C5ngstr\u00F6m-\u03A9")
	e.clock.Advance(2 * time.Minute)
	e.idp.FastForward(2 * time.Minute)
	if rep := e.recheck(); rep.Checked != 1 || rep.Changed != 0 {
		t.Fatalf("re-check that gave the same groups composed: %+v", rep)
	}
	if got := ch.all(); len(got) != 0 {
		t.Fatalf("told of a change where there was none: %+v", got)
	}
	if got := teams("zo\u00EB@kestrel.example"); !slices.Equal(got, []string{"genomics-2", "nlp"}) {
		t.Fatalf("teams after the re-check: %q", got)
	}

	// Look-alike signs are other names, composed or not.
	for _, g := range []string{
		"O\u0308kologie-\u212Aa\u0308lte", // Kelvin sign for the K
		"\u212Bngstro\u0308m-\u03A9",      // angstrom sign for the Å
		"A\u030Angstro\u0308m-\u2126",     // ohm sign for the Ω
	} {
		mallory := oidctest.NewUser("sub-mallory", "mallory@kestrel.example", g)
		e.login(mallory, bobAcct)
		if got := teams("mallory@kestrel.example"); slices.Contains(got, "genomics-2") || slices.Contains(got, "nlp") {
			t.Errorf("group %+q, a look-alike, placed its member in %q", g, got)
		}
		if members := e.sso.Members(g); len(members) != 1 {
			t.Errorf("members of %+q as written: %q", g, members)
		}
	}
	// A Kelvin sign in the email is still another email.
	e.login(oidctest.NewUser("sub-kate", "\u212Aate@kestrel.example", geno), qm.Account{Platform: "discord", User: "880000000000000042"})
	if l := e.linked(qm.Account{Platform: "discord", User: "880000000000000042"}); l == nil || l.Email != "\u212Aate@kestrel.example" {
		t.Fatalf("link of an email with a Kelvin sign: %+v", linkEmail(l))
	}
}

// linkEmail is the email of a link, or "no link".
func linkEmail(l *qm.AccountLink) string {
	if l == nil {
		return "no link"
	}
	return l.Email
}

// TestALinkKeptDecomposedIsComposedWhenRead: groups kept as the provider sent them before names
// were composed at a sign-in (decomposed) place the person in the team that names them composed,
// list them among the group's members, and a re-check that reads them composed finds no change.
func TestALinkKeptDecomposedIsComposedWhenRead(t *testing.T) {
	e := newEnvPolicy(t, composedGroupsPolicy(t), time.Minute)
	ctx := context.Background()
	var ch changes
	e.sso.GroupsChanged = ch.record
	ines := oidctest.NewUser("sub-ines", "ines@kestrel.example", "\u00D6kologie-K\u00E4lte")
	l := e.login(ines, aliceAcct)
	if _, err := e.db.UpdateAccountGroups(ctx, aliceAcct, l.LoginAt, []string{"O\u0308kologie-Ka\u0308lte"}, l.CheckedAt, l.Tokens); err != nil {
		t.Fatal(err)
	}
	if err := e.sso.RefreshMembers(ctx); err != nil {
		t.Fatal(err)
	}
	id, err := e.svc.Resolve(ctx, "ines@kestrel.example")
	if err != nil || !slices.Equal(id.Teams, []string{"genomics-2"}) {
		t.Fatalf("teams of a link kept decomposed: %+v %v", id.Teams, err)
	}
	if got := e.sso.Members("\u00D6kologie-K\u00E4lte"); !slices.Equal(got, []string{"ines@kestrel.example"}) {
		t.Fatalf("members of the group a link kept decomposed: %q", got)
	}
	e.clock.Advance(2 * time.Minute)
	e.idp.FastForward(2 * time.Minute)
	if rep := e.recheck(); rep.Checked != 1 || rep.Changed != 0 || len(ch.all()) != 0 {
		t.Fatalf("re-check of a link kept decomposed that read the groups composed: %+v %+v", rep, ch.all())
	}
}
