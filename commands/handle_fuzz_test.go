package commands

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acme/quartermaster/bot"
)

// FuzzHandle runs whatever a person types through the whole bot (the grammar, the handlers, the
// lease service, the templates and the sim cluster, on the example policy), as a member, as a
// budget owner and as someone the directory does not know. Nothing panics, every command gets
// an answer, and a refusal is text that ends with an example to type.
func FuzzHandle(f *testing.F) {
	for _, s := range []string{
		"/gpu request 1 interactive for 2h", "/gpu request 2 train for 4h team vision data internal exclusive",
		"/gpu request 1 interactive for 2h template jupyterlab", "/gpu submit pytorch-ddp nnodes=2 script=train.py",
		"/gpu submit cuda-smoke size=4096 for=1h class=train", "/gpu estimate 1 train 3h", "/gpu status L-1",
		"/gpu extend L-1 2h", "/gpu keep L-1", "/gpu release L-1", "/gpu approve L-2", "/gpu deny L-2 <!channel> use [x](http://e.example)",
		"/gpu quota vision", "/gpu quota request +4 train for 1w because a \u202edeadline", "/gpu templates pytorch",
		"/gpu template vllm-server", "/gpu report last week", "/gpu report 2026-W48 vision", "/gpu policy", "/gpu catalog",
		"/gpu list", "/gpu approvals", "/gpu help request", "/gpu login", "/gpu unlink alice@acme.example",
		`/gpu submit jupyterlab root="a b"`, "/gpu request 1 \u0130nteractive 2h", "/gpu submit hf-lora learning_rate=$(id)",
		"/gpu request 0x10 interactive 1h", "/gpu request 1 inter\u200bactive 1h team vi\u202esion\x07", "/gpu estimate -0 train 99999999h",
		"/gpu extend L-1 1e9h", "/gpu status L-\ufeff1", "/gpu quota request +\u0662 train because <http://evil|click> @here",
	} {
		f.Add("alice@acme.example", s)
	}
	f.Add("dana@acme.example", "/gpu approve L-1")
	f.Add("nobody@else.example", "/gpu request 1 interactive 1h")
	h := templatesOn(f, "../docs/quartermaster.example.yaml")
	f.Fuzz(func(t *testing.T, user, text string) {
		switch {
		case strings.HasPrefix(user, "d"):
			user = "dana@acme.example"
		case strings.HasPrefix(user, "n"):
			user = "nobody@else.example"
		default:
			user = "alice@acme.example"
		}
		rs := h.bot.Handle(context.Background(), bot.Request{User: user, Text: text})
		if len(rs) == 0 {
			t.Fatalf("%s: %q got no reply", user, text)
		}
		for _, r := range rs {
			if strings.TrimSpace(r.Text) == "" && len(r.Sections) == 0 {
				t.Fatalf("%s: %q got an empty reply: %+v", user, text, r)
			}
			if !utf8.ValidString(r.Text) {
				t.Fatalf("%s: %q got a reply that is not UTF-8: %q", user, text, r.Text)
			}
			if r.Error && !strings.Contains(r.Text, "Example: /gpu") {
				t.Fatalf("%s: %q was refused without an example: %q", user, text, r.Text)
			}
		}
	})
}
