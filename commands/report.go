package commands

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// AddReport offers /gpu report [WEEK] [TEAM] on b, answered from svc.
func AddReport(b *Bot, svc *showback.Service) { b.Reports = svc }

// parseReport takes the week and team as words; Report reads them, since which is which depends
// on the teams there are.
func parseReport(c Command, args []string) (Command, error) {
	args = slices.Clone(args)
	for i, a := range args { // a team or a week in quotes ("last week" too)
		args[i] = unquoted(a)
	}
	// "this week", "last week": one week in two words. After any other week, "week" is a team's
	// name (/gpu report 2026-W48 week).
	if _, named := showback.NamedWeek(strings.Join(args[:min(2, len(args))], " "), showback.Week{}); named && len(args) >= 2 && strings.EqualFold(args[1], "week") {
		args = append([]string{args[0] + " " + args[1]}, args[2:]...)
	}
	// The same after a team (/gpu report vision last week): the team first, then the week.
	if n := len(args); n >= 3 && strings.EqualFold(args[n-1], "week") {
		if _, named := showback.NamedWeek(args[n-2]+" "+args[n-1], showback.Week{}); named {
			args = append(args[:n-2:n-2], args[n-2]+" "+args[n-1])
		}
	}
	if len(args) > 2 {
		return c, bad(c.Verb, "/gpu report takes a week and a team at most, but got %s.", policy.Quoted(strings.Join(args, " "), 40))
	}
	c.Params = args
	return c, nil
}

