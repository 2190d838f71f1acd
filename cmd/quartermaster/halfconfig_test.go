package main

import (
	"os"
	"strings"
	"testing"
)

// Half a chat or sign-on configuration is refused in one sentence with an example before serve
// touches the database: the data directory is left as empty as it was.
func TestServeRefusesHalfAConfigurationBeforeMakingTheDatabase(t *testing.T) {
	t.Parallel()
	secret := t.TempDir() + "/client-secret"
	if err := os.WriteFile(secret, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		env  []string
		says string
	}{
		{[]string{"SLACK_BOT_TOKEN=xoxb-1-2-abc"}, "SLACK_SIGNING_SECRET"},
		{[]string{"SLACK_SIGNING_SECRET=abc123"}, "SLACK_BOT_TOKEN"},
		{[]string{"SLACK_APP_TOKEN=xapp-1-abc"}, "SLACK_BOT_TOKEN"},
		{[]string{"DISCORD_APP_ID=1180000000000000042"}, "DISCORD_BOT_TOKEN"},
		{[]string{"DISCORD_PUBLIC_KEY=00ff"}, "DISCORD_BOT_TOKEN"},
		{[]string{"DISCORD_BOT_TOKEN=abc.def.ghi", "DISCORD_PUBLIC_KEY=not-hex"}, "DISCORD_PUBLIC_KEY"},
		{[]string{"QM_OIDC_ISSUER=https://sso.harbor.example/realms/harbor"}, "QM_OIDC_CLIENT_ID"},
		{[]string{"QM_OIDC_CLIENT_ID=harbor-gpus"}, "QM_OIDC_ISSUER"},
		{[]string{"QM_OIDC_CLIENT_SECRET_FILE=" + secret}, "QM_OIDC_ISSUER"},
	} {
		code, msg, left := serveInEmptyDataDir(t, c.env)
		if code == 0 || strings.Contains(msg, "\n") || !strings.Contains(msg, c.says) || !strings.Contains(msg, "e.g. ") {
			t.Errorf("%v: exit %d, want one sentence naming %s with an example; got %q", c.env, code, c.says, msg)
		}
		if len(left) != 0 {
			t.Errorf("%v: the refusal left %v in QM_DATA_DIR; want it empty", c.env, left)
		}
	}
}

// A secret given as a file (NAME_FILE) is named as the operator set it when serve refuses the
// configuration it is part of: the advice to unset it, or to mend it, names NAME_FILE, never NAME.
func TestServeRefusalsNameTheSecretFileVariableThatWasSet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := func(name, value string) string {
		path := dir + "/" + name
		if err := os.WriteFile(path, []byte(value+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, c := range []struct {
		env  []string
		file string // the NAME_FILE variable that was set
	}{
		{[]string{"QM_OIDC_CLIENT_SECRET_FILE=" + file("oidc", "fjord-s3cret")}, "QM_OIDC_CLIENT_SECRET_FILE"},
		{[]string{"QM_OIDC_CLIENT_SECRET_FILE=" + file("oidc2", "fjord-s3cret"), "QM_OIDC_CLIENT_ID=fjord-gpus"}, "QM_OIDC_CLIENT_SECRET_FILE"},
		{[]string{"SLACK_SIGNING_SECRET_FILE=" + file("signing", "abc123")}, "SLACK_SIGNING_SECRET_FILE"},
		{[]string{"SLACK_APP_TOKEN_FILE=" + file("app", "xapp-1-abc")}, "SLACK_APP_TOKEN_FILE"},
		{[]string{"SLACK_BOT_TOKEN_FILE=" + file("bot", "xoxb-1-2-abc")}, "SLACK_BOT_TOKEN_FILE"},
		{[]string{"SLACK_BOT_TOKEN_FILE=" + file("bot-is-app", "xapp-1-abc"), "SLACK_SIGNING_SECRET=abc123"}, "SLACK_BOT_TOKEN_FILE"},
		{[]string{"SLACK_BOT_TOKEN=xoxb-1-2-abc", "SLACK_APP_TOKEN_FILE=" + file("app-is-bot", "xoxb-1-2-abc")}, "SLACK_APP_TOKEN_FILE"},
	} {
		env := append([]string{"QM_DATA_DIR=" + t.TempDir(), "QM_HTTP_ADDR=127.0.0.1:0"}, c.env...)
		code, _, stderr := runBinary(t, t.TempDir(), env, "serve", "--demo")
		msg := strings.TrimSpace(stderr)
		base := strings.TrimSuffix(c.file, "_FILE")
		if code == 0 || !strings.Contains(msg, c.file) || strings.Count(msg, base) != strings.Count(msg, c.file) {
			t.Errorf("%v: exit %d; want a refusal naming %s, and %s only as that; got %q", c.env, code, c.file, base, msg)
		}
	}
}

// serveInEmptyDataDir runs serve --demo with env added, in an empty QM_DATA_DIR of its own: its
// exit code, what it wrote to stderr (trimmed), and what it left in QM_DATA_DIR.
func serveInEmptyDataDir(t *testing.T, env []string) (code int, msg string, left []string) {
	t.Helper()
	dir := t.TempDir()
	env = append([]string{"QM_DATA_DIR=" + dir, "QM_HTTP_ADDR=127.0.0.1:0"}, env...)
	code, _, stderr := runBinary(t, t.TempDir(), env, "serve", "--demo")
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	return code, strings.TrimSpace(stderr), left
}
