package policy

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// SameName reports whether two names (of groups, people, teams or classes) are one: the same
// text, upper and lower case of A to Z aside. No other folding is done: a group written with a
// long s (ſ), a Kelvin sign or a Cyrillic letter is another group, however alike it looks.
func SameName(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if asciiLower(a[i]) != asciiLower(b[i]) {
			return false
		}
	}
	return true
}

func asciiLower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// ChannelKey is how a channel is written where channels are compared: as NameKey. Text comes in
// with each accented letter as one character (Unicode NFC: internal/nfc, where chat, the command
// line, Discord's channel names and the policy file are read), so that #kühlung typed as u and a
// combining diaeresis, as text copied from macOS often holds it, is the channel #kühlung, which
// it looks like.
func ChannelKey(ch string) string { return NameKey(ch) }

// NameKey is how a name is written where names are compared as text (the groups rules see,
// indexes of members, people): A to Z in lower case, everything else as it is (see SameName).
func NameKey(g string) string {
	b := []byte(g)
	for i := range b {
		b[i] = asciiLower(b[i])
	}
	return string(b)
}

// BuiltInRole reports whether group is one of the roles Keycloak gives everyone in a realm
// (default-roles-REALM, offline_access, uma_authorization), which says nothing of a team: with
// realm roles as the groups (groups_claim: realm_access.roles) they are everyone's, in any order.
func BuiltInRole(group string) bool {
	k := NameKey(group)
	return strings.HasPrefix(k, "default-roles-") || k == "offline_access" || k == "uma_authorization"
}

// FirstTeamGroup is the group an unlisted team is named after: the first of groups that is not
// a built-in role (BuiltInRole); "" when there is none.
func FirstTeamGroup(groups []string) string {
	for _, g := range groups {
		if !BuiltInRole(g) {
			return g
		}
	}
	return ""
}

// UnlistedTeam is the team of someone whose groups meet no listed team's idp_groups: the team
// named after their first group, with the default quota. There is none when that group is not
// written as a team name (lower case letters, digits, - and _) or looks like a listed team's name
// (vision, Vision, vision-, v1sion, a Cyrillic vіsion): a group is never taken for a listed team.
func (p *Policy) UnlistedTeam(group string) (string, bool) {
	name := NameKey(group)
	if !nameRE.MatchString(name) {
		return "", false
	}
	for _, t := range p.Teams {
		if t != nil && LooksAlike(name, t.Name) {
			return "", false
		}
	}
	return name, true
}

// LooksAlike reports whether two names would be taken for one another by a reader: the same once
// case, separators (space - _ . /), invisible characters and accents are set aside and letters
// that look alike (Cyrillic а and Latin a, 0 and o, 1, l and I, rn and m) are taken as one.
func LooksAlike(a, b string) bool { return skeleton(a) == skeleton(b) }

// confusable maps characters that look like a Latin letter to it.
var confusable = map[rune]rune{
	// Cyrillic
	'а': 'a', 'в': 'b', 'е': 'e', 'ё': 'e', 'к': 'k', 'м': 'm', 'н': 'h', 'о': 'o', 'р': 'p', 'с': 'c', 'т': 't', 'у': 'y', 'х': 'x',
	'і': 'l', 'ї': 'l', 'ј': 'j', 'ѕ': 's', 'ԁ': 'd', 'ӏ': 'l', 'һ': 'h', 'ԛ': 'q', 'ԝ': 'w', 'ɡ': 'g',
	// Greek
	'α': 'a', 'β': 'b', 'ε': 'e', 'η': 'n', 'ι': 'l', 'κ': 'k', 'ν': 'v', 'ο': 'o', 'ρ': 'p', 'τ': 't', 'υ': 'u', 'χ': 'x', 'ω': 'w',
	// Latin look-alikes
	'ſ': 's', 'ı': 'l', 'i': 'l', 'ℓ': 'l', '1': 'l', '|': 'l', '0': 'o',
	'à': 'a', 'á': 'a', 'â': 'a', 'ã': 'a', 'ä': 'a', 'å': 'a', 'ā': 'a', 'ç': 'c', 'è': 'e', 'é': 'e', 'ê': 'e', 'ë': 'e', 'ē': 'e',
	'ì': 'l', 'í': 'l', 'î': 'l', 'ï': 'l', 'ī': 'l', 'ñ': 'n', 'ò': 'o', 'ó': 'o', 'ô': 'o', 'õ': 'o', 'ö': 'o', 'ø': 'o', 'ō': 'o',
	'ù': 'u', 'ú': 'u', 'û': 'u', 'ü': 'u', 'ū': 'u', 'ý': 'y', 'ÿ': 'y',
}

