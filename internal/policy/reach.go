package policy

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
)

// Reach is how far a request of one class goes without approval for a plain member of one team
// (no budget owner of it, in its groups, holding nothing): what the catalog and /gpu policy say
// instead of the class's max_gpus and max_duration alone, where an exception rule stops a
// request short of them.
type Reach struct {
	// GPUs is the most GPUs (for a short time) no rule sends to approval, counting up from 1;
	// GPUsRule the rule that sends one more to approval, where GPUs is under the class's max_gpus.
	GPUs     int
	GPUsRule string
	// Duration is the longest time (for 1 GPU) no rule sends to approval; DurationRule the rule
	// that sends a longer one, where Duration is under the class's max_duration.
	Duration     time.Duration
	DurationRule string
	// BothRule, when set, is the rule that sends GPUs for Duration to approval, though each alone
	// goes without it.
	BothRule string
	// ByUser: a budget owner of the team is answered otherwise than a plain member, so the rules
	// look at who asks.
	ByUser bool
	// Undecided: a rule could not be evaluated on the probe; nothing is said beyond the class's
	// limits.
	Undecided bool
}

// Limited is whether the rules stop a request short of the class's own limits.
func (r Reach) Limited() bool { return r.GPUsRule != "" || r.DurationRule != "" || r.BothRule != "" }

// reachCache keeps the reaches computed, per class and team, for as long as the policy is loaded.
type reachCache struct {
	mu sync.Mutex
	m  map[[4]string]Reach
}

// reachProbeMaxGPUs bounds the GPU counts probed, so that a class with a huge max_gpus stays fast.
const reachProbeMaxGPUs = 512

// ReachFor is how far a request of class goes without approval for a plain member of team ("" for
// a team the policy does not list), from the exception rules, probed one GPU count and duration at
// a time. ok is false for a class that is no class of the policy.
func (p *Policy) ReachFor(class, team string) (Reach, bool) {
	return p.ReachCounted(class, team, nil)
}

// ReachCounted is ReachFor where a request for n GPUs of the class is seen by the rules as
// counted(n) GPUs (the whole nodes it takes, as the service counts them); nil counts n as n. A
// service passes the same counted for a class every time: the answer is kept.
func (p *Policy) ReachCounted(class, team string, counted func(n int) int) (Reach, bool) {
	return p.ReachAs(class, team, "", nil, counted)
}

// ReachAs is ReachCounted for a member of team named name (their email, in any case; "": a
// plain member's) in groups (the asker's own, in any case, as their identity gives them; nil:
// the team's idp_groups, a plain member's), so that a rule on who asks ('contractors' in
// user.groups, user.name.endsWith('@vendor.example')) is seen as it answers them.
func (p *Policy) ReachAs(class, team, name string, groups []string, counted func(n int) int) (Reach, bool) {
	c, ok := p.Class(class)
	if !ok {
		return Reach{}, false
	}
	if !p.rulesReadWho() {
		team, name, groups = "", "", nil // every team's member is answered alike
	}
	name = NameKey(strings.TrimSpace(name))
	if !p.rulesReadUserName() {
		name = "" // answered as any member of their groups: one probe for them all
	}
	var own []string
	if groups != nil {
		own = []string{}
		for _, g := range groups {
			own = append(own, NameKey(g))
		}
		slices.Sort(own)
		own = slices.Compact(own)
	}
	key := [4]string{c.Name, team, "asked", strings.Join(own, "\n")}
	if own != nil {
		key[3] = "groups:" + key[3]
	}
	if name != "" {
		key[3] = "name:" + name + "\n" + key[3]
	}
	if counted != nil {
		key[2] = "counted"
	} else {
		counted = func(n int) int { return n }
	}
	if p.reach != nil {
		p.reach.mu.Lock()
		defer p.reach.mu.Unlock()
		if r, ok := p.reach.m[key]; ok {
			return r, true
		}
	}
	r := p.probeReach(c, team, name, own, false, counted)
	if owner := p.probeOwner(team); owner != "" && !r.Undecided {
		o := p.probeReach(c, team, name, own, true, counted)
		if o.Undecided {
			r = Reach{Undecided: true}
		} else if o != r {
			r.ByUser = true
		}
	}
	if r.Undecided {
		r = Reach{GPUs: c.MaxGPUs, Duration: c.MaxDuration.Duration, Undecided: true}
	}
	if p.reach != nil {
		if p.reach.m == nil {
			p.reach.m = map[[4]string]Reach{}
		}
		p.reach.m[key] = r
	}
	return r, true
}

