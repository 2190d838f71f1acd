package commands

import (
	"strings"
	"testing"
)

// TestParseSSOCommands: login and logout take nothing; unlink takes one email or chat account.
func TestParseSSOCommands(t *testing.T) {
	for in, want := range map[string]string{
		"/gpu login":                              "",
		"/gpu logout":                             "",
		"/gpu login now":                          "takes no arguments",
		"/gpu unlink":                             "needs one email or chat account",
		"/gpu unlink bob":                         "neither an email nor a chat account",
		"/gpu unlink slack:T1":                    "neither an email nor a chat account",
		"/gpu unlink a@b.example c@d":             "needs one email or chat account",
		"/gpu unlink carl@x.example":              "",
		"/gpu unlink slack:T024BE7LD:U1":          "",
		"/gpu unlink Bob@Globex.example":          "",
		"/gpu unlink discord::880000000000000001": "",
		// A typed @name is not an email (Discord's <@USER_ID> names its account: below).
		"/gpu unlink @bob":     "neither an email nor a chat account",
		"/gpu unlink <@U024B>": "neither an email nor a chat account",
		"/gpu unlink bob@":     "neither an email nor a chat account",
	} {
		c, err := Parse(in)
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", in, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "Example: /gpu")):
			t.Errorf("%q: %v, want %q and an example", in, err, want)
		case want == "" && strings.HasPrefix(in, "/gpu unlink") && c.Arg != strings.Fields(in)[2]:
			t.Errorf("%q: arg %q", in, c.Arg)
		}
	}
}

// helpOnlySSO is single sign-on as far as /gpu help sees it: set up, and never asked anything.
type helpOnlySSO struct{ SSO }

// TestUnlinkExampleNamesThePolicysPeople: /gpu help unlink shows a person the policy knows, not
// one of the example policy's.
func TestUnlinkExampleNamesThePolicysPeople(t *testing.T) {
	h := newHarnessOn(t, otherPolicy)
	h.bot.SSO = helpOnlySSO{}
	r := h.say("rita@borealis.example", "/gpu help unlink")
	got := r.Text
	for _, sec := range r.Sections {
		got += "\n" + sec.Title + ": " + sec.Text
	}
	if !strings.Contains(got, "/gpu unlink rita@borealis.example") || strings.Contains(got, ".example/") || strings.Contains(got, "contractor.example") {
		t.Errorf("/gpu help unlink on another policy: %q", got)
	}
}

// TestUnlinkTakesADiscordUserAsDiscordNamesThem: a Discord admin names the person to unlink as
// Discord lets them, by mentioning them (<@USER_ID>, or <@!USER_ID>) or as the directory and the
// unknown-user answer write a Discord account (discord:USER_ID): each is the chat account
// discord::USER_ID, which their sign-in linked.
func TestUnlinkTakesADiscordUserAsDiscordNamesThem(t *testing.T) {
	for _, in := range []string{"<@880000000000000001>", "<@!880000000000000001>", "discord:880000000000000001", "Discord:880000000000000001"} {
		c, err := Parse("/gpu unlink " + in)
		if err != nil || c.Arg != "discord::880000000000000001" {
			t.Errorf("/gpu unlink %s: %q, %v; want the account discord::880000000000000001", in, c.Arg, err)
		}
	}
	for _, in := range []string{"<@abc>", "discord:", "discord:alice", "<@>"} {
		if _, err := Parse("/gpu unlink " + in); err == nil || !strings.Contains(err.Error(), "neither an email nor a chat account") {
			t.Errorf("/gpu unlink %s: %v; want a refusal", in, err)
		}
	}
}
