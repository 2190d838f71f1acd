package slack_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/store/storetest"
)

// A delivery whose body is over a megabyte, signed or not, is answered 413 with one sentence
// that says how large a body may be, on every endpoint; nothing runs, and a delivery of the
// usual size still works.
func TestABodyOverAMegabyteIsRefusedWith413(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	text := "request 1 interactive for 2h" + strings.Repeat(" ", 2<<20)
	for path, body := range map[string]string{
		"/slack/commands":     e.commandBody("UALICE", text, e.newTrigger()),
		"/slack/interactions": url.Values{"payload": {`{"type":"block_actions","x":"` + strings.Repeat("a", 2<<20) + `"}`}}.Encode(),
		"/slack/events":       `{"type":"url_verification","challenge":"` + strings.Repeat("a", 2<<20) + `"}`,
	} {
		ts := time.Now().Unix()
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Slack-Request-Timestamp", fmt.Sprint(ts))
		req.Header.Set("X-Slack-Signature", sign(secret, ts, body))
		w := httptest.NewRecorder()
		e.current().Handler().ServeHTTP(w, req)
		msg := strings.TrimSpace(w.Body.String())
		if w.Code != http.StatusRequestEntityTooLarge || msg != "the request body is larger than 1048576 bytes." {
			t.Errorf("%s, %d bytes: HTTP %d %q; want 413 saying how large a body may be", path, len(body), w.Code, msg)
		}
	}
	e.wait()
	if n := len(e.leases()); n != 0 {
		t.Fatalf("refused deliveries made %d leases", n)
	}
	if code := e.signed("/slack/commands", e.commandBody("UALICE", "request 1 interactive for 2h", e.newTrigger()), nil); code != http.StatusOK {
		t.Fatalf("a delivery of the usual size: HTTP %d", code)
	}
	e.wait()
	if n := len(e.leases()); n != 1 {
		t.Errorf("a delivery of the usual size made %d leases", n)
	}
}
