package slack_test

import (
	"flag"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	slackbot "github.com/acme/quartermaster/bot/slack"
	"github.com/acme/quartermaster/commands"
)

var update = flag.Bool("update", false, "rewrite golden files (here: manifest.yaml's usage hint)")

const manifestPath = "../../manifest.yaml"

// manifest is the part of a Slack app manifest Quartermaster relies on.
type manifest struct {
	Metadata struct {
		MajorVersion int `yaml:"major_version"`
	} `yaml:"_metadata"`
	Display struct {
		Name            string `yaml:"name"`
		Description     string `yaml:"description"`
		LongDescription string `yaml:"long_description"`
		BackgroundColor string `yaml:"background_color"`
	} `yaml:"display_information"`
	Features struct {
		AppHome struct {
			HomeTab             bool  `yaml:"home_tab_enabled"`
			MessagesTab         bool  `yaml:"messages_tab_enabled"`
			MessagesTabReadOnly *bool `yaml:"messages_tab_read_only_enabled"`
		} `yaml:"app_home"`
		BotUser struct {
			DisplayName string `yaml:"display_name"`
		} `yaml:"bot_user"`
		SlashCommands []struct {
			Command      string `yaml:"command"`
			URL          string `yaml:"url"`
			Description  string `yaml:"description"`
			UsageHint    string `yaml:"usage_hint"`
			ShouldEscape *bool  `yaml:"should_escape"`
		} `yaml:"slash_commands"`
	} `yaml:"features"`
	OAuth struct {
		Scopes struct {
			Bot []string `yaml:"bot"`
		} `yaml:"scopes"`
	} `yaml:"oauth_config"`
	Settings struct {
		Events struct {
			RequestURL string   `yaml:"request_url"`
			BotEvents  []string `yaml:"bot_events"`
		} `yaml:"event_subscriptions"`
		Interactivity struct {
			Enabled    bool   `yaml:"is_enabled"`
			RequestURL string `yaml:"request_url"`
			OptionsURL string `yaml:"message_menu_options_url"`
		} `yaml:"interactivity"`
		SocketMode *bool `yaml:"socket_mode_enabled"`
	} `yaml:"settings"`
}

// usageHint is the /gpu usage hint, built from the command registry.
func usageHint() string { return commands.UsageHint(commands.Table()) }

