// Package config reads the settings every Quartermaster binary shares from the environment: secrets,
// which may come from a file (NAME_FILE) so that no token sits in a unit file, a process listing or
// a shell history, and the log format and level. docs/configuration.md lists every variable.
package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// FileSuffix turns a secret's variable into the variable naming a file that holds it.
const FileSuffix = "_FILE"

// maxSecretFile bounds a secret file: a token or a URL, never megabytes.
const maxSecretFile = 64 << 10

// Secret reads the secret NAME from the environment, or from the file that NAME_FILE names (its
// trailing newline dropped, as editors and `echo` leave one). Setting both is refused: which one
// wins would be a guess. An unset secret is "" with no error.
func Secret(name string) (string, error) {
	return secret(name, os.LookupEnv, os.ReadFile)
}

// SecretFrom is Secret reading the environment through getenv (a function tests inject; an empty
// value counts as unset).
func SecretFrom(name string, getenv func(string) string) (string, error) {
	lookup := func(k string) (string, bool) { v := getenv(k); return v, v != "" }
	return secret(name, lookup, os.ReadFile)
}

func secret(name string, lookup func(string) (string, bool), read func(string) ([]byte, error)) (string, error) {
	v, direct := lookup(name)
	path, fromFile := lookup(name + FileSuffix)
	if direct && fromFile && v != "" && path != "" {
		return "", fmt.Errorf("both %s and %s%s are set; keep one (the file is safer), e.g. unset %s and keep %s%s=%s", name, name, FileSuffix, name, name, FileSuffix, path)
	}
	if !fromFile || path == "" {
		return v, nil
	}
	b, err := read(path)
	if err != nil {
		return "", unreadable(name+FileSuffix, path, err)
	}
	if len(b) > maxSecretFile {
		return "", fmt.Errorf("%s%s names %s, which is %d bytes; a secret file holds one value alone, e.g. printf '%%s\\n' '%s' > %s", name, FileSuffix, path, len(b), secretShape(name), path)
	}
	s := strings.TrimRight(string(b), "\r\n")
	if s == "" {
		return "", fmt.Errorf("%s%s names %s, which is empty; put the value alone in it, e.g. printf '%%s\\n' '%s' > %s", name, FileSuffix, path, secretShape(name), path)
	}
	return s, nil
}

// SetAs is the variable the secret name was set with, as a refusal that names the secret should
// name it: NAME_FILE where that is set (through getenv), else NAME.
func SetAs(name string, getenv func(string) string) string {
	if getenv(name+FileSuffix) != "" {
		return name + FileSuffix
	}
	return name
}

// SecretFileError explains why the secret file path, which setting names (a variable like
// QM_AGENT_TOKEN_FILE, or a flag like the agent's --token-file), could not be read (err), and what
// to do about it.
func SecretFileError(setting, path string, err error) error { return unreadable(setting, path, err) }

// agentTokenSettings name the node agent's token file. The agent runs as systemd's DynamicUser
// (deploy/systemd/quartermaster-agent.service), a user made up at each start whom no group of the
// host takes in: its unit hands the token over as a credential instead.
var agentTokenSettings = map[string]string{
	"QM_AGENT_TOKEN_FILE": "QM_AGENT_TOKEN_FILE=/etc/quartermaster/agent.token",
	"--token-file":        "--token-file /etc/quartermaster/agent.token",
}

