package commands

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/templates"
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
// and exclusive as typed. An estimate's GPUs and length stay as typed wherever an estimate takes
// them (estimateTakes), past the class's max_gpus and max_duration too. Any other example, which
// a refusal brings of its own, stays as it is, but for the data class typed, added to a request
// the refusal brings (the one that fits the quota).
func (b *Bot) typedExample(ctx context.Context, ex string) string {
	c, ok := ctx.Value(typedKey{}).(Command)
	if !ok {
		return ex
	}
	if c.Verb == "request" && c.Template != "" && b.Templates != nil {
		// A template's refusals write their examples as /gpu submit does; the user typed a request.
		if tp, err := b.Templates.Catalog.Get(c.Template); err == nil {
			if r := b.templateRequest(ctx, c, tp, ex); r != "" {
				return r
			}
		}
	}
	s, ok := Lookup(c.Verb)
	if !ok || len(s.Examples) == 0 {
		return ex
	}
	general := ex == s.Examples[0]
	if !general && !(c.Verb == "request" && ex == dataExample) {
		if c.Verb == "request" && strings.HasPrefix(ex, "/gpu request ") && !strings.Contains(ex, " data ") &&
			c.DataClass != "" && policy.ValidDataClass(c.DataClass) {
			// A refusal's own request (the one that fits the quota) for the data class typed.
			return ex + " data " + c.DataClass
		}
		return ex
	}
	team := b.typedTeam(c)
	cl := b.typedClass(ctx, c.Class, team)
	var parts []string
	switch c.Verb {
	case "request":
		gpus, d := b.typedGPUs(cl, c.GPUs), typedDuration(cl, c.Duration)
		// Too many GPUs for the class or the cluster: as many as are granted at once, within
		// what the team's quota leaves; where it leaves none, the quota request that helps. Any
		// length within the week's GPU-hours left.
		sized := gpus < c.GPUs
		switch g, dd, fits := b.fitQuota(ctx, c, team, cl.Name, gpus, d, sized, nil); {
		case fits:
			gpus, d = g, dd
		case sized:
			return qm.QuotaRequestExample(gpus, cl.Name, team)
		}
		parts = []string{"/gpu request", fmt.Sprint(gpus), cl.Name, "for", policy.FormatDuration(d)}
		if c.Template != "" && b.Templates != nil {
			if tp, err := b.Templates.Catalog.Get(c.Template); err == nil {
				parts = append(parts, "template", c.Template)
				// Only the parameters that are right: one the template does not have, or a value
				// it does not take, would be refused next.
				rest := strings.TrimPrefix(KeepParams(tp, RightParams(tp, c.Params), "/gpu submit "+tp.Name), "/gpu submit "+tp.Name)
				if rest = strings.TrimSpace(rest); rest != "" {
					parts = append(parts, rest)
				}
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
		// An estimate only prices what it is asked: GPUs and a length it takes stay as typed,
		// beyond the class's max_gpus and max_duration too (a request of them would wait for a
		// decision, which the estimate is not).
		if b.estimateTakes(cl, c.GPUs, c.Duration, c.Exclusive) {
			parts = []string{"/gpu estimate", fmt.Sprint(c.GPUs), cl.Name, policy.FormatDuration(c.Duration)}
			break
		}
		gpus, d := b.typedGPUs(cl, c.GPUs), typedDuration(cl, c.Duration)
		if b.estimateTakes(cl, c.GPUs, d, c.Exclusive) {
			gpus = c.GPUs // only the length was wrong (none, or longer than any lease)
		} else if b.estimateTakes(cl, gpus, c.Duration, c.Exclusive) {
			d = c.Duration // only the GPUs were wrong
		}
		if gpus < c.GPUs || c.Duration > d {
			// Cut down to size: to what a request would be granted at once, as the request's example.
			if g, dd, fits := b.fitQuota(ctx, c, "", cl.Name, gpus, d, true, nil); fits {
				gpus, d = g, dd
			}
		}
		parts = []string{"/gpu estimate", fmt.Sprint(gpus), cl.Name, policy.FormatDuration(d)}
	case "quota-request":
		parts = []string{"/gpu quota request", fmt.Sprintf("+%d", max(1, c.GPUs)), cl.Name}
		if c.Duration >= time.Hour && c.Duration <= qm.MaxQuotaIncrease { // what an increase may last
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

// typedClass is the class typed where the policy has it, else the class nearest to it, as "did
// you mean" finds one (nearest), else the first class in which team (the team typed; "": the
// asker's first) has GPUs, as examples name it.
func (b *Bot) typedClass(ctx context.Context, name, team string) *policy.Class {
	if cl, ok := b.pol().Class(name); ok && name != "" {
		return cl
	}
	if near := nearest(name, b.pol().ClassNames()); near != "" && name != "" {
		if cl, ok := b.pol().Class(near); ok {
			return cl
		}
	}
	if cl := b.classStarting(name); cl != nil {
		return cl
	}
	if team != "" {
		q := b.pol().QuotaFor(team)
		for _, c := range b.pol().Classes {
			if q.GPUs[c.Name] > 0 {
				return c
			}
		}
	}
	cl := b.pol().Classes[0]
	if name, ok := ctx.Value(exampleClassKey{}).(string); ok {
		if c, ok := b.pol().Class(name); ok {
			cl = c
		}
	}
	return cl
}

// classStarting is the one class whose name begins with name up to a - or _ of it (h200 for
// h200-sxm), or whose name name begins with up to a - or _ of name's (h200-sxm-141g); nil where
// no class, or more than one, is.
func (b *Bot) classStarting(name string) *policy.Class {
	name = strings.ToLower(name)
	if name == "" {
		return nil
	}
	starts := func(long, short string) bool {
		return len(long) > len(short) && strings.HasPrefix(long, short) && (long[len(short)] == '-' || long[len(short)] == '_')
	}
	var found *policy.Class
	for _, c := range b.pol().Classes {
		if c == nil || !starts(c.Name, name) && !starts(name, c.Name) {
			continue
		}
		if found != nil {
			return nil
		}
		found = c
	}
	return found
}

// chargedTeam is team, else the team a request of c's asker that names none is charged to (as
// the request picks it); "" where that is not known.
func (b *Bot) chargedTeam(c Command, team string) string {
	if team != "" || c.Who == nil || b.Svc == nil {
		return team
	}
	t, err := b.Svc.TeamFor(*c.Who, "")
	if err != nil {
		return ""
	}
	return t
}

// fitQuota is gpus GPUs of class for d as the quota of team (the team typed; "": the one the
// request is charged to) grants them without a decision, counted as the quota counts them (the
// whole nodes an exclusive request, or one larger than a node, takes): where atOnce, no more GPUs
// than it leaves of the class now; and within the GPU-hours its week has left, a shorter length (to the
// minute), else, where not even a minute of gpus GPUs is left, fewer GPUs. Fewer GPUs are only
// counts that takes (nil: any) says the lease can hold (a template over several nodes takes
// few); where none is, the GPUs stay and only the week is fitted. fits is false where none fits
// (the quota request then helps); gpus and d stay as they are where the quota is not known or
// gpus is 0 (a job that uses no GPU).
func (b *Bot) fitQuota(ctx context.Context, c Command, team, class string, gpus int, d time.Duration, atOnce bool, takes func(int) bool) (int, time.Duration, bool) {
	team = b.chargedTeam(c, team)
	if gpus <= 0 || team == "" || b.Svc == nil || b.Svc.Store == nil {
		return gpus, d, true
	}
	u, q, err := b.Svc.TeamUsage(ctx, team)
	if err != nil {
		return gpus, d, true
	}
	// Its length fitted to each week it reaches, from now: the hours of each within what that
	// week has left.
	held := qm.QuotaHeld{Team: team, Class: class, Held: u.GPUs[class], Limit: q.GPUs[class],
		Week: u.GPUHoursWeek, WeekLimit: q.GPUHoursPerWeek, Rooms: b.Svc.WeekRooms(u, q, u.At(), d), WeekFrom: u.At()}
	fit := func(atOnce bool) (int, time.Duration, bool) {
		held.WeekOnly = !atOnce
		// Each count as the quota counts it: the whole nodes an exclusive request, or one larger
		// than a node, takes.
		if g, dd, ok := b.Svc.WithinQuota(&held, class, gpus, d, c.Exclusive, takes); ok {
			return g, dd, true
		}
		return gpus, d, false
	}
	if g, dd, ok := fit(atOnce); ok || !atOnce || held.Limit-held.Held < 1 {
		return g, dd, ok
	}
	// The quota leaves GPUs at once, but no count the lease can hold: the week alone.
	return fit(false)
}

// typedTeam is the team typed where the asker is in it, else the one of the asker's teams nearest
// to it (as "did you mean" finds one), else "".
func (b *Bot) typedTeam(c Command) string {
	if c.Team == "" || c.Who == nil {
		return ""
	}
	for _, t := range c.Who.Teams {
		if policy.SameName(t, c.Team) {
			return t
		}
	}
	return nearest(c.Team, c.Who.Teams)
}

// typedGPUs is n where class cl and the cluster allow it: more than the class's max_gpus or the
// GPUs the cluster has of it become the fewer of those, fewer than 1 become 1.
func (b *Bot) typedGPUs(cl *policy.Class, n int) int {
	limit := qm.MaxRequestGPUs
	if cl.MaxGPUs > 0 {
		limit = min(limit, cl.MaxGPUs)
	}
	if b.Svc != nil && b.Svc.Backend != nil {
		if capa := b.Svc.CapacityOf(cl.Name); capa > 0 {
			limit = min(limit, capa)
		}
	}
	return max(1, min(n, limit))
}

// estimateTakes reports whether an estimate of n GPUs of class cl for d takes them as the
// service checks an estimate's shape: at least one GPU and no more than any lease may have or the
// cluster has of the class (counted in the whole nodes it would take, exclusive or not), and a
// length from a minute to the longest any lease lasts.
func (b *Bot) estimateTakes(cl *policy.Class, n int, d time.Duration, exclusive bool) bool {
	if n < 1 || n > qm.MaxRequestGPUs || d < time.Minute || d > qm.MaxRequestDuration {
		return false
	}
	if b.Svc == nil || b.Svc.Backend == nil {
		return true
	}
	capa := b.Svc.CapacityOf(cl.Name)
	return capa <= 0 || n <= capa && b.Svc.CountedGPUs(cl.Name, n, exclusive) <= capa
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

// templateRequest is ex, a refusal's example of template tp in /gpu submit's words (/gpu submit
// TP class=C gpus=N team=T for=D k=v … data X), written as the request with a template the user
// typed: /gpu request N C for D template TP k=v … team T data X exclusive. What ex leaves out is
// what was typed where it is right: the class where the policy has it, the GPUs within the
// class (none for a template that uses no GPU), the length within its max_duration, the team
// where the asker is in it, the data class, exclusive, and each template parameter that is right
// (ex's over them). "" where ex is no example of tp, or one this cannot rewrite.
func (b *Bot) templateRequest(ctx context.Context, c Command, tp *templates.Template, ex string) string {
	rest, ok := strings.CutPrefix(ex, "/gpu submit "+tp.Name)
	if !ok || rest != "" && rest[0] != ' ' {
		return ""
	}
	class, gpus, team, length, data, exclusive := "", 0, "", "", "", c.Exclusive
	set := map[string]string{}
	ws := words(rest) // a quoted value (msg="a b") is one word, as the parser reads it
	for i := 0; i < len(ws); i++ {
		w := ws[i]
		k, v, isParam := strings.Cut(w, "=")
		switch {
		case w == "data" && i+1 < len(ws):
			i++
			data = ws[i]
		case w == "exclusive":
			exclusive = true
		case !isParam:
			return ""
		case k == "class":
			class = v
		case k == "gpus":
			n, err := strconv.Atoi(v)
			if err != nil {
				return ""
			}
			gpus = n
		case k == "team":
			team = v
		case k == "for":
			length = v
		default:
			set[k] = v
		}
	}
	cl, typedCl := b.pol().Class(c.Class)
	if class == "" && typedCl && c.Class != "" {
		class = cl.Name
	}
	if k, ok := b.pol().Class(class); ok {
		cl = k
	} else {
		cl = &policy.Class{}
	}
	if gpus == 0 && c.GPUs > 0 && !tp.CPUOnly() { // a template that uses no GPU asks for none
		gpus = c.GPUs
		if class != "" {
			gpus = b.typedGPUs(cl, c.GPUs)
		}
	}
	if length == "" && c.Duration > 0 {
		length = policy.FormatDuration(typedDuration(cl, c.Duration))
	}
	if team == "" {
		team = b.typedTeam(c)
	}
	if data == "" && c.DataClass != "" && policy.ValidDataClass(c.DataClass) {
		data = c.DataClass
	}
	// The user's parameters that are right on their own, ex's over them.
	params := RightParams(tp, c.Params)
	sub, ok := withParams(tp, params, nil, set)
	if !ok {
		if sub, ok = withParams(tp, templates.Params{}, nil, set); !ok {
			return ""
		}
	}
	if class != "" && gpus > 0 {
		// Within what the team's quota leaves: the GPUs at once where they were cut down to
		// size, and the week's GPU-hours.
		d := typedDuration(cl, 0)
		if length != "" {
			if v, err := parseDur(length); err == nil {
				d = v
			}
		}
		ps, _ := tp.ParseParams(words(strings.TrimPrefix(sub, "/gpu submit "+tp.Name)))
		sized := gpus < c.GPUs
		switch g, dd, fits := b.fitQuota(ctx, c, team, cl.Name, gpus, d, sized, b.Templates.takes(tp, ps, cl.Name)); {
		case fits && (g != gpus || dd != d):
			gpus, length = g, policy.FormatDuration(dd)
		case !fits && sized:
			return qm.QuotaRequestExample(gpus, cl.Name, team)
		}
	}
	parts := []string{"/gpu request"}
	if gpus > 0 {
		parts = append(parts, strconv.Itoa(gpus))
	}
	if class != "" {
		parts = append(parts, class)
	}
	if length != "" {
		parts = append(parts, "for", length)
	}
	parts = append(parts, "template", tp.Name)
	if ps := strings.TrimSpace(strings.TrimPrefix(sub, "/gpu submit "+tp.Name)); ps != "" {
		parts = append(parts, ps)
	}
	if team != "" {
		parts = append(parts, "team", team)
	}
	if data != "" {
		parts = append(parts, "data", data)
	}
	if exclusive {
		parts = append(parts, "exclusive")
	}
	return strings.Join(parts, " ")
}

// noClass is the refusal of c, whose class is no class of the catalog: the catalog's classes,
// the one its example names first (typedClass: the one a reader takes the typo for, else the
// asker's), so that the sentence and the example follow one rule, with the command's own
// example, which typedExample writes as typed with that class.
func (b *Bot) noClass(ctx context.Context, c Command) error {
	typed := c.Class
	if c.classTyped != "" {
		typed = c.classTyped
	}
	ex := ""
	if s, ok := Lookup(c.Verb); ok && len(s.Examples) > 0 {
		ex = s.Examples[0]
	}
	first := b.typedClass(ctx, c.Class, b.typedTeam(c)).Name
	return qm.Invalid(ex, "There is no class %s; the catalog has %s.", policy.Quoted(typed, 40), b.classesFirst(first))
}

// classesFirst names the catalog's classes as a refusal lists them, first first ("": in the
// policy's order).
func (b *Bot) classesFirst(first string) string {
	names := b.pol().ClassNames()
	if i := slices.Index(names, first); i > 0 {
		names = append(append([]string{first}, names[:i]...), names[i+1:]...)
	}
	return policy.SomeNames(names, 3, "and")
}

// unknownClass reports whether c names a class that is no class of the catalog.
func (b *Bot) unknownClass(c Command) bool {
	if c.Class == "" {
		return false
	}
	_, ok := b.pol().Class(c.Class)
	return !ok
}
