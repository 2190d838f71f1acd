package commands

import (
	"regexp"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
)

// /gpu help says of each parameter what the user types (data CLASS, for DURATION, N), never a
// programmer's type word (string, integer, int, bool, duration, flag, text), and the data class
// parameter names the data classes of the asker's team, the first being the default.
func TestHelpSaysWhatToTypeForEachParameter(t *testing.T) {
	h := templatesOn(t, policyVariant(t, otherPolicy, "data_classes: [open]", "data_classes: [open, medical, export-controlled]"))
	typeWord := regexp.MustCompile(`\((string|integer|int|bool|boolean|duration|flag|text|week|lease|class|team|template)[,)]|\b(string|integer|int|bool|boolean)\b`)
	for _, s := range h.bot.Offered() {
		topic := strings.Join(s.Words, " ")
		r := mustOK(t, h.say("rita@borealis.example", "/gpu help "+topic))
		for _, sec := range r.Sections {
			if sec.Title != "Parameters" {
				continue
			}
			for _, line := range strings.Split(sec.Text, "\n") {
				if m := typeWord.FindString(line); m != "" {
					t.Errorf("/gpu help %s says %q in %q", topic, m, line)
				}
			}
		}
	}
	for who, want := range map[string]string{
		"rita@borealis.example": "`data CLASS`, optional: the data class the work touches, one of the data classes of team robotics: open (the default), medical or export-controlled",
		"sam@borealis.example":  "`data CLASS`, optional: the data class the work touches; team speech has one, open, the default",
	} {
		for _, topic := range []string{"request", "submit"} {
			if help := texts([]bot.Reply{h.say(who, "/gpu help "+topic)}); !strings.Contains(help, want) {
				t.Errorf("/gpu help %s for %s does not say %q:\n%s", topic, who, want, help)
			}
		}
	}
	help := texts([]bot.Reply{h.say("rita@borealis.example", "/gpu help request")})
	for _, want := range []string{"`N`, optional: how many GPUs", "`for DURATION`, optional: how long", "`exclusive`, optional: whole nodes", "`team T`, optional:"} {
		if !strings.Contains(help, want) {
			t.Errorf("/gpu help request does not say %q:\n%s", want, help)
		}
	}
}

// What help says to type for a parameter is what the command's usage line writes.
func TestHelpParametersAreTypedAsTheUsageWritesThem(t *testing.T) {
	for _, s := range Table() {
		for _, p := range s.Params {
			if !strings.Contains(s.Usage, p.Typed()) {
				t.Errorf("%s: parameter %s is typed %q, which its usage %q does not write", s.Name, p.Name, p.Typed(), s.Usage)
			}
		}
	}
}
