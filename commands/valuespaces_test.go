package commands

import (
	"context"
	"testing"
)

// A quoted template parameter value reaches the job as typed: the spaces inside it as they were
// typed (two spaces stay two), not collapsed to one.
func TestAQuotedValueKeepsItsSpaces(t *testing.T) {
	h := heronOn(t)
	for typed, want := range map[string]string{
		`msg="dos  espacios"`:       "dos  espacios",
		`msg=“a   b”`:               "a   b",
		`msg="it's  ok" times=2`:    "it's  ok",
		`msg='say "hi"  to   them'`: `say "hi"  to   them`,
		`msg="one two"`:             "one two",
	} {
		r := mustOK(t, h.say("olga@heron.example", "/gpu submit note-job "+typed+" for=1h"))
		l, err := h.svc.Get(context.Background(), leaseIn(t, r.Text))
		if err != nil {
			t.Fatal(err)
		}
		if l.Params["msg"] != want {
			t.Errorf("%s: the job gets msg=%q, want %q", typed, l.Params["msg"], want)
		}
		h.say("olga@heron.example", "/gpu release "+l.ID.String())
	}
}
