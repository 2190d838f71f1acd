package config

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSecretFromEnvOrFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	if err := os.WriteFile(file, []byte("xoxb-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("QM_TEST_SECRET", "")
	t.Setenv("QM_TEST_SECRET_FILE", "")
	if v, err := Secret("QM_TEST_SECRET"); err != nil || v != "" {
		t.Fatalf("unset: %q, %v", v, err)
	}
	t.Setenv("QM_TEST_SECRET", "xoxb-direct")
	if v, err := Secret("QM_TEST_SECRET"); err != nil || v != "xoxb-direct" {
		t.Fatalf("direct: %q, %v", v, err)
	}
	t.Setenv("QM_TEST_SECRET", "")
	t.Setenv("QM_TEST_SECRET_FILE", file)
	if v, err := Secret("QM_TEST_SECRET"); err != nil || v != "xoxb-from-file" {
		t.Fatalf("from file: %q, %v (the trailing newline must go)", v, err)
	}
	t.Setenv("QM_TEST_SECRET", "xoxb-direct")
	if _, err := Secret("QM_TEST_SECRET"); err == nil || !strings.Contains(err.Error(), "both QM_TEST_SECRET and QM_TEST_SECRET_FILE") {
		t.Fatalf("both set: %v", err)
	}
	t.Setenv("QM_TEST_SECRET", "")
	t.Setenv("QM_TEST_SECRET_FILE", filepath.Join(dir, "missing"))
	_, err := Secret("QM_TEST_SECRET")
	if err == nil || !strings.Contains(err.Error(), "does not exist") || strings.Contains(err.Error(), "xoxb") {
		t.Fatalf("missing file: %v", err)
	}
	empty := filepath.Join(dir, "empty")
	_ = os.WriteFile(empty, []byte("\n"), 0o600)
	t.Setenv("QM_TEST_SECRET_FILE", empty)
	if _, err := Secret("QM_TEST_SECRET"); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("empty file: %v", err)
	}
}

func TestLoggerFormatsAndLevels(t *testing.T) {
	var b bytes.Buffer
	log, err := NewLogger(&b, "json", "warn")
	if err != nil {
		t.Fatal(err)
	}
	log.Info("hidden")
	log.Warn("shown", "verb", "request", "bot_token", "xoxb-123", "signing_secret", "abc")
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("level warn wrote %d lines: %q", len(lines), b.String())
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatalf("not JSON: %q", lines[0])
	}
	if rec["msg"] != "shown" || rec["verb"] != "request" || rec["bot_token"] != "[redacted]" || rec["signing_secret"] != "[redacted]" {
		t.Errorf("record %v", rec)
	}
	if strings.Contains(b.String(), "xoxb-123") {
		t.Errorf("a token reached the log: %s", b.String())
	}
	b.Reset()
	log, err = NewLogger(&b, "", "debug")
	if err != nil {
		t.Fatal(err)
	}
	log.Debug("dbg", "k", "v")
	if !strings.Contains(b.String(), "level=DEBUG msg=dbg k=v") {
		t.Errorf("text at debug: %q", b.String())
	}
	for _, bad := range [][2]string{{"yaml", ""}, {"", "loud"}} {
		_, err := NewLogger(&b, bad[0], bad[1])
		if err == nil || strings.Count(err.Error(), ";") != 1 || !strings.Contains(err.Error(), "e.g.") {
			t.Errorf("format %q level %q: %v", bad[0], bad[1], err)
		}
	}
}

// A secret file that cannot be read is refused naming the variable, the file and what to do about
// it: create it, let the service's user read it, or name the file instead of its directory.
func TestASecretFileThatCannotBeReadSaysWhatToDo(t *testing.T) {
	dir := t.TempDir()
	denied := func(name string) ([]byte, error) {
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrPermission}
	}
	for _, c := range []struct {
		name string
		path string
		read func(string) ([]byte, error)
		want []string
	}{
		{name: "missing", path: filepath.Join(dir, "missing"), read: os.ReadFile,
			want: []string{"QM_TEST_SECRET_FILE names " + filepath.Join(dir, "missing") + ", which does not exist", "put the value alone in it", "QM_TEST_SECRET_FILE=/etc/quartermaster/secrets/"}},
		{name: "not readable", path: "/etc/quartermaster/secrets/token", read: denied,
			want: []string{"/etc/quartermaster/secrets/token", "may not read it", "chgrp quartermaster /etc/quartermaster/secrets/token && chmod 0640 /etc/quartermaster/secrets/token"}},
		{name: "a directory", path: dir, read: os.ReadFile,
			want: []string{dir + ", which is a directory", "name the file in it that holds the value"}},
	} {
		lookup := func(k string) (string, bool) {
			if k == "QM_TEST_SECRET_FILE" {
				return c.path, true
			}
			return "", false
		}
		_, err := secret("QM_TEST_SECRET", lookup, c.read)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", c.name, err, w)
			}
		}
	}
}

