package qm

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/acme/quartermaster/internal/policy"
)

// Identity is a user resolved against the directory and the policy.
type Identity struct {
	User   string
	Groups []string
	Teams  []string
	// GroupsAt is when the identity provider gave the groups (single sign-on: the sign-in or the
	// last re-check); zero where they come from the policy's directory.
	GroupsAt time.Time
}

// CanonicalUser is how the service writes a person: trimmed and in lower case, so that
// Alice@Acme.Example and alice@acme.example are one person in every lease, list and check.
// Only A to Z are lowered: a name written with a Kelvin sign (K) is not the name written with k.
func CanonicalUser(user string) string { return policy.NameKey(strings.TrimSpace(user)) }

// SameUser reports whether two names are the same person.
func SameUser(a, b string) bool { return CanonicalUser(a) == CanonicalUser(b) }

// Resolve looks a user up; a user who is not in the directory is refused with a sentence saying so.
func (s *Service) Resolve(ctx context.Context, user string) (Identity, error) {
	user = CanonicalUser(user)
	var groups []string
	var at time.Time
	var ok bool
	if d, dated := s.Directory.(GroupsAsOf); dated {
		groups, at, ok = d.GroupsAsOf(ctx, user)
	} else {
		groups, ok = s.Directory.Groups(ctx, user)
	}
	if !ok {
		if ex, ok := s.Directory.(UnknownExplainer); ok {
			if err := ex.Unknown(ctx, user); err != nil {
				return Identity{}, err
			}
		}
		return Identity{}, Errorf(EFORBIDDEN, "%s is not in the directory, so Quartermaster does not know your team; ask a platform admin to add you (or use /gpu login where SSO is set up).", user).
			WithExample("/gpu help") // the commands that need no team are what works meanwhile
	}
	// Groups as the policy names them: a provider's /team-a is the policy's team-a (GroupName),
	// for teams, rules and approvers alike.
	groups = s.Policy.GroupNames(groups)
	id := Identity{User: user, Groups: groups, GroupsAt: at}
	for _, t := range s.Policy.TeamsOf(groups) {
		id.Teams = append(id.Teams, t.Name)
	}
	named := groups
	if !at.IsZero() {
		// An identity provider gives groups in no set order (Keycloak's realm roles, Entra ID's
		// group ids): the same groups in another order, at the next re-check or sign-in, must not
		// move the person to another team, so its groups are taken in the order of their names.
		named = slices.Clone(groups)
		slices.SortFunc(named, func(a, b string) int {
			return cmp.Or(strings.Compare(policy.NameKey(a), policy.NameKey(b)), strings.Compare(a, b))
		})
	}
	if first := policy.FirstTeamGroup(named); len(id.Teams) == 0 && first != "" {
		// A team not listed in the policy gets the default quota; it is named after the first group
		// (of the directory's, as written; of an identity provider's, in the order of their names),
		// unless that group looks like a listed team's name: team membership comes only from a
		// team's idp_groups, never from a name that looks alike. Keycloak's built-in roles, which
		// everyone in the realm has, name no team (policy.BuiltInRole).
		if name, ok := s.Policy.UnlistedTeam(first); ok {
			id.Teams = []string{name}
		}
	}
	return id, nil
}

// TeamFor is the team a request of id that names team asked ("": none) is charged to, or the
// refusal of asked: the rule a request applies, for what speaks of a request before it is made.
func (s *Service) TeamFor(id Identity, asked string) (string, error) { return s.teamFor(id, asked) }

