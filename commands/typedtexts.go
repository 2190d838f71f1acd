package commands

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/qm"
)

// What people typed that a reply shows (a reason, a template parameter's value) goes with the
// reply as bot.Reply.Typed, so that an adapter rewriting the bot's own commands in its texts
// leaves these as typed.

type typedTextsKey struct{}

type typedTexts struct {
	mu    sync.Mutex
	texts []string
}

// withTypedTexts is ctx gathering the texts people typed that the replies made under it show.
func withTypedTexts(ctx context.Context) (context.Context, *typedTexts) {
	t := &typedTexts{}
	return context.WithValue(ctx, typedTextsKey{}, t), t
}

// showsTyped notes that a reply made under ctx shows texts someone typed.
func showsTyped(ctx context.Context, texts ...string) {
	t, ok := ctx.Value(typedTextsKey{}).(*typedTexts)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, s := range texts {
		if strings.TrimSpace(s) != "" && !slices.Contains(t.texts, s) {
			t.texts = append(t.texts, s)
		}
	}
}

// showsLease notes the texts l's people typed that a reply about it may show: a quota request's
// reason, a denial's reason given by a person, its template parameters' values.
func showsLease(ctx context.Context, l *qm.Lease) {
	if l == nil {
		return
	}
	showsTyped(ctx, l.Because)
	if l.State == qm.Denied && l.DecidedBy != "" && l.DecidedBy != qm.SystemActor {
		showsTyped(ctx, l.Reason)
	}
	for _, k := range slices.Sorted(maps.Keys(l.Params)) {
		showsTyped(ctx, l.Params[k])
	}
}

// mark gives each of rs the texts gathered.
func (t *typedTexts) mark(rs []bot.Reply) []bot.Reply {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.texts) == 0 {
		return rs
	}
	for i := range rs {
		rs[i].Typed = append(slices.Clone(rs[i].Typed), t.texts...)
	}
	return rs
}

// shownToRead is a text that holds what someone typed (a request to ask again, with its template
// parameters' values) as a message shows it to read: each backtick as its look-alike ˋ, as a
// reason keeps it, so that it opens no code around the marks after it. What a button runs, and
// what a job gets, keep the backtick.
func shownToRead(s string) string {
	return strings.ReplaceAll(s, "`", string(backtickLookalike))
}