// Report is /gpu report [WEEK] [TEAM]: a week's showback (the last complete week unless WEEK says
// otherwise; in the history's first week, before any week since the first lease is complete, this
// week so far, said to be not yet complete). A platform admin sees every team, a budget owner their teams, anyone else only their
// own use.
func Report(ctx context.Context, b *Bot, svc *showback.Service, req bot.Request, args []string) []bot.Reply {
	p := b.pol()
	last := svc.LastComplete()
	team := "" // the team asked for, once it is known
	fail := func(err error) []bot.Reply {
		if qm.ErrorCode(err) == qm.EINTERNAL {
			b.log().Error("report failed", "user", req.User, "err", err)
		}
		example := fmt.Sprintf("/gpu report %s", svc.ExampleWeek(ctx))
		if team != "" {
			// The team asked for, once known, stays in the example: typed back it shows that team.
			example += " " + team
		}
		return []bot.Reply{{Error: true, Ephemeral: true, Text: qm.ErrorMessage(err) + " Example: " + example}}
	}
	var teams []string // every team, read once when needed
	knownTeam := func(s string) (string, bool, error) {
		if t, ok := p.Team(s); ok {
			return t.Name, true, nil
		}
		if channelWord(s) {
			// A team's channel names the team, as where other commands take a team.
			if c, err := ParseIn("/gpu quota "+s, p); err == nil && c.Arg != "" {
				return c.Arg, true, nil
			}
		}
		if teams == nil {
			var err error
			if teams, err = svc.TeamNames(ctx); err != nil {
				return "", false, err
			}
		}
		for _, t := range teams {
			if policy.SameName(t, s) {
				return t, true, nil
			}
		}
		return "", false, nil
	}
	if rs := b.mentionInReport(ctx, req, svc, args, knownTeam); rs != nil {
		return rs
	}
	for i, a := range args {
		if !policy.OtherDigits(a) || channelWord(a) {
			continue
		}
		// 2026-W٤٩: a week written with digits other than 0-9 (no team's name has any), refused
		// as the grammar refuses such digits elsewhere; the week meant is the example where it has
		// a report, else a week that has one, with the team typed where the asker sees it.
		other := ""
		if len(args) == 2 {
			if t, ok, terr := knownTeam(args[1-i]); terr == nil && ok {
				other = t
			}
		}
		if meant, clear := policy.ASCIIDigits(a); clear {
			if w, err := svc.ParseWeek(ctx, meant); err == nil && svc.CheckWeek(ctx, w) == nil {
				text := fmt.Sprintf("%s is written with digits other than 0-9; write the week with the digits 0-9: %s.", policy.Quoted(a, 40), w)
				return []bot.Reply{{Error: true, Ephemeral: true, Text: qm.ErrorMessage(qm.Errorf(qm.EINVALID, "%s", text)) + " Example: " + b.reportExample(ctx, req, w, other)}}
			}
		}
		eg := svc.ExampleWeek(ctx)
		text := fmt.Sprintf("%s is written with digits other than 0-9; write the week with the digits 0-9, like %s.", policy.Quoted(a, 40), eg)
		return []bot.Reply{{Error: true, Ephemeral: true, Text: qm.ErrorMessage(qm.Errorf(qm.EINVALID, "%s", text)) + " Example: " + b.reportExample(ctx, req, eg, other)}}
	}
	if len(args) == 2 {
		// A team first: a week after it is read as the week (/gpu report vision last week),
		// and a second team is refused.
		first, ok, terr := knownTeam(args[0])
		if terr != nil {
			return fail(terr)
		}
		if _, werr := svc.ParseWeek(ctx, args[0]); ok && werr != nil {
			second, ok2, terr := knownTeam(args[1])
			if terr != nil {
				return fail(terr)
			}
			if _, werr := svc.ParseWeek(ctx, args[1]); !ok2 && werr == nil {
				args = []string{args[1], args[0]}
			} else if ok2 {
				text := fmt.Sprintf("%s names two teams; a report is of one team, so give one.", policy.Quoted(strings.Join(args, " "), 60))
				if second == first {
					text = fmt.Sprintf("%s gives the team twice; give it once.", policy.Quoted(strings.Join(args, " "), 60))
				}
				return []bot.Reply{{Error: true, Ephemeral: true, Text: text + " Example: " + b.reportExample(ctx, req, svc.ExampleWeek(ctx), first)}}
			}
		}
	}
	if len(args) == 2 {
		// A word that is neither a team nor a week, then a week (/gpu report #nowhere last week):
		// read as the team and the week, so the team is what is refused.
		_, ok, terr := knownTeam(args[0])
		if terr != nil {
			return fail(terr)
		}
		_, err0 := svc.ParseWeek(ctx, args[0])
		_, err1 := svc.ParseWeek(ctx, args[1])
		_, errBoth := svc.ParseWeek(ctx, strings.Join(args, " "))
		if !ok && err0 != nil && err1 == nil && errBoth != nil {
			args = []string{args[1], args[0]}
		}
	}
	var err error
	week := last
	typedWeek := len(args) > 1 // a team alone is no week: the default week
	switch len(args) {
	case 0:
	case 1:
		t, ok, terr := knownTeam(args[0])
		if terr != nil {
			return fail(terr)
		}
		_, named := showback.NamedWeek(args[0], last)
		if ok {
			team = t
		} else if named || strings.ContainsAny(args[0], "0123456789") && !channelWord(args[0]) {
			typedWeek = true
			if week, err = svc.ParseWeek(ctx, args[0]); err != nil {
				if near := nearest(args[0], teams); near != "" {
					// ml-infra3: a team's name mistyped, digits and all, not a week.
					return b.teamTypo(ctx, req, args[0], near, svc.ExampleWeek(ctx))
				}
				if m, ok := showback.MeantWeek(args[0], last.Next()); ok && svc.CheckWeek(ctx, m) == nil {
					// W49, 2026/49: the week meant is the example, where it has a report.
					text := qm.ErrorMessage(qm.Errorf(qm.EINVALID, "%s is not an ISO week; write a week as YEAR-Wnn: %s.", policy.Quoted(args[0], 40), m))
					return []bot.Reply{{Error: true, Ephemeral: true, Text: text + " Example: " + b.reportExample(ctx, req, m, team)}}
				}
				return fail(err)
			}
		} else if rs := b.teamMeant(ctx, req, args[0], fmt.Sprintf("/gpu report %s", svc.ExampleWeek(ctx))); rs != nil {
			return rs
		} else if near := nearest(args[0], teams); near != "" {
			return b.teamTypo(ctx, req, args[0], near, svc.ExampleWeek(ctx))
		} else {
			seen, example := b.teamsSeen(ctx, req.User, args[0], teams)
			text := fmt.Sprintf("%s is neither a week (like %s) nor a team; %s.", policy.Quoted(args[0], 40), svc.ExampleWeek(ctx), seen)
			return []bot.Reply{{Error: true, Ephemeral: true, Text: qm.ErrorMessage(qm.Errorf(qm.EINVALID, "%s", text)) + " Example: " + strings.TrimSpace("/gpu report "+svc.ExampleWeek(ctx).String()+" "+example)}}
		}
	default:
		if w, ok := showback.NamedWeek(strings.Join(args, " "), last); ok { // "last week"
			week = w
			break
		}
		if week, err = svc.ParseWeek(ctx, strings.Join(args[:len(args)-1], " ")); err != nil {
			if len(args) > 2 || !strings.ContainsAny(args[0], "0123456789") {
				// "last tuesday": the words are one week written as words, not a week and a team.
				_, err = svc.ParseWeek(ctx, strings.Join(args, " "))
			}
			return fail(err)
		}
		t, ok, terr := knownTeam(args[len(args)-1])
		if terr != nil {
			return fail(terr)
		}
		if !ok && len(args) == 2 && !strings.ContainsAny(args[0], " 0123456789") {
			// "last tuesday" reads as one week written as words, not as last week and a team.
			_, err = svc.ParseWeek(ctx, strings.Join(args, " "))
			return fail(err)
		}
		// A week there is no report of (not begun, before the history) is what is wrong first.
		if err := svc.CheckWeek(ctx, week); err != nil {
			return fail(err)
		}
		if other, werr := svc.ParseWeek(ctx, args[len(args)-1]); !ok && len(args) == 2 && werr == nil {
			// A week where the team goes: the week typed again, or a second week. The example is
			// the report of the first.
			text := qm.ErrorMessage(qm.Errorf(qm.EINVALID, "%s names two weeks; a report is of one week, so give one.", policy.Quoted(strings.Join(args, " "), 60)))
			if other == week {
				text = qm.ErrorMessage(qm.Errorf(qm.EINVALID, "%s gives the week twice; give it once.", policy.Quoted(strings.Join(args, " "), 60)))
			}
			return []bot.Reply{{Error: true, Ephemeral: true, Text: text + " Example: /gpu report " + week.String()}}
		}
		if !ok {
			// Only the team is wrong: the example keeps the week asked for, with a team the
			// asker may see the report of (their own use where they may see no team's).
			if rs := b.teamMeant(ctx, req, args[len(args)-1], "/gpu report "+week.String()); rs != nil {
				return rs
			}
			if near := nearest(args[len(args)-1], teams); near != "" {
				return b.teamTypo(ctx, req, args[len(args)-1], near, week)
			}
			seen, team := b.teamsSeen(ctx, req.User, args[len(args)-1], teams)
			text := qm.ErrorMessage(qm.Errorf(qm.ENOTFOUND, "there is no team %s; %s.", policy.Quoted(args[len(args)-1], 40), seen))
			return []bot.Reply{{Error: true, Ephemeral: true, Text: text + " Example: " + strings.TrimSpace("/gpu report "+week.String()+" "+team)}}
		}
		team = t
	}
	// In the history's first week no week is complete since the first lease: without a week
	// typed, the report is of this week so far, said to be not yet complete.
	soFar := ""
	if this := last.Next(); !typedWeek && svc.ExampleWeek(ctx) == this {
		week = this
		soFar = fmt.Sprintf("No week since the first lease is complete yet, so this is this week so far, %s, not yet complete. ", this)
	}
	admin := b.Svc.IsPlatformAdmin(ctx, req.User)
	owned := b.Svc.OwnedTeams(ctx, req.User)
	var filters []showback.Filter
	switch {
	case team != "" && (admin || policy.Contains(owned, team)):
		filters = []showback.Filter{{Team: team}}
	case team != "":
		// The example is the asker's own use of the week asked for, not another week; where no
		// week was typed and the last complete one has no report (the history began after it),
		// of a week that has one.
		text := b.whoSeesShowback(team)
		if svc.CheckWeek(ctx, week) != nil {
			week = svc.ExampleWeek(ctx)
		}
		return []bot.Reply{{Error: true, Ephemeral: true, Text: fmt.Sprintf("%s Example: /gpu report %s", text, week)}}
	case admin:
		filters = []showback.Filter{{}}
	case len(owned) > 0:
		for _, t := range owned {
			filters = append(filters, showback.Filter{Team: t})
		}
	default:
		filters = []showback.Filter{{User: req.User}}
	}
	var out []bot.Reply
	for _, f := range filters {
		r, err := svc.Report(ctx, week, f)
		if err != nil {
			return fail(err)
		}
		a := r.Answer(nil)
		a.Text = soFar + a.Text
		out = append(out, a)
	}
	return out
}

