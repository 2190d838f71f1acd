package qm

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/acme/quartermaster/internal/policy"
)

// Account is a chat account: the platform, the workspace on it (a Slack team, a Discord guild)
// and the user's id there. With single sign-on it, not a profile email, is who asks.
type Account struct {
	Platform  string // slack, discord, console
	Workspace string // Slack team id, Discord guild id; empty where the platform has none
	User      string // the platform's user id, e.g. U024BE7LH
}

// String writes an account as PLATFORM:WORKSPACE:USER, the form ParseAccount reads.
func (a Account) String() string { return a.Platform + ":" + a.Workspace + ":" + a.User }

// IsZero reports whether the account is unset.
func (a Account) IsZero() bool { return a.Platform == "" && a.User == "" }

// ParseAccount reads PLATFORM:WORKSPACE:USER (the workspace may be empty, as in console::alice).
func ParseAccount(s string) (Account, error) {
	parts := strings.Split(strings.TrimSpace(s), ":")
	bad := Errorf(EINVALID, "%s is not a chat account; write it as platform:workspace:user, e.g. slack:T024BE7LD:U024BE7LH.", policy.Quoted(s, 60))
	if len(parts) != 3 {
		return Account{}, bad
	}
	a := Account{Platform: strings.ToLower(parts[0]), Workspace: parts[1], User: parts[2]}
	if !accountWord(a.Platform, false) || !accountWord(a.Workspace, true) || !accountWord(a.User, false) {
		return Account{}, bad
	}
	return a, nil
}

// accountWord reports whether s is a plausible platform, workspace or user id: letters, digits,
// and . _ - @ +, at most 128 of them.
func accountWord(s string, mayBeEmpty bool) bool {
	if s == "" {
		return mayBeEmpty
	}
	if len(s) > 128 {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case r == '.' || r == '_' || r == '-' || r == '@' || r == '+':
		default:
			return false
		}
	}
	return true
}

// AccountLink ties a chat account to the identity it proved at the organisation's identity
// provider: the subject, email and groups from the ID token, when that login happened and when
// the groups were last confirmed.
type AccountLink struct {
	Account Account
	Issuer  string
	Subject string
	Email   string // lower case: the name the domain knows the person by
	Groups  []string
	// LoginAt is the last completed login; approvals need it fresher than approvals.step_up.
	LoginAt time.Time
	// CheckedAt is when the groups were last read from the provider (at login or a re-check).
	CheckedAt time.Time
	// NoGroupsAt is when a re-check last found that the provider gave no groups at all (no
	// groups claim in a refreshed ID token or in userinfo); zero when it gave them since the
	// last login. Groups kept so are not confirmed: CheckedAt stays as it was.
	NoGroupsAt time.Time
	// Tokens are the provider's tokens, sealed (encrypted) by the login service; empty when the
	// provider gave none or they could not be kept. The store keeps them as they are given.
	Tokens []byte
}

// GroupsChange is a change of someone's groups that a re-check of their account link found,
// kept in the database with the change itself until it is told: a service stopped after it wrote
// the new groups and before it told them tells them once it runs again.
type GroupsChange struct {
	ID     int64
	Before *AccountLink // the link before the re-check (without the provider's tokens)
	// After is the link after it (without the provider's tokens); nil when the provider revoked
	// the sign-in and the account was unlinked.
	After *AccountLink
}

// LoginLink is a one-time sign-in link, bound to the chat account that asked for it. Only a hash
// of its secret is kept. Opening it starts a login at the provider, whose state is likewise
// kept as a hash; the link is done when that login completes.
type LoginLink struct {
	Hash    string // hash of the link's secret
	Account Account
	// ChatEmail is the email the chat platform shows on the account's profile, where it shows
	// one: the login must prove that same email, so a link opened by someone else links nothing.
	ChatEmail string
	// Resume is a command to run for the account once it has logged in (an approval that asked
	// for a fresh login); empty for a plain /gpu login.
	Resume    string
	CreatedAt time.Time
	ExpiresAt time.Time
	// OpenedAt is when the link was opened (it cannot be opened again); StateHash is the hash of
	// the state its login at the provider carries.
	OpenedAt  time.Time
	StateHash string
	// DoneAt is when the login completed, or was refused for good.
	DoneAt time.Time
}

// MayApprove reports whether approver may decide exceptions of team: an approver entry in the
// policy names them or one of their groups (read from the directory).
func (s *Service) MayApprove(ctx context.Context, approver, team string) bool {
	if s.Policy.IsApprover(approver, team) {
		return true
	}
	return s.Policy.MayApprove(approver, s.groupsOf(ctx, approver), team)
}

// groupsOf is user's groups in the directory; none when it does not know them.
func (s *Service) groupsOf(ctx context.Context, user string) []string {
	if s.Directory == nil {
		return nil
	}
	groups, _ := s.Directory.Groups(ctx, CanonicalUser(user))
	return s.Policy.GroupNames(groups)
}

// IsPlatformAdmin reports whether user sees every team's showback and lease. Until the policy
// lists platform admins of its own, they are its fallback approvers, named in person or by group:
// the people who already decide for teams that have no budget owner.
func (s *Service) IsPlatformAdmin(ctx context.Context, user string) bool {
	fa := s.Policy.Approvals.FallbackApprovers
	return policy.Contains(fa, user) || policy.Intersects(fa, s.groupsOf(ctx, user))
}

// OwnedTeams lists the teams whose budget owners name user, in person or by one of their groups.
func (s *Service) OwnedTeams(ctx context.Context, user string) []string {
	groups := s.groupsOf(ctx, user)
	var out []string
	for _, t := range s.Policy.Teams {
		if policy.Contains(t.BudgetOwners, user) || policy.Intersects(t.BudgetOwners, groups) {
			out = append(out, t.Name)
		}
	}
	return out
}

// People are who a name in the policy (a budget owner, an approver) reaches: the name itself when
// it is a person (an email) or a channel (#name); a group's members the directory knows. A group
// whose members the directory does not know (or cannot list) reaches nobody: its name is no
// recipient, for a chat platform would take it for a channel of that name.
func (s *Service) People(name string) []string {
	if strings.Contains(name, "@") || strings.HasPrefix(name, "#") {
		return []string{name}
	}
	ml, lists := s.Directory.(MemberLister)
	if !lists {
		return nil
	}
	var out []string
	members := ml.Members(name)
	if path := "/" + name; s.Policy.GroupName(path) == name {
		// A provider that sends group paths lists the group's members under /name.
		members = append(members, ml.Members(path)...)
	}
	for _, m := range members {
		if m = CanonicalUser(m); !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// unreachable logs, once per name while the service runs, that the policy's name (a group of
// the team's budget owners, or of the fallback approvers when team is "") reaches nobody, and
// what to set.
func (s *Service) unreachable(name, team string) {
	if _, logged := s.unreachableNames.LoadOrStore(policy.NameKey(name), true); logged {
		return
	}
	where := "approvals.fallback_approvers"
	if team != "" {
		where = "the budget_owners of team " + team
	}
	s.log().Warn(fmt.Sprintf("%s names %s, which is neither a person (an email) nor a channel (#name), and the directory knows none of its members, so notices for it go to nobody there: name its people by email in %s (or, with single sign-on, they are known once they sign in with /gpu login)", where, name, where),
		"team", team)
}