// skeleton is a name reduced to how it looks (see LooksAlike).
func skeleton(s string) string { return look(s, true) }

// personLook is an email reduced to how it looks: as skeleton, but its separators are kept, for
// a.b@x and ab@x are two addresses a reader tells apart.
func personLook(s string) string { return look(s, false) }

// look is s reduced to how it looks, its separators (space - _ . / \) dropped when drop says.
func look(s string, drop bool) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 0xFF01 && r <= 0xFF5E { // full-width forms of ASCII
			r -= 0xFEE0
		}
		r = unicode.ToLower(r)
		if c, ok := confusable[r]; ok {
			r = c
		}
		switch {
		case unicode.IsSpace(r), drop && strings.ContainsRune("-_./\\", r), unicode.Is(unicode.Cf, r), unicode.Is(unicode.Mn, r):
			continue
		}
		b.WriteRune(r)
	}
	out := b.String()
	out = strings.ReplaceAll(out, "rn", "m")
	out = strings.ReplaceAll(out, "vv", "w")
	return out
}

// teamWarnings finds teams whose names look alike (vision and v1sion): people reading replies,
// reports and approvals would take one for the other.
func teamWarnings(p *Policy, line func(string) int) []Problem {
	var out []Problem
	seen := map[string][]*Team{} // the teams so far, by how their names look
	for i, t := range p.Teams {
		if t == nil {
			continue
		}
		k := skeleton(t.Name)
		for _, u := range seen[k] {
			out = append(out, Problem{Line: line(fmt.Sprintf("teams.%d.name", i)),
				Msg: fmt.Sprintf("team %s looks like team %s: people will take one for the other in replies, reports and approvals; give it a name of its own", t.Name, u.Name)})
		}
		seen[k] = append(seen[k], t)
	}
	return out
}

// peopleWarnings finds directory entries whose emails look like an earlier entry's without being
// it (olga@x.example and оlga@x.example, with a Cyrillic о): readers of approvals, reports and
// this file take them for one person, while they are two identities with groups of their own.
func peopleWarnings(p *Policy, line func(string) int) []Problem {
	var out []Problem
	seen := map[string][]string{} // the entries so far, by how their emails look
	for i, id := range p.Directory {
		if id == nil || id.User == "" {
			continue
		}
		k := personLook(id.User)
		for _, u := range seen[k] {
			if !SameName(u, id.User) {
				out = append(out, Problem{Line: line(fmt.Sprintf("directory.%d.user", i)),
					Msg: fmt.Sprintf("directory entry %s looks like %s but is another address (some of its letters only look alike): people will take one for the other in approvals and reports; fix the address, or write it with plain letters if it is another person", id.User, u)})
				break
			}
		}
		seen[k] = append(seen[k], id.User)
	}
	return out
}

// teamsByLook is the policy's teams by how their names look (skeleton), each list in the
// policy's order.
func teamsByLook(p *Policy) map[string][]*Team {
	m := make(map[string][]*Team, len(p.Teams))
	for _, t := range p.Teams {
		if t != nil {
			k := skeleton(t.Name)
			m[k] = append(m[k], t)
		}
	}
	return m
}

