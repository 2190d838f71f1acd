package commands

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
)

// A template parameter of free text keeps a backtick typed in its value, and the job gets it so;
// but where a notice shows the value to read (the request to ask again of a denial), each
// backtick is its look-alike ˋ, as in a reason, so that it opens no code around the marks after
// it. The notice's Request again button asks with the value as it was typed.
func TestAParameterValueShowsNoBacktick(t *testing.T) {
	h := heronOn(t)
	const una = "una@heron.example"
	value := "a`b *c* ` d"
	r := h.say(una, `/gpu submit note-job gpus=3 msg="`+value+`"`)
	if r.Error {
		t.Fatalf("the submit was refused: %s", r.Text)
	}
	id := leaseIn(t, r.Text)
	if l := h.lease(id); l.Params["msg"] != value {
		t.Fatalf("msg was kept as %q; want %q", l.Params["msg"], value)
	}
	h.advance(13 * time.Hour) // the approval times out undecided
	var denied *bot.Reply
	for _, n := range h.notices(una) {
		if strings.Contains(n.Text, id.String()+" was denied") {
			denied = &n
		}
	}
	if denied == nil {
		t.Fatalf("no denial of %s reached %s", id, una)
	}
	shown := strings.ReplaceAll(value, "`", "\u02cb")
	if strings.Contains(denied.Text, "`") || !strings.Contains(denied.Text, shown) {
		t.Errorf("the denial shows the value as %q; want it with ˋ for each backtick (%q)", denied.Text, shown)
	}
	if len(denied.Actions) != 1 || !strings.Contains(denied.Actions[0].Command, value) {
		t.Fatalf("the Request again button does not ask with the value as typed: %+v", denied.Actions)
	}
	again := h.say(una, strings.Replace(denied.Actions[0].Command, "3 pico", "1 pico", 1))
	if again.Error {
		t.Fatalf("%s: %s", denied.Actions[0].Command, again.Text)
	}
	if l := h.lease(leaseIn(t, again.Text)); l.Params["msg"] != value {
		t.Errorf("asked again, msg is %q; want %q", l.Params["msg"], value)
	}
}