// teamFor picks the team a request is charged to.
func (s *Service) teamFor(id Identity, asked string) (string, error) {
	if len(id.Teams) == 0 && !id.GroupsAt.IsZero() && len(id.Groups) == 0 {
		return "", Errorf(EFORBIDDEN, "%s belongs to no team: the identity provider gave no groups for you at %s; if you were added to a team's group since, /gpu login reads your groups again, else ask a platform admin to add you to a team's group.",
			id.User, s.groupsAt(id)).WithExample("/gpu login")
	}
	if len(id.Teams) == 0 && !id.GroupsAt.IsZero() {
		// Groups read from the identity provider may be older than a change made there: signing
		// in again reads them at once, which is the first thing to try.
		return "", Errorf(EFORBIDDEN, "%s belongs to no team: the groups the identity provider gave at %s name none of the policy's teams; if you were added to a team's group since, /gpu login reads your groups again, else ask a platform admin to add your group to a team in the policy.",
			id.User, s.groupsAt(id)).WithExample("/gpu login")
	}
	if len(id.Teams) == 0 {
		// Nothing that charges a team can work; the published rules name the teams and whom to ask.
		return "", Errorf(EFORBIDDEN, "%s belongs to no team; ask a platform admin to add your group to a team in the policy.", id.User).
			WithExample("/gpu policy")
	}
	if asked == "" {
		return id.Teams[0], nil
	}
	for _, t := range id.Teams {
		if policy.SameName(t, asked) {
			return t, nil
		}
	}
	if _, ok := s.Policy.Team(asked); !ok {
		return "", Errorf(EINVALID, "there is no team %s; your teams: %s.", policy.Quoted(asked, 40), strings.Join(id.Teams, ", "))
	}
	if !id.GroupsAt.IsZero() {
		return "", Errorf(EFORBIDDEN, "you are not a member of team %s; your teams: %s, from the groups the identity provider gave at %s; if you were added to its group since, /gpu login reads your groups again.",
			asked, strings.Join(id.Teams, ", "), s.groupsAt(id)).WithExample("/gpu login")
	}
	return "", Errorf(EFORBIDDEN, "you are not a member of team %s; your teams: %s.", asked, strings.Join(id.Teams, ", "))
}

// groupsAt is when the identity provider gave id's groups, as chat writes times.
func (s *Service) groupsAt(id Identity) string {
	return id.GroupsAt.In(s.Policy.Location).Format("Mon 2 Jan 15:04 MST")
}

// DataClassesOf is a team's cleared data classes; a team the policy does not list, or lists
// without data_classes, is cleared for public data.
func (s *Service) DataClassesOf(team string) []string {
	if t, ok := s.Policy.Team(team); ok && len(t.DataClasses) > 0 {
		return t.DataClasses
	}
	return []string{"public"}
}

// Deciders are the people who decide an exception of team that requester asked for: the team's
// approvers, less the requester unless the policy allows self-approval; when that leaves nobody,
// the fallback approvers (again less the requester). An approver named by a group whose only
// member is the requester counts as the requester. Whoever can decide is named and told.
func (s *Service) Deciders(team, requester string) []string {
	if d := s.deciding(s.Policy.Approvers(team), requester); len(d) > 0 {
		return d
	}
	return s.deciding(s.Policy.Approvals.FallbackApprovers, requester)
}

// deciding is the approver entries of list that may decide a request of requester: all of them
// where the policy allows self-approval, else those that are not the requester (nor a group of
// the requester alone).
func (s *Service) deciding(list []string, requester string) []string {
	var out []string
	for _, a := range list {
		if s.Policy.Approvals.SelfApproval || !SameUser(a, requester) && !s.onlyRequester(a, requester) {
			out = append(out, a)
		}
	}
	return out
}

// onlyRequester reports whether approver names a group whose members, as far as the directory
// knows them, are the requester alone: nobody else in it could decide the request.
func (s *Service) onlyRequester(approver, requester string) bool {
	people := s.People(approver)
	if len(people) == 0 {
		return false // a group of members the directory does not know: they may decide
	}
	for _, p := range people {
		if !SameUser(p, requester) {
			return false
		}
	}
	return true
}

// nobodyDecides is the refusal of an exception that nobody could decide: team has no approver
// but the requester (and self-approval is off), and no fallback approver but the requester. It
// names what needs the approval (the rules that applied, or a quota increase) and why nobody
// is left.
func (s *Service) nobodyDecides(team, what string, ms []policy.Match) *Error {
	needs := "needs"
	if len(ms) > 0 && what == "" {
		names := make([]string, len(ms))
		for i, m := range ms {
			names[i] = m.Named()
		}
		what = "the published rule " + names[0]
		if len(names) > 1 {
			what = "the published rules " + policy.JoinList(names, "and")
			needs = "need"
		}
	}
	if what == "" {
		what = "this"
	}
	var owners []string
	if t, ok := s.Policy.Team(team); ok {
		owners = t.BudgetOwners
	}
	fallback := s.Policy.Approvals.FallbackApprovers
	var why string
	switch {
	case len(owners) == 0 && len(fallback) == 0:
		why = "it has no budget owners and the policy names no fallback approvers"
	case len(owners) == 0:
		why = "it has no budget owners, and the only fallback approver is you"
	case len(fallback) == 0:
		why = "you are its only budget owner and the policy names no fallback approvers"
	default:
		why = "you are its only budget owner and the only fallback approver too"
	}
	if len(owners)+len(fallback) > 0 {
		why += ", and nobody may decide their own requests"
	}
	return Errorf(EFORBIDDEN, "%s %s a budget owner's approval, but nobody can decide the exceptions of team %s: %s; ask a platform admin to add budget_owners to team %s or approvals.fallback_approvers to the policy.", strings.ToUpper(what[:1])+what[1:], needs, team, why, team)
}