// The node agent's token file is not the service's: the agent runs as systemd's DynamicUser,
// whom no group of the host takes in, so the advice for a file it may not read is the credential
// its unit passes (LoadCredential), not chgrp quartermaster. The same holds for its --token-file.
func TestTheAgentsTokenFileGetsTheAgentsAdvice(t *testing.T) {
	denied := func(name string) ([]byte, error) {
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrPermission}
	}
	const path = "/etc/quartermaster/agent.token"
	lookup := func(k string) (string, bool) {
		if k == "QM_AGENT_TOKEN_FILE" {
			return path, true
		}
		return "", false
	}
	_, viaEnv := secret("QM_AGENT_TOKEN", lookup, denied)
	_, err := denied(path)
	viaFlag := SecretFileError("--token-file", path, err)
	for setting, err := range map[string]error{"QM_AGENT_TOKEN_FILE": viaEnv, "--token-file": viaFlag} {
		if err == nil {
			t.Errorf("%s: no error", setting)
			continue
		}
		msg := err.Error()
		for _, w := range []string{setting + " names " + path, "may not read it", "DynamicUser", "LoadCredential=agent.token:" + path, "--token-file %d/agent.token", "deploy/systemd/quartermaster-agent.service"} {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %q does not say %q", setting, msg, w)
			}
		}
		if strings.Contains(msg, "chgrp") || strings.Contains(msg, "group read") {
			t.Errorf("%s: %q gives the service's advice", setting, msg)
		}
	}
	_, missing := secret("QM_AGENT_TOKEN", lookup, os.ReadFile)
	if missing == nil || !strings.Contains(missing.Error(), "quartermaster agent-token create") || !strings.Contains(missing.Error(), "QM_AGENT_TOKEN_FILE=/etc/quartermaster/agent.token") {
		t.Errorf("a missing agent token file: %v", missing)
	}
}

// Every refusal of a secret names the variables and gives an example that works: which one to
// keep when both are set, how to write the value alone into a file that is empty or holds more
// than one value, and which file to name instead of a directory.
func TestASecretRefusedGivesAnExample(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, bytes.Repeat([]byte("x"), maxSecretFile+1), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		direct string
		path   string
		want   []string
	}{
		{name: "both set", direct: "postgres://u:p@h/db", path: "/srv/qm/secrets/db",
			want: []string{"both QM_DATABASE_URL and QM_DATABASE_URL_FILE are set", "e.g. unset QM_DATABASE_URL and keep QM_DATABASE_URL_FILE=/srv/qm/secrets/db"}},
		{name: "empty file", path: empty,
			want: []string{"QM_DATABASE_URL_FILE names " + empty + ", which is empty", "e.g. printf '%s\\n' 'postgres://quartermaster:PASSWORD@127.0.0.1:5432/quartermaster?sslmode=disable' > " + empty}},
		{name: "file too large", path: big,
			want: []string{"QM_DATABASE_URL_FILE names " + big + ", which is", "e.g. printf '%s\\n' 'postgres://quartermaster:PASSWORD@127.0.0.1:5432/quartermaster?sslmode=disable' > " + big}},
		{name: "a directory", path: dir,
			want: []string{dir + ", which is a directory", "e.g. QM_DATABASE_URL_FILE=" + filepath.Join(dir, "database-url")}},
	} {
		lookup := func(k string) (string, bool) {
			switch k {
			case "QM_DATABASE_URL_FILE":
				return c.path, true
			case "QM_DATABASE_URL":
				return c.direct, c.direct != ""
			}
			return "", false
		}
		_, err := secret("QM_DATABASE_URL", lookup, os.ReadFile)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if strings.Contains(err.Error(), "postgres://u:p@h/db") {
			t.Errorf("%s: %q shows the secret", c.name, err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", c.name, err, w)
			}
		}
	}
}