// groupWarnings finds the directory's groups that look like a team's name without being among its
// idp_groups: such an entry is not in that team, which its author may not expect.
func groupWarnings(p *Policy, line func(string) int) []Problem {
	var out []Problem
	byLook := teamsByLook(p)
	for i, id := range p.Directory {
		if id == nil {
			continue
		}
		for j, g := range id.Groups {
			for _, t := range byLook[skeleton(g)] {
				if Contains(t.IDPGroups, g) {
					continue
				}
				out = append(out, Problem{Line: line(fmt.Sprintf("directory.%d.groups.%d", i, j)),
					Msg: fmt.Sprintf("directory entry %s: group %q looks like the name of team %s, but the members of team %s are those in %s, so %s is not in team %s; add %q to the team's idp_groups if they should be",
						id.User, g, t.Name, t.Name, strings.Join(t.IDPGroups, ", "), id.User, t.Name, g)})
			}
		}
	}
	return out
}

var literalRE = regexp.MustCompile(`'[^']*'|"[^"]*"`)

// ruleCaseWarnings finds rules that compare user.groups with a group written with capitals: rules
// see groups with A to Z in lower case, so such a comparison never holds.
func ruleCaseWarnings(p *Policy, line func(string) int) []Problem {
	var out []Problem
	for i, r := range p.Exceptions {
		if r == nil || !strings.Contains(r.When, "user.groups") {
			continue
		}
		for _, lit := range literalRE.FindAllString(r.When, -1) {
			if body := lit[1 : len(lit)-1]; body != NameKey(body) {
				out = append(out, Problem{Line: line(fmt.Sprintf("exceptions.%d.when", i)),
					Msg: fmt.Sprintf("exception rule %q: rules see user.groups in lower case, so %s never matches a group; write %q", r.Name, lit, NameKey(body))})
			}
		}
	}
	return out
}

// limitWarnings finds the class limits no exception rule reads, and a max_duration no lease can
// reach (MaxLease). max_gpus and max_duration are what
// a lease may have without approval (the catalog says so), but only a rule makes a request beyond
// them wait for a budget owner; without one it is granted.
func limitWarnings(p *Policy, line func(string) int) []Problem {
	var out []Problem
	for _, lim := range []struct{ field, what, rule string }{
		{"max_gpus", "more GPUs than", "request.gpus > class.max_gpus"},
		{"max_duration", "longer than", "request.duration > class.max_duration"},
	} {
		read := false
		for _, r := range p.Exceptions {
			if r != nil && strings.Contains(r.When, "class."+lim.field) {
				read = true
			}
		}
		for i, c := range p.Classes {
			if read || c == nil || (lim.field == "max_gpus" && c.MaxGPUs == 0) || (lim.field == "max_duration" && c.MaxDuration.Duration == 0) {
				continue
			}
			out = append(out, Problem{Line: line(fmt.Sprintf("classes.%d.%s", i, lim.field)),
				Msg: fmt.Sprintf("no exception rule reads class.%s, so a request for %s the %s of class %s is granted without approval, though the catalog says it needs one; add a rule with when: %s",
					lim.field, lim.what, lim.field, c.Name, lim.rule)})
			break // one warning per limit
		}
	}
	for i, c := range p.Classes {
		if c != nil && c.MaxDuration.Duration > MaxLease {
			out = append(out, Problem{Line: line(fmt.Sprintf("classes.%d.max_duration", i)),
				Msg: fmt.Sprintf("the max_duration of class %s is %s, but no lease lasts longer than %s, approved or not, so a request for more is refused though the catalog offers it; write max_duration: %s or less",
					c.Name, FormatDuration(c.MaxDuration.Duration), FormatDuration(MaxLease), FormatDuration(MaxLease))})
		}
	}
	// A team's data_classes are what it is cleared for, but only a rule that reads them makes a
	// request for another wait for a budget owner; without one it is granted.
	read := false
	for _, r := range p.Exceptions {
		if r != nil && strings.Contains(r.When, "team.data_classes") {
			read = true
		}
	}
	for i, t := range p.Teams {
		if read || t == nil || len(t.DataClasses) == 0 {
			continue
		}
		out = append(out, Problem{Line: line(fmt.Sprintf("teams.%d.data_classes", i)),
			Msg: fmt.Sprintf("no exception rule reads team.data_classes, so a request of team %s for a data class it is not cleared for (not %s) is granted without approval; add a rule with when: !(request.data_class in team.data_classes)",
				t.Name, JoinList(t.DataClasses, "or"))})
		break // one warning
	}
	return out
}

