package discord_test

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// codeSpans are the inline code spans of Discord markdown text: a run of backticks opens one,
// which the next run of as many closes; one space each side is padding when both are there.
func codeSpans(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		n := 0
		for i+n < len(s) && s[i+n] == '`' {
			n++
		}
		fence := strings.Repeat("`", n)
		rest := s[i+n:]
		end := -1
		for j := 0; j < len(rest); {
			k := strings.Index(rest[j:], fence)
			if k < 0 {
				break
			}
			k += j
			m := 0
			for k+m < len(rest) && rest[k+m] == '`' {
				m++
			}
			if m == n {
				end = k
				break
			}
			j = k + m
		}
		if end < 0 {
			i += n
			continue
		}
		code := rest[:end]
		if len(code) > 1 && code[0] == ' ' && code[len(code)-1] == ' ' {
			code = code[1 : len(code)-1]
		}
		out = append(out, code)
		i += n + end + n
	}
	return out
}

// TestTypedOutCommandKeepsItsBackticks: a command too long for a button, written out under the
// message, is one code span whole even when what someone typed into it has backticks of its own
// (a reason "use `nvcc`"), so it reads, and copies, as the command it runs; a mention in it is
// inside the code, where Discord does not make it one.
func TestTypedOutCommandKeepsItsBackticks(t *testing.T) {
	e := newEnv(t)
	long := "/gpu deny L-7 " + strings.Repeat("far too long for a button, ", 4) + "use `nvcc` and <@&1> @everyone"
	e.handler.reply = func(bot.Request) []bot.Reply {
		return []bot.Reply{{Text: "Decide L-7.", Actions: []bot.Action{{Label: "Deny L-7", Command: long}}}}
	}
	r := e.send(discordtest.Command(in(alice), "gpu", "help"))
	e.wait()
	text := r.text()
	i := strings.Index(text, "Type it: Deny L-7: ")
	if i < 0 {
		t.Fatalf("the command is not written out: %q", text)
	}
	line := text[i+len("Type it: Deny L-7: "):]
	spans := codeSpans(line)
	if len(spans) != 1 || spans[0] != long {
		t.Errorf("the command written out reads as the code spans %q, not as %q: %q", spans, long, line)
	}
}
