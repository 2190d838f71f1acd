package discord_test

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot/discord/discordtest"
	"github.com/acme/quartermaster/internal/templates"
	qmtemplates "github.com/acme/quartermaster/templates"
)

// Hesap's Discord users (testdata/hesap.yaml).
const (
	hCagla  = "810000000000000011" // istanbul-ml
	hAyse   = "810000000000000012" // istanbul-ml's budget owner
	hSoren  = "810000000000000013" // oresund's budget owner
	hPlat   = "810000000000000014" // the fallback approver
	hMikkel = "810000000000000015" // oresund
)

// newHesap is the whole product behind the Discord adapter on Hesap's policy, with the
// repository's templates installed.
func newHesap(t *testing.T) *kestrelEnv {
	t.Helper()
	cat, err := templates.Load(qmtemplates.FS)
	if err != nil {
		t.Fatal(err)
	}
	return newOnPolicy(t, "testdata/hesap.yaml", cat)
}

// A template's answer names the command that submits it in a sentence too (the headings of its
// Slurm script and Kubernetes manifest: "… for 4h (/gpu submit jupyterlab root=notebooks)"); on
// Discord each is written as it is typed there, its parameters in the params option, not left
// after the template's option, where Discord would read them as part of the template's name.
func TestTemplateParametersNamedInASentenceAreAnOption(t *testing.T) {
	h := newHesap(t)
	body := discordtest.Command(kin(hCagla), "gpu", "template", discordtest.Opt{Name: "name", Value: "jupyterlab"})
	got := h.send(body)
	h.wait()
	text := got.text() + "\n"
	for _, m := range h.fake.FollowUps(discordtest.ID(body)) {
		text += m.Text() + "\n"
	}
	n := 0
	for rest := text; ; n++ {
		i := strings.Index(rest, "/gpu submit ")
		if i < 0 {
			break
		}
		rest = rest[i+len("/gpu submit "):]
		clause := rest[:strings.IndexAny(rest+"\n", ")\n")]
		for _, w := range strings.Fields(clause) {
			if !strings.Contains(w, ":") || strings.Index(w, ":") > strings.Index(w+"=", "=") {
				t.Errorf("/gpu submit %s is not written as Discord's options: %q is no option", clause, w)
			}
		}
	}
	if n < 3 {
		t.Fatalf("the answer names /gpu submit %d times; want the example and both headings: %q", n, text)
	}
}

// The word that labels a reason, written alone in the Deny button's form or in the reason option
// (reason, Because -), is no reason, as the same denial typed in Slack is not: the requester reads
// that none was given, not "denied by …: reason.".
func TestALoneReasonLabelIsNoReasonOnDiscord(t *testing.T) {
	h := newHesap(t)
	ask := func() {
		h.run(kin(hCagla), "request", discordtest.Opt{Name: "gpus", Value: 3}, discordtest.Opt{Name: "class", Value: "kume"}, discordtest.Opt{Name: "duration", Value: "2h"})
		posts := h.fake.PostsTo(discordtest.DMChannel(hAyse))
		if len(posts) == 0 {
			t.Fatal("the budget owner was not asked")
		}
	}
	told := func(id string) string {
		for _, m := range h.fake.PostsTo(discordtest.DMChannel(hCagla)) {
			if strings.Contains(m.Text(), id+" was denied") {
				return m.Text()
			}
		}
		t.Fatalf("çağla was not told of %s's denial", id)
		return ""
	}

	// The Deny button's form, answered with the word alone.
	ask()
	card := h.fake.PostsTo(discordtest.DMChannel(hAyse))
	deny, ok := card[len(card)-1].Button("Deny L-1")
	if !ok {
		t.Fatalf("the approval DM has no Deny L-1 button: %+v", card[len(card)-1])
	}
	form := h.send(discordtest.Click(kin(hAyse), card[len(card)-1], deny.CustomID))
	if form.Type != 9 {
		t.Fatalf("Deny answered %+v; want its form", form)
	}
	h.send(discordtest.Submit(kin(hAyse), form.Data.CustomID, "reason", "reason"))
	h.wait()
	if got := told("L-1"); !strings.Contains(got, "denied by ayşe@hesap.example: no reason given.") {
		t.Errorf("denied with the form's reason \"reason\", çağla read %q", got)
	}

	// The reason option.
	ask()
	h.run(kin(hAyse), "deny", discordtest.Opt{Name: "lease", Value: "L-2"}, discordtest.Opt{Name: "reason", Value: "Because -"})
	if got := told("L-2"); !strings.Contains(got, "denied by ayşe@hesap.example: no reason given.") {
		t.Errorf("denied with reason:Because -, çağla read %q", got)
	}
}

