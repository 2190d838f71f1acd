package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A setting with a value serve cannot use is refused at start, before the database is touched,
// in one sentence that names the setting as the operator wrote it (the variable, or the flag)
// and shows a value that works, rather than a library's error or a service that starts and
// then fails every call.
func TestServeRefusesSettingsItCannotUseNamingThem(t *testing.T) {
	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
		want []string // every one is in the refusal
	}{
		{name: "listen address without a port", env: map[string]string{"QM_HTTP_ADDR": "nonsense"},
			want: []string{`QM_HTTP_ADDR="nonsense"`, "QM_HTTP_ADDR=:8080"}},
		{name: "listen port out of range", env: map[string]string{"QM_HTTP_ADDR": ":99999"},
			want: []string{`QM_HTTP_ADDR=":99999"`, "QM_HTTP_ADDR=:8080"}},
		{name: "a bare port on the flag", args: []string{"--http", "8080"},
			want: []string{`--http "8080"`, "--http :8080"}},
		{name: "an unknown backend", env: map[string]string{"QM_BACKEND": "lsf"},
			want: []string{`QM_BACKEND="lsf"`, "sim, slurm or kubernetes", "QM_BACKEND=sim"}},
		{name: "an unknown backend on the flag", args: []string{"--backend", "Slurm "},
			want: []string{`--backend "Slurm "`, "--backend slurm"}},
		{name: "a Slack API URL that is not one",
			env:  map[string]string{"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s", "SLACK_API_URL": "slack.internal"},
			want: []string{`SLACK_API_URL="slack.internal"`, "SLACK_API_URL=https://"}},
		{name: "an app-level token as the bot token",
			env:  map[string]string{"SLACK_BOT_TOKEN": "xapp-1-A0-1-abc", "SLACK_APP_TOKEN": "xoxb-1-2-abc"},
			want: []string{"SLACK_BOT_TOKEN", "xoxb-", "SLACK_APP_TOKEN"}},
		{name: "a Socket Mode token that is not an app-level token",
			env:  map[string]string{"SLACK_BOT_TOKEN": "xoxb-1-2-abc", "SLACK_APP_TOKEN": "xoxp-1-2-abc"},
			want: []string{"SLACK_APP_TOKEN", "xapp-", "App-Level Tokens"}},
		{name: "a negative tick", env: map[string]string{"QM_TICK_INTERVAL": "-5s"},
			want: []string{`QM_TICK_INTERVAL="-5s" is not a positive duration`, "QM_TICK_INTERVAL=30s"}},
		{name: "a zero database wait", env: map[string]string{"QM_DATABASE_WAIT": "0"},
			want: []string{`QM_DATABASE_WAIT="0" is not a positive duration`, "QM_DATABASE_WAIT=2s"}},
		{name: "a negative submit grace", env: map[string]string{"QM_SUBMIT_GRACE": "-1m"},
			want: []string{`QM_SUBMIT_GRACE="-1m" is not a positive duration`, "QM_SUBMIT_GRACE=2m"}},
		{name: "an issuer that is not a URL",
			env: map[string]string{"QM_OIDC_ISSUER": "idp.borealis.test", "QM_OIDC_CLIENT_ID": "qm",
				"QM_OIDC_CLIENT_SECRET": "s", "QM_PUBLIC_URL": "https://gpus.borealis.test"},
			want: []string{`QM_OIDC_ISSUER="idp.borealis.test" is not an http(s) URL`, "QM_OIDC_ISSUER=https://keycloak.acme.example/realms/acme"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			clearEnv(t)
			dir := t.TempDir()
			t.Setenv("QM_DATA_DIR", dir)
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			args := append([]string{"serve", "--demo"}, c.args...)
			if !strings.Contains(strings.Join(args, " "), "--http") && c.env["QM_HTTP_ADDR"] == "" {
				args = append(args, "--http", "127.0.0.1:0")
			}
			// A value that is not refused starts the service; the deadline stops it, with exit 0.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var stderr bytes.Buffer
			code := run(ctx, args, nil, io.Discard, &stderr)
			msg := strings.TrimSpace(stderr.String())
			if code == 0 || strings.Count(msg, "\n") != 0 {
				t.Fatalf("exit %d, want a refusal in one line; got %q", code, msg)
			}
			for _, v := range c.env {
				if strings.HasPrefix(v, "xox") || strings.HasPrefix(v, "xapp") {
					if strings.Contains(msg, v) {
						t.Errorf("the refusal %q shows a token", msg)
					}
				}
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("the refusal %q does not say %q", msg, w)
				}
			}
		})
	}
}

