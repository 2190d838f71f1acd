package commands

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// nameValue is a value of each kind of parameter a command line can quote, bare.
func nameValue(p Param) string {
	switch p.Type {
	case TClass:
		return "interactive"
	case TTeam:
		return "vision"
	case TTemplate:
		return "jupyterlab"
	case TLease:
		return "L-7"
	case TText:
		if p.Name == "word" { // /gpu templates' search words
			return "internal"
		}
	case TString:
		switch p.Name {
		case "who":
			return "carl@contractor.example"
		case "command":
			return "extend"
		}
		return "internal"
	}
	return ""
}

// A name in quotes where a command takes one (a class, team, template, lease id, user, data
// class, command or search word) is the name inside the quotes, whichever quotes they are: for
// every command of the table, each such parameter quoted reads as it does bare.
func TestQuotedNamesReadAsTheNameInside(t *testing.T) {
	filler := map[ParamType]string{TInt: "1", TDuration: "2h", TText: "a deadline", TWeek: "2026-W48"}
	quotes := [][2]string{{`"`, `"`}, {`'`, `'`}, {"\u201c", "\u201d"}, {"\u2018", "\u2019"}, {"\u201e", "\u201c"}}
	named := map[string]bool{}
	for _, s := range Table() {
		bare, quoted := map[string]string{}, map[string]string{}
		hasName := false
		for _, p := range s.Params {
			if v := nameValue(p); v != "" {
				bare[p.Name] = v
				hasName = true
				continue
			}
			if p.Required || p.Type == TWeek {
				bare[p.Name] = filler[p.Type]
				quoted[p.Name] = filler[p.Type]
			}
		}
		if !hasName {
			continue
		}
		want, err := ParseFor(s.Text(bare), []string{"interactive", "train"})
		if err != nil {
			t.Errorf("%s: the bare line %q is refused: %v", s.Name, s.Text(bare), err)
			continue
		}
		for _, q := range quotes {
			for _, p := range s.Params {
				if v := nameValue(p); v != "" {
					quoted[p.Name] = q[0] + v + q[1]
				}
			}
			line := s.Text(quoted)
			got, err := ParseFor(line, []string{"interactive", "train"})
			if err != nil {
				t.Errorf("%s: %s is refused: %v", s.Name, line, err)
				continue
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: %s reads as %+v; bare, it reads as %+v", s.Name, line, got, want)
			}
		}
		named[s.Name] = true
	}
	for _, n := range []string{"request", "estimate", "status", "extend", "keep", "release", "approve", "deny",
		"quota", "quota-request", "templates", "template", "submit", "unlink", "report", "help"} {
		if !named[n] {
			t.Errorf("/gpu %s was not tried with a quoted name", n)
		}
	}
}

// What a user sees: a quoted class, team, template or lease id does what the bare one does, and a
// refusal shows the name that was typed, in plain quotes, never with a backslash before a quote.
func TestQuotedNamesWorkAndRefusalsShowThemPlainly(t *testing.T) {
	h := templatesOn(t, "../docs/quartermaster.example.yaml")
	alice := "alice@acme.example"
	id := leaseIn(t, mustOK(t, h.say(alice, `/gpu request 1 "interactive" 2h`)).Text)
	if l := h.lease(id); l.Class != "interactive" || l.Duration != 2*time.Hour {
		t.Fatalf(`request 1 "interactive" 2h made %d × %s for %s`, l.GPUs, l.Class, l.Duration)
	}
	id2 := leaseIn(t, mustOK(t, h.say(alice, "/gpu request 1 \u201cinteractive\u201d for 1h team \u2018vision\u2019 template 'jupyterlab'")).Text)
	if l := h.lease(id2); l.Class != "interactive" || l.Team != "vision" || l.Template != "jupyterlab" {
		t.Errorf("a request with quoted class, team and template made %s of team %s from template %q", l.Class, l.Team, l.Template)
	}
	mustOK(t, h.say(alice, `/gpu status "`+id.String()+`"`))
	mustOK(t, h.say(alice, "/gpu extend \u201c"+id.String()+"\u201d 1h"))
	if l := h.lease(id); l.Duration != 3*time.Hour {
		t.Errorf("extending a quoted lease id by 1h left it %s long", l.Duration)
	}
	mustOK(t, h.say(alice, `/gpu estimate 1 'train' 2h`))
	mustOK(t, h.say(alice, `/gpu quota "vision"`))
	mustOK(t, h.say(alice, `/gpu template "jupyterlab"`))
	mustOK(t, h.say(alice, `/gpu release "`+id2.String()+`"`))

	for line, want := range map[string]string{
		`/gpu request 1 "nope" 2h`:                 `There is no class "nope";`,
		"/gpu request 1 \u201cno pe\u201d 2h":      `"no pe" is not a class name.`,
		`/gpu request 1 in"ter 2h`:                 `"in"ter" is not a class name.`,
		`/gpu estimate 1 "nope" 2h`:                `There is no class "nope";`,
		`/gpu status "L-x"`:                        `"L-x" is not a lease id;`,
		`/gpu extend 'L-x' 1h`:                     `"L-x" is not a lease id;`,
		`/gpu quota "nobody"`:                      `There is no team "nobody" in the policy.`,
		`/gpu quota "no body"`:                     `"no body" is not a team name.`,
		`/gpu request 1 interactive 1h team "x y"`: `"x y" is not a team name.`,
		`/gpu template "nope"`:                     `There is no template "nope";`,
		`/gpu submit "nope"`:                       `There is no template "nope";`,
		`/gpu frob"nicate`:                         `"frob"nicate" is not a /gpu command;`,
		`/gpu request 1 interactive 2h data "a b"`: `"a b" is not a data class,`,
	} {
		r := h.say(alice, line)
		if !r.Error || !strings.Contains(r.Text, want) || strings.Contains(r.Text, `\`) {
			t.Errorf("%s: %s; want a refusal saying %s, without a backslash", line, r.Text, want)
		}
	}
}
