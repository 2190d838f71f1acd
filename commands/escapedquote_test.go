package commands

import (
	"context"
	"testing"
)

// A quote inside a quoted template parameter value may be written as a shell writes it, with a
// backslash before it: the value is what the quotes hold, with the quote in it, and the job gets
// it as meant, rather than the line being refused with an example that does not work.
func TestABackslashedQuoteInAQuotedValue(t *testing.T) {
	h := heronOn(t)
	for typed, want := range map[string]string{
		`msg="say \"hi\" now"`:            `say "hi" now`,
		`msg="it's a \"big\" $(id) test"`: `it's a "big" $(id) test`,
		`msg='it\'s mine'`:                `it's mine`,
		`msg="\"quoted\""`:                `"quoted"`,
		`msg=“a \"b\" c”`:                 `a "b" c`,
	} {
		r := h.say("olga@heron.example", "/gpu submit note-job "+typed+" for=1h")
		if r.Error {
			t.Errorf("%s is refused: %s", typed, r.Text)
			continue
		}
		l, err := h.svc.Get(context.Background(), leaseIn(t, r.Text))
		if err != nil {
			t.Fatal(err)
		}
		if l.Params["msg"] != want {
			t.Errorf("%s: the job gets msg=%q, want %q", typed, l.Params["msg"], want)
		}
		h.say("olga@heron.example", "/gpu release "+l.ID.String())
	}
	// A backslash elsewhere is an ordinary character.
	r := mustOK(t, h.say("olga@heron.example", `/gpu submit note-job msg=a\b for=1h`))
	if l, err := h.svc.Get(context.Background(), leaseIn(t, r.Text)); err != nil || l.Params["msg"] != `a\b` {
		t.Errorf(`msg=a\b: the job gets %q (%v), want a\b`, l.Params["msg"], err)
	}
}