// TestManifest: manifest.yaml installs /gpu with a usage hint naming every verb of the registry,
// points the command, interactivity and events at the adapter's endpoints on one host, asks for
// the scopes the adapter uses, turns the Home tab on, and keeps within the manifest's limits.
func TestManifest(t *testing.T) {
	raw, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		re := regexp.MustCompile(`(?m)^(\s*usage_hint: ).*$`)
		raw = re.ReplaceAll(raw, []byte("${1}"+strconv.Quote(usageHint())))
		if err := os.WriteFile(manifestPath, raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var m manifest
	if err := yaml.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if m.Metadata.MajorVersion != 1 {
		t.Errorf("_metadata.major_version = %d", m.Metadata.MajorVersion)
	}
	if len(m.Features.SlashCommands) != 1 {
		t.Fatalf("%d slash commands, want /gpu alone", len(m.Features.SlashCommands))
	}
	c := m.Features.SlashCommands[0]
	if c.Command != "/gpu" {
		t.Errorf("command %q, want /gpu", c.Command)
	}
	if c.UsageHint != usageHint() {
		t.Errorf("usage_hint is %q; the registry makes %q (go test ./bot/slack -run TestManifest -update)", c.UsageHint, usageHint())
	}
	for _, s := range commands.Table() {
		if !strings.Contains(c.UsageHint, s.Words[0]) {
			t.Errorf("usage_hint lacks %q", s.Words[0])
		}
	}
	if c.ShouldEscape == nil || *c.ShouldEscape {
		t.Error("should_escape must be false: the grammar reads plain text")
	}

	host := ""
	if m.Settings.Interactivity.OptionsURL != m.Settings.Interactivity.RequestURL {
		t.Errorf("menus with more than 100 options load them from %q; want the interactions endpoint %q", m.Settings.Interactivity.OptionsURL, m.Settings.Interactivity.RequestURL)
	}
	for path, u := range map[string]string{"/slack/commands": c.URL, "/slack/interactions": m.Settings.Interactivity.RequestURL, "/slack/events": m.Settings.Events.RequestURL} {
		p, err := url.Parse(u)
		if err != nil || p.Scheme != "https" || p.Path != path {
			t.Errorf("%q should be https://HOST%s", u, path)
			continue
		}
		if host != "" && p.Host != host {
			t.Errorf("request URLs on two hosts: %s and %s", host, p.Host)
		}
		host = p.Host
	}
	if !m.Settings.Interactivity.Enabled {
		t.Error("interactivity is off; buttons and modals need it")
	}
	if !slices.Contains(m.Settings.Events.BotEvents, "app_home_opened") {
		t.Error("no app_home_opened subscription")
	}
	// People write to the app in its Messages tab, and are answered: the tab takes messages, and
	// Slack sends them as message.im events.
	if !slices.Contains(m.Settings.Events.BotEvents, "message.im") {
		t.Error("no message.im subscription: messages people write to the app never reach it")
	}
	if ro := m.Features.AppHome.MessagesTabReadOnly; ro == nil || *ro {
		t.Error("messages_tab_read_only_enabled must be false: people write to the app there")
	}
	if m.Settings.SocketMode == nil {
		t.Error("socket_mode_enabled is not stated")
	}
	if !m.Features.AppHome.HomeTab || !m.Features.AppHome.MessagesTab {
		t.Error("the Home tab and the Messages tab (for DMs) must be on")
	}
	// Exactly the scopes the adapter uses: DMs go to a user's id with chat:write (so no im:write);
	// files:write uploads the weekly showback's chart and CSV;
	// chat:write.public posts to team channels the bot was not invited to; im:history is what
	// message.im events need, the messages people write to the app.
	need := []string{"commands", "chat:write", "chat:write.public", "users:read", "users:read.email", "files:write", "im:history"}
	for _, s := range need {
		if !slices.Contains(m.OAuth.Scopes.Bot, s) {
			t.Errorf("bot scope %s missing", s)
		}
	}
	for _, s := range m.OAuth.Scopes.Bot {
		if !slices.Contains(need, s) {
			t.Errorf("bot scope %s is asked for, but nothing uses it", s)
		}
	}
	// The manifest schema's limits.
	for _, l := range []struct {
		what     string
		s        string
		min, max int
	}{
		{"name", m.Display.Name, 1, 35},
		{"description", m.Display.Description, 1, 140},
		{"long_description", m.Display.LongDescription, 175, 4000},
		{"bot display_name", m.Features.BotUser.DisplayName, 1, 80},
		{"command description", c.Description, 1, 2000},
		{"usage_hint", c.UsageHint, 1, 1000},
	} {
		if n := utf8.RuneCountInString(l.s); n < l.min || n > l.max {
			t.Errorf("%s has %d characters, want %d to %d", l.what, n, l.min, l.max)
		}
	}
}

// TestDocsNameTheManifestScopes: the scopes docs/slack.md says the manifest asks for are the
// manifest's, so an admin reviewing the app's permissions reads what Slack will show them.
func TestDocsNameTheManifestScopes(t *testing.T) {
	raw, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := yaml.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/slack.md")
	if err != nil {
		t.Fatal(err)
	}
	_, para, ok := strings.Cut(string(doc), "The manifest asks for these bot scopes:")
	if !ok {
		t.Fatal("docs/slack.md no longer lists the manifest's bot scopes")
	}
	para, _, _ = strings.Cut(para, "\n\n")
	para, _, _ = strings.Cut(para, "It subscribes")
	var named []string
	for _, s := range regexp.MustCompile("`([a-z.]+(?::[a-z.]+)*)`").FindAllStringSubmatch(para, -1) {
		if s[1] == "commands" || strings.Contains(s[1], ":") {
			named = append(named, s[1])
		}
	}
	for _, s := range named {
		if !slices.Contains(m.OAuth.Scopes.Bot, s) {
			t.Errorf("docs/slack.md says the manifest asks for %s; it does not", s)
		}
	}
	for _, s := range m.OAuth.Scopes.Bot {
		if !slices.Contains(named, s) {
			t.Errorf("the manifest asks for %s; docs/slack.md does not say so", s)
		}
	}
}

// TestTheTokenCheckKnowsTheManifestScopes: the scopes serve looks for in the bot token at start
// are the manifest's, so a scope added to the app is checked and none is asked for that the app
// does not request.
func TestTheTokenCheckKnowsTheManifestScopes(t *testing.T) {
	raw, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := yaml.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	var checked []string
	for _, s := range slackbot.Scopes {
		checked = append(checked, s.Name)
		if s.Without == "" {
			t.Errorf("scope %s does not say what fails without it", s.Name)
		}
	}
	if !slices.Equal(checked, m.OAuth.Scopes.Bot) {
		t.Errorf("the token check looks for %v; the manifest asks for %v", checked, m.OAuth.Scopes.Bot)
	}
}

// TestManifestNamesNoClassOrTeam: manifest.yaml is one file for every installation, so the
// commands its texts show (those that could name one) name no class, team or template: each is a command the grammar reads, and
// works on any policy (a request without a class gets the team's default class).
func TestManifestNamesNoClassOrTeam(t *testing.T) {
	raw, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := yaml.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	texts := []string{m.Display.Description, m.Display.LongDescription}
	for _, c := range m.Features.SlashCommands {
		texts = append(texts, c.Description)
	}
	n := 0
	for _, text := range texts {
		for _, cmd := range regexp.MustCompile(`/gpu (request|estimate|quota|submit|template)\b[^:;,.()]*`).FindAllString(text, -1) {
			n++
			c, err := commands.Parse(cmd)
			if err != nil {
				t.Errorf("the manifest shows %q, which the grammar refuses: %v", cmd, err)
				continue
			}
			if c.Class != "" || c.Team != "" || c.Template != "" {
				t.Errorf("the manifest shows %q, which names a class, team or template that only some policies have", cmd)
			}
		}
	}
	if n == 0 {
		t.Error("the manifest shows no /gpu command")
	}
}
