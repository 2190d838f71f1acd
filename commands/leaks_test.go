package commands

import (
	"strings"
	"testing"
)

// leaseCommands are a command line for every command of the table that takes a lease id, with
// ID where the id goes.
func leaseCommands(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, s := range Table() {
		for _, p := range s.Params {
			if p.Type != TLease {
				continue
			}
			line := "/gpu " + strings.Join(s.Words, " ") + " ID"
			for _, q := range s.Params {
				if q.Required && q.Type != TLease {
					switch q.Type {
					case TDuration:
						line += " 1h"
					default:
						line += " because"
					}
				}
			}
			if s.Name == "deny" {
				line += " no"
			}
			out = append(out, line)
		}
	}
	if len(out) < 6 {
		t.Fatalf("only %d commands take a lease: %v", len(out), out)
	}
	return out
}

// A refusal never tells someone outside a lease's team whose lease it is, which team it belongs
// to or who decides it, nor even that it exists: for every command that takes a lease id, asking
// about another team's lease (running or waiting for approval) is answered exactly as asking
// about one that does not exist. Nobody but the owner ever reads the owner's address in a
// refusal.
func TestRefusalsDoNotTellWhoseALeaseIs(t *testing.T) {
	h := newHarness(t)
	running := leaseIn(t, mustOK(t, h.say("alice@acme.example", "/gpu request 1 interactive for 2h")).Text)
	pending := leaseIn(t, mustOK(t, h.say("alice@acme.example", "/gpu request 8 train for 2h")).Text)
	const missing = "L-999"
	for _, line := range leaseCommands(t) {
		for _, asker := range []string{"maya@acme.example", "lee@acme.example", "bob@acme.example"} {
			none := h.say(asker, strings.Replace(line, "ID", missing, 1))
			for _, id := range []string{running.String(), pending.String()} {
				r := h.say(asker, strings.Replace(line, "ID", id, 1))
				if strings.Contains(r.PlainText(), "alice@") {
					t.Errorf("%s: %q to %s names the owner: %s", asker, strings.Replace(line, "ID", id, 1), asker, r.PlainText())
				}
				if asker == "bob@acme.example" { // alice's teammate: may be told who decides
					continue
				}
				if got, want := strings.ReplaceAll(r.PlainText(), id, missing), none.PlainText(); got != want {
					t.Errorf("%s: %q is answered unlike a lease that does not exist:\n got %s\nwant %s", asker, strings.Replace(line, "ID", id, 1), r.PlainText(), want)
				}
			}
		}
	}
}

// Every command but the public ones (help, the template catalog, login) answers only people the
// directory knows; anyone else learns nothing of the policy, prices, quota, leases or approvals.
func TestOnlyPeopleInTheDirectoryAreAnswered(t *testing.T) {
	h := newHarness(t)
	leaseIn(t, mustOK(t, h.say("alice@acme.example", "/gpu request 1 interactive for 2h")).Text)
	for _, s := range Table() {
		if s.Public || !h.bot.offers(s) {
			continue
		}
		for _, ex := range s.Examples {
			r := h.say("mallory@evil.example", h.bot.expand(strings.ReplaceAll(ex, "L-42", "L-1")))
			if !r.Error || !strings.Contains(r.Text, "not in the directory") || len(r.Sections) > 0 {
				t.Errorf("%s by someone outside the directory: %s", ex, r.PlainText())
			}
			for _, secret := range []string{"$", "alice@", "dana@", "vision", "quota"} {
				if strings.Contains(strings.ReplaceAll(r.PlainText(), "Example: "+h.bot.expand(ex), ""), secret) {
					t.Errorf("%s by someone outside the directory shows %q: %s", ex, secret, r.PlainText())
				}
			}
		}
	}
}

// Text that looks like SQL, quotes and all, is stored and shown as typed and changes nothing
// else: every value reaches the database as a parameter.
func TestTextThatLooksLikeSQLIsStoredAsTyped(t *testing.T) {
	h := newHarness(t)
	mustOK(t, h.say("alice@acme.example", "/gpu request 1 interactive for 2h"))
	for _, s := range []string{
		`x'); DROP TABLE leases; --`,
		`' OR '1'='1`,
		`"; UPDATE leases SET state='active'; --`,
		`\'; DELETE FROM command_keys; /*`,
	} {
		r := mustOK(t, h.say("alice@acme.example", "/gpu quota request +1 interactive for 1d because "+s))
		id := leaseIn(t, r.Text)
		if l := h.lease(id); l.Because != s {
			t.Errorf("the reason %q was stored as %q", s, l.Because)
		}
	}
	r := h.say("alice@acme.example", "/gpu list")
	if r.Error || !strings.Contains(r.PlainText(), "L-1") {
		t.Errorf("after the hostile reasons, /gpu list: %s", r.PlainText())
	}
	if got := h.say("bob@acme.example", "/gpu status L-1' OR '1'='1"); !got.Error || strings.Contains(got.PlainText(), "alice@") {
		t.Errorf("a lease id with SQL in it: %s", got.PlainText())
	}
}
