package commands

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/workload"
	"github.com/acme/quartermaster/reports/showback"
	qmtemplates "github.com/acme/quartermaster/templates"
)

// petrelPolicy is a policy of its own names: Petrel Labs in Stockholm, billing in SEK; classes
// a100-80g and mi300x; teams ljud (budget owners: the group leads), bild-2 and akeri.
const petrelPolicy = "testdata/petrel.yaml"

// exampleOf is the command a refusal gives as its example.
func exampleOf(t *testing.T, text string) string {
	t.Helper()
	_, ex, ok := strings.Cut(text, "Example: ")
	if !ok {
		t.Fatalf("no example in %q", text)
	}
	return strings.TrimPrefix(ex, "/gpu ")
}

// A Slack user group mentioned where a team goes (@leads, a group of budget owners; @bild2, a
// handle like a team's name) is refused in one sentence saying a user group is not a team,
// naming the team its handle is closest to, or how teams are named; the example works.
func TestAUserGroupWhereATeamGoesIsRefusedWithTheTeamMeant(t *testing.T) {
	h := newHarnessOn(t, petrelPolicy)
	for _, tc := range []struct{ who, ask, says, example string }{
		{"nils@petrel.example.se", "request 1 a100-80g for 1h team @bild2", `"@bild2" names a user group or a person, not a team; did you mean team bild-2?`, "request 1 a100-80g for 1h team bild-2"},
		{"sven@petrel.example.se", "request 1 a100-80g for 1h team @ljud-team", `"@ljud-team" names a user group or a person, not a team; did you mean team ljud?`, "request 1 a100-80g for 1h team ljud"},
		{"sven@petrel.example.se", "request 1 a100-80g for 1h team @leads", `"@leads" names a user group or a person, not a team; a team is named without the @, as the policy writes it: `, "request 1 a100-80g for 1h"},
		{"sven@petrel.example.se", "quota @leads", `"@leads" names a user group or a person, not a team;`, "quota"},
	} {
		got := h.say(tc.who, tc.ask)
		if !strings.Contains(got.Text, tc.says) || exampleOf(t, got.Text) != tc.example {
			t.Errorf("/gpu %s answered %q; want %q and the example /gpu %s", tc.ask, got.Text, tc.says, tc.example)
		}
		if strings.Count(got.Text, ". ") > 1 {
			t.Errorf("/gpu %s: more than one sentence before the example: %q", tc.ask, got.Text)
		}
		if again := h.say(tc.who, exampleOf(t, got.Text)); again.Error {
			t.Errorf("/gpu %s: the example answered %q", tc.ask, again.Text)
		}
	}
}

// A quota request for more GPUs than any can hold, written with other digits (+٥٠٠٠), is put
// right in one refusal: its sentence names what works (+4096 with the digits 0-9), not +5000,
// which would be refused again, and its example runs as typed.
func TestOtherDigitsBeyondTheLimitArePutRightInOneRefusal(t *testing.T) {
	h := newHarnessOn(t, petrelPolicy)
	got := h.say("sven@petrel.example.se", "quota request +٥٠٠٠ a100-80g for 1d because film")
	if !got.Error || strings.Contains(got.Text, "0-9: +5000") || !strings.Contains(got.Text, "at most +4096") {
		t.Fatalf("the refusal answered %q", got.Text)
	}
	if again := h.say("sven@petrel.example.se", exampleOf(t, got.Text)); again.Error {
		t.Errorf("the example %q was refused: %q", exampleOf(t, got.Text), again.Text)
	}
}

