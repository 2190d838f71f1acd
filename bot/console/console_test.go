package console

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
)

type recorder struct{ users []string }

func (r *recorder) Handle(_ context.Context, req bot.Request) []bot.Reply {
	r.users = append(r.users, req.User)
	return []bot.Reply{{Text: "ok"}}
}

// :as refuses someone the directory does not list, in one sentence naming some who are, with one
// of them as the example, and the lines that follow are not run as them; someone it lists, in
// any case, is taken. Without a directory anyone is taken.
func TestAsRefusesSomeoneNotInTheDirectory(t *testing.T) {
	var out bytes.Buffer
	h := &recorder{}
	people := []string{"ravi@wattle.example", "mei@wattle.example", "priya@wattle.example", "zoe@wattle.example"}
	c := &Console{Handler: h, Out: &out, People: people, ExampleUser: "ravi@wattle.example"}
	ctx := context.Background()
	c.Line(ctx, ":as nobody@x")
	c.Line(ctx, "/gpu list")
	got := out.String()
	msg, ex, _ := strings.Cut(strings.SplitN(got, "\n", 2)[0], " Example: ")
	if !strings.Contains(msg, "nobody@x") || strings.Contains(msg, ". ") || ex != ":as ravi@wattle.example" ||
		!strings.Contains(msg, "mei@wattle.example") || strings.Contains(msg, "zoe@wattle.example") {
		t.Errorf(":as nobody@x: %q; want one sentence naming a few people of the directory and :as ravi@wattle.example as its example", got)
	}
	if len(h.users) != 0 {
		t.Errorf("after a refused :as, commands ran as %v", h.users)
	}
	c.Line(ctx, ":as MEI@wattle.example")
	c.Line(ctx, "/gpu list")
	if len(h.users) != 1 || !strings.EqualFold(h.users[0], "mei@wattle.example") {
		t.Errorf(":as MEI@wattle.example then /gpu list ran as %v", h.users)
	}

	h = &recorder{}
	c = &Console{Handler: h, Out: &out}
	c.Line(ctx, ":as anyone@example.org")
	c.Line(ctx, "/gpu list")
	if len(h.users) != 1 || h.users[0] != "anyone@example.org" {
		t.Errorf("without a directory, :as anyone@example.org then /gpu list ran as %v", h.users)
	}
}

// :advance and :wait refuse a negative duration, or one written with digits other than 0-9, in
// the words chat refuses it with, the duration meant as the example.
func TestAdvanceRefusesANegativeOrOtherDigitDurationAsChatDoes(t *testing.T) {
	ctx := context.Background()
	for line, want := range map[string]string{
		":advance -2h":  `"-2h" is negative, but a duration cannot be negative; write it like 2h. Example: :advance 2h`,
		":wait - 90m":   `"- 90m" is negative, but a duration cannot be negative; write it like 1h30m. Example: :wait 1h30m`,
		":advance ٣h":   `"٣h" is written with digits other than 0-9; write the duration with the digits 0-9: 3h. Example: :advance 3h`,
		":advance ２ｍ":   `"２ｍ" is written with digits other than 0-9; write the duration with the digits 0-9: 2m. Example: :advance 2m`,
		":advance soon": `"soon" is not a duration. Example: :advance 45m`,
	} {
		var out bytes.Buffer
		c := &Console{Handler: &recorder{}, Out: &out}
		c.Line(ctx, line)
		if got := strings.TrimSpace(out.String()); !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", line, got, want)
		}
	}
}
