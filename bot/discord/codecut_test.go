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
