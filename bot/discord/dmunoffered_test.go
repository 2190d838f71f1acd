package discord_test

import (
	"context"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// hesapGateway is Hesap's policy behind the Discord adapter in gateway mode, without templates,
// reports or single sign-on, with the gateway open until the test ends.
func hesapGateway(t *testing.T) *kestrelEnv {
	t.Helper()
	h := newOnPolicy(t, "testdata/hesap.yaml", nil, func(c *discord.Config) { c.PublicKey = "" })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.adapter.RunGateway(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("RunGateway: %v", err)
		}
	})
	return h
}

// A DM naming a command this installation does not offer (reports, templates or single sign-on
// not set up) is told so, naming the command and, where there is one, why, as Slack tells it,
// with an example that works when sent back; not the hint for a DM that names no command.
func TestADirectMessageNamingACommandNotOfferedSaysSo(t *testing.T) {
	h := hesapGateway(t)
	for typed, want := range map[string]string{
		"report":               "/gpu report is not offered here",
		"gpu report last week": "/gpu report is not offered here",
		"Submit jupyterlab":    "/gpu submit is not offered here",
		"/gpu login":           "/gpu login is not offered here: ",
	} {
		got := h.dmAnswers(discordtest.DM{User: hCagla, Content: typed}, 1)
		text := got[0].Text()
		if !strings.Contains(text, want) || strings.Contains(text, "here too without the slash") {
			t.Errorf("%q is answered %q; want it to say %q", typed, text, want)
			continue
		}
		_, example, ok := strings.Cut(text, "Example: ")
		if !ok {
			t.Errorf("%q is answered %q, with no example", typed, text)
			continue
		}
		example = strings.Trim(strings.TrimSpace(example), "`.")
		back := h.dmAnswers(discordtest.DM{User: hCagla, Content: example}, 1)
		if bt := back[0].Text(); strings.Contains(bt, "not offered") || strings.Contains(bt, "here too without the slash") {
			t.Errorf("the example %q of the answer to %q, sent back, is answered %q", example, typed, bt)
		}
	}
}
