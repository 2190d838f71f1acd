package discord_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// Fennec's Discord users (testdata/fennec.yaml).
const (
	fSindri = "810000000000000031" // nav2, in the vendors group
	fEmbla  = "810000000000000032" // nav2, of nav-leads: decides for nav2
	fHekla  = "810000000000000033" // grip_lab's budget owner
)

// TestFennecWalk: on a policy with its own names, /gpu is registered from the command table with
// the policy's classes as the class option's choices and leases suggested as they are typed; a
// vendor's request waits for nav2's budget owner named by group, who gets a DM with Approve and
// Deny; the click approves it, the requester hears so in a DM, and the lease is theirs to release.
func TestFennecWalk(t *testing.T) {
	h := newOnPolicy(t, "testdata/fennec.yaml", nil)
	if _, err := discord.Register(context.Background(), h.cfg, kGuild); err != nil {
		t.Fatal(err)
	}
	ow := h.fake.Overwrites()
	subs := map[string]map[string]any{}
	for _, s := range ow[len(ow)-1].Commands[0]["options"].([]any) {
		s := s.(map[string]any)
		subs[s["name"].(string)] = s
	}
	option := func(sub, name string) map[string]any {
		t.Helper()
		s, ok := subs[sub]
		if !ok {
			t.Fatalf("no /gpu %s registered", sub)
		}
		opts, _ := s["options"].([]any)
		for _, o := range opts {
			if o := o.(map[string]any); o["name"] == name {
				return o
			}
		}
		t.Fatalf("/gpu %s has no option %s: %v", sub, name, s["options"])
		return nil
	}
	var classes []string
	chs, _ := option("request", "class")["choices"].([]any)
	for _, c := range chs {
		classes = append(classes, c.(map[string]any)["value"].(string))
	}
	if !slices.Equal(classes, []string{"sand_l4", "dune-x8"}) {
		t.Errorf("the class option's choices are %q, want the policy's classes", classes)
	}
	for _, sub := range []string{"release", "status", "approve", "deny", "extend", "keep"} {
		if o := option(sub, "lease"); o["autocomplete"] != true {
			t.Errorf("/gpu %s's lease option is not suggested as it is typed: %v", sub, o)
		}
	}

	// Sindri, a vendor, asks: it waits for nav-leads, whose member Embla is DMed Approve and Deny.
	r := h.run(kin(fSindri), "request", discordtest.Opt{Name: "gpus", Value: 1}, discordtest.Opt{Name: "class", Value: "sand_l4"},
		discordtest.Opt{Name: "duration", Value: "3h"})
	if !strings.Contains(r.text(), "L-1") || !strings.Contains(r.text(), "vendor-account") {
		t.Fatalf("the vendor's request: %q", r.text())
	}
	card := h.fake.PostsTo(discordtest.DMChannel(fEmbla))
	if len(card) == 0 {
		t.Fatal("nav2's budget owner (by group) was not DMed the request")
	}
	last := card[len(card)-1]
	approve, ok := last.Button("Approve L-1")
	if _, deny := last.Button("Deny L-1"); !ok || !deny {
		t.Fatalf("the approval DM has no Approve and Deny for L-1: %+v", last)
	}
	if got := h.fake.PostsTo(discordtest.DMChannel(fHekla)); len(got) != 0 {
		t.Errorf("grip_lab's budget owner was asked about nav2's request: %+v", got)
	}
	if got := h.send(discordtest.Click(kin(fEmbla), last, approve.CustomID)); !strings.Contains(got.text(), "Approved L-1 (sindri@fennec.example for 1 × sand_l4 for 3h)") {
		t.Errorf("the Approve click answered %q", got.text())
	}
	h.wait()
	told := ""
	for _, m := range h.fake.PostsTo(discordtest.DMChannel(fSindri)) {
		told += m.Text() + "\n"
	}
	if !strings.Contains(told, "L-1") || !strings.Contains(told, "Approved by embla@fennec.example: L-1 is active") {
		t.Errorf("sindri was not told in a DM that L-1 was approved: %q", told)
	}
	edited := false
	for _, m := range h.fake.Edits() {
		if strings.Contains(m.Text(), "L-1") {
			if _, still := m.Button("Approve L-1"); !still {
				edited = true
			}
		}
	}
	if !edited {
		t.Errorf("the approval DM was not edited to lose its buttons once decided")
	}
	rel := h.run(kin(fSindri), "release", discordtest.Opt{Name: "lease", Value: "L-1"})
	if !strings.Contains(rel.text(), "L-1") || !strings.Contains(strings.ToLower(rel.text()), "released") {
		t.Errorf("release of L-1: %q", rel.text())
	}
}