// The console takes --backend and QM_BACKEND as serve does, and refuses an unknown one the same
// way, before it opens the database.
func TestConsoleRefusesAnUnknownBackendNamingIt(t *testing.T) {
	clearEnv(t)
	t.Setenv("QM_DATA_DIR", t.TempDir())
	t.Setenv("QM_BACKEND", "k8s")
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"console"}, strings.NewReader(""), io.Discard, &stderr)
	msg := strings.TrimSpace(stderr.String())
	if code != 2 || strings.Count(msg, "\n") != 0 || !strings.Contains(msg, `QM_BACKEND="k8s" is not a backend`) || !strings.Contains(msg, "QM_BACKEND=sim") {
		t.Fatalf("exit %d, %q", code, msg)
	}
}

// A QM_DATA_DIR that cannot be made a directory (it is a file, or under one) is refused naming
// the variable and a directory that would do, not with mkdir's words alone.
func TestServeRefusesADataDirectoryItCannotMakeNamingIt(t *testing.T) {
	clearEnv(t)
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{file, filepath.Join(file, "data")} {
		t.Setenv("QM_DATA_DIR", dir)
		var stderr bytes.Buffer
		code := run(context.Background(), []string{"serve", "--demo", "--http", "127.0.0.1:0"}, nil, io.Discard, &stderr)
		msg := strings.TrimSpace(stderr.String())
		if code == 0 || strings.Count(msg, "\n") != 0 || !strings.Contains(msg, fmt.Sprintf("QM_DATA_DIR=%q", dir)) || !strings.Contains(msg, "QM_DATA_DIR=/var/lib/quartermaster/data") {
			t.Errorf("QM_DATA_DIR=%s: exit %d, %q", dir, code, msg)
		}
	}
}

// A database URL of a kind the store does not speak is refused before anything starts, naming
// where it came from (the flag or the variable) and the two kinds that work, without showing the
// URL, which may carry a password.
func TestADatabaseURLOfAnotherKindIsRefusedNamingWhereItCameFrom(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		args []string
		want []string
	}{
		{env: map[string]string{"QM_DATABASE_URL": "mysql://qm:hunter2@db.borealis.test/qm"}, args: []string{"serve", "--demo", "--http", "127.0.0.1:0"},
			want: []string{"QM_DATABASE_URL", "postgres://", "sqlite:PATH", "QM_DATABASE_URL=sqlite:"}},
		{args: []string{"migrate", "status", "--db", "/var/lib/qm/hunter2.db"},
			want: []string{"--db", "postgres://", "--db sqlite:/var/lib/qm/hunter2.db"}},
	} {
		clearEnv(t)
		t.Setenv("QM_DATA_DIR", t.TempDir())
		for k, v := range c.env {
			t.Setenv(k, v)
		}
		var stderr bytes.Buffer
		code := run(context.Background(), c.args, nil, io.Discard, &stderr)
		msg := strings.TrimSpace(stderr.String())
		if code != 2 || strings.Count(msg, "\n") != 0 {
			t.Errorf("%v: exit %d, want 2 and one line: %q", c.args, code, msg)
		}
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%v: %q does not say %q", c.args, msg, w)
			}
		}
		if len(c.env) > 0 && strings.Contains(msg, "hunter2") {
			t.Errorf("%v: %q shows the URL's password", c.args, msg)
		}
	}
}

