package commands

import (
	"strings"
	"testing"
	"time"
)

// /gpu status of a queued lease says how long it is predicted to wait still, as its reply did
// when it was queued, counted afresh: an hour later it waits an hour less.
func TestStatusOfAQueuedLeaseSaysItsPredictedWait(t *testing.T) {
	h, _ := lumenReports(t)
	mustOK(t, h.say("uma@lumen.example", "/gpu request 4 lathe for 2h"))
	r := mustOK(t, h.say("piet@lumen.example", "/gpu request 1 lathe for 1h"))
	id := leaseIn(t, r.Text).String()
	if !strings.Contains(r.Text, "is queued") || !strings.Contains(r.Text, "Predicted wait: about 2h") {
		t.Fatalf("the request: %q; want it queued for about 2h", r.Text)
	}
	if s := mustOK(t, h.say("piet@lumen.example", "/gpu status "+id)).Text; !strings.Contains(s, "Predicted wait: about 2h") {
		t.Errorf("/gpu status %s: %q; want its predicted wait, about 2h", id, s)
	}
	h.advance(time.Hour)
	if s := mustOK(t, h.say("piet@lumen.example", "/gpu status "+id)).Text; !strings.Contains(s, "Predicted wait: about 1h") {
		t.Errorf("/gpu status %s an hour later: %q; want its predicted wait, about 1h", id, s)
	}
}
