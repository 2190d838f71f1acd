package commands

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/policy"
)

// teamReadsRight reports whether a team named w is read as that team wherever a command names a
// team: /gpu request's team, /gpu quota request's team (typed, and as Discord's options write
// it), /gpu quota's and /gpu submit's team=.
func teamReadsRight(w string) bool {
	classes := []string{"shared"}
	team := func(c Command) string { return c.Team }
	qr, _ := Lookup("quota-request")
	for _, x := range []struct {
		text string
		get  func(Command) string
	}{
		{"/gpu request 1 shared for 2h team " + w, team},
		{"/gpu request 1 shared team " + w + " for 2h", team},
		{"/gpu quota request +1 shared team " + w + " because a deadline", team},
		{"/gpu quota request +1 shared for 1w team " + w + " because a deadline", team},
		{qr.Text(map[string]string{"gpus": "1", "class": "shared", "team": w, "reason": "a deadline"}), team},
		{"/gpu quota " + w, func(c Command) string { return c.Arg }},
		{"/gpu submit smoke team=" + w, team},
	} {
		c, err := ParseFor(x.text, classes)
		if err != nil || x.get(c) != w {
			return false
		}
	}
	return true
}

// TestTeamWordsAreTheTeamNamesTheGrammarMisreads: the policy refuses as team names exactly the
// words among the grammar's own (command words, keywords, request words) that a team could not
// be named by, so the policy's list and the grammar agree.
func TestTeamWordsAreTheTeamNamesTheGrammarMisreads(t *testing.T) {
	words := map[string]bool{"gpu": true, "gpus": true, "x": true, "by": true}
	for w := range policy.RequestWords {
		words[w] = true
	}
	for _, s := range Table() {
		for _, w := range s.Words {
			words[w] = true
		}
		for _, p := range s.Params {
			if k := strings.TrimRight(p.Keyword, "=+"); k != "" {
				words[k] = true
			}
		}
	}
	for w := range words {
		_, refused := policy.TeamWords[w]
		if right := teamReadsRight(w); right == refused {
			t.Errorf("a team named %q: read right %v, but the policy refuses it: %v", w, right, refused)
		}
	}
}