// unreadable explains why the secret file path, which the variable env names, could not be read
// (err), and what to do about it.
func unreadable(env, path string, err error) error {
	why := err
	var pe *os.PathError
	if errors.As(err, &pe) {
		why = pe.Err
	}
	if example, ok := agentTokenSettings[env]; ok {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("%s names %s, which does not exist; put the token `quartermaster agent-token create NODE` prints alone in it (install -m 0600 NODE.token %s), or point %s at the file that holds it, e.g. %s", env, path, path, env, example)
		case errors.Is(err, fs.ErrPermission):
			return fmt.Errorf("%s names %s, and the agent (uid %d) may not read it; the agent runs as systemd's DynamicUser, whom no group of the host takes in, so keep the file root's (chmod 0600 %s) and have systemd hand it over: LoadCredential=agent.token:%s in the unit and --token-file %%d/agent.token, as deploy/systemd/quartermaster-agent.service does", env, path, os.Getuid(), path, path)
		case errors.Is(err, syscall.EISDIR):
			return fmt.Errorf("%s names %s, which is a directory; name the file in it that holds the token, e.g. %s", env, path, example)
		}
		return fmt.Errorf("%s names %s, which cannot be read (%v); put the token in a file the agent may read, e.g. %s", env, path, why, example)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		example := "/etc/quartermaster/secrets/" + secretFileName(env)
		return fmt.Errorf("%s names %s, which does not exist; put the value alone in it, or point %s at the file that holds it, e.g. %s=%s", env, path, env, env, example)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s names %s, and this process (uid %d) may not read it; let the service's group read it, e.g. chgrp quartermaster %s && chmod 0640 %s", env, path, os.Getuid(), path, path)
	case errors.Is(err, syscall.EISDIR):
		return fmt.Errorf("%s names %s, which is a directory; name the file in it that holds the value, e.g. %s=%s", env, path, env, filepath.Join(path, secretFileName(env)))
	}
	return fmt.Errorf("%s names %s, which cannot be read: %w", env, path, why)
}

// secretFileName is the usual name of the file that the variable env (NAME_FILE) names, as the
// systemd install and the Helm chart call it: QM_DATABASE_URL_FILE's is database-url.
func secretFileName(env string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(strings.TrimSuffix(env, FileSuffix), "QM_")), "_", "-")
}

// secretShape is what the value of the secret name looks like, for an example that writes it.
func secretShape(name string) string {
	switch name {
	case "QM_DATABASE_URL":
		return "postgres://quartermaster:PASSWORD@127.0.0.1:5432/quartermaster?sslmode=disable"
	case "SLACK_BOT_TOKEN":
		return "xoxb-…"
	case "SLACK_APP_TOKEN":
		return "xapp-…"
	}
	return "VALUE"
}

// Log settings.
const (
	LogFormatEnv = "QM_LOG_FORMAT" // text (default) or json
	LogLevelEnv  = "QM_LOG_LEVEL"  // debug, info (default), warn or error
)

// Logger makes the logger the environment asks for (QM_LOG_FORMAT, QM_LOG_LEVEL), writing to w.
// A value it does not know is refused with a sentence naming the ones it does.
func Logger(w io.Writer) (*slog.Logger, error) {
	return NewLogger(w, os.Getenv(LogFormatEnv), os.Getenv(LogLevelEnv))
}

// NewLogger makes a logger of the given format (text or json; "" is text) and level (debug, info,
// warn, error; "" is info).
func NewLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	switch strings.ToLower(strings.TrimSpace(level)) {
	case "", "info":
		lv = slog.LevelInfo
	case "debug":
		lv = slog.LevelDebug
	case "warn", "warning":
		lv = slog.LevelWarn
	case "error":
		lv = slog.LevelError
	default:
		return nil, fmt.Errorf("%s=%q is not a log level; use debug, info, warn or error (e.g. %s=info)", LogLevelEnv, level, LogLevelEnv)
	}
	opts := &slog.HandlerOptions{Level: lv, ReplaceAttr: redact}
	switch strings.ToLower(strings.TrimSpace(format)) {
	case "", "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("%s=%q is not a log format; use text or json (e.g. %s=json)", LogFormatEnv, format, LogFormatEnv)
}

// secretKeys are attribute names whose values are never written: a slip that logs a token under
// such a name still leaks nothing.
var secretKeys = []string{"token", "secret", "password", "passwd", "authorization", "cookie", "dsn"}

// redact replaces the value of an attribute whose key names a secret.
func redact(_ []string, a slog.Attr) slog.Attr {
	k := strings.ToLower(a.Key)
	for _, s := range secretKeys {
		if strings.Contains(k, s) {
			return slog.String(a.Key, "[redacted]")
		}
	}
	return a
}