// A group of budget owners named by a plain word (leads) reads as a group wherever it is named
// with its members: "the group leads (astrid@…, bo@…)" when a request waits, in the refusal of
// someone who may not decide it, in /gpu policy and when a showback is refused, so that "leads"
// never reads as a verb or a stray word; a person is named as themselves.
func TestAGroupOfBudgetOwnersReadsAsAGroup(t *testing.T) {
	h := newHarnessOn(t, petrelPolicy)
	AddReport(h.bot, &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock})
	const group = "the group leads (astrid@petrel.example.se, bo@petrel.example.se)"
	if got := h.say("sven@petrel.example.se", "request 6 mi300x for 2h"); !strings.Contains(got.Text, "so "+group+" will decide") {
		t.Errorf("the waiting request answered %q", got.Text)
	}
	h.say("astrid@petrel.example.se", "request 6 mi300x for 2h")
	if got := h.say("astrid@petrel.example.se", "approve L-2"); !strings.Contains(got.Text, "only the group leads (bo@petrel.example.se) or drift@petrel.example.se can") {
		t.Errorf("astrid's approval of her own request answered %q", got.Text)
	}
	pol := h.say("sven@petrel.example.se", "policy").PlainText()
	for _, want := range []string{"budget owners: " + group, "budget owner greta@petrel.example.se", "budget owners: the group frakt-ansvariga (olle@petrel.example.se)", "fallback approver drift@petrel.example.se"} {
		if !strings.Contains(pol, want) {
			t.Errorf("/gpu policy does not say %q:\n%s", want, pol)
		}
	}
	if got := h.say("sven@petrel.example.se", "report ljud"); !strings.Contains(got.Text, "Only platform admins and the budget owners of team ljud (the group leads: astrid@petrel.example.se, bo@petrel.example.se) see its showback") {
		t.Errorf("a refused showback answered %q", got.Text)
	}
	if got := h.say("sven@petrel.example.se", "report bild-2"); !strings.Contains(got.Text, "Only platform admins and the budget owner of team bild-2 (greta@petrel.example.se) see its showback") {
		t.Errorf("a refused showback answered %q", got.Text)
	}
}

// A template's name typed where a request's class goes (JupyterLab) is refused saying it is a
// template, quoting it as typed and naming the template as the catalog writes it, with the
// request put right as the example: a class, then the template; the example works.
func TestATemplateTypedAsAClassIsNamedAsTheCatalogWritesIt(t *testing.T) {
	h := newHarnessOn(t, petrelPolicy)
	cat, err := templates.Load(qmtemplates.FS)
	if err != nil {
		t.Fatal(err)
	}
	AddTemplates(h.bot, cat, workload.Settings{})
	got := h.say("sven@petrel.example.se", "request 1 JupyterLab for 2h")
	if !got.Error || !strings.Contains(got.Text, `"JupyterLab" is a template, not a class`) || !strings.Contains(got.Text, "template jupyterlab") {
		t.Fatalf("/gpu request 1 JupyterLab for 2h answered %q", got.Text)
	}
	ex := exampleOf(t, got.Text)
	if !strings.HasPrefix(ex, "request 1 a100-80g for 2h template jupyterlab") {
		t.Errorf("the example is /gpu %s", ex)
	}
	if again := h.say("sven@petrel.example.se", ex); again.Error {
		t.Errorf("the example answered %q", again.Text)
	}
}

// A team or class typed with a dash that looks like the hyphen (bild‐2, a100–80g, as autocorrect
// or a copied message writes them) is refused naming the name meant, with the command written
// with it as the example, which works, as a name typed with accents is.
func TestANameTypedWithALookAlikeDashNamesTheNameMeant(t *testing.T) {
	h := newHarnessOn(t, petrelPolicy)
	for _, tc := range []struct{ who, ask, says, example string }{
		{"nils@petrel.example.se", "request 1 a100-80g for 1h team bild\u20102", `"bild` + "\u2010" + `2" is not a team name; did you mean bild-2?`, "request 1 a100-80g for 1h team bild-2"},
		{"sven@petrel.example.se", "request 1 a100\u201380g for 1h", `"a100` + "\u2013" + `80g" is not a class name; did you mean a100-80g?`, "request 1 a100-80g for 1h"},
		{"sven@petrel.example.se", "quota lj\u200dud", "", ""},
	} {
		got := h.say(tc.who, tc.ask)
		if tc.says == "" {
			if got.Error {
				t.Errorf("/gpu %s answered %q", tc.ask, got.Text)
			}
			continue
		}
		if !got.Error || !strings.Contains(got.Text, tc.says) || exampleOf(t, got.Text) != tc.example {
			t.Errorf("/gpu %s answered %q; want %q and the example /gpu %s", tc.ask, got.Text, tc.says, tc.example)
			continue
		}
		if again := h.say(tc.who, tc.example); again.Error {
			t.Errorf("/gpu %s: the example answered %q", tc.ask, again.Text)
		}
	}
}

