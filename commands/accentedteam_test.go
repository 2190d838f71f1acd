package commands

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

const baobabPolicy = "testdata/baobab.yaml"

// TestATeamTypedWithItsAccentsIsNamedWithout: team names are a to z, so team équipe-vision is
// written equipe-vision in the policy, while its people write it, and its channel
// (#équipe-vision), with the accent. /gpu quota équipe-vision answered `"équipe-vision" is not
// a team name. Example: /gpu quota`, which says nothing of the team meant; a request with team
// équipe-vision was refused the same way. Such a refusal names the team meant and gives the
// command typed with it as the example, which works.
func TestATeamTypedWithItsAccentsIsNamedWithout(t *testing.T) {
	h := newHarnessOn(t, baobabPolicy)
	for _, x := range []struct{ ask, example string }{
		{"/gpu quota équipe-vision", "/gpu quota equipe-vision"},
		{"/gpu quota Équipe-Vision", "/gpu quota equipe-vision"},
		{"/gpu request 1 cuivre for 1h team équipe-vision", "/gpu request 1 cuivre for 1h team equipe-vision"},
		{"/gpu quota request +1 cuivre team équipe-vision because atelier", "/gpu quota request +1 cuivre team equipe-vision because atelier"},
	} {
		r := h.say("awa@baobab.example", x.ask)
		msg, ex, ok := strings.Cut(r.Text, " Example: ")
		typed := strings.Fields(x.ask)
		word := strings.TrimPrefix(typed[len(typed)-1], "team=")
		if strings.Contains(x.ask, "because") {
			word = "équipe-vision"
		}
		if !r.Error || !ok || !strings.Contains(msg, "did you mean equipe-vision?") || !strings.Contains(msg, `"`+word+`"`) {
			t.Errorf("%s: %q; want it to quote %q and ask: did you mean equipe-vision?", x.ask, r.Text, word)
			continue
		}
		if !strings.HasPrefix(ex, x.example) {
			t.Errorf("%s: example %q, want %q", x.ask, ex, x.example)
		}
	}
	if r := h.say("awa@baobab.example", "/gpu quota equipe-vision"); r.Error {
		t.Errorf("the example does not work: %s", r.Text)
	}
	// A team's channel typed without its accents (#sante for #santé) likewise names the team meant.
	for ask, example := range map[string]string{
		"/gpu quota #sante": "/gpu quota sante-donnees",
		"/gpu request 1 cuivre for 1h team #Equipe-Vision": "/gpu request 1 cuivre for 1h team equipe-vision",
	} {
		r := h.say("awa@baobab.example", ask)
		msg, ex, _ := strings.Cut(r.Text, " Example: ")
		if !r.Error || !strings.Contains(msg, "is the channel of no team; did you mean #") || !strings.HasPrefix(ex, example) {
			t.Errorf("%s: %q; want the channel meant named, and the example %q", ask, r.Text, example)
		}
	}
	// A template job's team= likewise (the harness offers no templates: the grammar's refusal).
	_, err := ParseIn("/gpu submit cuda-smoke team=équipe-vision", h.svc.Policy)
	if e, ok := err.(*qm.Error); !ok || !strings.Contains(e.Message, `"équipe-vision" is not a team name; did you mean equipe-vision?`) || e.Example != "/gpu submit cuda-smoke team=equipe-vision" {
		t.Errorf("/gpu submit cuda-smoke team=équipe-vision: %#v", err)
	}
	// A team of another alphabet, or a name that is no team's without its accents, is still no team.
	for ask, want := range map[string]string{
		"/gpu quota éclair":                        `"éclair" is not a team name.`,
		"/gpu quota equipe-vіsion":                 `is not a team name.`,
		"/gpu request 1 cuivre for 1h team éclair": `"éclair" is not a team name.`,
	} {
		if r := h.say("awa@baobab.example", ask); !r.Error || !strings.Contains(r.Text, want) || strings.Contains(r.Text, "did you mean") {
			t.Errorf("%s: %q, want %q", ask, r.Text, want)
		}
	}
}