// mayDecide says why approver may not decide an exception of team that requester asked for, or
// nil when they may: an approver of the team or a fallback approver, and not the requester
// unless the policy allows self-approval.
func (s *Service) mayDecide(ctx context.Context, approver, team, requester string, id LeaseID) error {
	who := s.Deciders(team, requester)
	if !s.MayApprove(ctx, approver, team) {
		if _, listed := s.Policy.Team(team); !listed && !SameUser(approver, requester) && s.decidesForTeamOf(ctx, approver, requester) {
			// The team was renamed or removed while its request waited (or was never listed):
			// its budget owners are not known, so the fallback approvers decide. The requester's
			// budget owner now, who tries, is told so rather than that there is no such request.
			if len(who) == 0 {
				return Errorf(EFORBIDDEN, "%s is a request of team %s, which the policy does not list (renamed or removed since it was asked), and the policy names no fallback approvers, so nobody can decide it until a platform admin adds approvals.fallback_approvers; otherwise it is denied when it times out.", id, team).WithExample("/gpu approvals")
			}
			return Errorf(EFORBIDDEN, "%s is a request of team %s, which the policy does not list (renamed or removed since it was asked), so only the fallback approvers decide it: %s.", id, team, policy.JoinList(who, "or")).WithExample("/gpu approvals")
		}
		if !SameUser(approver, requester) && !s.inTeam(ctx, approver, team) {
			return noDecision(id)
		}
		if len(who) == 0 {
			return Errorf(EFORBIDDEN, "nobody the policy names can decide %s, a request of team %s; ask a platform admin.", id, team).WithExample("/gpu status " + id.String())
		}
		// The example is what they can do: look at the request (another approval would be refused).
		return Errorf(EFORBIDDEN, "only %s can decide %s, a request of team %s.", s.namedDeciders(who, requester), id, team).WithExample("/gpu status " + id.String())
	}
	if SameUser(approver, requester) && !s.Policy.Approvals.SelfApproval {
		if len(who) == 0 {
			return Errorf(EFORBIDDEN, "you cannot decide your own request %s, and the policy names nobody else who can; ask a platform admin.", id).WithExample("/gpu status " + id.String())
		}
		return Errorf(EFORBIDDEN, "you cannot decide your own request %s; only %s can.", id, s.namedDeciders(who, requester)).WithExample("/gpu status " + id.String())
	}
	return nil
}

// namedDeciders names who decides a request of requester, joined by "or": the deciders who, and
// the fallback approvers, who may decide any team's exceptions, not only where a team has no
// budget owner; a group with the members the directory knows of it other than the requester
// (chefs-baobab (moussa@baobab.example)), as the requester reads who will decide.
func (s *Service) namedDeciders(who []string, requester string) string {
	who = slices.Clone(who)
	for _, f := range s.deciding(s.Policy.Approvals.FallbackApprovers, requester) {
		if !slices.ContainsFunc(who, func(w string) bool { return SameUser(w, f) }) {
			who = append(who, f)
		}
	}
	names := make([]string, len(who))
	for i, w := range who {
		names[i] = s.groupWithMembers(w, requester)
	}
	return policy.JoinList(names, "or")
}

// SignIns is a Directory that knows people by their sign-in at an identity provider (single
// sign-on). SignedIn says whether any chat account of user is linked to a sign-in, current or
// not: someone with none signed out, was unlinked, or had their sign-in revoked at the provider,
// and /gpu login signs them in again. (A link whose groups the provider could not confirm lately
// still counts: that is the provider failing, not the person leaving.)
type SignIns interface {
	SignedIn(ctx context.Context, user string) bool
}

