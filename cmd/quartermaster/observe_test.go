package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/commands"
)

// FuzzVerbOf: whatever a user types, the verb logged and counted is one of the grammar's verbs or
// "unknown", so a typo can never add a label to the metrics, and nothing panics.
func FuzzVerbOf(f *testing.F) {
	for _, s := range []string{"", "/gpu", "/gpu request 1 train 8h", "REQUEST", "/GPU  list", "frobnicate", "/gpu \x00\xff", "  \t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		v := verbOf(text)
		if _, ok := commands.Lookup(v); !ok && v != "unknown" {
			t.Fatalf("verbOf(%q) = %q", text, v)
		}
	})
}

func benchHandler(b *testing.B, h bot.Handler) {
	ctx := context.Background()
	req := bot.Request{User: "alice@acme.example", Text: "/gpu request 1 interactive for 2h"}
	b.ReportAllocs()
	for b.Loop() {
		h.Handle(ctx, req)
	}
}

// BenchmarkCommandObservation: what timing, counting and logging one command adds (the handler
// itself does nothing here; the log is JSON to io.Discard).
func BenchmarkCommandObservation(b *testing.B) {
	inner := bot.HandlerFunc(func(context.Context, bot.Request) []bot.Reply { return []bot.Reply{{Text: "ok"}} })
	b.Run("bare", func(b *testing.B) { benchHandler(b, inner) })
	b.Run("observed", func(b *testing.B) {
		benchHandler(b, observeCommands(inner, newMetrics(), slog.New(slog.NewJSONHandler(io.Discard, nil))))
	})
}

// TestObserveCommandsKeepsReplies: the wrapper hands the bot's replies back untouched.
func TestObserveCommandsKeepsReplies(t *testing.T) {
	t.Parallel()
	want := []bot.Reply{{Text: "no", Error: true}, {To: "#ops", Text: "fyi"}}
	h := observeCommands(bot.HandlerFunc(func(context.Context, bot.Request) []bot.Reply { return want }), nil, slog.New(slog.DiscardHandler))
	got := h.Handle(context.Background(), bot.Request{Text: "/gpu list"})
	if len(got) != 2 || got[0].Text != "no" || !got[0].Error || got[1].To != "#ops" {
		t.Errorf("replies %+v", got)
	}
	if !strings.Contains(verbOf("/gpu LIST"), "list") {
		t.Error("verbs are not case-blind")
	}
}

// opener is a handler that lets anyone run /gpu help alone.
type opener struct{ bot.Handler }

func (opener) Open(text string) bool { return text == "/gpu help" }

// TestObservedCommandsOpenAsTheBotDoes: the wrapper answers which commands anyone may run as the
// handler it wraps does, so that the chat adapters still let someone they cannot identify read
// the help behind it.
func TestObservedCommandsOpenAsTheBotDoes(t *testing.T) {
	t.Parallel()
	h := observeCommands(opener{bot.HandlerFunc(func(context.Context, bot.Request) []bot.Reply { return nil })}, nil, slog.New(slog.DiscardHandler))
	if !bot.Open(h, "/gpu help") || bot.Open(h, "/gpu list") {
		t.Errorf("the observed handler opens /gpu help %v and /gpu list %v; want true and false", bot.Open(h, "/gpu help"), bot.Open(h, "/gpu list"))
	}
}