// TestAReportOfATeamTypedWithItsAccentsNamesTheTeamMeant: /gpu report this week équipe-vision
// answered that there is no team "équipe-vision", with an example of another team or none; /gpu
// report #sante (for #santé) that it is neither a week nor a team. Each names the team meant,
// with its report as the example where the asker may see it, and their own use where not.
func TestAReportOfATeamTypedWithItsAccentsNamesTheTeamMeant(t *testing.T) {
	h := newHarnessOn(t, baobabPolicy)
	AddReport(h.bot, &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock})
	mustOK(t, h.say("awa@baobab.example", "/gpu request 1 cuivre for 1h"))
	h.advance(2 * time.Hour)
	for _, x := range []struct{ who, ask, says, example string }{
		{"aminata@baobab.example", "/gpu report this week équipe-vision", `There is no team "équipe-vision"; did you mean equipe-vision?`, "/gpu report 2026-W49 equipe-vision"},
		{"aminata@baobab.example", "/gpu report Équipe-Vision", `There is no team "Équipe-Vision"; did you mean equipe-vision?`, "/gpu report 2026-W49 equipe-vision"},
		{"ops@baobab.example", "/gpu report this week #sante", `"#sante" is the channel of no team; did you mean #santé, the channel of team sante-donnees?`, "/gpu report 2026-W49 sante-donnees"},
		// Someone who does not see that team's showback is not offered it: the sentence, as the
		// example, says the report is of their own use.
		{"awa@baobab.example", "/gpu report #sante", `"#sante" is the channel of no team, and #santé is the channel of team sante-donnees, which you do not see the showback of, so the report is of your own use.`, "/gpu report 2026-W49"},
	} {
		r := h.say(x.who, x.ask)
		msg, ex, ok := strings.Cut(r.Text, " Example: ")
		if !r.Error || !ok || msg != x.says || ex != x.example {
			t.Errorf("%s: %s: %q; want %q with the example %q", x.who, x.ask, r.Text, x.says, x.example)
			continue
		}
		if r := h.say(x.who, ex); r.Error {
			t.Errorf("%s: the example %s is refused: %s", x.who, ex, r.Text)
		}
	}
}

// TestAClassOrDataClassTypedWithItsAccentsIsNamedWithout: /gpu estimate 1 fér 1h answered
// `"fér" is not a class name. Example: /gpu estimate 1 cuivre 4h`, another class for another
// length, and data médical that it is no "word of letters", which é is. Each names the class
// meant, with the command typed with it as the example, which works.
func TestAClassOrDataClassTypedWithItsAccentsIsNamedWithout(t *testing.T) {
	h := newHarnessOn(t, baobabPolicy)
	for _, x := range []struct{ ask, says, example string }{
		{"/gpu estimate 1 fér 1h", `"fér" is not a class name; did you mean fer?`, "/gpu estimate 1 fer 1h"},
		{"/gpu request 1 Cüivre for 2h", `"Cüivre" is not a class name; did you mean cuivre?`, "/gpu request 1 cuivre for 2h"},
		{"/gpu quota request +1 fér for 1d because atelier", `"fér" is not a class name; did you mean fer?`, "/gpu quota request +1 fer for 1d because atelier"},
		{"/gpu request 1 cuivre for 1h data médical", `"médical" is not a data class, which is written with the letters a to z, digits, dots, - and _; did you mean medical?`, "/gpu request 1 cuivre for 1h data medical"},
	} {
		r := h.say("fatou@baobab.example", x.ask)
		msg, ex, ok := strings.Cut(r.Text, " Example: ")
		if !r.Error || !ok || msg != x.says || ex != x.example {
			t.Errorf("%s: %q; want %q with the example %q", x.ask, r.Text, x.says, x.example)
			continue
		}
		if r := h.say("fatou@baobab.example", ex); r.Error {
			t.Errorf("the example %s is refused: %s", ex, r.Text)
		}
	}
	// A word that is no name without its accents either is refused as before.
	if r := h.say("fatou@baobab.example", "/gpu estimate 1 éclair 1h"); !r.Error || !strings.HasPrefix(r.Text, `"éclair" is not a class name. Example: `) {
		t.Errorf("/gpu estimate 1 éclair 1h: %q", r.Text)
	}
}
