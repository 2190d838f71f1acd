package main

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/commands"
	"github.com/acme/quartermaster/internal/buildinfo"
	"github.com/acme/quartermaster/internal/metrics"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// newMetrics is the service's registry, labelled with this build.
func newMetrics() *metrics.Metrics {
	b := buildinfo.Get()
	return metrics.New(metrics.Build{Version: b.Version, Commit: b.Commit, GoVersion: b.GoVersion})
}

func buildVersion() string { return buildinfo.Get().Version }

func classNames(p *policy.Policy) []string {
	out := make([]string, 0, len(p.Classes))
	for _, c := range p.Classes {
		out = append(out, c.Name)
	}
	return out
}

// observeCommands wraps the bot so that every command is logged in one line (verb, user, outcome,
// duration) and counted. The command's text is not logged: a reason or a parameter may be
// something its author would not want in a log; the verb says what was done.
// What the bot checks before a form asks for more (bot.Checker) is checked as it is.
func observeCommands(h bot.Handler, m *metrics.Metrics, log *slog.Logger) bot.Handler {
	return observed{inner: h, Handler: bot.HandlerFunc(func(ctx context.Context, req bot.Request) []bot.Reply {
		start := time.Now()
		replies := h.Handle(ctx, req)
		took := time.Since(start)
		outcome := metrics.OutcomeOK
		if len(replies) > 0 && replies[0].Error {
			outcome = metrics.OutcomeError
		}
		verb := verbOf(req.Text)
		m.Command(verb, outcome, took)
		log.LogAttrs(ctx, slog.LevelInfo, "command", slog.String("verb", verb), slog.String("user", req.User),
			slog.String("outcome", outcome), slog.Duration("duration", took))
		return replies
	})}
}

// observed is a handler that observes each command, and checks as the handler it wraps does.
type observed struct {
	bot.Handler
	inner bot.Handler
}

// Check asks the wrapped handler.
func (o observed) Check(ctx context.Context, req bot.Request) *bot.Reply {
	return bot.Check(ctx, o.inner, req)
}

// Open asks the wrapped handler.
func (o observed) Open(text string) bool { return bot.Open(o.inner, text) }

// verbOf names a command's verb for logs and metrics: one of the grammar's verbs, or "unknown",
// so that typos cannot grow the metric's label set.
func verbOf(text string) string {
	f := strings.Fields(text)
	if len(f) > 0 && strings.EqualFold(f[0], "/gpu") {
		f = f[1:]
	}
	if len(f) == 0 {
		return "help"
	}
	if len(f) > 1 {
		if s, ok := commands.Lookup(strings.ToLower(f[0] + " " + f[1])); ok {
			return s.Name
		}
	}
	if s, ok := commands.Lookup(strings.ToLower(f[0])); ok {
		return s.Name
	}
	return "unknown"
}

// metricsState reads the queue, running GPUs, pending approvals and the outbox's lag from the
// database, for the gauges at each scrape.
func (a *App) metricsState(ctx context.Context) (metrics.State, error) {
	st := metrics.State{Queued: map[string]int{}, RunningGPUs: map[string]int{}}
	live, err := a.Service.List(ctx, qm.LeaseFilter{States: []qm.State{qm.Queued, qm.Provisioning, qm.Active, qm.IdleWarned}, Slim: true})
	if err != nil {
		return st, err
	}
	for _, l := range live {
		if l.State == qm.Queued {
			st.Queued[l.Class]++
		} else {
			st.RunningGPUs[l.Class] += l.GPUs
		}
	}
	pending, err := a.Service.List(ctx, qm.LeaseFilter{Kind: qm.AnyKind, States: []qm.State{qm.PendingApproval}, Slim: true})
	if err != nil {
		return st, err
	}
	st.PendingApprovals = len(pending)
	if st.OutboxPending, st.OutboxOldest, err = a.Store.OutboxLag(ctx, a.Clock.Now()); err != nil {
		return st, err
	}
	return st, nil
}