// gpus= of /gpu submit written with other digits (gpus=٢) is put right as other numbers are: the
// refusal names it in 0-9 and its example is the job with gpus=2, which works.
func TestSubmitGPUsWithOtherDigitsArePutRight(t *testing.T) {
	h := newHarnessOn(t, petrelPolicy)
	cat, err := templates.Load(qmtemplates.FS)
	if err != nil {
		t.Fatal(err)
	}
	AddTemplates(h.bot, cat, workload.Settings{})
	got := h.say("sven@petrel.example.se", "submit jupyterlab gpus=\u0662")
	if !got.Error || !strings.Contains(got.Text, "digits other than 0-9") || !strings.Contains(got.Text, ": gpus=2.") {
		t.Fatalf("/gpu submit jupyterlab gpus=٢ answered %q", got.Text)
	}
	ex := exampleOf(t, got.Text)
	if !strings.HasSuffix(ex, " gpus=2") {
		t.Errorf("the example is /gpu %s", ex)
	}
	if again := h.say("sven@petrel.example.se", ex); again.Error || !strings.Contains(again.Text, "2 × a100-80g") {
		t.Errorf("the example answered %q", again.Text)
	}
}

// A request's words copied into /gpu estimate (team T, data C, template T after the duration) are
// refused as not part of an estimate, named as typed, with the estimate without them as the
// example, which works; not as a duration that "1h team ljud" is not.
func TestRequestWordsInAnEstimateAreNamed(t *testing.T) {
	h := newHarnessOn(t, petrelPolicy)
	for _, ask := range []string{"estimate 1 mi300x 1h team ljud", "estimate 1 mi300x for 1h data open", "estimate 1 mi300x 1h team ljud exclusive"} {
		got := h.say("sven@petrel.example.se", ask)
		if !got.Error || strings.Contains(got.Text, "is not a duration") || !strings.Contains(got.Text, "is not part of an estimate") {
			t.Errorf("/gpu %s answered %q", ask, got.Text)
			continue
		}
		ex := exampleOf(t, got.Text)
		if !strings.HasPrefix(ex, "estimate 1 mi300x 1h") || strings.Contains(ex, "team") || strings.Contains(ex, "data") {
			t.Errorf("/gpu %s: the example is /gpu %s", ask, ex)
		}
		if again := h.say("sven@petrel.example.se", ex); again.Error {
			t.Errorf("/gpu %s: the example answered %q", ask, again.Text)
		}
	}
}

// A class named by a word that Go reads as a number (inf, nan, infinity) is a class like any
// other: requested by name, it is not refused as a number out of place, nor replaced in the
// example by another class.
func TestAClassNamedLikeANumberIsRequestedByName(t *testing.T) {
	for _, name := range []string{"inf", "nan", "infinity"} {
		h := newHarnessOn(t, policyVariant(t, petrelPolicy, "name: mi300x", "name: "+name, "mi300x: 16", name+": 16", "mi300x: 8", name+": 8", "mi300x: 8", name+": 8", "class: mi300x", "class: "+name))
		for _, ask := range []string{"request 1 " + name + " for 1h", "request 1 " + strings.ToUpper(name) + " for 1h", "estimate 1 " + name + " 1h"} {
			if got := h.say("sven@petrel.example.se", ask); got.Error || !strings.Contains(got.Text, "1 × "+name) {
				t.Errorf("/gpu %s answered %q", ask, got.Text)
			}
		}
	}
}

