package bot

import (
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// dmVerbs are the first words of a few commands, as an adapter knows them.
var dmVerbs = []string{"request", "list", "status", "help", "quota", "quota-request"}

func isDMVerb(w string) bool { return slices.Contains(dmVerbs, w) }

// A DM's text is read as the command it holds however it was written: with or without the
// command's name or the app's mention before it (a colon or comma after them), in any case, and
// through what chat apps, phone keyboards and pastes put around it: code blocks and spans, quotes
// (typographic ones too), white space and invisible characters, a dash that looks like the hyphen.
func TestReadDMReadsTheCommandHowever(t *testing.T) {
	names := []string{"/gpu", "gpu", "@U0QM", "@quartermaster"}
	for in, want := range map[string]string{
		"request 1 interactive for 4h":  "request 1 interactive for 4h",
		"List":                          "list",
		"gpu list":                      "list",
		"/gpu list":                     "list",
		"/GPU list":                     "list",
		"GPU: list":                     "list",
		"gpu, list":                     "list",
		"/gpu gpu list":                 "list",
		"   \n\t gpu   status  L-7  ":   "status L-7",
		"\u200b\ufeffstatus L-7\u200b":  "status L-7",
		"@U0QM request 1":               "request 1",
		"@Quartermaster: request 1":     "request 1",
		"@quartermaster /gpu request 1": "request 1",
		"gpu":                           "help",
		"/gpu:":                         "help",
		"@U0QM":                         "help",
		"```/gpu request 1```":          "request 1",
		"```\n/gpu request 1 interactive\nfor 4h\n```": "request 1 interactive for 4h",
		"```text\ngpu request 1\n```":                  "request 1",
		"```list\n```":                                 "list",
		"`request 1 interactive for 4h`":               "request 1 interactive for 4h",
		"``gpu list``":                                 "list",
		"“request 1 interactive for 4h”":               "request 1 interactive for 4h",
		"„gpu list“":                                   "list",
		"‘list’":                                       "list",
		`"/gpu status L-7"`:                            "status L-7",
		"“`/gpu list`”":                                "list",
		"“Request” 1":                                  "request 1",
		"quota‐request +2 train":                       "quota-request +2 train",
		"quota–request +2 train":                       "quota-request +2 train",
		"gpu — list":                                   "list",
		// What the command's own parser reads is left to it: quotes and dashes inside.
		`request 1 train reason “a deadline”`: `request 1 train reason “a deadline”`,
		"status L–7": "status L–7",
	} {
		verb, args, ok := ReadDM(in, names, isDMVerb)
		if got := strings.Join(append([]string{verb}, args...), " "); !ok || got != want {
			t.Errorf("ReadDM(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

// A DM that does not begin with a command (after what ReadDM reads through) is no command: a
// greeting, a question, a command in a sentence, a mention of someone else, or nothing at all.
func TestReadDMKnowsWhatIsNoCommand(t *testing.T) {
	names := []string{"/gpu", "gpu", "@U0QM"}
	for _, in := range []string{
		"", "   ", "\u200b", "hi, can I get a GPU?", "please `request 1`", "estimatee 1 train 4h",
		"@UBOB list", "gpu gpu gpu list", "```\n```", "``", "“”", "```", "`list", "list`x`",
		"request" + strings.Repeat("x", 100), "—", "gpu — — list",
	} {
		if verb, args, ok := ReadDM(in, names, isDMVerb); ok {
			t.Errorf("ReadDM(%q) = %q %q; want no command", in, verb, args)
		}
	}
	// Names alone are help only where help is a command.
	if _, _, ok := ReadDM("gpu", names, func(w string) bool { return w == "list" }); ok {
		t.Error(`"gpu" read as a command where there is no help`)
	}
}

// A very long DM is read in time linear in its length, and a command in it keeps every word (the
// parser, not the reading, refuses one too long).
func TestReadDMReadsAVeryLongMessage(t *testing.T) {
	long := "request 1 train reason " + strings.Repeat("word ", 200000)
	verb, args, ok := ReadDM("```"+long+"```", []string{"gpu"}, isDMVerb)
	if !ok || verb != "request" || len(args) != 200003 {
		t.Errorf("read %q with %d words (%v)", verb, len(args), ok)
	}
	if _, _, ok := ReadDM(strings.Repeat("`", 100000)+"list", []string{"gpu"}, isDMVerb); ok {
		t.Error("a run of backticks before a verb read as a command")
	}
}

// The sentence that answers a DM that is no command is the same on every platform: how to ask,
// with the example, and help where there is one.
func TestDMHint(t *testing.T) {
	for _, c := range []struct {
		name, example string
		help          bool
		want          string
	}{
		{"gpu", "request 1 interactive for 4h", true, "Quartermaster answers /gpu commands, here too without the slash: send `request 1 interactive for 4h`, or `help` for the list."},
		{"qm", "request 1 train for 8h", false, "Quartermaster answers /qm commands, here too without the slash: send `request 1 train for 8h`."},
		{"gpu", "", true, "Quartermaster answers /gpu commands, here too without the slash: send `help` for the list."},
		{"gpu", "", false, "Quartermaster answers /gpu commands, here too without the slash."},
		{"gpu", "request 1 a`b for 4h", true, "Quartermaster answers /gpu commands, here too without the slash: send `request 1 a'b for 4h`, or `help` for the list."},
	} {
		if got := DMHint(c.name, c.example, c.help); got != c.want {
			t.Errorf("DMHint(%q, %q, %v) = %q, want %q", c.name, c.example, c.help, got, c.want)
		}
	}
}

// The sentence for a command too old to run names it whole when it is short, and by its beginning
// when it is long; its backticks cannot end the code span it is shown in.
func TestTooLateToRun(t *testing.T) {
	sent := time.Date(2026, 3, 2, 9, 5, 0, 0, time.FixedZone("CET", 3600))
	want := "Quartermaster stopped before it ran your command `/gpu request 1 a'b` (sent 2 Mar 08:05 UTC), and it is too late to run it now; send it again if you still want it."
	if got := TooLateToRun("/gpu request 1 a`b", sent); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	long := "/gpu request 1 train reason " + strings.Repeat("é", 5000)
	got := TooLateToRun(long, sent)
	_, shown, _ := strings.Cut(got, "`")
	shown, _, _ = strings.Cut(shown, "`")
	if !strings.HasPrefix(long, strings.TrimSuffix(shown, "…")) || utf8.RuneCountInString(shown) != MaxShownCommand+1 || !strings.HasSuffix(got, "send it again if you still want it.") {
		t.Errorf("the long command is shown as %q", shown)
	}
}

// Whatever a DM holds, reading it does not panic; a command read from it is one of the verbs,
// and written back as the command it was read as, it reads as that command again.
func FuzzReadDM(f *testing.F) {
	for _, s := range []string{"request 1 interactive for 4h", "```text\ngpu list\n```", "“`/gpu list`”", "gpu — list",
		"@U0QM: help", "`", "```", "“", "\u200b", "quota‐request +2 train", "\"'“”„‘’‚«»"} {
		f.Add(s)
	}
	names := []string{"/gpu", "gpu", "@U0QM"}
	f.Fuzz(func(t *testing.T, text string) {
		verb, args, ok := ReadDM(text, names, isDMVerb)
		if !ok {
			return
		}
		if !isDMVerb(verb) {
			t.Fatalf("ReadDM(%q) read %q, no verb", text, verb)
		}
		line := strings.Join(append([]string{"/gpu", verb}, args...), " ")
		again, againArgs, ok := ReadDM(line, names, isDMVerb)
		if !ok || again != verb || !slices.Equal(againArgs, args) {
			t.Fatalf("ReadDM(%q) read %q %q; its line %q reads %q %q (%v)", text, verb, args, line, again, againArgs, ok)
		}
	})
}
