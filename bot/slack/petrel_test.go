package slack_test

import (
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/slack-go/slack"

	"github.com/acme/quartermaster/bot"
	slackbot "github.com/acme/quartermaster/bot/slack"

	"github.com/acme/quartermaster/commands"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/store/storetest"
	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/workload"
	qmtemplates "github.com/acme/quartermaster/templates"
)

// petrelPolicy is a policy of its own names: Petrel Labs in Stockholm, billing in SEK; classes
// a100-80g (shared) and mi300x (exclusive); team ljud decided by the group leads (astrid and bo),
// bild-2 by greta, akeri (typed with accents as åkeri) by the group frakt-ansvariga (olle).
const petrelPolicy = "testdata/petrel.yaml"

// newPetrelEnv is the product on the Petrel policy, with a Slack user for each person it lists.
func newPetrelEnv(t *testing.T) *env {
	t.Helper()
	p, err := policy.LoadFile(petrelPolicy)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvOn(t, storetest.SQLite(t), p, []string{"ljud", "bild-2", "akeri"})
	e.svc.Directory = groupDirectory{directory{p}}
	cat, err := templates.Load(qmtemplates.FS)
	if err != nil {
		t.Fatal(err)
	}
	commands.AddTemplates(e.bot, cat, workload.Settings{})
	e.slack.setUsers(map[string]string{
		"USVEN":   "sven@petrel.example.se",
		"UASTRID": "astrid@petrel.example.se",
		"UBO":     "bo@petrel.example.se",
		"UGRETA":  "greta@petrel.example.se",
		"UNILS":   "nils@petrel.example.se",
		"UASA":    "åsa@petrel.example.se",
		"UOLLE":   "olle@petrel.example.se",
		"UDRIFT":  "drift@petrel.example.se",
	})
	return e
}

// A mark of the bot's own sentence is never changed because what someone typed could pair with
// it: "- and _." reads as written next to a typed _y and a template parameter x_, while the typed
// marks are still never formatted (they read as typed, as look-alikes where they could pair; the
// example's command is code, where nothing pairs).
func TestTheBotsOwnMarkNeverPairsWithATypedOne(t *testing.T) {
	e := newPetrelEnv(t)
	for _, tc := range []struct{ ask, typed string }{
		{"request 1 a100-80g for 1h template jupyterlab root=x_ data _y", `"_y"`},
		{"request 1 a100-80g for 1h template jupyterlab root=ljud_ data _bild", `"_bild"`},
	} {
		got := e.ask("USVEN", tc.ask)
		if !strings.Contains(got.Text, "is not a data class") {
			t.Fatalf("/gpu %s answered %q", tc.ask, got.Text)
		}
		for _, s := range shownTexts(got) {
			if !strings.Contains(s, "digits, dots, - and _.") {
				t.Errorf("/gpu %s: the bot's own \"- and _.\" reached Slack as %q", tc.ask, s)
			}
			if !strings.Contains(readAsTyped(s), tc.typed) {
				t.Errorf("/gpu %s: the typed %s is formatted or lost in %q", tc.ask, tc.typed, s)
			}
			if pairs(s) {
				t.Errorf("/gpu %s: Slack would format part of %q", tc.ask, s)
			}
		}
	}
}

// codeSpan is a span of inline code, where Slack formats nothing.
var codeSpan = regexp.MustCompile("`[^`\n]+`")

// pairs reports whether Slack would format part of s outside its code: a _, * or ~ that could
// open a span (not a space after it, not inside a word) followed by one of its kind that could
// close it.
func pairs(s string) bool {
	word := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	rs := []rune(codeSpan.ReplaceAllString(s, "code"))
	for _, c := range "_*~" {
		open := false
		for i, r := range rs {
			if r != c {
				continue
			}
			before, after := ' ', ' '
			if i > 0 {
				before = rs[i-1]
			}
			if i+1 < len(rs) {
				after = rs[i+1]
			}
			if word(before) && word(after) {
				continue
			}
			if open && !unicode.IsSpace(before) {
				return true
			}
			open = open || !unicode.IsSpace(after)
		}
	}
	return false
}

