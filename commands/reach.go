package commands

import (
	"context"
	"fmt"
	"slices"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// asker is who asks as the rules see them: their email and their groups as their identity gives
// them; "" and nil where it is not known.
type asker struct {
	name   string
	groups []string
}

// askerOf is user as the rules see them.
func (b *Bot) askerOf(ctx context.Context, user string) asker {
	if user == "" {
		return asker{}
	}
	id, err := b.Svc.Resolve(ctx, user)
	if err != nil || id.Groups == nil {
		return asker{}
	}
	return asker{name: id.User, groups: id.Groups}
}

// askerTeam is the team a command of user's is charged to when it names none, or "".
func (b *Bot) askerTeam(ctx context.Context, user string) string {
	if user == "" {
		return ""
	}
	id, err := b.Svc.Resolve(ctx, user)
	if err != nil || len(id.Teams) == 0 || len(b.ownedInNoTeam(ctx, id, user)) > 0 {
		// A budget owner in no team of the policy is in no team, as /gpu quota tells them, not in
		// the team their directory group would make them.
		return ""
	}
	return id.Teams[0]
}

// ownedInNoTeam is the teams user owns when they are a budget owner who is in no team of the
// policy (nil otherwise): /gpu quota shows those, and nothing speaks of the team their directory
// group would make them.
func (b *Bot) ownedInNoTeam(ctx context.Context, id qm.Identity, user string) []string {
	if slices.ContainsFunc(id.Teams, func(t string) bool { _, ok := b.pol().Team(t); return ok }) {
		return nil
	}
	return b.Svc.OwnedTeams(ctx, user)
}

// withoutApprovalText is how far a request of class c goes without approval for a member of team,
// as the catalog and /gpu policy say it: the class's max_gpus and max_duration, or less where an
// exception rule sends less to a budget owner, naming the rule ("up to 8 GPUs (rule big above
// that) for up to 3d"). Where the answer differs between teams it is said for team; where the
// rules look at who asks, that a budget owner may be answered otherwise. A rule the probe cannot
// decide leaves the class's limits as they are.
//
// The catalog's field says it alone ("up to 4 GPUs for up to 8h"); /gpu policy's line, with
// inLine, ends it with "without approval" ("up to 4 GPUs for 8h without approval").
func (b *Bot) withoutApprovalText(c *policy.Class, team string, who asker, inLine bool) string {
	p := b.pol()
	gpus := "up to " + qm.GPUCount(c.MaxGPUs, "")
	dur := "for up to " + policy.FormatDuration(c.MaxDuration.Duration)
	tail := ""
	if inLine {
		dur, tail = "for "+policy.FormatDuration(c.MaxDuration.Duration), " without approval"
	}
	// Rules see a request as the GPUs it is counted as: the whole nodes it takes, where it does.
	counted := func(n int) int { return b.Svc.CountedGPUs(c.Name, n, false) }
	r, ok := p.ReachCounted(c.Name, team, counted)
	if !ok || r.Undecided {
		return gpus + " " + dur + tail
	}
	// The asker's own groups or email may be answered otherwise than a plain member's (a rule on
	// 'contractors' in user.groups, or on user.name): then what they get is said, for them.
	forYou := false
	if who.groups != nil && team != "" {
		if mine, ok := p.ReachAs(c.Name, team, who.name, who.groups, counted); ok && !mine.Undecided && (mine.GPUs != r.GPUs || mine.Duration != r.Duration || mine.BothRule != r.BothRule) {
			r, forYou = mine, true
		}
	}
	text := ""
	switch {
	case r.GPUs == 0 || r.Duration == 0:
		rule := r.GPUsRule
		if r.GPUs > 0 {
			rule = r.DurationRule
		}
		none, whose := "none", "every request"
		if inLine {
			none = "nothing without approval"
		}
		if forYou {
			// Said for the asker alone: no team's or budget owner's words follow.
			return fmt.Sprintf("%s for you: rule %s sends %s of yours to a budget owner", none, rule, whose)
		}
		text = fmt.Sprintf("%s: rule %s sends %s to a budget owner", none, rule, whose)
	default:
		if r.GPUsRule != "" {
			gpus = fmt.Sprintf("up to %s (rule %s above that)", qm.GPUCount(r.GPUs, ""), r.GPUsRule)
		}
		if r.DurationRule != "" {
			dur = fmt.Sprintf("for up to %s (rule %s beyond that)", policy.FormatDuration(r.Duration), r.DurationRule)
		}
		text = gpus + " " + dur + tail
		if r.BothRule != "" {
			text += fmt.Sprintf(", but not both at once (rule %s)", r.BothRule)
		}
	}
	if forYou {
		return text + " for you"
	}
	if p.ReachByTeam(c.Name, counted) {
		if team != "" {
			text += " for team " + team
		} else {
			text += " for a team the policy does not list"
		}
	}
	if r.ByUser {
		text += "; the rules look at who asks, so a budget owner may be answered otherwise"
	}
	return text
}
