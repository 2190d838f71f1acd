package main

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot/discord/discordtest"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// Hesap's Discord users (bot/discord/testdata/hesap.yaml, a policy in Korean won and Kathmandu's
// time, with non-ASCII names).
const (
	hesapPolicy = "../../bot/discord/testdata/hesap.yaml"
	hCagla      = "810000000000000011" // istanbul-ml
	hAyse       = "810000000000000012" // istanbul-ml's budget owner
)

// A lease option suggests the leases its command takes from the person typing: /gpu approve and
// /gpu deny what waits for their decision and not their own requests, which they may not decide;
// /gpu release, extend, keep and cancel their own leases that have not ended and not a teammate's
// request they decide, which those commands refuse as not theirs; /gpu status both.
func TestLeaseSuggestionsAreWhatTheCommandTakes(t *testing.T) {
	t.Parallel()
	e := newDiscordEnvWith(t, commonFlags{policy: hesapPolicy, db: storetest.SQLite(t)})
	e.command(hAyse, "request", opt("gpus", 1), opt("class", "kume"), opt("duration", "2h")) // L-1, active
	e.command(hAyse, "request", opt("gpus", 1), opt("class", "kume"), opt("duration", "2h")) // L-2, active
	e.command(hAyse, "release", opt("lease", "L-2"))                                         // ended
	if m := e.command(hCagla, "request", opt("gpus", 3), opt("class", "kume"), opt("duration", "2h")); !strings.Contains(m.Text(), "L-3 waits for approval") {
		t.Fatalf("çağla's request of 3 GPUs was answered %q", m.Text())
	}
	suggested := func(sub string) []string {
		m := e.do(discordtest.Autocomplete(discordtest.Who{User: hAyse, Channel: dChannel, Guild: dGuild}, "gpu", sub, discordtest.Opt{Name: "lease", Value: "", Focused: true}))
		var out []string
		for _, c := range m.Choices {
			out = append(out, c.Value.(string))
		}
		return out
	}
	// A quota increase of çağla's, granted: it is in effect, but holds no workspace to keep or
	// extend.
	if m := e.command(hCagla, "quota-request", opt("gpus", 2), opt("class", "kume"), opt("reason", "a deadline")); !strings.Contains(m.Text(), "L-4") {
		t.Fatalf("çağla's quota request was answered %q", m.Text())
	}
	if m := e.command(hAyse, "approve", opt("lease", "L-4")); !strings.Contains(m.Text(), "Approved L-4") {
		t.Fatalf("ayşe's approval of L-4 was answered %q", m.Text())
	}
	e.command(hCagla, "request", opt("gpus", 1), opt("class", "kume"), opt("duration", "2h")) // L-5, active
	for _, sub := range []string{"keep", "extend"} {
		m := e.do(discordtest.Autocomplete(discordtest.Who{User: hCagla, Channel: dChannel, Guild: dGuild}, "gpu", sub, discordtest.Opt{Name: "lease", Value: "", Focused: true}))
		var got []string
		for _, c := range m.Choices {
			got = append(got, c.Value.(string))
		}
		if strings.Join(got, " ") != "L-5" {
			t.Errorf("/gpu %s lease: suggests %q to çağla; want her workspace L-5, not her quota increase L-4", sub, got)
		}
	}
	for sub, want := range map[string]string{
		"approve": "L-3", "deny": "L-3",
		"release": "L-1", "extend": "L-1", "keep": "L-1", "cancel": "L-1",
		"status": "L-3 L-1 L-2",
	} {
		if got := strings.Join(suggested(sub), " "); got != want {
			t.Errorf("/gpu %s lease: suggests %q to ayşe; want %q", sub, got, want)
		}
	}
}