// approverWarnings finds approvers (budget owners and fallback approvers) that no directory entry
// is, or is in: without single sign-on, where the directory is who people are, nobody can decide
// as them. A policy with no directory relies on single sign-on, and draws none.
func approverWarnings(p *Policy, line func(string) int) []Problem {
	if len(p.Directory) == 0 {
		return nil
	}
	known := func(a string) bool {
		for _, id := range p.Directory {
			if id == nil {
				continue
			}
			if SameName(id.User, a) {
				return true
			}
			for _, g := range id.Groups {
				if SameName(g, a) {
					return true
				}
			}
		}
		return false
	}
	people := map[string]string{} // the directory's people by how their emails look
	for _, id := range p.Directory {
		if id != nil && id.User != "" {
			if k := personLook(id.User); people[k] == "" {
				people[k] = id.User
			}
		}
	}
	var out []Problem
	warn := func(at, a, whose string) {
		msg := fmt.Sprintf("%s %s is not in the directory, so without single sign-on nobody can decide as them; add an entry for them or fix the name", whose, a)
		var names []string // what a can be a misspelling of: the directory's people, or its groups
		for _, id := range p.Directory {
			if id == nil {
				continue
			}
			if strings.Contains(a, "@") {
				names = append(names, NameKey(id.User))
			} else {
				for _, g := range id.Groups {
					names = append(names, NameKey(g))
				}
			}
		}
		if !strings.Contains(a, "@") {
			msg = fmt.Sprintf("%s %s is a group no directory entry is in, so without single sign-on nobody can decide as its members and no approval notice reaches them; add it to their entries' groups or fix the name", whose, a)
		}
		if twin := people[personLook(a)]; twin != "" && strings.Contains(a, "@") {
			msg = fmt.Sprintf("%s %s looks like %s but is another address (some of its letters only look alike), so %s is not who decides or is told; write %s if they are meant", whose, a, twin, twin, twin)
		} else if near := Closest(NameKey(a), names); near != "" {
			msg += "; did you mean " + near + "?"
		}
		out = append(out, Problem{Line: line(at), Msg: msg})
	}
	for i, t := range p.Teams {
		if t == nil {
			continue
		}
		for j, a := range t.BudgetOwners {
			if a != "" && !known(a) {
				warn(fmt.Sprintf("teams.%d.budget_owners.%d", i, j), a, "team "+t.Name+"'s budget owner")
			}
		}
	}
	for j, a := range p.Approvals.FallbackApprovers {
		if a != "" && !known(a) {
			warn(fmt.Sprintf("approvals.fallback_approvers.%d", j), a, "fallback approver")
		}
	}
	return out
}

// emailGroupWarnings finds approvers (budget owners and fallback approvers) written with an @,
// which are taken for a person, that the policy itself shows to be groups: a directory entry is
// in it (and none is it), or it is a team's idp_groups (what single sign-on matches groups
// against). A group named like an email (a Google Workspace group through a broker) would then
// never reach its members: its approval requests go to that address as to a person. The policy
// has no way to mark such an entry a group, so the warning says to name the members instead.
func emailGroupWarnings(p *Policy, line func(string) int) []Problem {
	groupOf := func(a string) string {
		for _, id := range p.Directory {
			if id != nil && SameName(id.User, a) {
				return "" // a person of the directory
			}
		}
		for _, id := range p.Directory {
			if id != nil && intersects(id.Groups, []string{a}) {
				return "a directory entry is in it"
			}
		}
		for _, t := range p.Teams {
			if t != nil && intersects(t.IDPGroups, []string{a}) {
				return "team " + t.Name + "'s idp_groups"
			}
		}
		return ""
	}
	var out []Problem
	warn := func(at, a, whose string) {
		if !strings.Contains(a, "@") {
			return
		}
		if why := groupOf(a); why != "" {
			instead := "name its members by email instead"
			if members := p.Members(a); len(members) > 0 && len(members) <= 5 {
				instead += " (" + strings.Join(members, ", ") + ")"
			}
			out = append(out, Problem{Line: line(at), Msg: fmt.Sprintf("%s %s is a group (%s), but an approver written with @ is taken for a person, so approval requests go to that address and never to the group's members; %s", whose, a, why, instead)})
		}
	}
	for i, t := range p.Teams {
		if t == nil {
			continue
		}
		for j, a := range t.BudgetOwners {
			warn(fmt.Sprintf("teams.%d.budget_owners.%d", i, j), a, "team "+t.Name+"'s budget owner")
		}
	}
	for j, a := range p.Approvals.FallbackApprovers {
		warn(fmt.Sprintf("approvals.fallback_approvers.%d", j), a, "fallback approver")
	}
	return out
}