// ReachByTeam is whether the reach of class differs between the teams of the policy (and a team
// it does not list).
// A policy of more than reachTeamsProbed teams whose rules read the team or the user counts as
// differing, rather than probing every team.
func (p *Policy) ReachByTeam(class string, counted func(n int) int) bool {
	first, ok := p.ReachCounted(class, "", counted)
	if !ok || !p.rulesReadWho() {
		return false
	}
	if len(p.Teams) > reachTeamsProbed {
		return true
	}
	for _, t := range p.Teams {
		if t == nil {
			continue
		}
		if r, _ := p.ReachCounted(class, t.Name, counted); r != first {
			return true
		}
	}
	return false
}

// reachTeamsProbed is the most teams whose reach is compared, for /gpu catalog and policy check.
const reachTeamsProbed = 200

// rulesReadWho is whether any exception rule reads the team or the user, so that its answer
// may differ between teams and people.
func (p *Policy) rulesReadWho() bool {
	for _, r := range p.Exceptions {
		if r == nil || r.ast == nil {
			continue
		}
		reads := false
		celast.PreOrderVisit(r.ast.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
			if e.Kind() == celast.IdentKind && (e.AsIdent() == "team" || e.AsIdent() == "user") {
				reads = true
			}
		}))
		if reads {
			return true
		}
	}
	return false
}

// rulesReadUserName is whether any exception rule reads user.name, so that its answer may
// differ between two people of the same groups.
func (p *Policy) rulesReadUserName() bool {
	for _, r := range p.Exceptions {
		if r == nil || r.ast == nil {
			continue
		}
		reads := false
		celast.PreOrderVisit(r.ast.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
			if e.Kind() != celast.SelectKind || e.AsSelect().FieldName() != "name" {
				return
			}
			if op := e.AsSelect().Operand(); op.Kind() == celast.IdentKind && op.AsIdent() == "user" {
				reads = true
			}
		}))
		if reads {
			return true
		}
	}
	return false
}

// probeOwner is a budget owner of team, as rules see one, or "".
func (p *Policy) probeOwner(team string) string {
	if t, ok := p.Team(team); ok {
		for _, o := range t.BudgetOwners {
			if o = NameKey(strings.TrimSpace(o)); o != "" {
				return o
			}
		}
	}
	return ""
}

// probeReach probes the rules for class c and team, as a plain member (named name, where it is
// not "") or as a budget owner, in groups (nil: the team's idp_groups).
func (p *Policy) probeReach(c *Class, team, name string, groups []string, owner bool, counted func(int) int) Reach {
	maxD := c.MaxDuration.Duration
	if maxD <= 0 || maxD > MaxLease {
		maxD = MaxLease
	}
	maxN := c.MaxGPUs
	if maxN <= 0 || maxN > reachProbeMaxGPUs {
		maxN = reachProbeMaxGPUs
	}
	rt, rc := p.RuleInputFor(team, c.Name)
	if len(rt.DataClasses) == 0 {
		rt.DataClasses = []string{"public"}
	}
	user := RuleUser{Name: "member@probe.invalid", Groups: []string{}}
	if name != "" {
		user.Name = name
	}
	if groups != nil {
		user.Groups = groups
	} else if t, ok := p.Team(team); ok {
		for _, g := range t.IDPGroups {
			user.Groups = append(user.Groups, NameKey(g))
		}
	}
	if owner {
		user.Name = p.probeOwner(team)
	}
	undecided := false
	// fired is the first rule that sends n GPUs for d to approval, or "".
	fired := func(n int, d time.Duration) string {
		n = counted(n)
		in := RuleInput{
			Request: RuleRequest{Kind: "lease", GPUs: int64(n), Class: c.Name, Duration: d, GPUHours: float64(n) * d.Hours(), DataClass: rt.DataClasses[0]},
			User:    user, Team: rt, Class: rc,
		}
		ms := p.Evaluate(context.Background(), in)
		if len(ms) == 0 {
			return ""
		}
		for _, m := range ms {
			if m.Err != nil {
				undecided = true
			}
		}
		return ms[0].Rule
	}
	short := min(time.Hour, maxD)
	r := Reach{GPUs: maxN, Duration: maxD}
	for n := 1; n <= maxN; n++ {
		if rule := fired(n, short); rule != "" {
			r.GPUs, r.GPUsRule = n-1, rule
			break
		}
	}
	ds := p.probeDurations(maxD)
	last := time.Duration(0)
	for _, d := range ds {
		rule := fired(1, d)
		if rule == "" {
			last = d
			continue
		}
		// Between the last that passed and this one, to the minute.
		lo, hi := last, d
		for hi-lo > time.Minute {
			mid := (lo + (hi-lo)/2).Truncate(time.Minute)
			if mid <= lo {
				break
			}
			if fired(1, mid) == "" {
				lo = mid
			} else {
				hi = mid
			}
		}
		r.Duration, r.DurationRule = lo, rule
		break
	}
	if r.GPUs > 0 && r.Duration > 0 {
		r.BothRule = fired(r.GPUs, r.Duration)
	}
	if undecided {
		return Reach{Undecided: true}
	}
	return r
}

