package discord_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// sentence is a refusal without its example: what it says is wrong.
func sentence(text string) string {
	s, _, _ := strings.Cut(strings.TrimSpace(text), " Example: ")
	return s
}

// A whole number of GPUs past what a request can hold (Discord's integer options take up to
// 2^53) is refused as Slack refuses the same line, for being too many, not as if it were not a
// whole number.
func TestAWholeNumberTooBigIsRefusedAsInSlack(t *testing.T) {
	k := newKestrel(t)
	for _, n := range []int64{5000000000, 9007199254740991} {
		got := k.run(kin(kZoe), "request", discordtest.Opt{Name: "gpus", Value: n}, discordtest.Opt{Name: "class", Value: "l40s"})
		slack := k.slack("zoe@kestrel.example", "/gpu request "+strconv.FormatInt(n, 10)+" l40s")
		if len(slack) == 0 || !slack[0].Error {
			t.Fatalf("Slack's answer to %d GPUs: %+v; want a refusal", n, slack)
		}
		if sentence(got.text()) != sentence(slack[0].Text) {
			t.Errorf("gpus:%d on Discord says %q; Slack says %q", n, sentence(got.text()), sentence(slack[0].Text))
		}
		if strings.Contains(got.text(), "e+") {
			t.Errorf("gpus:%d is written in exponent form: %q", n, got.text())
		}
	}
}