// /gpu estimate without its number of GPUs (estimate mi300x 2h, as a request may leave it out)
// is refused saying the number goes first, with the estimate of 1 GPU of that class for that time
// as the example, which works; not with another class and another time.
func TestAnEstimateWithoutItsCountKeepsItsClassAndTime(t *testing.T) {
	h := newHarnessOn(t, petrelPolicy)
	for ask, example := range map[string]string{"estimate mi300x 2h": "estimate 1 mi300x 2h", "estimate mi300x for 3d exclusive": "estimate 1 mi300x 3d exclusive"} {
		got := h.say("sven@petrel.example.se", ask)
		if !got.Error || exampleOf(t, got.Text) != example {
			t.Errorf("/gpu %s answered %q; want the example /gpu %s", ask, got.Text, example)
			continue
		}
		if again := h.say("sven@petrel.example.se", example); again.Error {
			t.Errorf("the example /gpu %s answered %q", example, again.Text)
		}
	}
}

// A person's mention where a team goes (@astrid, as Slack sends <@U…|astrid>) is not called a user
// group alone: the refusal says a user group or a person is not a team, and the example works.
func TestAPersonMentionedWhereATeamGoesIsNotCalledAGroupAlone(t *testing.T) {
	h := newHarnessOn(t, petrelPolicy)
	got := h.say("sven@petrel.example.se", "request 1 a100-80g for 1h team @astrid")
	if !strings.Contains(got.Text, `"@astrid" names a user group or a person, not a team;`) {
		t.Fatalf("/gpu request … team @astrid answered %q", got.Text)
	}
	if again := h.say("sven@petrel.example.se", exampleOf(t, got.Text)); again.Error {
		t.Errorf("the example answered %q", again.Text)
	}
}

// A number of GPUs written with other digits and more than any request can hold (request ٥٠٠٠
// a100-80g) is put right in one refusal: the sentence does not tell the person to write 5000,
// which would be refused again, but names the limit; the example works.
func TestOtherDigitsBeyondAnyRequestArePutRightInOneRefusal(t *testing.T) {
	h := newHarnessOn(t, petrelPolicy)
	for _, ask := range []string{"request ٥٠٠٠ a100-80g for 1h", "estimate ٥٠٠٠ a100-80g 1h"} {
		got := h.say("sven@petrel.example.se", ask)
		if !got.Error || strings.Contains(got.Text, "0-9: 5000") || !strings.Contains(got.Text, "at most 4096") {
			t.Errorf("/gpu %s answered %q", ask, got.Text)
			continue
		}
		if again := h.say("sven@petrel.example.se", exampleOf(t, got.Text)); again.Error {
			t.Errorf("/gpu %s: the example answered %q", ask, again.Text)
		}
	}
}

// A quota increase's duration written with other digits and longer than any increase lasts
// (for ٩٩w) is put right in one refusal: the sentence names the longest, not 693d, which would be
// refused again, and the example asks for it and works.
func TestAQuotaDurationInOtherDigitsBeyondTheLimitIsPutRightInOneRefusal(t *testing.T) {
	h := newHarnessOn(t, petrelPolicy)
	got := h.say("sven@petrel.example.se", "quota request +5 a100-80g for ٩٩w because film")
	if !got.Error || strings.Contains(got.Text, "0-9: 693d") || !strings.Contains(got.Text, "at most 90d") {
		t.Fatalf("the refusal answered %q", got.Text)
	}
	ex := exampleOf(t, got.Text)
	if !strings.Contains(ex, " for 90d ") {
		t.Errorf("the example is /gpu %s", ex)
	}
	if again := h.say("sven@petrel.example.se", ex); again.Error {
		t.Errorf("the example answered %q", again.Text)
	}
}