// probeDurations are the durations probed up to maxD, shortest first: some common ones, those
// the rules write (and a minute either side), and maxD.
func (p *Policy) probeDurations(maxD time.Duration) []time.Duration {
	ds := []time.Duration{time.Minute, 15 * time.Minute, 30 * time.Minute}
	for _, h := range []int{1, 2, 4, 6, 8, 12, 16, 24, 36, 48, 72, 96, 120, 168, 240, 336, 504, 720} {
		ds = append(ds, time.Duration(h)*time.Hour)
	}
	for _, r := range p.Exceptions {
		if r == nil || r.ast == nil {
			continue
		}
		celast.PreOrderVisit(r.ast.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
			if e.Kind() != celast.CallKind || e.AsCall().FunctionName() != "duration" || len(e.AsCall().Args()) != 1 {
				return
			}
			arg := e.AsCall().Args()[0]
			if arg.Kind() != celast.LiteralKind {
				return
			}
			if s, ok := arg.AsLiteral().(types.String); ok {
				if d, err := time.ParseDuration(string(s)); err == nil {
					ds = append(ds, d-time.Minute, d, d+time.Minute)
				}
			}
		}))
	}
	ds = append(ds, maxD)
	var out []time.Duration
	for _, d := range ds {
		if d >= time.Minute && d <= maxD {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// reachWarnings finds the classes whose max_gpus or max_duration no plain member of any team
// reaches without approval, as a rule sends less to a budget owner for everyone: the catalog
// then says the lower figure, and the class's limit promises what the rules do not keep.
func reachWarnings(p *Policy, line func(string) int) []Problem {
	var out []Problem
	for i, c := range p.Classes {
		if c == nil || c.Name == "" {
			continue
		}
		teams := []string{""}
		if p.rulesReadWho() {
			if len(p.Teams) > reachTeamsProbed {
				continue // too many to probe each: say nothing
			}
			for _, t := range p.Teams {
				if t != nil {
					teams = append(teams, t.Name)
				}
			}
		}
		gpus, dur := true, true
		var g, d Reach
		for _, t := range teams {
			if !gpus && !dur {
				break // the first team the class's limits are reached for ends the search
			}
			r, ok := p.ReachFor(c.Name, t)
			if !ok || r.Undecided || r.ByUser {
				gpus, dur = false, false
				break
			}
			if r.GPUsRule == "" || r.GPUs == 0 || c.MaxGPUs <= 0 || p.readsChoice(r.GPUsRule) {
				gpus = false
			} else if g.GPUsRule == "" || r.GPUs > g.GPUs {
				g = r
			}
			if r.DurationRule == "" || r.Duration == 0 || c.MaxDuration.Duration <= 0 || p.readsChoice(r.DurationRule) {
				dur = false
			} else if d.DurationRule == "" || r.Duration > d.Duration {
				d = r
			}
		}
		if gpus {
			out = append(out, Problem{Line: line(fmt.Sprintf("classes.%d.max_gpus", i)),
				Msg: fmt.Sprintf("exception rule %q sends a request of class %s for more than %s to approval for every team, so its max_gpus of %d is never reached without one; the catalog says up to %s; write max_gpus: %d, or change the rule",
					g.GPUsRule, c.Name, gpuWords(g.GPUs), c.MaxGPUs, gpuWords(g.GPUs), g.GPUs)})
		}
		if dur {
			out = append(out, Problem{Line: line(fmt.Sprintf("classes.%d.max_duration", i)),
				Msg: fmt.Sprintf("exception rule %q sends a request of class %s for longer than %s to approval for every team, so its max_duration of %s is never reached without one; the catalog says up to %s; write max_duration: %s, or change the rule",
					d.DurationRule, c.Name, FormatDuration(d.Duration), FormatDuration(c.MaxDuration.Duration), FormatDuration(d.Duration), FormatDuration(d.Duration))})
		}
	}
	return out
}

// gpuWords is "1 GPU", "8 GPUs".
func gpuWords(n int) string {
	if n == 1 {
		return "1 GPU"
	}
	return fmt.Sprintf("%d GPUs", n)
}

// readsChoice is whether the rule named reads something of the request its requester chooses
// besides its class, GPUs and duration (its template, data class or exclusivity), which the probe
// holds to a plain request's: another choice may reach further, so it is not for everyone.
func (p *Policy) readsChoice(rule string) bool {
	for _, r := range p.Exceptions {
		if r == nil || r.Name != rule || r.ast == nil {
			continue
		}
		reads := false
		celast.PreOrderVisit(r.ast.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
			switch ruleVar(e) {
			case "request.template", "request.data_class", "request.reservation":
				reads = true
			}
		}))
		return reads
	}
	return false
}
