package discord_test

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// A role or a person picked in a team option (Discord writes <@&ROLE_ID>, <@USER_ID> or
// <@!USER_ID>) is refused saying what it is, a role or a person, not a team, with the team to be
// named instead; nothing is made.
func TestARoleOrPersonPickedAsATeamIsNamedForWhatItIs(t *testing.T) {
	k := newKestrel(t)
	for value, want := range map[string]string{
		"<@&730000000000000077>": "is a Discord role, not a team",
		"<@810000000000000002>":  "is a person, not a team",
		"<@!810000000000000002>": "is a person, not a team",
	} {
		got := k.run(kin(kZoe), "request", discordtest.Opt{Name: "gpus", Value: 1}, discordtest.Opt{Name: "class", Value: "l40s"}, discordtest.Opt{Name: "team", Value: value})
		if !strings.Contains(got.text(), want) || !strings.Contains(got.text(), "Example: /gpu request") {
			t.Errorf("team:%s answered %q; want %q and an example", value, got.text(), want)
		}
		if q := k.run(kin(kZoe), "quota", discordtest.Opt{Name: "team", Value: value}); !strings.Contains(q.text(), want) {
			t.Errorf("/gpu quota team:%s answered %q; want %q", value, q.text(), want)
		}
	}
	if l := k.run(kin(kZoe), "list"); strings.Contains(l.text(), "L-1") {
		t.Errorf("a refused request made a lease: %q", l.text())
	}
}