// mentionInReport refuses a user group's or a person's mention (@leads), or a class's (@kete),
// that names no team wherever it stands in /gpu report's words (first, after the week or before it), as a mention
// where any command's team goes is refused; the example is the report asked for without it (the
// week as typed), with the team its handle is closest to where the asker may see that team's
// report. A week or a team beside it that is itself wrong is refused as that mistake. Nil where
// no word is such a mention.
func (b *Bot) mentionInReport(ctx context.Context, req bot.Request, svc *showback.Service, args []string, knownTeam func(string) (string, bool, error)) []bot.Reply {
	p := b.pol()
	if p == nil || len(p.Teams) == 0 {
		return nil
	}
	teams, classes := teamSet(p), nameKeys(p.ClassNames())
	at, near, sentence := groupNotTeam("report", args, teams)
	if cat, class := classWhereTeamGoes("report", args, classes, teams, false); class != "" {
		typed, _ := teamWord("report", args, cat)
		at, near = cat, ""
		sentence, _ = classWhereTeam("report", args, cat, typed, class, classes)
	}
	if sentence == "" {
		return nil
	}
	rest := slices.Delete(slices.Clone(args), at, at+1)
	example := "/gpu report"
	for _, w := range rest {
		if t, ok, err := knownTeam(w); err == nil && ok {
			near = t // a team typed beside the mention is the one asked for
			continue
		}
		week, err := svc.ParseWeek(ctx, w)
		if err == nil {
			err = svc.CheckWeek(ctx, week) // a week there is no report of
		}
		if err != nil {
			return []bot.Reply{{Error: true, Ephemeral: true, Text: qm.ErrorMessage(err) + " Example: /gpu report " + svc.ExampleWeek(ctx).String()}}
		}
		example += " " + w
	}
	if near != "" && (b.Svc.IsPlatformAdmin(ctx, req.User) || slices.Contains(b.Svc.OwnedTeams(ctx, req.User), near)) {
		example += " " + near
	}
	return []bot.Reply{{Error: true, Ephemeral: true, Text: sentence + " Example: " + example}}
}

