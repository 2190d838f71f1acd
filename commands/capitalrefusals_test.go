package commands

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// startsAsASentence reports whether text starts as a sentence: with a capital, or with a word
// that must stay as written (a lease id, a command, an email, a quoted or numbered thing).
func startsAsASentence(text string) bool {
	r, _ := utf8.DecodeRuneInString(text)
	if !unicode.IsLower(r) {
		return true
	}
	first, _, _ := strings.Cut(text, " ")
	return strings.ContainsAny(first, "@=/")
}

// Every refusal reaches its user as a sentence: it starts with a capital letter, whatever
// the service's reason (who may decide, what does not exist, what is out of range), unless
// it starts with something written as it must be typed (an email, a parameter).
func TestEveryRefusalStartsWithACapital(t *testing.T) {
	h := newHarnessOn(t, "testdata/harbor.yaml")
	const mere, tane, wiremu = "mere@harbor.example", "tane@harbor.example", "wiremu@harbor.example"
	waiting := leaseIn(t, mustOK(t, h.say(mere, "/gpu request 3 bench for 2h")).Text).String()
	lines := []struct{ user, line string }{
		{tane, "/gpu approve L-99"},
		{tane, "/gpu deny L-99 no room"},
		{wiremu, "/gpu approve " + waiting},
		{mere, "/gpu approve " + waiting},
		{mere, "/gpu request 1 bench for 1h team seismic"},
		{mere, "/gpu request 1 bench for 1h team nosuchteam"},
		{mere, "/gpu request 1 nosuchclass for 1h"},
		{mere, "/gpu request 1 bench for 40d"},
		{mere, "/gpu request 99 rack for 1h"},
		{mere, "/gpu release L-99"},
		{mere, "/gpu keep L-99"},
		{mere, "/gpu extend L-99 by 1h"},
		{mere, "/gpu status L-99"},
		{mere, "/gpu quota team nosuchteam"},
		{mere, "/gpu quota-request team kelp +1 bench for 1w"},
		{mere, "/gpu quota-request team kelp +1 bench for 200d because a survey"},
		{mere, "/gpu report week 2026-W48 team seismic"},
		{"nobody@harbor.example", "/gpu list"},
		{mere, "/gpu request 1 bench for 0m"},
		{mere, "/gpu request -1 bench for 1h"},
		{mere, "/gpu extend " + waiting + " by 99d"},
		{mere, "/gpu cancel L-99"},
		{mere, "/gpu quota request +1 bench for 1w"},
		{mere, "/gpu deny " + waiting + " " + strings.Repeat("x", 600)},
		{mere, "/gpu frobnicate"},
	}
	refused := 0
	for _, c := range lines {
		r := h.say(c.user, c.line)
		if !r.Error {
			continue
		}
		refused++
		if !startsAsASentence(r.Text) {
			t.Errorf("%s: %q is refused with %q, which does not start with a capital", c.user, c.line, r.Text)
		}
	}
	if refused < len(lines)/2 {
		t.Fatalf("only %d of %d lines were refused; the walk does not test refusals", refused, len(lines))
	}
}