// A reply too long for one section is cut where the next section begins with nothing Slack reads
// differently at the start of a line: never a quote (&gt;, which Slack shows as a quote), a list
// mark (•, - and a space, 1. and a space), and never inside an escape, so the text reads as it
// would in one piece.
func TestALongReplyIsNeverCutBeforeAQuoteOrInsideAnEscape(t *testing.T) {
	unit := "ljud > bild-2 • åkeri - a100-80g & mi300x 1. <@UASTRID> "
	esc := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	for pad := 0; pad < len(unit)+8; pad++ {
		text := strings.Repeat("o", pad) + " " + strings.Repeat(unit, 90)
		_, blocks := slackbot.Render(bot.Reply{Text: text}, slackbot.MaxMessageBlocks)
		var parts []string
		for i, b := range blocks {
			sec, ok := b.(*slack.SectionBlock)
			if !ok || sec.Text == nil {
				continue
			}
			s := sec.Text.Text
			parts = append(parts, s)
			if i > 0 {
				for _, m := range []string{"&gt;", ">", "•", "- ", "1. ", "amp;", "lt;", "gt;"} {
					if strings.HasPrefix(s, m) {
						t.Errorf("pad %d: section %d begins with %q: %.40q", pad, i, m, s)
					}
				}
			}
			for j := strings.IndexByte(s, '&'); j >= 0; j = strings.IndexByte(s[j+1:], '&') + j + 1 {
				if !strings.HasPrefix(s[j:], "&amp;") && !strings.HasPrefix(s[j:], "&lt;") && !strings.HasPrefix(s[j:], "&gt;") {
					t.Errorf("pad %d: section %d cuts an escape: %q", pad, i, s[max(j-10, 0):])
				}
				if strings.IndexByte(s[j+1:], '&') < 0 {
					break
				}
			}
		}
		if len(parts) < 2 {
			t.Fatalf("pad %d: the reply was not split (%d sections)", pad, len(parts))
		}
		if got, want := strings.Join(strings.Fields(strings.Join(parts, " ")), " "), strings.Join(strings.Fields(esc.Replace(text)), " "); got != want {
			t.Errorf("pad %d: the sections do not read as the text in one piece", pad)
		}
	}
}

// A Slack user group's mention where a team goes, as Slack sends it (<!subteam^…|@leads>), is
// refused saying a user group is not a team, with an example that charges the asker's team.
func TestAUserGroupMentionIsNoTeamInSlack(t *testing.T) {
	e := newPetrelEnv(t)
	got := e.sent("USVEN", "request 1 a100-80g for 1h team <!subteam^S0LEADS|@leads>")
	if !strings.Contains(got, `"@leads" names a user group or a person, not a team;`) || !strings.HasSuffix(got, "Example: `/gpu request 1 a100-80g for 1h`") {
		t.Fatalf("the mention answered %q", got)
	}
	if got := e.ask("USVEN", "request 1 a100-80g for 1h"); !strings.Contains(got.Text, "is active") {
		t.Errorf("the example answered %q", got.Text)
	}
}

// A reply whose code block (a template's Slurm script or Kubernetes manifest) is longer than one
// section is cut into sections that each close the code block they open and reopen it where the
// next one goes on, so no section shows a stray ``` and what follows a cut stays code (its "- "
// lines no list).
func TestALongCodeBlockIsCutIntoWholeCodeBlocks(t *testing.T) {
	e := newPetrelEnv(t)
	got := e.ask("USVEN", "template jupyterlab")
	var texts []string
	for _, s := range shownTexts(got)[1:] {
		if strings.Contains(s, "```") || strings.Contains(s, "apiVersion") || strings.Contains(s, "#SBATCH") {
			texts = append(texts, s)
		}
	}
	if len(texts) < 3 {
		t.Fatalf("the template's script and manifest came in %d sections", len(texts))
	}
	for i, s := range texts {
		if strings.Count(s, "```")%2 != 0 {
			t.Errorf("section %d opens or closes a code block it does not close or open: %.60q … %.60q", i, s, s[max(len(s)-60, 0):])
		}
	}
}
