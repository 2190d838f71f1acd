package policy

import (
	"strings"
	"testing"
)

// refused loads the example policy with each old text (in pairs: old, new; each old must be
// there) replaced once, as p.yaml, and returns its problems; it fails the test if the policy loads.
func refused(t *testing.T, pairs ...string) *Error {
	t.Helper()
	src := exampleWith(t)
	for i := 0; i+1 < len(pairs); i += 2 {
		if !strings.Contains(src, pairs[i]) {
			t.Fatalf("the example has no %q", pairs[i])
		}
	}
	_, err := Load([]byte(exampleWith(t, pairs...)), "p.yaml")
	if err == nil {
		t.Fatalf("%q: the policy loads", pairs)
	}
	pe, ok := err.(*Error)
	if !ok {
		t.Fatalf("%q: %v", pairs, err)
	}
	return pe
}

// wantProblem fails the test unless the problems hold one at line that says msg exactly.
func wantProblem(t *testing.T, pe *Error, line int, msg string) {
	t.Helper()
	for _, p := range pe.Problems {
		if p.Line == line && p.Msg == msg {
			return
		}
	}
	t.Errorf("want line %d to say %q; got:\n%v", line, msg, pe)
}

// TestMaxDurationZeroIsSetButTooShort: max_duration: 0 is written, so the refusal does not say it
// is missing: it must be longer than 0.
func TestMaxDurationZeroIsSetButTooShort(t *testing.T) {
	pe := refused(t, "max_duration: 8h", "max_duration: 0")
	wantProblem(t, pe, 16, "class interactive: max_duration must be longer than 0, e.g. max_duration: 8h")
	pe = refused(t, "    max_duration: 8h\n", "")
	wantProblem(t, pe, 9, "class interactive: max_duration is missing, e.g. max_duration: 8h")
	pe = refused(t, "max_duration: 8h", "max_duration: ~")
	wantProblem(t, pe, 16, "class interactive: max_duration is missing, e.g. max_duration: 8h")
}

// TestCurrencyMustBeAnActiveISOCode: three letters are not enough; XYZ is no currency, nor is
// HRK any longer (Croatia pays in EUR), so neither passes, while any active code does, in any case.
func TestCurrencyMustBeAnActiveISOCode(t *testing.T) {
	for _, c := range []string{"XYZ", "hrk", "ABC"} {
		pe := refused(t, "currency: USD", "currency: "+c)
		wantProblem(t, pe, 4, `currency "`+c+`" is not an ISO 4217 currency code (three letters, such as USD, EUR or JPY); e.g. currency: EUR`)
	}
	for _, c := range []string{"eur", "CHF", "kwd", "XOF", "Sle"} {
		p, err := Load([]byte(exampleWith(t, "currency: USD", "currency: "+c)), "p.yaml")
		if err != nil {
			t.Errorf("currency %s: %v", c, err)
		} else if p.Currency != strings.ToUpper(c) {
			t.Errorf("currency %s reads as %q", c, p.Currency)
		}
	}
}