// teamsSeen names, to user who typed a team there is none of, the teams whose showback they may
// see, and one of them for an example: every team to a platform admin, the teams they own to a
// budget owner. Anyone else sees only their own use, is told so, and gets no team for the example,
// so no one learns from a typo the teams they may not see the showback of.
func (b *Bot) teamsSeen(ctx context.Context, user, typed string, teams []string) (phrase, example string) {
	seen := b.Svc.OwnedTeams(ctx, user)
	if b.Svc.IsPlatformAdmin(ctx, user) {
		seen = teams
	}
	if len(seen) == 0 {
		return "you see the report of your own use only", ""
	}
	phrase = policy.Agree(len(seen), "the team is ", "the teams are ") + policy.FewNames(typed, seen, "and")
	if !b.Svc.IsPlatformAdmin(ctx, user) {
		phrase = policy.Agree(len(seen), "the team whose showback you see is ", "the teams whose showback you see are ") + policy.FewNames(typed, seen, "and")
	}
	return phrase, seen[0]
}

// reportExample is /gpu report of week, with team where the asker may see its report (a platform
// admin, or one of its budget owners), else without it (their own use).
func (b *Bot) reportExample(ctx context.Context, req bot.Request, week showback.Week, team string) string {
	example := "/gpu report " + week.String()
	if team != "" && b.seesShowback(ctx, req.User, team) {
		example += " " + team
	}
	return example
}

// seesShowback reports whether user may see team's showback: a platform admin, or one of its
// budget owners.
func (b *Bot) seesShowback(ctx context.Context, user, team string) bool {
	return b.Svc.IsPlatformAdmin(ctx, user) || slices.Contains(b.Svc.OwnedTeams(ctx, user), team)
}

// notSeen is the end of a sentence that names team, the one meant, to someone who may not see its
// showback, as the example (their own use) leaves it out.
func notSeen(team string) string {
	return fmt.Sprintf("team %s, which you do not see the showback of, so the report is of your own use", team)
}

// teamTypo refuses typed, a team of /gpu report mistyped (one letter or digit off), naming near,
// the team meant, where the asker may see its report (else saying the report is of their own
// use); the example is the report of week with that team where the asker may see it.
func (b *Bot) teamTypo(ctx context.Context, req bot.Request, typed, near string, week showback.Week) []bot.Reply {
	text := fmt.Sprintf("There is no team %s; did you mean %s?", policy.Quoted(typed, 40), near)
	if !b.seesShowback(ctx, req.User, near) {
		text = fmt.Sprintf("There is no team %s, and the nearest is %s.", policy.Quoted(typed, 40), notSeen(near))
	}
	return []bot.Reply{{Error: true, Ephemeral: true, Text: text + " Example: " + b.reportExample(ctx, req, week, near)}}
}

