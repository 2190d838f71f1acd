package commands

import (
	"context"
	"slices"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/policy"
)

// Which teams a command's team parameter takes from the person who types it (Param.Teams), as the
// adapters that suggest teams read it.
const (
	TeamsCharged = "charged" // their own, as a request charges them (/gpu request, submit, quota request)
	TeamsQuota   = "quota"   // any team's quota: their own, the teams whose budget they own, every other (/gpu quota)
	TeamsReport  = "report"  // the teams whose showback they see: every team for a platform admin, a budget owner's own (/gpu report)
)

// TeamsFor are the teams a command's team parameter takes from user (which: Param.Teams), as the
// command decides them, their own first, each once; mine is how many of them are user's own
// teams (they come first; the first of them is what a request naming no team is charged to, and
// /gpu quota shows). Nobody the directory does not know has teams to name.
func (b *Bot) TeamsFor(ctx context.Context, user, which string) (teams []string, mine int) {
	if b.Svc == nil || b.pol() == nil {
		return nil, 0
	}
	id, err := b.Svc.Resolve(ctx, user)
	if err != nil {
		return nil, 0
	}
	own := id.Teams
	var rest []string
	switch which {
	case TeamsCharged:
	case TeamsQuota:
		if owned := b.ownedInNoTeam(ctx, id, user); len(owned) > 0 {
			// A budget owner in no team of the policy: /gpu quota speaks of the teams they own,
			// not of the one their directory group would make them.
			own = nil
		}
		rest = append(b.Svc.OwnedTeams(ctx, user), b.pol().TeamNames()...)
	case TeamsReport:
		seen := b.Svc.OwnedTeams(ctx, user)
		if b.Svc.IsPlatformAdmin(ctx, user) {
			seen = b.pol().TeamNames()
		}
		// Their own teams first where they see them; the report of another is refused.
		own = slices.DeleteFunc(slices.Clone(own), func(t string) bool { return !policy.Contains(seen, t) })
		rest = seen
	default:
		return nil, 0
	}
	for _, t := range append(slices.Clone(own), rest...) {
		if !slices.ContainsFunc(teams, func(o string) bool { return policy.SameName(o, t) }) {
			teams = append(teams, t)
		}
	}
	return teams, len(own)
}

// DataClasses are the data classes of the policy's teams, each once, in the policy's order (a team
// without data_classes is cleared for public data): the ones a request may name that some team is
// cleared for.
func (b *Bot) DataClasses() []string {
	var out []string
	for _, t := range b.pol().Teams {
		out = addDataClasses(out, b.Svc.DataClassesOf(t.Name))
	}
	return out
}

// DataClassesFor are DataClasses with user's teams' first, their first team's first (the default
// of a request naming none); mine is how many are their teams'. Nobody the directory does not know
// is told the policy's data classes, as they are not told its rules.
func (b *Bot) DataClassesFor(ctx context.Context, user string) (classes []string, mine int) {
	if b.Svc == nil || b.pol() == nil {
		return nil, 0
	}
	id, err := b.Svc.Resolve(ctx, user)
	if err != nil {
		return nil, 0
	}
	for _, t := range id.Teams {
		classes = addDataClasses(classes, b.Svc.DataClassesOf(t))
	}
	mine = len(classes)
	return addDataClasses(classes, b.DataClasses()), mine
}

// FormTeams are the teams a request form offers req's person, as a command would know them (with
// single sign-on, by the email their sign-in proved, whatever the chat shows): TeamsFor with
// TeamsCharged, the teams a request may charge, the first the one a request naming none is
// charged to. None for someone not signed in, or whom the directory does not know.
func (b *Bot) FormTeams(ctx context.Context, req bot.Request) (teams []string, mine int) {
	user, ok := b.signedIn(ctx, req)
	if !ok {
		return nil, 0
	}
	return b.TeamsFor(ctx, user, TeamsCharged)
}

// FormDataClasses are the data classes a request form offers req's person, known as FormTeams
// knows them: DataClassesFor, their teams' first.
func (b *Bot) FormDataClasses(ctx context.Context, req bot.Request) (classes []string, mine int) {
	user, ok := b.signedIn(ctx, req)
	if !ok {
		return nil, 0
	}
	return b.DataClassesFor(ctx, user)
}

// addDataClasses is to with each of dcs it lacks (as policy.NameKey compares them) added.
func addDataClasses(to, dcs []string) []string {
	for _, dc := range dcs {
		if !slices.ContainsFunc(to, func(o string) bool { return policy.NameKey(o) == policy.NameKey(dc) }) {
			to = append(to, dc)
		}
	}
	return to
}
