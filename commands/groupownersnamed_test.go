package commands

import (
	"regexp"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// nestedParens finds a parenthesis opened inside another.
var nestedParens = regexp.MustCompile(`\([^)]*\(`)

// Team equipe-vision's budget owners are the group chefs-baobab (aminata and moussa). /gpu policy
// said "budget owners chefs-baobab", and the refusal of its showback to someone else "(chefs-baobab)":
// a reader cannot know who is in it. Both name the group with its members, as the approval
// refusals do, without a parenthesis inside another; a person is named alone.
func TestAGroupOfBudgetOwnersIsNamedWithItsMembers(t *testing.T) {
	// The fallback approvers are a group too: the platform group, whose one member is ops.
	h := newHarnessOn(t, policyVariant(t, baobabPolicy, "fallback_approvers: [ops@baobab.example]", "fallback_approvers: [platform]"))
	AddReport(h.bot, &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock})
	const awa, koffi = "awa@baobab.example", "koffi@baobab.example"

	pol := mustOK(t, h.say(awa, "/gpu policy")).PlainText()
	for _, want := range []string{
		"; budget owners: the group chefs-baobab (aminata@baobab.example, moussa@baobab.example)\n",
		"; budget owner koffi@baobab.example\n",
		"; fallback approvers: the group platform (ops@baobab.example)",
	} {
		if !strings.Contains(pol, want) {
			t.Errorf("/gpu policy does not say %q:\n%s", want, pol)
		}
	}

	r := h.say(koffi, "/gpu report this week equipe-vision")
	want := "Only platform admins and the budget owners of team equipe-vision (the group chefs-baobab: aminata@baobab.example, moussa@baobab.example) see its showback; you see your own use."
	if msg, _, _ := strings.Cut(r.Text, " Example: "); !r.Error || msg != want || nestedParens.MatchString(r.Text) {
		t.Errorf("koffi asks for equipe-vision's showback: %q, want %q", r.Text, want)
	}
	r = h.say(awa, "/gpu report this week sante-donnees")
	want = "Only platform admins and the budget owner of team sante-donnees (koffi@baobab.example) see its showback; you see your own use."
	if msg, _, _ := strings.Cut(r.Text, " Example: "); !r.Error || msg != want {
		t.Errorf("awa asks for sante-donnees's showback: %q, want %q", r.Text, want)
	}
	refusedWithAWorkingExample(t, h, koffi, "/gpu report this week equipe-vision", "see its showback")
}

// A team the policy lists with no budget owners is seen by the platform admins alone: the refusal
// says so, naming them (a group with its members), not as the team's budget owners.
func TestAShowbackOfATeamWithoutBudgetOwnersNamesThePlatformAdmins(t *testing.T) {
	h := newHarnessOn(t, policyVariant(t, baobabPolicy,
		"    budget_owners: [koffi@baobab.example]\n", "",
		"fallback_approvers: [ops@baobab.example]", "fallback_approvers: [platform]"))
	AddReport(h.bot, &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock})
	r := h.say("awa@baobab.example", "/gpu report this week sante-donnees")
	want := "Team sante-donnees has no budget owners, so only the platform admins (group platform: ops@baobab.example) see its showback; you see your own use."
	if msg, _, _ := strings.Cut(r.Text, " Example: "); !r.Error || msg != want {
		t.Errorf("awa asks for sante-donnees's showback: %q, want %q", r.Text, want)
	}
	refusedWithAWorkingExample(t, h, "awa@baobab.example", "/gpu report this week sante-donnees", "see its showback")
}

// The platform admins named as a group whose name is a plain word ("platform"), beside a person:
// each group reads as a group with its members, in one bracket, so the sentence reads whatever
// the group is called.
func TestPlatformAdminsReadAsGroupsWhateverTheyAreCalled(t *testing.T) {
	h := newHarnessOn(t, policyVariant(t, baobabPolicy,
		"    budget_owners: [koffi@baobab.example]\n", "",
		"fallback_approvers: [ops@baobab.example]", "fallback_approvers: [platform, koffi@baobab.example]"))
	AddReport(h.bot, &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock})
	r := h.say("awa@baobab.example", "/gpu report this week sante-donnees")
	want := "Team sante-donnees has no budget owners, so only the platform admins (group platform: ops@baobab.example; koffi@baobab.example) see its showback; you see your own use."
	if msg, _, _ := strings.Cut(r.Text, " Example: "); !r.Error || msg != want || nestedParens.MatchString(r.Text) {
		t.Errorf("awa asks for sante-donnees's showback: %q, want %q", r.Text, want)
	}
	refusedWithAWorkingExample(t, h, "awa@baobab.example", "/gpu report this week sante-donnees", "see its showback")
}
