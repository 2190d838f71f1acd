package store

import (
	"errors"
	"net/url"
	"regexp"
	"strings"
)

// The database URL holds a password. No error or log line the store makes shows it: the URL is
// shown with the password replaced by xxxxx, and a driver's message about a URL it cannot parse is
// the message it gives for the redacted URL (the same fault, without the secret), or, when only
// the password part is malformed, a sentence saying so.

const hidden = "xxxxx"

// kvPassword matches password=… in a key=value connection string.
var kvPassword = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)

// userinfo splits a URL-like string around its password: what comes before it, the password, and
// what follows (from the last @ of the authority). ok is false when it has none.
func userinfo(s string) (before, password, after string, ok bool) {
	colon := strings.IndexByte(s, ':')
	if colon < 0 {
		return "", "", "", false
	}
	start := colon + 1
	if strings.HasPrefix(s[start:], "//") {
		start += 2
	}
	at := strings.LastIndexByte(s, '@')
	if at < start {
		return "", "", "", false
	}
	user := s[start:at]
	i := strings.IndexByte(user, ':')
	if i < 0 {
		return "", "", "", false
	}
	return s[:start+i+1], user[i+1:], s[at:], true
}

// Redact is the database URL u with its password replaced by xxxxx, for a message that names it.
func Redact(u string) string { return redact(u) }

// redact hides a password in a database URL (or a key=value connection string) meant for an error
// message or a log line.
func redact(u string) string {
	u = kvPassword.ReplaceAllString(u, "${1}"+hidden)
	if before, pw, after, ok := userinfo(u); ok && pw != hidden {
		return before + hidden + after
	}
	return u
}

// secrets are the strings an error about u must not show: its password, as written and decoded,
// and each piece of it that a parser may have quoted on its own (split at the characters that
// end a URL's parts).
func secrets(u string) []string {
	var pws []string
	if _, pw, _, ok := userinfo(u); ok && pw != "" && pw != hidden {
		pws = append(pws, pw)
	}
	for _, m := range kvPassword.FindAllStringSubmatch(u, -1) {
		pws = append(pws, strings.Trim(m[2], "'"))
	}
	var out []string
	add := func(s string) {
		if len(s) >= 3 || (len(s) > 0 && len(pws) == 1 && len(pws[0]) < 3) {
			out = append(out, s)
		}
	}
	for _, pw := range pws {
		add(pw)
		if dec, err := url.PathUnescape(pw); err == nil && dec != pw {
			add(dec)
		}
		add(url.QueryEscape(pw))
		for _, part := range strings.FieldsFunc(pw, func(r rune) bool { return strings.ContainsRune("/?#@ :%", r) }) {
			add(part)
		}
	}
	return out
}

// scrub returns err with every trace of u's password replaced; nil stays nil.
func scrub(u string, err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := scrubText(u, msg)
	if clean == msg {
		return err
	}
	return &scrubbed{msg: clean, err: err}
}

// scrubText replaces u's password, and any URL password or password=…, in msg.
func scrubText(u, msg string) string {
	for _, s := range secrets(u) {
		msg = strings.ReplaceAll(msg, s, hidden)
	}
	msg = kvPassword.ReplaceAllString(msg, "${1}"+hidden)
	return urlPassword.ReplaceAllString(msg, "${1}"+hidden+"@")
}

// urlPassword matches the password of a URL written in a message.
var urlPassword = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^:@/\s"]*:)[^@\s"]*@`)

// scrubbed is an error whose text was cleaned; errors.Is and As still see the cause (a driver's
// error type names no password by itself).
type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

// urlFault explains a PostgreSQL URL the driver refused, without its password: the driver's
// message for the redacted URL when that shows the fault too, or else a sentence saying that the
// password part is what does not parse.
func urlFault(dsn string, parse func(string) error) error {
	red := redact(dsn)
	if err := parse(red); err != nil {
		return scrub(dsn, err)
	}
	return errors.New("the password in the database URL does not parse: percent-encode the characters @ : / ? # % and spaces in it (for example p%40ss for p@ss)")
}
