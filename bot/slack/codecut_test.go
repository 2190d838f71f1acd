package slack_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
	slackbot "github.com/acme/quartermaster/bot/slack"
)

// slackCodeLines are the lines inside the code blocks of texts, each read on its own as Slack
// renders a block, with Slack's escapes read back.
func slackCodeLines(t *testing.T, texts []string) []string {
	t.Helper()
	unescape := strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&")
	var lines []string
	for i, s := range texts {
		if strings.Count(s, "```")%2 != 0 {
			t.Errorf("block %d leaves a code block open: it ends %q", i, s[max(0, len(s)-100):])
			continue
		}
		for k, code := range strings.Split(s, "```") {
			if k%2 == 1 {
				code = strings.TrimSuffix(strings.TrimPrefix(code, "\n"), "\n")
				lines = append(lines, strings.Split(unescape.Replace(code), "\n")...)
			}
		}
	}
	return lines
}

// A template's Kubernetes manifest longer than one Slack block is cut between its lines: each
// block's code holds whole lines of it, the line after a cut with its indentation, so the manifest
// copied from the blocks is the manifest; before, a cut at the last space split a line in two
// ("- {name: QM_LEASE," in one block, "value: "L-42"}" in the next).
func TestALongManifestIsCutBetweenItsLinesInSlack(t *testing.T) {
	e := newTuataraEnv(t)
	var want []string
	for _, r := range e.bot.Handle(context.Background(), bot.Request{User: "tama@tuatara.example.nz", Text: "/gpu template jupyterlab"}) {
		for _, s := range r.Sections {
			for k, code := range strings.Split(s.Text, "```") {
				if k%2 == 1 {
					want = append(want, strings.Split(strings.TrimSuffix(strings.TrimPrefix(code, "\n"), "\n"), "\n")...)
				}
			}
		}
	}
	if len(want) < 100 {
		t.Fatalf("the template's answer holds %d lines of code; want its script and manifest", len(want))
	}
	got := e.ask("UTAMA", "template jupyterlab")
	var texts []string
	for _, b := range got.Blocks {
		if tx, ok := b["text"].(map[string]any); ok {
			s, _ := tx["text"].(string)
			texts = append(texts, s)
		}
	}
	lines := slackCodeLines(t, texts)
	// Each answer makes the workspace a token of its own.
	token := regexp.MustCompile(`[0-9a-f]{48}`)
	for i := range min(len(lines), len(want)) {
		lines[i], want[i] = token.ReplaceAllString(lines[i], "TOKEN"), token.ReplaceAllString(want[i], "TOKEN")
		if lines[i] != want[i] {
			t.Fatalf("line %d of the code in Slack reads %q, want %q", i+1, lines[i], want[i])
		}
	}
	if len(lines) != len(want) {
		t.Fatalf("Slack shows %d lines of code, want %d", len(lines), len(want))
	}
}

// A cut that falls right after a code block's opening fence (its code a line longer than what is
// left of the block) leaves no empty code block at the end of a block: the fence goes to the next
// block, with its code, and the block ends with the text before it.
func TestACutAfterAnOpeningFenceMovesTheFenceInSlack(t *testing.T) {
	code := "kubectl apply -f " + strings.Repeat("https://register.tuatara.example.nz/manifests/kākāpō/", 30) + "jupyterlab.yaml"
	for lead := 1400; lead <= 3000; lead += 100 {
		var words []string
		for i := 0; len(strings.Join(words, " ")) < lead; i++ {
			words = append(words, fmt.Sprintf("whakamārama-%d", i))
		}
		intro := strings.Join(words, " ")
		_, blocks := slackbot.Render(bot.Reply{Text: intro + "\n```\n" + code + "\n```\nThen /gpu list shows it."}, slackbot.MaxMessageBlocks)
		var texts []string
		for _, b := range checkLimits(t, "the answer", blocks, slackbot.MaxMessageBlocks) {
			if tx, ok := b["text"].(map[string]any); ok {
				s, _ := tx["text"].(string)
				texts = append(texts, s)
			}
		}
		for i, s := range texts {
			for k, block := range strings.Split(s, "```") {
				if k%2 == 1 && strings.TrimSpace(block) == "" {
					t.Errorf("with %d characters before the code, block %d of %d holds an empty code block: it ends %q", len(intro), i+1, len(texts), s[max(0, len(s)-40):])
				}
			}
		}
		// (A line of code with no line break in the second half of a block is cut at a space.)
		if got := strings.Join(slackCodeLines(t, texts), " "); strings.Join(strings.Fields(got), " ") != code {
			t.Errorf("with %d characters before the code, the code reads %q", len(intro), got[:min(len(got), 80)])
		}
	}
}
