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

// TestDiscordRegisterSaysWhenSignInIsLeftOut: /gpu login, logout and unlink are installed only
// where register sees single sign-on's settings. Run without them (the Discord settings alone) on
// an installation whose serve signs people in, Discord would offer no way to sign out, so the
// output says they were left out and what to set; with the settings it installs them and says
// nothing of it.
func TestDiscordRegisterSaysWhenSignInIsLeftOut(t *testing.T) {
	clearEnv(t)
	f := discordtest.New(t)
	t.Setenv("DISCORD_BOT_TOKEN", discordtest.Token)
	t.Setenv("DISCORD_APP_ID", discordtest.App)
	t.Setenv("DISCORD_API_URL", f.URL)
	t.Setenv("QM_POLICY", "../../docs/quartermaster.example.yaml")
	for _, k := range []string{"QM_OIDC_ISSUER", "QM_OIDC_CLIENT_ID", "QM_OIDC_CLIENT_SECRET", "QM_PUBLIC_URL"} {
		t.Setenv(k, "")
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"discord", "register", "--guild", dGuild}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, w := range []string{"login, logout and unlink are not installed", "QM_OIDC_ISSUER"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("register without single sign-on's settings says %q; want it to say %q", out.String(), w)
		}
	}

	t.Setenv("QM_OIDC_ISSUER", "https://login.microsoftonline.com/7f2c0a4e-1d3b-4c5a-9e8f-0a1b2c3d4e5f/v2.0")
	t.Setenv("QM_OIDC_CLIENT_ID", "b0c1d2e3-f4a5-6789-abcd-ef0123456789")
	t.Setenv("QM_PUBLIC_URL", "https://gpu.globex.example")
	out.Reset()
	if code := run(context.Background(), []string{"discord", "register", "--guild", dGuild}, nil, &out, &errb); code != 0 {
		t.Fatalf("with single sign-on: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "login, logout, unlink") || strings.Contains(out.String(), "not installed") {
		t.Errorf("register with single sign-on's settings says %q", out.String())
	}
}

// TestDiscordRegisterReadsSignInSettingsAsServeDoes: register decides whether /gpu login, logout
// and unlink are installed from the same single sign-on settings serve reads, the client secret's
// file (QM_OIDC_CLIENT_SECRET_FILE) included: a secret file set without the issuer is half a
// configuration serve refuses, and so does register, naming it, instead of installing /gpu
// without sign-in; an unreadable one is refused by both.
func TestDiscordRegisterReadsSignInSettingsAsServeDoes(t *testing.T) {
	clearEnv(t)
	f := discordtest.New(t)
	t.Setenv("DISCORD_BOT_TOKEN", discordtest.Token)
	t.Setenv("DISCORD_APP_ID", discordtest.App)
	t.Setenv("DISCORD_API_URL", f.URL)
	t.Setenv("QM_POLICY", "../../docs/quartermaster.example.yaml")
	for _, k := range []string{"QM_OIDC_ISSUER", "QM_OIDC_CLIENT_ID", "QM_OIDC_CLIENT_SECRET", "QM_PUBLIC_URL"} {
		t.Setenv(k, "")
	}
	secret := filepath.Join(t.TempDir(), "client-secret")
	if err := os.WriteFile(secret, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("QM_OIDC_CLIENT_SECRET_FILE", secret)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"discord", "register", "--guild", dGuild}, nil, &out, &errb)
	if code == 0 || !strings.Contains(errb.String(), "QM_OIDC_ISSUER") {
		t.Errorf("a secret file without the issuer: exit %d, %q %q; want the refusal serve gives, naming QM_OIDC_ISSUER", code, out.String(), errb.String())
	}

	t.Setenv("QM_OIDC_ISSUER", "https://login.microsoftonline.com/7f2c0a4e-1d3b-4c5a-9e8f-0a1b2c3d4e5f/v2.0")
	t.Setenv("QM_OIDC_CLIENT_ID", "b0c1d2e3-f4a5-6789-abcd-ef0123456789")
	t.Setenv("QM_PUBLIC_URL", "https://gpu.globex.example")
	t.Setenv("QM_OIDC_CLIENT_SECRET_FILE", filepath.Join(t.TempDir(), "missing"))
	out.Reset()
	errb.Reset()
	code = run(context.Background(), []string{"discord", "register", "--guild", dGuild}, nil, &out, &errb)
	if code == 0 || !strings.Contains(errb.String(), "QM_OIDC_CLIENT_SECRET_FILE") {
		t.Errorf("an unreadable secret file: exit %d, %q %q; want a refusal naming QM_OIDC_CLIENT_SECRET_FILE", code, out.String(), errb.String())
	}
	if n := len(f.Overwrites()); n != 0 {
		t.Errorf("register installed %d command(s) with settings serve refuses", n)
	}
}

// TestDiscordRegisterWithoutAPolicyShowsTheCommandTyped: the refusal's example is the command that
// was typed with the policy added, so that copying it does what was meant: --print prints (it
// needs no Discord token), and --guild installs in the server that was named, not in another.
func TestDiscordRegisterWithoutAPolicyShowsTheCommandTyped(t *testing.T) {
	clearEnv(t)
	for _, c := range []struct {
		args      []string
		want, not string
	}{
		{[]string{"discord", "register", "--print"}, "quartermaster discord register --print", "--guild"},
		{[]string{"discord", "register", "--print", "--guild", "777000000000000001"}, "quartermaster discord register --guild 777000000000000001 --print", "1180000000000000001"},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), c.args, nil, &out, &errb)
		msg := strings.TrimSpace(errb.String())
		if code != 2 || !strings.Contains(msg, "QM_POLICY="+installedPolicyPath(t)+" "+c.want) || strings.Contains(msg, c.not) {
			t.Errorf("%v without a policy: exit %d, %q; want 2 and the example %q", c.args, code, msg, c.want)
		}
	}
	t.Setenv("DISCORD_BOT_TOKEN", discordtest.Token)
	t.Setenv("DISCORD_APP_ID", discordtest.App)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"discord", "register", "--guild", "777000000000000001"}, nil, &out, &errb)
	if msg := errb.String(); code != 2 || !strings.Contains(msg, "discord register --guild 777000000000000001") {
		t.Errorf("--guild without a policy: exit %d, %q; want the example to name the server typed", code, msg)
	}
}
