package commands

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// typedKey holds the command as typed (as far as the grammar read it), for refusals' examples.
type typedKey struct{}

// withTyped is ctx knowing the command c that was typed.
func withTyped(ctx context.Context, c Command) context.Context {
	return context.WithValue(ctx, typedKey{}, c)
}

// typedExample is the example of a refusal of a request, an estimate or a quota request that
// would show its command's general example (ex: one class, one GPU, a default length): it is
// the command the user typed instead, with only what was wrong put right, so that it is
// accepted as given. The class typed stays where the policy has it; the GPUs where the class
// and the cluster allow them (more become the most they allow, none become 1); the length where
// the class allows it (longer becomes the class's max_duration; none or no length at all, the
// default); the team where the asker is in it; the data class, the template and its parameters,
// and exclusive as typed. Any other example, which a refusal brings of its own, stays as it is.
func (b *Bot) typedExample(ctx context.Context, ex string) string {
	c, ok := ctx.Value(typedKey{}).(Command)
	if !ok {
		return ex
	}
	s, ok := Lookup(c.Verb)
	if !ok || len(s.Examples) == 0 {
		return ex
	}
	general := ex == s.Examples[0]
	if !general && !(c.Verb == "request" && ex == dataExample) {
		return ex
	}
	cl := b.typedClass(ctx, c.Class)
	team := b.typedTeam(c)
	var parts []string
	switch c.Verb {
	case "request":
		parts = []string{"/gpu request", fmt.Sprint(b.typedGPUs(cl, c.GPUs)), cl.Name, "for", policy.FormatDuration(typedDuration(cl, c.Duration))}
		if c.Template != "" && b.Templates != nil {
			if _, err := b.Templates.Catalog.Get(c.Template); err == nil {
				parts = append(append(parts, "template", c.Template), c.Params...)
			}
		}
		if team != "" {
			parts = append(parts, "team", team)
		}
		switch {
		case ex == dataExample:
			parts = append(parts, "data", b.firstDataClass(ctx, team))
		case c.DataClass != "" && policy.ValidDataClass(c.DataClass):
			parts = append(parts, "data", c.DataClass)
		}
	case "estimate":
		parts = []string{"/gpu estimate", fmt.Sprint(b.typedGPUs(cl, c.GPUs)), cl.Name, policy.FormatDuration(typedDuration(cl, c.Duration))}
	case "quota-request":
		parts = []string{"/gpu quota request", fmt.Sprintf("+%d", max(1, c.GPUs)), cl.Name}
		if c.Duration >= time.Minute && c.Duration <= qm.MaxRequestDuration {
			parts = append(parts, "for", policy.FormatDuration(c.Duration))
		}
		if team != "" {
			parts = append(parts, "team", team)
		}
		reason := c.Reason
		if reason == "" {
			reason = "paper deadline"
		}
		return strings.Join(append(parts, "because", reason), " ")
	default:
		return ex
	}
	if c.Exclusive {
		parts = append(parts, "exclusive")
	}
	return strings.Join(parts, " ")
}

// typedClass is the class typed where the policy has it, else the one examples name for the asker.
func (b *Bot) typedClass(ctx context.Context, name string) *policy.Class {
	if cl, ok := b.pol().Class(name); ok && name != "" {
		return cl
	}
	cl := b.pol().Classes[0]
	if name, ok := ctx.Value(exampleClassKey{}).(string); ok {
		if c, ok := b.pol().Class(name); ok {
			cl = c
		}
	}
	return cl
}

// typedTeam is the team typed where the asker is in it, else "".
func (b *Bot) typedTeam(c Command) string {
	if c.Team == "" || c.Who == nil {
		return ""
	}
	for _, t := range c.Who.Teams {
		if policy.SameName(t, c.Team) {
			return t
		}
	}
	return ""
}

// typedGPUs is n where class cl and the cluster allow it: more than the class's max_gpus or the
// GPUs the cluster has of it become the fewer of those, fewer than 1 become 1.
func (b *Bot) typedGPUs(cl *policy.Class, n int) int {
	limit := qm.MaxRequestGPUs
	if cl.MaxGPUs > 0 {
		limit = min(limit, cl.MaxGPUs)
	}
	if b.Svc != nil && b.Svc.Backend != nil {
		capa := 0
		for _, nd := range b.Svc.Backend.Inventory() {
			if nd.Class == cl.Name {
				capa += nd.GPUs
			}
		}
		if capa > 0 {
			limit = min(limit, capa)
		}
	}
	return max(1, min(n, limit))
}

// typedDuration is d where class cl allows it without approval: longer becomes the class's
// max_duration (or the longest any lease lasts), none or under a minute the default length.
func typedDuration(cl *policy.Class, d time.Duration) time.Duration {
	longest := qm.MaxRequestDuration
	if m := cl.MaxDuration.Duration; m > 0 {
		longest = min(longest, m)
	}
	if d < time.Minute {
		return min(qm.DefaultDuration, longest)
	}
	return min(d, longest)
}

// firstDataClass is the first data class of team ("": the asker's first team), as examples name it.
func (b *Bot) firstDataClass(ctx context.Context, team string) string {
	if team != "" && b.Svc != nil {
		return b.Svc.DataClassesOf(team)[0]
	}
	return b.expandFor(ctx, "{data}")
}