// adminWarnings finds oidc.admins entries whose emails look like a directory entry's, a budget
// owner's or a fallback approver's without being it (kenjі with a Cyrillic і next to kenji): the
// reader takes them for that person, who may not unlink accounts, while the address written may.
func adminWarnings(p *Policy, line func(string) int) []Problem {
	people := map[string][]string{} // the people the policy names, by how their emails look
	add := func(a string) {
		if strings.Contains(a, "@") {
			k := personLook(a)
			people[k] = append(people[k], a)
		}
	}
	for _, id := range p.Directory {
		if id != nil {
			add(id.User)
		}
	}
	for _, t := range p.Teams {
		if t != nil {
			for _, a := range t.BudgetOwners {
				add(a)
			}
		}
	}
	for _, a := range p.Approvals.FallbackApprovers {
		add(a)
	}
	var out []Problem
	for j, a := range p.OIDC.Admins {
		if !strings.Contains(a, "@") {
			continue
		}
		twins := people[personLook(a)]
		if slices.ContainsFunc(twins, func(b string) bool { return SameName(a, b) }) || len(twins) == 0 {
			continue
		}
		out = append(out, Problem{Line: line(fmt.Sprintf("oidc.admins.%d", j)),
			Msg: fmt.Sprintf("oidc admin %s looks like %s but is another address (some of its letters only look alike), so %s may not unlink other people's chat accounts and %s may; write %s if they are meant",
				a, twins[0], twins[0], a, twins[0])})
	}
	return out
}

// deciderWarnings finds the teams whose exceptions nobody could decide: no budget owners and no
// fallback approvers. A request a rule sends for approval is then refused outright. Teams the
// policy does not list (people whose groups match no team) count as one such team.
func deciderWarnings(p *Policy, line func(string) int) []Problem {
	if len(p.Approvals.FallbackApprovers) > 0 {
		return nil
	}
	var out []Problem
	for i, t := range p.Teams {
		if t != nil && len(t.BudgetOwners) == 0 {
			out = append(out, Problem{Line: line(fmt.Sprintf("teams.%d.name", i)),
				Msg: fmt.Sprintf("team %s has no budget_owners and approvals.fallback_approvers is empty, so nobody can decide its exceptions: a request that needs approval (a quota increase too) is refused; %s", t.Name, deciderFix(p, t))})
		}
	}
	for _, id := range p.Directory {
		if id != nil && len(p.TeamsOf(id.Groups)) == 0 && len(id.Groups) > 0 {
			out = append(out, Problem{Line: line("approvals"),
				Msg: fmt.Sprintf("approvals.fallback_approvers is empty, so nobody can decide the exceptions of teams the policy does not list (such as that of %s): a request of theirs that needs approval is refused", id.User)})
			break
		}
	}
	return out
}

// deciderFix is what to write so that someone decides the exceptions of team t: a budget owner,
// someone of the team the directory lists where it lists one, or fallback approvers.
func deciderFix(p *Policy, t *Team) string {
	for _, id := range p.Directory {
		if id != nil && slices.Contains(p.TeamsOf(id.Groups), t) {
			return fmt.Sprintf("name who decides them, e.g. budget_owners: [%s] under team %s, or approvals.fallback_approvers", id.User, t.Name)
		}
	}
	return fmt.Sprintf("name who decides them under team %s, e.g. budget_owners: [lead@example.org], or in approvals.fallback_approvers", t.Name)
}