// Discord's ids are numbers (snowflakes): an application or server id that is not one (a name, a
// pasted invite) is refused before anything is sent, naming the setting and an id's form, rather
// than sent to Discord to come back as its "Unknown Application" or a 400.
func TestDiscordRegisterRefusesIdsThatAreNotDiscordIds(t *testing.T) {
	for _, c := range []struct {
		appID string
		args  []string
		want  []string
	}{
		{appID: "quartermaster", args: []string{"discord", "register", "--guild", "1180000000000000001"},
			want: []string{`DISCORD_APP_ID="quartermaster"`, "DISCORD_APP_ID=1180000000000000000"}},
		{appID: "1180000000000000000", args: []string{"discord", "register", "--guild", "borealis labs"},
			want: []string{`--guild "borealis labs"`, "--guild 1180000000000000001"}},
	} {
		clearEnv(t)
		t.Setenv("DISCORD_BOT_TOKEN", "token")
		t.Setenv("DISCORD_APP_ID", c.appID)
		t.Setenv("DISCORD_API_URL", "http://127.0.0.1:1") // nothing listens: nothing may be sent
		var stderr bytes.Buffer
		code := run(context.Background(), c.args, nil, io.Discard, &stderr)
		msg := strings.TrimSpace(stderr.String())
		if code != 2 || strings.Count(msg, "\n") != 0 {
			t.Errorf("%v: exit %d, want 2 and one line: %q", c.args, code, msg)
		}
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%v: %q does not say %q", c.args, msg, w)
			}
		}
	}
}

// Half a chat or sign-on configuration is refused at start in one sentence that names what is
// missing and gives an example of the setting to add, as the secret files are written in
// quartermaster.env. serve runs as the built binary with the settings in its environment
// (runBinary), so that the test runs in parallel with others and without the race detector.
func TestHalfAConfigurationIsRefusedWithAnExample(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		env  map[string]string
		want []string
	}{
		{map[string]string{"SLACK_BOT_TOKEN": "xoxb-1"},
			[]string{"neither SLACK_SIGNING_SECRET", "e.g. SLACK_SIGNING_SECRET_FILE=/etc/quartermaster/secrets/slack-signing-secret"}},
		{map[string]string{"SLACK_SIGNING_SECRET": "s3cret"},
			[]string{"SLACK_BOT_TOKEN is not", "e.g. SLACK_BOT_TOKEN_FILE=/etc/quartermaster/secrets/slack-bot-token"}},
		{map[string]string{"DISCORD_PUBLIC_KEY": "ab12"},
			[]string{"DISCORD_BOT_TOKEN is not", "e.g. DISCORD_BOT_TOKEN_FILE=/etc/quartermaster/secrets/discord-bot-token"}},
		{map[string]string{"QM_OIDC_ISSUER": "https://id.selkie.example", "QM_OIDC_CLIENT_ID": "quartermaster"},
			[]string{"needs QM_PUBLIC_URL", "e.g. QM_PUBLIC_URL=https://quartermaster.acme.example"}},
	} {
		// The shell's settings and every other chat or sign-on setting unset (a name alone).
		env := slices.Concat(shellSettings, []string{"DISCORD_BOT_TOKEN", "DISCORD_BOT_TOKEN_FILE", "DISCORD_PUBLIC_KEY", "DISCORD_APP_ID",
			"QM_OIDC_ISSUER", "QM_OIDC_CLIENT_ID", "QM_OIDC_CLIENT_SECRET", "QM_OIDC_CLIENT_SECRET_FILE", "QM_PUBLIC_URL",
			"QM_DATA_DIR=" + t.TempDir(), "QM_HTTP_ADDR=127.0.0.1:0"})
		for k, v := range c.env {
			env = append(env, k+"="+v)
		}
		code, _, stderr := runBinary(t, ".", env, "serve", "--demo")
		msg := strings.TrimSpace(stderr)
		if i := strings.LastIndex(msg, "\nquartermaster serve: "); i >= 0 {
			msg = msg[i+1:] // the log lines before the refusal
		}
		if code == 0 || strings.Count(msg, "\n") != 0 {
			t.Errorf("%v: exit %d, want one line: %q", c.env, code, msg)
		}
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%v: %q does not say %q", c.env, msg, w)
			}
		}
	}
}
