package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// TestDiscordRegisterNeedsThePolicy: the class option's choices are the policy's classes, and
// Discord accepts nothing else, so register run without the policy serve runs with (the
// documented command names only the Discord settings) would install the example's classes and
// leave the installation's own unrequestable. It is refused in one sentence naming --policy and
// QM_POLICY, with --print too, and nothing is sent; with the policy, its classes are the choices.
func TestDiscordRegisterNeedsThePolicy(t *testing.T) {
	clearEnv(t)
	f := discordtest.New(t)
	t.Setenv("DISCORD_BOT_TOKEN", discordtest.Token)
	t.Setenv("DISCORD_APP_ID", discordtest.App)
	t.Setenv("DISCORD_API_URL", f.URL)
	for _, args := range [][]string{{"discord", "register", "--guild", dGuild}, {"discord", "register", "--print"}} {
		var out, errb bytes.Buffer
		code := run(context.Background(), args, nil, &out, &errb)
		msg := strings.TrimSpace(errb.String())
		if code != 2 || strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "--policy") || !strings.Contains(msg, "QM_POLICY=") || !strings.Contains(msg, "classes") {
			t.Errorf("%v without a policy: exit %d, %q; want 2 and one sentence naming --policy and QM_POLICY", args, code, msg)
		}
		if out.Len() > 0 {
			t.Errorf("%v without a policy printed %q", args, out.String())
		}
	}
	if n := len(f.Overwrites()); n != 0 {
		t.Fatalf("register without a policy installed %d command(s)", n)
	}

	pol := filepath.Join(t.TempDir(), "globex.yaml")
	if err := os.WriteFile(pol, []byte(globexPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("QM_POLICY", pol)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"discord", "register", "--guild", dGuild}, nil, &out, &errb); code != 0 {
		t.Fatalf("with QM_POLICY: exit %d: %s", code, errb.String())
	}
	var choices []string
	for _, s := range f.Overwrites()[0].Commands[0]["options"].([]any) {
		if s.(map[string]any)["name"] != "request" {
			continue
		}
		for _, o := range s.(map[string]any)["options"].([]any) {
			if o.(map[string]any)["name"] == "class" {
				for _, c := range o.(map[string]any)["choices"].([]any) {
					choices = append(choices, c.(map[string]any)["value"].(string))
				}
			}
		}
	}
	if strings.Join(choices, " ") != "shared-a100 h200" {
		t.Errorf("/gpu request's class choices = %v; the policy's classes are shared-a100 and h200", choices)
	}
}
