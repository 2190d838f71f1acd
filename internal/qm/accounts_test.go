package qm

import (
	"strings"
	"testing"
)

func TestParseAccount(t *testing.T) {
	for in, want := range map[string]Account{
		"slack:T024BE7LD:U024BE7LH":   {"slack", "T024BE7LD", "U024BE7LH"},
		"Discord:123:456":             {"discord", "123", "456"},
		"console::alice@acme.example": {"console", "", "alice@acme.example"},
	} {
		got, err := ParseAccount(in)
		if err != nil || got != want || got.String() != strings.ToLower(in[:strings.IndexByte(in, ':')])+in[strings.IndexByte(in, ':'):] {
			t.Errorf("%q: %+v %v", in, got, err)
		}
	}
	for _, in := range []string{"", "slack:U1", "slack:T1:U1:x", ":T1:U1", "slack:T1:", "slack:T 1:U1", "slack:T1:U1;drop"} {
		if _, err := ParseAccount(in); ErrorCode(err) != EINVALID || !strings.Contains(err.Error(), "platform:workspace:user") {
			t.Errorf("%q: %v", in, err)
		}
	}
}

// FuzzParseAccount: whatever it is given, ParseAccount answers without panicking, and what it
// accepts writes back to an account that reads the same.
func FuzzParseAccount(f *testing.F) {
	for _, s := range []string{"slack:T1:U1", "console::a@b", "::", "a:b:c:d", "x:\xff:y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAccount(s)
		if err != nil {
			return
		}
		b, err := ParseAccount(a.String())
		if err != nil || a != b {
			t.Fatalf("%q read as %+v, which reads back as %+v (%v)", s, a, b, err)
		}
	})
}
