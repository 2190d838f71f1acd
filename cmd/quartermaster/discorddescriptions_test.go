package main

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/acme/quartermaster/bot/discord/gputable"

	discordbot "github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/commands"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// allDiscordCommands are the whole command table as Discord subcommands: templates, the report
// and single sign-on's commands all offered.
func allDiscordCommands(t *testing.T) (*commands.Bot, []discordbot.Command) {
	t.Helper()
	pol, err := policy.LoadFile("../../docs/quartermaster.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b := &commands.Bot{Svc: &qm.Service{Policy: pol}}
	cat, err := templateCatalog()
	if err != nil {
		t.Fatal(err)
	}
	ws, err := workloadSettings()
	if err != nil {
		t.Fatal(err)
	}
	commands.AddTemplates(b, cat, ws)
	commands.AddReport(b, &showback.Service{Policy: pol})
	b.SSO = offeredOnly{}
	cmds := gputable.Commands(b)
	if len(cmds) != len(commands.Table()) {
		t.Fatalf("%d of the table's %d commands offered", len(cmds), len(commands.Table()))
	}
	return b, cmds
}

// TestDiscordDescriptionsEndOnAWord: Discord shows at most 100 characters of a subcommand's or an
// option's description; a longer one registered from the command table is cut after a whole
// word and ends with "…", never in the middle of a word ("owners see their te").
func TestDiscordDescriptionsEndOnAWord(t *testing.T) {
	t.Parallel()
	_, cmds := allDiscordCommands(t)
	ac := discordbot.ApplicationCommand(discordbot.DefaultName, cmds)
	check := func(what, full, got string) {
		t.Helper()
		if utf8.RuneCountInString(got) > 100 {
			t.Errorf("%s: %d characters: %q", what, utf8.RuneCountInString(got), got)
		}
		if got == full {
			return
		}
		head, ok := strings.CutSuffix(got, "…")
		rest, cut := strings.CutPrefix(full, head)
		next, _ := utf8.DecodeRuneInString(rest)
		last, _ := utf8.DecodeLastRuneInString(head)
		if !ok || !cut || head == "" || rest == "" || unicode.IsLetter(next) || unicode.IsDigit(next) || unicode.IsSpace(last) {
			t.Errorf("%s is registered as %q; want %q cut after a whole word, with …", what, got, full)
		}
	}
	for i, sub := range ac.Options {
		c := cmds[i]
		check("/gpu "+c.Name, c.Description, sub.Description)
		for _, op := range sub.Options {
			for _, o := range c.Options {
				if o.Name == op.Name {
					check("/gpu "+c.Name+" "+o.Name, o.Description, op.Description)
				}
			}
		}
	}
}

// TestDiscordUnlinkOptionNamesAPersonInDiscordsTerms: the who option of /gpu unlink, as Discord
// registers it, asks for the person as a Discord user names them, not as platform:workspace:user.
func TestDiscordUnlinkOptionNamesAPersonInDiscordsTerms(t *testing.T) {
	t.Parallel()
	_, cmds := allDiscordCommands(t)
	for _, c := range cmds {
		if c.Name != "unlink" {
			continue
		}
		for _, o := range c.Options {
			if o.Name == "who" && (strings.Contains(o.Description, "platform:workspace:user") || !strings.Contains(o.Description, "@") || utf8.RuneCountInString(o.Description) > 100) {
				t.Errorf("/gpu unlink who: described as %q", o.Description)
			}
		}
		return
	}
	t.Fatal("/gpu unlink is not registered")
}
