package commands

import (
	"context"
	"strings"
	"testing"
)

// Quotes as Slack and macOS write them (“ ” ‘ ’) read as the plain quotes they stand for: a
// quoted reason is the words inside the quotes, and a quoted template parameter value is one
// value, spaces and all.
func TestSmartQuotesReadAsPlainQuotes(t *testing.T) {
	h := templatesOn(t, "../docs/quartermaster.example.yaml")
	ctx := context.Background()
	because := func(ask string) string {
		t.Helper()
		l, err := h.svc.Get(ctx, leaseIn(t, mustOK(t, h.say("alice@acme.example", ask)).Text))
		if err != nil {
			t.Fatal(err)
		}
		return l.Because
	}
	for _, reason := range []string{`“a deadline”`, `"a deadline"`, `‘a deadline’`, `'a deadline'`} {
		if got := because("/gpu quota request +1 interactive for 1d because " + reason); got != "a deadline" {
			t.Errorf("because %s: the reason is %q, want %q", reason, got, "a deadline")
		}
	}
	if got := because("/gpu quota request +1 interactive for 1d because the “big” run isn’t done"); got != `the "big" run isn't done` {
		t.Errorf("quotes inside a reason: %q", got)
	}

	for _, v := range []string{`“acme/tiny-llm”`, `"acme/tiny-llm"`, `‘acme/tiny-llm’`} {
		r := mustOK(t, h.say("alice@acme.example", "/gpu submit vllm-server model="+v+" for=1h"))
		l, err := h.svc.Get(ctx, leaseIn(t, r.Text))
		if err != nil {
			t.Fatal(err)
		}
		if l.Params["model"] != "acme/tiny-llm" {
			t.Errorf("model=%s: the lease's model is %q, want acme/tiny-llm", v, l.Params["model"])
		}
		h.say("alice@acme.example", "/gpu release "+l.ID.String())
	}
	// A quoted value with a space is one value, refused as a value, not as a stray word.
	for _, v := range []string{`“acme tiny”`, `"acme tiny"`} {
		r := h.say("alice@acme.example", "/gpu submit vllm-server model="+v)
		if !r.Error || !strings.Contains(r.Text, `model must be like`) || !strings.Contains(r.Text, `"acme tiny"`) {
			t.Errorf("model=%s: %q, want the value acme tiny refused as a model", v, r.Text)
		}
	}
}
