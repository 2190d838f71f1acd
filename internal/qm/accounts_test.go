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

// FuzzParseLeaseID: whatever a user types where a lease id goes, ParseLeaseID answers without
// panicking; an id it accepts writes back (L-42) to the same id, and a refusal is one sentence
// with an example of a lease id.
func FuzzParseLeaseID(f *testing.F) {
	for _, s := range []string{"L-42", "l-7", "42", " L-0001 ", "L-", "L-+1", "+1", "L-0", "L--1", "L-9223372036854775808", "L-9223372036854775807", "lease", "L-4\n2", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseLeaseID(s)
		if err != nil {
			msg := err.Error()
			if ErrorCode(err) != EINVALID || strings.Contains(msg, "\n") || !strings.Contains(msg, "L-42") {
				t.Fatalf("%q refused with %q: not one sentence with an example", s, msg)
			}
			return
		}
		if id <= 0 {
			t.Fatalf("%q read as %d", s, id)
		}
		back, err := ParseLeaseID(id.String())
		if err != nil || back != id {
			t.Fatalf("%q read as %v, which reads back as %v (%v)", s, id, back, err)
		}
	})
}
