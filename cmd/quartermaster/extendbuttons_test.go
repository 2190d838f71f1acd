package main

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot/discord/discordtest"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// latestEdit is the newest edit of message m on Discord, and whether there is one.
func (e *discordEnv) latestEdit(m discordtest.Message) (discordtest.Message, bool) {
	edits := e.fake.Edits()
	for i := len(edits) - 1; i >= 0; i-- {
		if edits[i].ChannelID == m.ChannelID && edits[i].ID == m.ID {
			return edits[i], true
		}
	}
	return discordtest.Message{}, false
}

// On Discord, an expiry warning's Extend button, pressed past what the class gives without
// approval, asks for an extension that waits for a budget owner: the warning in the owner's DM
// is edited, Extend giving way to who decides it; once it is denied, it offers Extend again.
func TestDiscordTheWarningFollowsTheExtensionItAsked(t *testing.T) {
	t.Parallel()
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) {
			e := newDiscordEnv(t, db.url(t))
			e.command(dAlice, "request", opt("gpus", 1), opt("class", "interactive"), opt("duration", "8h"))
			id := e.leases()[0].ID.String()
			if err := e.app.Advance(context.Background(), 7*time.Hour+45*time.Minute); err != nil {
				t.Fatal(err)
			}
			e.wait()
			var warning discordtest.Message
			for _, m := range e.fake.PostsTo(discordtest.DMChannel(dAlice)) {
				if strings.Contains(m.Text(), id+" ends at") {
					warning = m
				}
			}
			if _, ok := warning.Button("Extend 1h"); !ok {
				t.Fatalf("no expiry warning with Extend: %+v", e.fake.PostsTo(discordtest.DMChannel(dAlice)))
			}
			ans := e.click(dAlice, warning, "Extend 1h")
			m := regexp.MustCompile(`waits for approval as (L-[0-9]+)`).FindStringSubmatch(ans.Text())
			if m == nil {
				t.Fatalf("Extend past 8h answered %q", ans.Text())
			}
			ext := m[1]
			edited, ok := e.latestEdit(warning)
			_, extend := edited.Button("Extend 1h")
			_, release := edited.Button("Release")
			if !ok || extend || !release || !strings.Contains(edited.Text(), "("+ext+", ") || !strings.Contains(edited.Text(), "already waiting for approval by dana@acme.example") {
				t.Fatalf("the warning while %s waits: %+v", ext, edited)
			}
			e.command(dDana, "deny", opt("lease", ext), opt("reason", "not this week"))
			edited, ok = e.latestEdit(warning)
			if _, extend := edited.Button("Extend 1h"); !ok || !extend || strings.Contains(edited.Text(), "already waiting") {
				t.Errorf("the warning once %s was denied: %+v", ext, edited)
			}
		})
	}
}

// On Discord, when the service starts on a policy whose approvers of a team changed while its
// request waits, the former approver's copy in their DM is edited to say who decides now, its
// buttons gone; the team channel's copy, still for whoever decides there, is left alone. It is
// edited once: a later start does not edit it again.
func TestDiscordFormerApproversCopyIsEditedAtStart(t *testing.T) {
	t.Parallel()
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) {
			e := newDiscordEnv(t, db.url(t))
			id, _ := discordOverQuota(e)
			toDana, _ := approvalPosts(e, id)
			retireFormerApprovers(context.Background(), e.app, storetest.Logger(t))
			if edits := e.fake.Edits(); len(edits) != 0 {
				t.Fatalf("with the approvers unchanged: %+v", edits)
			}
			src, err := os.ReadFile("../../docs/quartermaster.example.yaml")
			if err != nil {
				t.Fatal(err)
			}
			p, err := policy.Load([]byte(strings.Replace(string(src), "budget_owners: [dana@acme.example]", "budget_owners: [lee@acme.example]", 1)), "policy.yaml")
			if err != nil {
				t.Fatal(err)
			}
			e.app.Service.Policy, e.app.Service.Directory = p, p
			retireFormerApprovers(context.Background(), e.app, storetest.Logger(t))
			e.wait()
			edits := e.fake.Edits()
			if len(edits) != 1 || edits[0].ID != toDana.ID || edits[0].ChannelID != toDana.ChannelID || len(edits[0].Buttons) != 0 || !edits[0].Components ||
				!strings.Contains(edits[0].Text(), id+" is no longer yours to decide") || !strings.Contains(edits[0].Text(), "lee@acme.example decides") {
				t.Errorf("edits = %+v; want dana's copy, saying lee decides, without buttons", edits)
			}
			// Later starts, the policy as it is, leave the copy edited once.
			for range 2 {
				retireFormerApprovers(context.Background(), e.app, storetest.Logger(t))
				e.wait()
			}
			if again := e.fake.Edits(); len(again) != len(edits) {
				t.Errorf("later starts edited the former approver's copy again: %d edits, want %d: %+v", len(again), len(edits), again)
			}
		})
	}
}
