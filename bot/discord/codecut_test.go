package discord_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// piecesOf are the texts of an answer as Discord shows them, each rendered on its own: every
// embed's description, the interaction's answer first, then its follow-ups.
func piecesOf(e *env, body []byte, r response) []string {
	var out []string
	for _, em := range r.Data.Embeds {
		out = append(out, em.Description)
	}
	for _, m := range e.fake.FollowUps(discordtest.ID(body)) {
		for _, em := range m.Embeds {
			out = append(out, em.Description)
		}
	}
	return out
}

// codeLines are the lines inside the code blocks (```…```) of texts, each text read on its own
// as Discord renders an embed: a block a text leaves open shows no code.
func codeLines(t *testing.T, texts []string) []string {
	t.Helper()
	var lines []string
	for i, s := range texts {
		if n := strings.Count(s, "```"); n%2 != 0 {
			t.Errorf("piece %d of %d leaves a code block open (%d fences): it ends %q", i+1, len(texts), n, s[max(0, len(s)-120):])
			continue
		}
		for k, block := range strings.Split(s, "```") {
			if k%2 == 0 {
				continue
			}
			block = strings.TrimPrefix(block, "\n")
			block = strings.TrimSuffix(block, "\n")
			lines = append(lines, strings.Split(block, "\n")...)
		}
	}
	return lines
}

// A code block longer than one embed (a template's Kubernetes manifest) is cut between its lines,
// and each piece shows as code: the block is closed at the end of a piece and opened again at the
// start of the next, and the line after the cut keeps its indentation, as Slack's pieces do.
func TestALongCodeBlockStaysCodeAcrossPieces(t *testing.T) {
	var code []string
	for i := range 400 {
		code = append(code, fmt.Sprintf("%s- {name: QM_VAR_%03d, value: \"ünïcødé-%03d\"}", strings.Repeat(" ", 2+i%4*2), i, i))
	}
	e := newEnv(t)
	e.handler.reply = func(bot.Request) []bot.Reply {
		return []bot.Reply{{Text: "jupyterlab — JupyterLab", Sections: []bot.Section{
			{Title: "Kubernetes manifest", Text: "```\n" + strings.Join(code, "\n") + "\n```"},
		}}}
	}
	body := discordtest.Command(in(alice), "gpu", "help")
	r := e.send(body)
	e.wait()
	pieces := piecesOf(e, body, r)
	if len(pieces) < 3 {
		t.Fatalf("the answer is in %d pieces; want the manifest cut", len(pieces))
	}
	got := codeLines(t, pieces)
	if strings.Join(got, "\n") != strings.Join(code, "\n") {
		for i := range min(len(got), len(code)) {
			if got[i] != code[i] {
				t.Fatalf("line %d of the code reads %q, want %q", i+1, got[i], code[i])
			}
		}
		t.Fatalf("the code has %d lines in the answer, want %d", len(got), len(code))
	}
}

// A cut that falls right after a code block's opening fence (its code a line longer than what is
// left of the piece) leaves no empty code block at the end of the piece: the fence goes to the
// next piece, with its code, and the piece ends with the text before it.
func TestACutAfterAnOpeningFenceMovesTheFence(t *testing.T) {
	code := "kubectl apply -f " + strings.Repeat("https://register.hesap.example/manifests/istanbul-ml/", 40) + "jupyterlab.yaml"
	for lead := 2200; lead <= 4000; lead += 150 {
		var words []string
		for i := 0; len(strings.Join(words, " ")) < lead; i++ {
			words = append(words, fmt.Sprintf("çalışma-%d", i))
		}
		intro := strings.Join(words, " ")
		e := newEnv(t)
		e.handler.reply = func(bot.Request) []bot.Reply {
			return []bot.Reply{{Text: intro + "\n```yaml\n" + code + "\n```\nThen /gpu list shows it."}}
		}
		body := discordtest.Command(in(alice), "gpu", "help")
		r := e.send(body)
		e.wait()
		pieces := piecesOf(e, body, r)
		for i, p := range pieces {
			for k, block := range strings.Split(p, "```") {
				if k%2 == 1 && strings.TrimSpace(strings.TrimPrefix(block, "yaml")) == "" {
					t.Errorf("with %d characters before the block, piece %d of %d holds an empty code block: it ends %q", len(intro), i+1, len(pieces), p[max(0, len(p)-40):])
				}
			}
		}
		var lines []string
		for _, l := range codeLines(t, pieces) {
			if l != "yaml" { // the language on the fence's line
				lines = append(lines, l)
			}
		}
		if got := strings.Join(lines, ""); got != code {
			t.Errorf("with %d characters before the block, the code reads %q", len(intro), got[:min(len(got), 80)])
		}
		if !strings.Contains(strings.Join(pieces, "\n"), "```yaml\n"+code[:40]) {
			t.Errorf("with %d characters before the block, its language is lost", len(intro))
		}
	}
}
