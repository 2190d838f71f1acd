package showback

import (
	"context"
	"fmt"
	"github.com/acme/quartermaster/internal/nfc"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// Service loads a week's input and builds its report.
type Service struct {
	Policy *policy.Policy
	Source qm.ReportStore
	Clock  qm.Clock
}

// LastComplete is the latest week that has ended.
func (s *Service) LastComplete() Week {
	return WeekOf(s.Clock.Now(), s.Policy.Location).Prev()
}

// ExampleWeek is a week a report can be asked for: the last complete week, or, while the
// history began after it, the week it began in (the week in progress).
func (s *Service) ExampleWeek(ctx context.Context) Week {
	last := s.LastComplete()
	start, err := s.Source.HistoryStart(ctx)
	if err != nil || start.IsZero() || last.End(s.Policy.Location).After(start) {
		return last
	}
	return WeekOf(start, s.Policy.Location)
}

// ParseWeek reads a week as a user wrote it: an ISO week (2026-W48), or "this week" (the week in
// progress) or "last week" (the last complete one), in any case, with or without the word "week".
// A refusal offers ExampleWeek, a week that can be reported.
func (s *Service) ParseWeek(ctx context.Context, text string) (Week, error) {
	if w, ok := NamedWeek(text, s.LastComplete()); ok {
		return w, nil
	}
	w, err := ParseWeek(text, Week{})
	if err != nil {
		_, err = parseWeek(text, s.ExampleWeek(ctx), ", or this week or last week")
	}
	return w, err
}

// NamedWeek reads "this week" and "last week" (also "this", "current", "last", "previous"),
// given the last complete week.
func NamedWeek(text string, last Week) (Week, bool) {
	f := strings.Fields(strings.ToLower(text))
	if len(f) == 2 && f[1] == "week" {
		f = f[:1]
	}
	if len(f) != 1 {
		return Week{}, false
	}
	switch f[0] {
	case "this", "current":
		return last.Next(), true
	case "last", "previous":
		return last, true
	}
	return Week{}, false
}

// Report builds week w's report, narrowed by f. A week that has not begun, a week before any
// history, and a team that is neither in the policy nor ever had a lease are refused with one
// sentence (a *qm.Error; the caller adds an example that works).
func (s *Service) Report(ctx context.Context, w Week, f Filter) (*Report, error) {
	in, err := s.Input(ctx, w, f)
	if err != nil {
		return nil, err
	}
	return Build(in), nil
}

// Input loads what Build needs for week w after checking w and f.
func (s *Service) Input(ctx context.Context, w Week, f Filter) (Input, error) {
	loc := s.Policy.Location
	now := s.Clock.Now()
	from, to := w.Start(loc), w.End(loc)
	if err := s.CheckWeek(ctx, w); err != nil {
		return Input{}, err
	}
	// The week is one to report: a refusal of the team alone can offer it back.
	if f.Team != "" {
		name, err := s.ResolveTeam(ctx, f.Team)
		if err != nil {
			return Input{}, err
		}
		f.Team = name
	}
	prev := w.Prev().Start(loc)
	leases, err := s.Source.ReportLeases(ctx, prev, to)
	if err != nil {
		return Input{}, fmt.Errorf("showback: read the leases of %s: %w", w, err)
	}
	// A report made as of an earlier instant than the store's (quartermaster report --now) tells
	// what was known then, as the scheduler's post would have at that instant.
	leases = asOf(leases, now)
	// The teams whose first lease or first workspace may be in the week: those that asked for
	// one in it, and those whose workspace started in it.
	var asked []string
	seen := map[string]bool{}
	in := func(t time.Time) bool { return !t.IsZero() && !t.Before(from) && t.Before(to) }
	for _, l := range leases {
		if !seen[l.Team] && (in(l.CreatedAt) || l.Kind == qm.KindWorkspace && in(l.StartedAt)) && f.lease(l) {
			seen[l.Team] = true
			asked = append(asked, l.Team)
		}
	}
	firsts, err := s.Source.TeamFirsts(ctx, asked, from)
	if err != nil {
		return Input{}, fmt.Errorf("showback: read the teams' first leases: %w", err)
	}
	usage, err := s.Source.Usage(ctx, prev, to)
	if err != nil {
		return Input{}, fmt.Errorf("showback: read the usage of %s: %w", w, err)
	}
	usage = usageAsOf(usage, leases, now, loc)
	preds, err := s.Source.WaitPredictions(ctx, from, to)
	if err != nil {
		return Input{}, fmt.Errorf("showback: read the wait predictions of %s: %w", w, err)
	}
	preds = slices.DeleteFunc(preds, func(p qm.WaitPrediction) bool { return p.At.After(now) })
	return Input{Policy: s.Policy, Week: w, Now: now, Leases: leases, Usage: usage, Firsts: firsts, Predictions: preds, Filter: f}, nil
}

// CheckWeek refuses a week there is nothing to report of: one that has not begun, or one before
// the history began. A command that also names a team checks the week with it first, so that a
// refusal of the team alone can offer back the week asked for.
func (s *Service) CheckWeek(ctx context.Context, w Week) error {
	loc := s.Policy.Location
	from, to := w.Start(loc), w.End(loc)
	if from.After(s.Clock.Now()) {
		return qm.Errorf(qm.EINVALID, "%s has not begun yet (it starts %s); the last complete week is %s.",
			w, from.Format("Mon 2 Jan 2006"), s.LastComplete())
	}
	start, err := s.Source.HistoryStart(ctx)
	if err != nil {
		return fmt.Errorf("showback: read the history's start: %w", err)
	}
	if !start.IsZero() && !to.After(start) {
		return qm.Errorf(qm.EINVALID, "there is no history for %s: the first lease was asked for in %s.", w, WeekOf(start, loc))
	}
	return nil
}

// ResolveTeam finds a team by name: one the policy lists, or one that has had leases (a team the
// policy does not list runs on the default quota); or by its channel (#vision-gpu), as chat takes
// a team. Anything else is refused with the teams there are.
func (s *Service) ResolveTeam(ctx context.Context, name string) (string, error) {
	name = nfc.Name(name) // as typed, perhaps with combining accents (macOS copy-paste)
	if t, ok := s.Policy.Team(name); ok {
		return t.Name, nil
	}
	names, err := s.TeamNames(ctx)
	if err != nil {
		return "", err
	}
	if strings.HasPrefix(name, "#") {
		var of []string // the teams whose channel it is
		for _, t := range s.Policy.Teams {
			if t.Channel != "" && policy.ChannelKey(t.Channel) == policy.ChannelKey(name) {
				of = append(of, t.Name)
			}
		}
		switch len(of) {
		case 1:
			return of[0], nil
		case 0:
			if team, channel := s.Policy.TeamMeant(name); team != "" {
				return "", qm.Errorf(qm.ENOTFOUND, "%s is the channel of no team; did you mean %s, the channel of team %s?", policy.Quoted(name, 40), channel, team)
			}
			return "", qm.Errorf(qm.ENOTFOUND, "%s is the channel of no team; %s %s.", policy.Quoted(name, 40), policy.Agree(len(names), "the team is", "the teams are"), policy.FewNames(name, names, "and"))
		}
		return "", qm.Errorf(qm.ENOTFOUND, "%s is the channel of teams %s; name one of them.", policy.Quoted(name, 40), policy.JoinList(of, "and"))
	}
	for _, n := range names {
		if policy.SameName(n, name) {
			return n, nil
		}
	}
	if team, _ := s.Policy.TeamMeant(name); team != "" {
		return "", qm.Errorf(qm.ENOTFOUND, "there is no team %s; did you mean %s?", policy.Quoted(name, 40), team)
	}
	return "", qm.Errorf(qm.ENOTFOUND, "there is no team %s; %s %s.", policy.Quoted(name, 40), policy.Agree(len(names), "the team is", "the teams are"), policy.FewNames(name, names, "and"))
}

// TeamNames lists the teams the policy lists and those that have had leases, by name.
func (s *Service) TeamNames(ctx context.Context) ([]string, error) {
	leased, err := s.Source.LeaseTeams(ctx)
	if err != nil {
		return nil, fmt.Errorf("showback: read the teams: %w", err)
	}
	seen := map[string]bool{}
	var out []string
	for _, t := range s.Policy.Teams {
		seen[strings.ToLower(t.Name)] = true
		out = append(out, t.Name)
	}
	for _, t := range leased {
		if !seen[strings.ToLower(t)] {
			seen[strings.ToLower(t)] = true
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out, nil
}