// A subcommand Discord still shows but this installation does not offer (registered before the
// policy or the templates changed: /gpu report without reports) is answered as the same command
// typed in Slack is, in the same words, not in words of the adapter's own.
func TestAnUnofferedSubcommandIsAnsweredAsOnSlack(t *testing.T) {
	h := newOnPolicy(t, "testdata/hesap.yaml", nil) // no templates: template and submit are not offered
	for _, sub := range []string{"report", "template", "frobnicate"} {
		slack := h.slack("çağla@hesap.example", "/gpu "+sub)
		if len(slack) == 0 {
			t.Fatalf("Slack's /gpu %s has no answer", sub)
		}
		got := strings.TrimSpace(h.run(kin(hCagla), sub).text())
		if got != slack[0].Text {
			t.Errorf("/gpu %s on Discord answered %q; Slack answers %q", sub, got, slack[0].Text)
		}
	}
}

// /gpu templates WORD finds templates as the template option suggests them while it is typed:
// capitals and accents aside, so a word typed with an accent (jüpyter, as a German keyboard
// writes it) lists what jupyter lists, on Discord as on Slack.
func TestTemplatesMatchAWordAsSuggestionsDo(t *testing.T) {
	h := newHesap(t)
	plain := h.run(kin(hCagla), "templates", discordtest.Opt{Name: "word", Value: "jupyter"}).text()
	if !strings.Contains(plain, "jupyterlab") {
		t.Fatalf("/gpu templates word:jupyter answered %q", plain)
	}
	for _, typed := range []string{"Jüpyter", "JÜPYTER"} {
		got := h.run(kin(hCagla), "templates", discordtest.Opt{Name: "word", Value: typed}).text()
		if want := strings.ReplaceAll(plain, `"jupyter"`, `"`+typed+`"`); got != want {
			t.Errorf("/gpu templates word:%s answered\n%s\nwant what word:jupyter answers:\n%s", typed, got, want)
		}
		slack := h.slack("çağla@hesap.example", "/gpu templates "+typed)
		if len(slack) == 0 || !strings.Contains(slack[0].Text, "templates match") {
			t.Errorf("Slack's /gpu templates %s answered %+v", typed, slack)
		}
	}
}

// A budget owner who presses Approve again on the approval they already decided with it (a
// double click, or a press after the requester released the lease) is told of the decision they
// made then, with its time, not as if the press approved it now: "Approved L-1 …; it is now
// released" read as though a released lease had just been approved.
func TestApprovingAgainNamesTheEarlierDecision(t *testing.T) {
	h := newHesap(t)
	h.run(kin(hCagla), "request", discordtest.Opt{Name: "gpus", Value: 3}, discordtest.Opt{Name: "class", Value: "kume"}, discordtest.Opt{Name: "duration", Value: "2h"})
	dm := h.fake.PostsTo(discordtest.DMChannel(hAyse))
	if len(dm) == 0 {
		t.Fatal("ayşe was not asked")
	}
	card := dm[len(dm)-1]
	approve, ok := card.Button("Approve L-1")
	if !ok {
		t.Fatalf("the approval DM has no Approve L-1 button: %+v", card)
	}
	press := func() string {
		r := h.send(discordtest.Click(kin(hAyse), card, approve.CustomID))
		h.wait()
		return strings.TrimSpace(r.text())
	}
	if got := press(); !strings.HasPrefix(got, "Approved L-1 (çağla@hesap.example for 3 × kume for 2h); it is now active.") {
		t.Fatalf("the first press answered %q", got)
	}
	const earlier = "You approved L-1 (çağla@hesap.example for 3 × kume for 2h) at Mon 7 Dec 13:45 +0545; it is now "
	if got := press(); !strings.HasPrefix(got, earlier+"active.") {
		t.Errorf("a second press answered %q; want %q", got, earlier+"active.")
	}
	h.run(kin(hCagla), "release", discordtest.Opt{Name: "lease", Value: "L-1"})
	if got := press(); !strings.HasPrefix(got, earlier+"released.") {
		t.Errorf("a press after L-1 was released answered %q; want %q", got, earlier+"released.")
	}
}