// requesterAway refuses approving l, a request for a new lease, while its requester is not
// signed in (with single sign-on: their sign-in was revoked at the identity provider, or they
// signed out or were unlinked) or, without it, no longer in the directory: no new lease starts
// for them until they are back. The request still waits, and the same approval goes through
// once they are. Nil when they are known, or l starts no lease.
func (s *Service) requesterAway(ctx context.Context, l *Lease) error {
	if l.Kind != KindWorkspace || s.Directory == nil {
		return nil
	}
	switch s.away(ctx, l.User) {
	case awaySignIn:
		return Errorf(ECONFLICT, "%s still waits: %s must sign in again with /gpu login before it can be approved, since their sign-in was revoked at the identity provider or ended, and no new lease starts for them until they do.",
			l.ID, l.User).WithExample("/gpu status " + l.ID.String())
	case awayDirectory:
		return Errorf(ECONFLICT, "%s still waits: %s is no longer in the directory, so no new lease starts for them; once a platform admin adds them back, it can be approved.",
			l.ID, l.User).WithExample("/gpu status " + l.ID.String())
	}
	return nil
}

// AwayWait says what queued lease l waits for while its requester is away, where the service
// starts it itself (its job not yet in the scheduler's queue) and so holds its start until they
// are back (startQueued): "waiting for kim@example.com to sign in again with /gpu login: …".
// Empty where l does not wait for its requester.
func (s *Service) AwayWait(ctx context.Context, l *Lease) string {
	if l.State != Queued || l.Ref != "" {
		return ""
	}
	switch s.away(ctx, l.User) {
	case awaySignIn:
		return fmt.Sprintf("waiting for %s to sign in again with /gpu login: their sign-in was revoked at the identity provider or ended, and it does not start until they do; it keeps its place in the queue", l.User)
	case awayDirectory:
		return fmt.Sprintf("waiting for a platform admin to add %s back to the directory: it does not start until then; it keeps its place in the queue", l.User)
	}
	return ""
}

// absence is why no new lease starts for someone now: none (they are known), their sign-in
// (with single sign-on: revoked at the identity provider, signed out or unlinked), or the
// directory no longer knowing them (without it).
type absence int

const (
	present absence = iota
	awaySignIn
	awayDirectory
)

// away says whether user is away, as requesterAway and the start of a queued lease read it.
func (s *Service) away(ctx context.Context, user string) absence {
	if s.Directory == nil {
		return present
	}
	user = CanonicalUser(user)
	if si, ok := s.Directory.(SignIns); ok {
		if si.SignedIn(ctx, user) {
			return present
		}
		return awaySignIn
	}
	if _, ok := s.Directory.Groups(ctx, user); ok {
		return present
	}
	return awayDirectory
}

// decidesForTeamOf reports whether user may decide the exceptions of a team the policy lists that
// requester is in now: their budget owner today (in person or by group), or a fallback approver.
func (s *Service) decidesForTeamOf(ctx context.Context, user, requester string) bool {
	id, err := s.Resolve(ctx, requester)
	if err != nil {
		return false
	}
	for _, t := range id.Teams {
		if _, listed := s.Policy.Team(t); listed && s.MayApprove(ctx, user, t) {
			return true
		}
	}
	return false
}

// noDecision refuses a decision on a lease that does not exist or that the asker has no part in
// (neither its requester, nor in its team, nor one who may decide it): the same sentence for
// both, so that nobody learns which leases exist, whose team they are or who decides them by
// trying ids in turn.
func noDecision(id LeaseID) *Error {
	return Errorf(EFORBIDDEN, "there is no request %s waiting for your decision; /gpu approvals lists those that are.", id).WithExample("/gpu approvals")
}

// inTeam reports whether user is a member of team.
func (s *Service) inTeam(ctx context.Context, user, team string) bool {
	id, err := s.Resolve(ctx, user)
	if err != nil {
		return false
	}
	for _, t := range id.Teams {
		if strings.EqualFold(t, team) {
			return true
		}
	}
	return false
}

