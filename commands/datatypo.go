package commands

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// dataClassTypo is, for the command typed (ctx), the data class it names where no team of the
// policy has it, and the one of theirs it is a near miss of, as a reader takes a typo
// (policy.NearMiss): "confidental" and "confidential". near is empty where the command names
// none, one a team has, or one close to none. The team typed is looked at first.
func (b *Bot) dataClassTypo(ctx context.Context) (typed, near string) {
	c, ok := ctx.Value(typedKey{}).(Command)
	if !ok {
		return "", ""
	}
	return b.dataClassNearMiss(c.DataClass, c.Team)
}

// dataClassNearMiss is dataClassTypo for data class dc of a request charged to team (looked at
// first), as the approval card says it, where no command typed is at hand.
func (b *Bot) dataClassNearMiss(dc, team string) (typed, near string) {
	if dc == "" || !policy.ValidDataClass(dc) {
		return "", ""
	}
	var known []string
	add := func(team string) {
		for _, dc := range b.Svc.DataClassesOf(team) {
			if dc = policy.NameKey(dc); !slices.Contains(known, dc) {
				known = append(known, dc)
			}
		}
	}
	if team != "" {
		add(team)
	}
	for _, t := range b.pol().Teams {
		add(t.Name)
	}
	typed = policy.NameKey(dc)
	if slices.Contains(known, typed) {
		return "", ""
	}
	if near = policy.NearMiss(typed, known); near == "" {
		return "", ""
	}
	return typed, near
}

// dataTypoText says that no team has data class typed, and asks whether near was meant.
func dataTypoText(typed, near string) string {
	return fmt.Sprintf("No team has data class %s; did you mean %s?", policy.Quoted(typed, 40), near)
}

// withDataClass is command cmd with its data class typed (after the word data) put as near.
func withDataClass(cmd, typed, near string) string {
	re := regexp.MustCompile(`(?i)(\bdata\s+["']?)` + regexp.QuoteMeta(typed) + `(["']?(\s|$))`)
	return re.ReplaceAllString(cmd, "${1}"+near+"${2}")
}

// dataTypoOutcome is what the reply to a request made (lease l) adds where its data class is a
// typo of one the policy knows: the class likely meant, the request asked again with it, and how
// to end the one made. Empty otherwise.
func (b *Bot) dataTypoOutcome(ctx context.Context, l *qm.Lease) string {
	typed, near := b.dataClassTypo(ctx)
	if near == "" || policy.NameKey(l.DataClass) != typed {
		return ""
	}
	again := *l
	again.DataClass = "" // said below, always: askAgain leaves out the team's first
	if l.AskedGPUs > 0 {
		again.GPUs = l.AskedGPUs // as asked, not the whole nodes it takes
	}
	cmd, ok := b.askAgain(ctx, &again)
	if !ok {
		return " " + dataTypoText(typed, near)
	}
	if rest, ok := strings.CutSuffix(cmd, " exclusive"); ok {
		cmd = rest + " data " + near + " exclusive"
	} else {
		cmd += " data " + near
	}
	end := "withdraw this one with /gpu cancel " + l.ID.String()
	if l.State.Running() {
		end = "end this one with /gpu release " + l.ID.String()
	}
	return fmt.Sprintf(" %s Then ask with %s, and %s.", dataTypoText(typed, near), cmd, end)
}

// chatMentions are the names a chat app reads as a mention of many (@here), never offered as a
// data class written as a mention.
var chatMentions = []string{"everyone", "here", "channel"}

// mentionedDataClass is the data class typed names as a mention (@silt: silt), where it is one of
// the policy's data classes and no mention a chat app reads as one of many (@here); "" otherwise.
func (b *Bot) mentionedDataClass(typed string) string {
	rest, ok := strings.CutPrefix(typed, "@")
	name := policy.NameKey(rest)
	if !ok || !policy.ValidDataClass(name) || slices.Contains(chatMentions, name) {
		return ""
	}
	if slices.ContainsFunc(b.DataClasses(), func(dc string) bool { return policy.NameKey(dc) == name }) {
		return name
	}
	return ""
}

// dataMentioned is c and err, the refusal of c, where c names its data class as a mention (data
// @silt) of one of the policy's data classes: the sentence says a data class is named without the
// @, and the example is the command typed (text) naming it so. c and err as they are otherwise.
func (b *Bot) dataMentioned(c Command, text string, err error) (Command, error) {
	if c.dataMention == "" {
		return c, err
	}
	name := b.mentionedDataClass(c.dataMention)
	if name == "" {
		return c, err
	}
	msg := fmt.Sprintf("%s is a mention; a data class is named without the @: %s.", policy.Quoted(c.dataMention, 40), name)
	if c.Verb == "request" {
		// The request as typed, put right, with the data class meant (typedExample).
		c.DataClass = name
		if s, ok := Lookup(c.Verb); ok && len(s.Examples) > 0 {
			return c, qm.Invalid(s.Examples[0], "%s", msg)
		}
	}
	ws := strings.Fields(shown(text))
	for i, w := range ws {
		if unquoted(w) == c.dataMention {
			ws[i] = name
		}
	}
	if len(ws) > 0 && !strings.HasPrefix(ws[0], "/") {
		ws = append([]string{"/gpu"}, ws...)
	}
	return c, qm.Invalid(strings.Join(ws, " "), "%s", msg)
}
