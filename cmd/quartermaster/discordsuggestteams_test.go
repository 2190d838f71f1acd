package main

import (
	"os"
	"strings"
	"testing"

	discordbot "github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
	"github.com/acme/quartermaster/bot/discord/gputable"
	"github.com/acme/quartermaster/internal/oidc/oidctest"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// Tarn's Discord users (bot/discord/testdata/tarn.yaml).
const (
	tarnPolicy = "../../bot/discord/testdata/tarn.yaml"
	tYlva      = "820000000000000041" // in scree and moraine_lab
	tBrynja    = "820000000000000042" // in no team; budget owner of glacier-3 and scree
	tOdin      = "820000000000000043" // in lumen; the fallback approver, a platform admin
	tEir       = "820000000000000044" // in moraine_lab, of moraine-leads: decides for it
	tStray     = "820000000000000099" // nobody the directory knows
)

// suggested is what Discord shows user as they type typed into option of /gpu sub: the
// suggestions' values, in order, and their names.
func (e *discordEnv) suggested(user, sub, option, typed string) (values, names []string) {
	e.t.Helper()
	m := e.do(discordtest.Autocomplete(discordtest.Who{User: user, Channel: dChannel, Guild: dGuild}, "gpu", sub, discordtest.Opt{Name: option, Value: typed, Focused: true}))
	for _, c := range m.Choices {
		values = append(values, c.Value.(string))
		names = append(names, c.Name)
	}
	return values, names
}

// The team and data options of /gpu are suggested as they are typed: the team option the teams
// its command takes from the person typing (their own first; a request's only theirs, as a
// request refuses another; /gpu report's the teams whose showback they see, every team for a
// platform admin), the data option the data classes of the policy's teams, the person's teams'
// first. What is typed matches with capitals and accents not counting.
func TestTeamAndDataSuggestions(t *testing.T) {
	t.Parallel()
	e := newDiscordEnvWith(t, commonFlags{policy: tarnPolicy, db: storetest.SQLite(t)})

	ac := discordbot.ApplicationCommand("gpu", gputable.Commands(e.app.Bot))
	for _, sub := range ac.Options {
		for _, o := range sub.Options {
			if (o.Name == "team" || o.Name == "data") && (!o.Autocomplete || len(o.Choices) > 0) {
				t.Errorf("/gpu %s's %s option is not suggested as it is typed (autocomplete %v, %d choices)", sub.Name, o.Name, o.Autocomplete, len(o.Choices))
			}
		}
	}

	for _, c := range []struct {
		user, sub, option, typed, want string
	}{
		// A request, a quota increase: the person's own teams, in the policy's order, and no other.
		{tYlva, "request", "team", "", "moraine_lab scree"},
		{tYlva, "quota-request", "team", "", "moraine_lab scree"},
		{tOdin, "request", "team", "", "lumen"},
		{tBrynja, "request", "team", "", ""},
		// /gpu quota shows any team's quota: the person's own first, then those they own, then the rest.
		{tYlva, "quota", "team", "", "moraine_lab scree glacier-3 lumen"},
		{tBrynja, "quota", "team", "", "glacier-3 scree lumen moraine_lab"},
		// /gpu report: every team for a platform admin, their own first; a budget owner's own; none
		// to someone who sees only their own use.
		{tOdin, "report", "team", "", "lumen glacier-3 moraine_lab scree"},
		{tBrynja, "report", "team", "", "glacier-3 scree"},
		{tEir, "report", "team", "", "moraine_lab"},
		{tYlva, "report", "team", "", ""},
		// As typed: a part of the name, capitals and accents not counting.
		{tYlva, "request", "team", "SCRÉ", "scree"},
		{tOdin, "report", "team", "  Glåc ", "glacier-3"},
		{tYlva, "request", "team", "lumen", ""},
		// Data classes: the person's teams' first (moraine_lab is cleared for public data), then
		// the rest of the policy's.
		{tYlva, "request", "data", "", "public field-notes open sealed"},
		{tOdin, "request", "data", "", "sealed open public field-notes"},
		{tYlva, "request", "data", "FIÉLD", "field-notes"},
		{tYlva, "request", "data", "se", "sealed"},
		// Someone the directory does not know is in no team and is told none of the policy's names.
		{tStray, "quota", "team", "", ""},
		{tStray, "request", "data", "", ""},
	} {
		got, _ := e.suggested(c.user, c.sub, c.option, c.typed)
		if strings.Join(got, " ") != c.want {
			t.Errorf("/gpu %s %s:%q suggests %q to %s; want %q", c.sub, c.option, c.typed, got, c.user, c.want)
		}
	}
	// The default is said: a request without a team is charged to the first.
	if _, names := e.suggested(tYlva, "request", "team", ""); len(names) == 0 || !strings.Contains(names[0], "moraine_lab") || !strings.Contains(names[0], "default") {
		t.Errorf("ylva's first team is suggested as %q; want it named the default", names)
	}
	// A suggestion picked runs: the team and data class reach the request as suggested.
	if m := e.command(tYlva, "request", opt("gpus", 1), opt("class", "firn_a10"), opt("duration", "2h"), opt("team", "scree"), opt("data", "field-notes")); !strings.Contains(m.Text(), "L-1") {
		t.Fatalf("ylva's request with the suggested team and data class: %q", m.Text())
	}
	if l := e.lease("L-1"); l.Team != "scree" || l.DataClass != "field-notes" {
		t.Errorf("L-1 is team %s, data %s; want scree, field-notes", l.Team, l.DataClass)
	}
}

// A changed policy changes what the team and data options suggest, with /gpu as it was
// registered: a renamed team and a new data class are suggested at once.
func TestTeamSuggestionsFollowThePolicy(t *testing.T) {
	t.Parallel()
	e := newDiscordEnvWith(t, commonFlags{policy: tarnPolicy, db: storetest.SQLite(t)})
	raw, err := os.ReadFile(tarnPolicy)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.NewReplacer("name: scree", "name: talus", "[field-notes, open]", "[core-samples, open]").Replace(string(raw))
	p, err := policy.Load([]byte(changed), "tarn.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e.app.Policy, e.app.Service.Policy, e.app.Service.Directory = p, p, p
	for _, c := range []struct{ sub, option, want string }{
		{"request", "team", "moraine_lab talus"},
		{"request", "data", "public core-samples open sealed"},
	} {
		if got, _ := e.suggested(tYlva, c.sub, c.option, ""); strings.Join(got, " ") != c.want {
			t.Errorf("after the policy changed, /gpu %s %s suggests %q; want %q", c.sub, c.option, got, c.want)
		}
	}
	if ow := e.fake.Overwrites(); len(ow) != 0 {
		t.Errorf("/gpu was registered again: %d overwrites", len(ow))
	}
}

// With single sign-on, the teams suggested are those the identity provider's groups put the person
// in, as a request charges them: none before they sign in, theirs after, and the data classes
// their teams are cleared for first.
func TestTeamSuggestionsFollowSignIn(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(tarnPolicy)
	if err != nil {
		t.Fatal(err)
	}
	w := newSSOWorldWith(t, string(raw)+"oidc:\n  groups_claim: groups\n  recheck: 24h\n  scopes: [openid, email, profile, groups]\n")
	e := &discordEnv{t: t, app: w.a, fake: discordtest.New(t), signer: discordtest.NewSigner()}
	e.settings = discordSettings{BotToken: discordtest.Token, PublicKey: e.signer.PublicKey(), AppID: discordtest.App, APIURL: e.fake.URL}
	e.start()
	const dSigrid = "820000000000000077"
	if got, _ := e.suggested(dSigrid, "request", "team", ""); len(got) != 0 {
		t.Errorf("before signing in, sigrid is suggested teams %q", got)
	}
	login := e.command(dSigrid, "login")
	u := loginURL.FindString(login.Text())
	if u == "" {
		t.Fatalf("/gpu login answered %q", login.Text())
	}
	w.idp.SignIn(oidctest.NewUser("sub-sigrid", "sigrid@tarn.example", "g-lumen", "g-glacier"))
	if page := oidctest.NewBrowser(t).Follow(u); !strings.Contains(page.Body, "sigrid@tarn.example") {
		t.Fatalf("the login page: %s", page.Body)
	}
	for _, c := range []struct{ sub, option, want string }{
		{"request", "team", "glacier-3 lumen"},
		{"quota", "team", "glacier-3 lumen moraine_lab scree"},
		{"request", "data", "open sealed public field-notes"},
	} {
		if got, _ := e.suggested(dSigrid, c.sub, c.option, ""); strings.Join(got, " ") != c.want {
			t.Errorf("signed in, /gpu %s %s suggests %q to sigrid; want %q", c.sub, c.option, got, c.want)
		}
	}
}