// approvalAudience is who hears of an exception: its deciders (an approver named by group is
// each member the directory knows, less the requester unless self-approval is allowed) and the
// team's channel. When no decider is anyone a notice can reach (a group whose members the
// directory does not know is nobody), the fallback approvers hear of it in their place.
func (s *Service) approvalAudience(team, requester string) []string {
	var to []string
	seen := map[string]bool{}
	add := func(who string) {
		if k := strings.ToLower(who); !seen[k] {
			seen[k] = true
			to = append(to, who)
		}
	}
	var owners []string
	if t, ok := s.Policy.Team(team); ok {
		owners = t.BudgetOwners
	}
	reach := func(deciders []string) {
		for _, d := range deciders {
			people := s.People(d)
			if len(people) == 0 && policy.Contains(owners, d) {
				s.unreachable(d, team)
			} else if len(people) == 0 {
				s.unreachable(d, "")
			}
			for _, m := range people {
				if s.Policy.Approvals.SelfApproval || !SameUser(m, requester) || SameUser(m, d) {
					add(m)
				}
			}
		}
	}
	reach(s.Deciders(team, requester))
	if len(to) == 0 {
		reach(s.deciding(s.Policy.Approvals.FallbackApprovers, requester))
	}
	if t, ok := s.Policy.Team(team); ok && t.Channel != "" {
		add(t.Channel)
	}
	return to
}

// WhoDecides names the approvers of a request of requester, joined by "or": a group with the
// members the directory knows of it (a few, then how many more), so that the requester reads
// who will decide; a group of no known member is named alone. Where none of them reaches
// anyone (groups nobody of which has signed in yet), the request went to the fallback
// approvers, who are named after them where they reach someone.
func (s *Service) WhoDecides(approvers []string, requester string) string {
	names := make([]string, 0, len(approvers))
	reached := false
	// reaches: a person or channel, or a group with members known (named with them).
	reaches := func(a, named string) bool { return named != a || strings.Contains(a, "@") || strings.HasPrefix(a, "#") }
	for _, a := range approvers {
		n := s.groupWithMembers(a, requester)
		names = append(names, n)
		reached = reached || reaches(a, n)
	}
	if !reached && len(approvers) > 0 {
		for _, f := range s.Deciders("", requester) { // the fallback approvers
			if n := s.groupWithMembers(f, requester); !policy.Contains(approvers, f) && reaches(f, n) {
				names = append(names, n)
			}
		}
	}
	return policy.JoinList(names, "or")
}

// DecidersReach reports whether a decider of a request of requester for team reaches anyone a
// notice can be sent to: a person or channel named, or a group with a member known (signed in,
// with single sign-on). Where none does, the fallback approvers are who hears of it.
func (s *Service) DecidersReach(team, requester string) bool {
	for _, d := range s.Deciders(team, requester) {
		if strings.Contains(d, "@") || strings.HasPrefix(d, "#") {
			return true
		}
		for _, p := range s.People(d) {
			if s.Policy.Approvals.SelfApproval || !SameUser(p, requester) {
				return true
			}
		}
	}
	return false
}

// WithMembers is name, and when it names a group whose members the directory lists, the group
// with them, as the approval refusals name it ("the group chefs-baobab (aminata@baobab.example,
// moussa@baobab.example)", so that a group named by a plain word, such as leads, reads as a
// group; past four, the first three "and N more"): how /gpu policy and a refused
// showback name budget owners and fallback approvers, so that a reader knows who is in it.
func (s *Service) WithMembers(name string) string { return s.groupWithMembers(name, "") }

// groupWithMembers is name, and when it names a group, "the group NAME" and its members who may
// decide a request of requester (not the requester, unless the policy allows self-approval) in
// brackets.
func (s *Service) groupWithMembers(name, requester string) string {
	if strings.Contains(name, "@") || strings.HasPrefix(name, "#") {
		return name
	}
	var people []string
	for _, p := range s.People(name) {
		if s.Policy.Approvals.SelfApproval || !SameUser(p, requester) {
			people = append(people, p)
		}
	}
	if len(people) == 0 {
		return name
	}
	slices.Sort(people)
	const few = 3
	more := ""
	if len(people) > few+1 {
		more = fmt.Sprintf(" and %d more", len(people)-few)
		people = people[:few]
	}
	return "the group " + name + " (" + strings.Join(people, ", ") + more + ")"
}
