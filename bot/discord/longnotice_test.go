package discord_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
)

// A notice longer than one Discord message (a post listing many teams) fills the message's
// embeds and is cut between its lines, not inside one (nor inside a multi-byte letter), and its
// footer says how many lines did not fit, as a Slack post of the same text shows them all.
func TestALongNoticeIsCutBetweenLinesAndSaysWhatIsLeftOut(t *testing.T) {
	e := newEnv(t)
	var lines []string
	for i := range 150 {
		lines = append(lines, fmt.Sprintf("team-%03d-ørsted: 12 of 16 GPUs, 340 GPU-hours, 1 234 567 ₩", i))
	}
	if err := e.adapter.Send(context.Background(), bot.Reply{To: "#vision-gpu", Text: strings.Join(lines, "\n")}); err != nil {
		t.Fatal(err)
	}
	e.wait()
	posts := e.fake.PostsTo(team)
	if len(posts) != 1 {
		t.Fatalf("the notice was posted as %d messages", len(posts))
	}
	sent := map[string]bool{}
	for _, l := range lines {
		sent[l] = true
	}
	shown, footer := 0, ""
	for _, em := range posts[0].Embeds {
		for _, l := range strings.Split(em.Description, "\n") {
			if !sent[l] {
				t.Errorf("the post shows the line %q, which is not one of the notice's", l)
			}
			shown++
		}
		if em.Footer != nil {
			footer = em.Footer.Text
		}
	}
	if shown < 80 {
		t.Errorf("the post shows %d of the notice's %d lines; one message holds more", shown, len(lines))
	}
	if want := fmt.Sprintf("%d more lines did not fit in one Discord message.", len(lines)-shown); footer != want {
		t.Errorf("the post's footer is %q; want %q", footer, want)
	}
}
