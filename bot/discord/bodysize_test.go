package discord_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// An interaction whose body is over a megabyte, signed or not, is answered 413 with one sentence
// that says how large a body may be, and nothing runs.
func TestABodyOverAMegabyteIsRefusedWith413(t *testing.T) {
	e := newEnv(t)
	body := discordtest.Command(in(alice), "gpu", "request", discordtest.Opt{Name: "lease", Value: strings.Repeat("a", 2<<20)})
	for name, req := range map[string]*http.Request{
		"signed":   e.signer.Request(e.srv.URL+discord.Path, body),
		"unsigned": httptest.NewRequest(http.MethodPost, discord.Path, strings.NewReader(string(body))),
	} {
		w := httptest.NewRecorder()
		e.adapter.ServeHTTP(w, req)
		msg := strings.TrimSpace(w.Body.String())
		if w.Code != http.StatusRequestEntityTooLarge || msg != "the request body is larger than 1048576 bytes." {
			t.Errorf("%s, %d bytes: HTTP %d %q; want 413 saying how large a body may be", name, len(body), w.Code, msg)
		}
	}
	e.wait()
	if n := len(e.handler.requests()); n != 0 {
		t.Errorf("%d commands ran", n)
	}
}