// showbackWarnings finds where the scheduled weekly showback reaches nobody: a team without budget owners
// and without a channel when there are no platform admins (fallback approvers) to send its lines
// to instead, and a showback with no channel whose messages to budget owners are off.
func showbackWarnings(p *Policy, line func(string) int) []Problem {
	sb := p.Reports.Showback
	if sb.Schedule == "" {
		return nil // no weekly showback is posted at all
	}
	if !sb.DMBudgetOwners {
		if sb.Channel == "" {
			return []Problem{{Line: line("reports.showback"),
				Msg: "reports.showback has no channel and dm_budget_owners is false, so the weekly showback is sent nowhere; name a channel (channel: \"#gpu-showback\") or set dm_budget_owners: true"}}
		}
		return nil
	}
	if len(p.Approvals.FallbackApprovers) > 0 {
		return nil
	}
	post := "and there is no showback channel to show it in either"
	if sb.Channel != "" {
		post = "beyond its line in the " + sb.Channel + " post"
	}
	var out []Problem
	for i, t := range p.Teams {
		if t != nil && len(t.BudgetOwners) == 0 && t.Channel == "" {
			out = append(out, Problem{Line: line(fmt.Sprintf("teams.%d.name", i)),
				Msg: fmt.Sprintf("team %s has no budget_owners, no channel and approvals.fallback_approvers is empty, so its weekly showback reaches nobody %s; give it budget_owners or a channel, or name fallback_approvers", t.Name, post)})
		}
	}
	return out
}

// discordChannelWarnings finds the discord.channels entries that name no channel of the policy (a
// typo, or a team's channel renamed): nothing is ever posted to them, and the channel meant gets
// no Discord posts.
func discordChannelWarnings(p *Policy, line func(string) int) []Problem {
	var named []string
	for _, t := range p.Teams {
		if t != nil && t.Channel != "" {
			named = append(named, t.Channel)
		}
	}
	for _, ch := range []string{p.Reports.Showback.Channel, p.Reports.Showback.PlatformChannel} {
		if ch != "" {
			named = append(named, ch)
		}
	}
	var keys []string
	for k := range p.Discord.Channels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []Problem
	for _, k := range keys {
		found := false
		for _, ch := range named {
			found = found || ChannelKey(ch) == ChannelKey(k)
		}
		if found || !strings.HasPrefix(k, "#") {
			continue
		}
		msg := fmt.Sprintf("discord.channels: %s is no channel the policy names, so nothing is posted to it on Discord", k)
		if len(named) > 0 {
			msg += fmt.Sprintf("; %s %s", Agree(len(named), "the policy's channel is", "the policy's channels are"), strings.Join(named, ", "))
		}
		out = append(out, Problem{Line: line("discord.channels." + k), Msg: msg})
	}
	return out
}

// unmappedTeamChannels finds the teams' channels discord.channels does not map: Discord cannot
// post there. That is a problem only where Discord runs alone (with Slack on, Slack posts there),
// which the policy cannot say, so they are kept apart from the warnings (Policy.DiscordOnly).
func unmappedTeamChannels(p *Policy, line func(string) int) []Problem {
	var out []Problem
	for i, t := range p.Teams {
		if t == nil || t.Channel == "" || p.discordMaps(t.Channel) {
			continue
		}
		out = append(out, Problem{Line: line(fmt.Sprintf("teams.%d.channel", i)), Msg: fmt.Sprintf("team %s: its channel %s has no Discord channel id in discord.channels, so Discord cannot post there: the approval notices meant for it reach only the deciders by DM, and a weekly showback posted there goes to the fallback approvers instead; add it (discord: {channels: {%q: \"CHANNEL_ID\"}})",
			t.Name, t.Channel, t.Channel)})
	}
	return out
}

// discordMaps reports whether discord.channels maps channel (upper and lower case, and the
// Unicode form of an accented letter, aside: ChannelKey).
func (p *Policy) discordMaps(channel string) bool {
	for k := range p.Discord.Channels {
		if ChannelKey(k) == ChannelKey(channel) {
			return true
		}
	}
	return false
}