// teamMeant refuses a team of /gpu report typed with its accents (santé-données for team
// sante-donnees: the policy's names are a to z), or its channel typed without them (#sante for
// #santé), naming the team meant; the example is report (the command with a week) with that
// team where the asker may see its report, else without it (their own use). Nil where typed
// means no team so.
func (b *Bot) teamMeant(ctx context.Context, req bot.Request, typed, report string) []bot.Reply {
	p := b.pol()
	if p == nil {
		return nil
	}
	team, channel := p.TeamMeant(typed)
	if team == "" && strings.HasPrefix(typed, "#") {
		// #vision-gpux: a team's channel mistyped by a letter.
		channel, team = channelMistyped(teamChannels(p), typed)
	}
	if team == "" {
		return nil
	}
	sees := b.seesShowback(ctx, req.User, team)
	text := fmt.Sprintf("There is no team %s; did you mean %s?", policy.Quoted(typed, 40), team)
	switch {
	case channel != "" && sees:
		text = fmt.Sprintf("%s is the channel of no team; did you mean %s, the channel of team %s?", policy.Quoted(typed, 40), channel, team)
	case channel != "":
		text = fmt.Sprintf("%s is the channel of no team, and %s is the channel of %s.", policy.Quoted(typed, 40), channel, notSeen(team))
	case !sees:
		text = fmt.Sprintf("There is no team %s; it means %s.", policy.Quoted(typed, 40), notSeen(team))
	}
	example := report
	if sees {
		example += " " + team
	}
	return []bot.Reply{{Error: true, Ephemeral: true, Text: text + " Example: " + example}}
}

// whoSeesShowback says, to someone refused it, who sees team's showback: its budget owners and
// the platform admins (the fallback approvers), each group named as a group with its members
// ("the budget owners of team ljud (the group leads: astrid@…, bo@…)"), in a sentence without a
// parenthesis inside another. A team with no budget owners, or
// one the policy no longer lists (renamed or removed since its leases ran), is seen by the
// platform admins alone.
func (b *Bot) whoSeesShowback(team string) string {
	p := b.pol()
	// A group with its members after a colon ("the group leads: astrid@…, bo@…"), a group of no
	// known member by itself ("the group leads"), a person by their address.
	inBrackets := func(n string) string {
		if strings.Contains(n, "@") || strings.HasPrefix(n, "#") {
			return n
		}
		members, ok := strings.CutPrefix(b.Svc.WithMembers(n), "the group "+n+" (")
		if m, closed := strings.CutSuffix(members, ")"); ok && closed {
			return "the group " + n + ": " + m
		}
		return "the group " + n
	}
	// One person is named in the singular; several, or a group (which may hold many), in the plural.
	single := func(list []string) bool { return len(list) == 1 && strings.Contains(list[0], "@") }
	t, listed := p.Team(team)
	if listed && len(t.BudgetOwners) > 0 {
		owners := "budget owners"
		if single(t.BudgetOwners) {
			owners = "budget owner"
		}
		named := make([]string, len(t.BudgetOwners))
		for i, n := range t.BudgetOwners {
			named[i] = inBrackets(n)
		}
		return fmt.Sprintf("Only platform admins and the %s of team %s (%s) see its showback; you see your own use.", owners, t.Name, strings.Join(named, "; "))
	}
	admins := p.Approvals.FallbackApprovers
	only := "only platform admins (approvals.fallback_approvers, which names nobody now) see"
	switch {
	case single(admins):
		only = fmt.Sprintf("only the platform admin, %s, sees", admins[0])
	case len(admins) > 0:
		// In brackets, each group as a group (its name may be any word, such as "platform"),
		// with its members: "only the platform admins (group platform: ops@…) see".
		groups := make([]string, len(admins))
		for i, n := range admins {
			groups[i] = n
			if !strings.Contains(n, "@") {
				groups[i] = strings.TrimPrefix(inBrackets(n), "the ")
			}
		}
		only = fmt.Sprintf("only the platform admins (%s) see", strings.Join(groups, "; "))
	}
	if listed {
		return fmt.Sprintf("Team %s has no budget owners, so %s its showback; you see your own use.", t.Name, only)
	}
	return fmt.Sprintf("The policy no longer lists team %s, so %s its showback; you see your own use.", team, only)
}
