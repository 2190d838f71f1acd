// Package commands is the /gpu grammar and its handlers: text in, bot replies out. It knows the
// domain and the neutral bot model and no chat SDK, so Slack, Discord and the console share it.
package commands

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// Command is a parsed /gpu command.
type Command struct {
	// Verb is the command's name in the table ("request", "quota-request").
	Verb string
	// request / estimate
	GPUs      int
	Class     string
	Duration  time.Duration
	Template  string
	Team      string
	DataClass string
	Exclusive bool
	// lease commands
	Lease qm.LeaseID
	// deny reason, quota request reason
	Reason string
	// help, quota, templates: a free argument
	Arg string
	// template and submit parameters (key=value)
	Params []string
	// Who is the person who asked, resolved once at the door (nil for public commands).
	Who *qm.Identity

	// classes are the policy's class names (NameKey) while the command is parsed; nil when the
	// grammar reads it without a policy.
	classes map[string]bool
	// channels are the policy's team channels (NameKey, with #, and as Discord passes those that
	// discord.channels maps, <#CHANNEL_ID>) and the team of each, while the command is parsed (""
	// for a channel two teams share); nil without a policy.
	channels map[string]string
	// teams are the policy's team names while the command is parsed; nil without a policy.
	teams map[string]bool
	// templateTyped is the template's name as typed, where that is not Template (which has A to
	// Z in lower case): what a refusal of it quotes, so that <@U…> is not echoed as <@u…>.
	templateTyped string
	// classTyped is the class's name as typed, where that is not Class: what a refusal quotes.
	classTyped string
	// teamAgain is a job's team given twice, for the refusal's example (keepWorkingTeam).
	teamAgain *teamAgain
	// dataMention is the data class typed as a mention (data @silt), as typed (dataMentioned).
	dataMention string
	// forTyped says a job's for= was typed, its length right or not: a refusal's example keeps it.
	forTyped bool
	// channelNote is a request's refusal for a team's channel typed without the word team, where
	// it is the refusal given (channelNotTheirs words it for the asker).
	channelNote *channelNote
}

// channelNote is the refusal err of a command that charges a team (a request, a quota request,
// a job) and typed a team's channel (typed, of team) where the team goes without the word team,
// or a channel of no team that is one of team's (meant) mistyped; or, where name, that typed the
// team otherwise than as the command names it (its name without the word team, @team, #team).
type channelNote struct {
	typed, meant, team string
	name, group        bool // group: typed is a user group's or a person's mention, its handle near team
	err                *qm.Error
}

// takesTeam reports whether the command verb takes a team, so that a team typed otherwise than
// as it names one is read as that team (elsewhere it is refused as typed).
func takesTeam(verb string) bool {
	switch verb {
	case "request", "quota-request", "submit", "quota", "report":
		return true
	}
	return false
}

// chargeNoun is what a command that charges a team is called in a sentence: "a request".
func chargeNoun(verb string) string {
	switch verb {
	case "quota-request":
		return "a quota request"
	case "submit":
		return "a job"
	}
	return "a request"
}

// channelNotTheirs is err, the refusal of c, with its sentence put for an asker who is not in the
// team whose channel c typed (or mistyped): the example leaves that team out (the command typed
// with it would be refused, as examples name only the asker's teams), so the sentence does not
// offer it either, but says the asker is not in it and which of their teams a command naming
// none is charged to, the one the example charges. err as it is otherwise.
func channelNotTheirs(c Command, err error) error {
	n := c.channelNote
	var e *qm.Error
	if n == nil || c.Who == nil || len(c.Who.Teams) == 0 || !errors.As(err, &e) || e != n.err {
		return err
	}
	if c.Verb != "request" && c.Verb != "quota-request" && c.Verb != "submit" {
		return err // a command that charges no team may name any
	}
	if slices.ContainsFunc(c.Who.Teams, func(t string) bool { return policy.SameName(t, n.team) }) {
		return err
	}
	charged := "your team " + c.Who.Teams[0]
	if len(c.Who.Teams) > 1 {
		charged = "your first team, " + c.Who.Teams[0]
	}
	if n.group {
		return &qm.Error{Code: e.Code, Example: e.Example, Message: fmt.Sprintf("%s names a user group or a person, not a team, and you are not in team %s, so %s cannot name it; without a team it is charged to %s.",
			policy.Quoted(n.typed, 40), n.team, chargeNoun(c.Verb), charged)}
	}
	if n.name {
		return &qm.Error{Code: e.Code, Example: e.Example, Message: fmt.Sprintf("%s names team %s, which you are not in, so %s cannot name it; without a team it is charged to %s.",
			policy.Quoted(n.typed, 40), n.team, chargeNoun(c.Verb), charged)}
	}
	if n.meant != "" {
		return &qm.Error{Code: e.Code, Example: e.Example, Message: fmt.Sprintf("%s is the channel of no team, and %s, the nearest, is the channel of team %s, which you are not in, so %s cannot name it; without a team it is charged to %s.",
			policy.Quoted(n.typed, 40), n.meant, n.team, chargeNoun(c.Verb), charged)}
	}
	return &qm.Error{Code: e.Code, Example: e.Example, Message: fmt.Sprintf("%s is the channel of team %s, which you are not in, so %s cannot name it; without a team it is charged to %s.",
		policy.Quoted(n.typed, 40), n.team, chargeNoun(c.Verb), charged)}
}

// setTemplate names the template typed: Template is it with A to Z in lower case, as names compare.
func (c *Command) setTemplate(typed string) {
	c.Template, c.templateTyped = policy.NameKey(typed), ""
	if c.Template != typed {
		c.templateTyped = typed
	}
}

// templateAsTyped is the template's name as it was typed.
func (c Command) templateAsTyped() string {
	if c.templateTyped != "" {
		return c.templateTyped
	}
	return c.Template
}

// bad is a refusal of bad input to verb: one sentence, and the verb's example (its placeholders
// are filled from the policy when the reply is made).
// dataExample is a request naming a data class, the asker's team's first ({data}).
const dataExample = "/gpu request 1 {class} for {duration} data {data}"

// submitDataExample is a job naming a data class; submitExample puts the example of the template
// typed in place of /gpu submit {batch}.
const submitDataExample = "/gpu submit {batch} data {data}"

func bad(verb, format string, args ...any) *qm.Error {
	ex := "/gpu request 1 {class} for {duration}"
	if s, ok := Lookup(verb); ok && len(s.Examples) > 0 {
		ex = s.Examples[0]
	}
	return qm.Invalid(ex, format, args...)
}

// Parse reads a /gpu command. The leading "/gpu" is optional, and "gpu" (the slash left out, or
// typed twice as in "/gpu gpu list") reads as it. Bad input is a *qm.Error with code qm.EINVALID,
// one sentence and an example.
func Parse(text string) (Command, error) { return ParseFor(text, nil) }

// ParseFor reads a /gpu command as Parse does, knowing the policy's class names: a class named
// like a word the grammar reads otherwise ("gpus" of "2 gpus", "x" of "2 x train", "hours" of
// "2 hours") is that class where the class goes.
func ParseFor(text string, classes []string) (Command, error) {
	return parseIn(text, classes, nil, nil, nil, nil)
}

// ParseIn reads a /gpu command as ParseFor does, knowing the policy's classes and its teams'
// channels too: where a team goes, a team's channel (#vision-gpu, or a chat platform's mention of
// it) names that team.
func ParseIn(text string, p *policy.Policy) (Command, error) { return parseKnowing(text, p, nil, nil) }

// parseKnowing reads a /gpu command as ParseIn does, knowing the catalog's template names too
// (nil: none), and the command words the installation offers (nil: those every one offers), which
// a misspelled command is compared with: a template named where a team goes is refused as a
// template.
func parseKnowing(text string, p *policy.Policy, templateNames, verbs []string) (Command, error) {
	if p == nil {
		return Parse(text)
	}
	return parseIn(text, p.ClassNames(), teamChannels(p), teamSet(p), nameKeys(templateNames), verbs)
}

// channelMistyped is the team channel that typed (#infra-gpux) is mistyped from by a letter, by
// nearest's rule, and its team; "" when none is near (channels as teamChannels gives them).
func channelMistyped(channels map[string]string, typed string) (channel, team string) {
	var named []string
	for ch, t := range channels {
		if t != "" && strings.HasPrefix(ch, "#") {
			named = append(named, ch)
		}
	}
	slices.Sort(named)
	if near := nearest(policy.ChannelKey(typed), named); near != "" {
		return near, channels[near]
	}
	return "", ""
}

// teamChannels are the policy's team channels (NameKey, with #, and as Discord passes those that
// discord.channels maps, <#CHANNEL_ID>) and the team of each ("" for a channel two teams share).
func teamChannels(p *policy.Policy) map[string]string {
	channels := map[string]string{}
	for _, t := range p.Teams {
		if t.Channel == "" {
			continue
		}
		k := policy.ChannelKey(t.Channel)
		if _, twice := channels[k]; twice {
			channels[k] = "" // two teams' channel names neither
			continue
		}
		channels[k] = t.Name
	}
	// Discord passes a channel picked from its list as <#CHANNEL_ID>: a team's channel that
	// discord.channels maps to its id names the team that way too.
	for name, id := range p.Discord.Channels {
		team, ok := channels[policy.ChannelKey(name)]
		if !ok || strings.TrimSpace(id) == "" {
			continue
		}
		k := "<#" + strings.TrimSpace(id) + ">"
		if prev, twice := channels[k]; twice && prev != team {
			team = ""
		}
		channels[k] = team
	}
	return channels
}

// teamSet is the policy's teams, by name.
func teamSet(p *policy.Policy) map[string]bool {
	teams := make(map[string]bool, len(p.Teams))
	for _, t := range p.Teams {
		teams[t.Name] = true
	}
	return teams
}

// nameKeys is names as a set of their keys (policy.NameKey), as the grammar compares names; nil
// for nil names (none known).
func nameKeys(names []string) map[string]bool {
	if names == nil {
		return nil
	}
	keys := make(map[string]bool, len(names))
	for _, n := range names {
		keys[policy.NameKey(n)] = true
	}
	return keys
}

func parseIn(text string, classes []string, channels map[string]string, teams, tmpls map[string]bool, verbs []string) (Command, error) {
	c, err := parseWith(text, nameKeys(classes), channels, teams, tmpls, verbs)
	c.classes, c.channels, c.teams = nil, nil, nil
	return c, err
}

// MaxCommand is the most characters a command line may have: far more than any command needs
// (a reason is at most MaxReason), and little enough that a longer one is refused before it is read.
const MaxCommand = 10000

func parseWith(text string, known map[string]bool, channels map[string]string, teams, tmpls map[string]bool, verbs []string) (Command, error) {
	if n := utf8.RuneCountInString(text); n > MaxCommand {
		return Command{}, qm.Invalid("/gpu help", "the command is %d characters long; keep it to %d or fewer.", n, MaxCommand)
	}
	f := words(shown(text))
	for range 2 {
		if len(f) > 0 && (strings.EqualFold(f[0], "/gpu") || strings.EqualFold(f[0], "gpu")) {
			f = f[1:]
		}
	}
	if len(f) == 0 {
		return Command{Verb: "help"}, nil
	}
	s, n := match(f)
	if s == nil {
		if near := nearVerbOf(f[0], verbs); near != "" { // misspelled: its help has examples in the policy's terms
			return Command{}, qm.Invalid("/gpu help "+near, "%s is not a /gpu command; the nearest is /gpu %s.", policy.Quoted(f[0], 40), near)
		}
		return Command{}, qm.Invalid("/gpu help", "%s is not a /gpu command; /gpu help lists them.", policy.Quoted(f[0], 40))
	}
	c, err := s.parse(Command{Verb: s.Name, classes: known, channels: channels, teams: teams}, f[n:])
	// putRight reads the command again with its words put right (fixed): where that parses, the
	// refusal is sentence with the command as meant for its example; a mistake elsewhere is
	// refused as that mistake, with its own example.
	putRight := func(fixed []string, sentence string) (Command, error) {
		c, err := s.parse(Command{Verb: s.Name, classes: known, channels: channels, teams: teams}, fixed)
		switch {
		case err != nil:
		case s.Name == "request" || s.Name == "estimate" || s.Name == "quota-request":
			// The general example, which the handler makes the command typed, put right.
			err = bad(s.Name, "%s", sentence)
		default:
			err = qm.Invalid("/gpu "+strings.Join(append(slices.Clone(s.Words), fixed...), " "), "%s", sentence)
		}
		return c, err
	}
	if fixed, sentence := submitWordInRequest(s.Name, f[n:]); sentence != "" {
		// team=reef, as /gpu submit writes it, in a request: read again as a request writes
		// it (team reef), so that the example is the request as meant.
		c, err = putRight(fixed, sentence)
	}
	if at, sentence := strayQuote(s.Name, f[n:]); sentence != "" {
		// Read without the stray quote, so that the refusal's example is the command as meant;
		// a mistake elsewhere is refused as that mistake, with its own example.
		fixed := slices.Clone(f[n:])
		fixed[at] = strings.Trim(fixed[at], `"'`)
		if fixed[at] == "" {
			fixed = slices.Delete(fixed, at, at+1)
		}
		if k, v, ok := strings.Cut(f[n+at], "="); ok && k != "" && !strings.ContainsAny(k, `"'`) {
			fixed[at] = k + "=" + strings.Trim(v, `"'`)
		}
		c, err = putRight(fixed, sentence)
	}
	if err != nil {
		if at, name, sentence, meant := accentedName(s.Name, f[n:], known, teams, channels); name != "" && !((meant != "" || teams[name]) && !takesTeam(s.Name)) {
			// A team, class or data class typed with its accents (équipe-vision for team
			// equipe-vision, fér for class fer, médical for data class medical), or a team's
			// channel without them (#sante for #santé) or mistyped (#vision-gpux): read again
			// with the name meant, so that the refusal's example is the command as meant; a
			// mistake elsewhere is refused as that mistake, with its own example.
			fixed := slices.Clone(f[n:])
			k, _, kv := strings.Cut(fixed[at], "=")
			// The word names a team (by its channel, mistyped or not, its mention, or its name
			// with accents), not a class or a data class.
			afterData := kv && strings.EqualFold(k, "data") || !kv && at > 0 && strings.EqualFold(fixed[at-1], "data")
			isTeam := (meant != "" || teams[name]) && !afterData && (!kv || strings.EqualFold(k, "team")) && (meant != "" || !known[name] || channelWord(unquoted(f[n+at])))
			switch {
			case kv:
				fixed[at] = k + "=" + name
			case isTeam && (s.Name == "request" || s.Name == "quota-request") && (at == 0 || !strings.EqualFold(fixed[at-1], "team")):
				// The team, by its channel mistyped, as a mention or as a channel, where a
				// request's team goes without the word team: the team meant after it, as a
				// request names it.
				fixed = slices.Insert(fixed, at, "team")
				fixed[at+1] = name
				typed := policy.Quoted(unquoted(f[n+at]), 40)
				sentence = fmt.Sprintf("%s is not a team name, and %s names its team after the word team; did you mean team %s?", typed, chargeNoun(s.Name), name)
				if meant != "" {
					sentence = fmt.Sprintf("%s is the channel of no team, and %s names its team after the word team; did you mean team %s, whose channel is %s?", typed, chargeNoun(s.Name), name, meant)
				}
			default:
				fixed[at] = name
			}
			c, err = putRight(fixed, sentence)
			if e := (*qm.Error)(nil); isTeam && errors.As(err, &e) && e.Message == sentence {
				c.channelNote = &channelNote{typed: unquoted(strings.TrimPrefix(f[n+at], k+"=")), meant: meant, team: name, name: meant == "", err: e}
			}
		} else if at, class := classWhereTeamGoes(s.Name, f[n:], known, teams, false); class != "" {
			// A class mentioned where a team goes (@kete): said to be a class, with the command
			// that names it where a class goes, or without it where the command takes no class.
			typed, _ := teamWord(s.Name, f[n:], at)
			sentence, fixed := classWhereTeam(s.Name, f[n:], at, typed, class, known)
			if c2, err2 := putRight(fixed, sentence); err2 != nil {
				c, err = c2, err2
			}
		} else if at, tmpl := templateNotTeam(s.Name, f[n:], known, teams, tmpls, true); tmpl != "" {
			// A template named where a team goes (@jupyterlab): said to be a template, with the
			// command that names it where a template goes, or without it.
			sentence, fixed := templateWhereTeam(s.Name, f[n:], at, tmpl, teams)
			if c2, err2 := putRight(fixed, sentence); err2 != nil {
				c, err = c2, err2
			}
		} else if at, name, sentence := groupNotTeam(s.Name, f[n:], teams); sentence != "" {
			// A user group mentioned where a team goes (@leads): read again with the team it
			// names (by its handle), or without it, so that the example charges the asker's team.
			fixed := slices.Clone(f[n:])
			switch k, _, kv := strings.Cut(fixed[at], "="); {
			case name != "" && kv:
				fixed[at] = k + "=" + name
			case name != "":
				fixed[at] = name
			default:
				fixed = withoutTeam(fixed, at)
			}
			if c2, err2 := putRight(fixed, sentence); err2 != nil {
				c, err = c2, err2
				if e := (*qm.Error)(nil); name != "" && errors.As(err, &e) && e.Message == sentence {
					typed := f[n+at]
					if k, v, kv := strings.Cut(typed, "="); kv && strings.EqualFold(k, "team") {
						typed = v
					}
					c.channelNote = &channelNote{typed: unquoted(typed), team: name, group: true, err: e}
				}
			}
		}
	} else if at, class := classWhereTeamGoes(s.Name, f[n:], known, teams, true); class != "" {
		// A class's name where a team goes (team kete, /gpu quota kete) reads as a name, but
		// names no team of the policy: refused as a class, as its mention is.
		typed, _ := teamWord(s.Name, f[n:], at)
		sentence, fixed := classWhereTeam(s.Name, f[n:], at, typed, class, known)
		c, err = putRight(fixed, sentence)
	} else if at, tmpl := templateNotTeam(s.Name, f[n:], known, teams, tmpls, false); tmpl != "" {
		// A template's name where a team goes (team jupyterlab) reads as a name, but names no
		// team of the policy: refused as a template, as above.
		sentence, fixed := templateWhereTeam(s.Name, f[n:], at, tmpl, teams)
		c, err = putRight(fixed, sentence)
	}
	return c, err
}

// templateNotTeam finds a word of a command's args, outside its free-text reason, that names a
// template of tmpls and no team or class of the policy where a team goes (after team, as team=,
// as /gpu quota's team or any word of /gpu report's, as teamWord reads it; @jupyterlab or
// jupyterlab), or, where bare, as a request's word that no keyword takes (a bare @jupyterlab, or
// jupyterlab after the class): its index and the template; "" where none does.
func templateNotTeam(verb string, args []string, classes, teams, tmpls map[string]bool, bare bool) (int, string) {
	if len(tmpls) == 0 || teams == nil {
		return -1, ""
	}
	for i := range args[:namesEnd(verb, args)] {
		w, ok := teamWord(verb, args, i)
		_, mention := policy.Mentioned(unquoted(args[i]))
		if !ok {
			// A request's word that is neither after a keyword nor a key=value: where bare is
			// true, a mention, or a word after the class (the class itself is the handler's to
			// refuse as a template, not a class).
			if !bare || verb != "request" || strings.Contains(args[i], "=") || i > 0 && valueKeyword(args[i-1]) ||
				!mention && !slices.ContainsFunc(args[:i], func(a string) bool { return classes[policy.NameKey(unquoted(a))] }) {
				continue
			}
			w = unquoted(args[i])
		}
		name, _ := policy.Mentioned(w)
		key := policy.NameKey(policy.FoldAccents(name))
		if tmpls[key] && !teams[key] && !classes[key] {
			return i, key
		}
	}
	return -1, ""
}

// valueKeyword reports whether w is a request's keyword that the word after it is the value of.
func valueKeyword(w string) bool {
	switch strings.ToLower(w) {
	case "template", "team", "data", "for", "duration":
		return true
	}
	return false
}

// templateWhereTeam is the refusal of template tmpl named at args[at] of verb where it is no
// template (templateNotTeam): one sentence saying it is a template, and args put right: a
// request's names it after template, where the request names no template already, in place of
// the word (and the team before it); any other command's go without it.
func templateWhereTeam(verb string, args []string, at int, tmpl string, teams map[string]bool) (string, []string) {
	typed, teamPlace := teamWord(verb, args, at)
	if !teamPlace {
		typed = unquoted(args[at])
	}
	_, mention := policy.Mentioned(typed)
	q := policy.Quoted(typed, 40)
	what := q + " is a template, not a team"
	if !teamPlace && !mention {
		what = q + " is a template"
	}
	fixed := withoutTeam(slices.Clone(args), at)
	switch verb {
	case "request":
		named := ""
		for i, w := range fixed[:namesEnd(verb, fixed)] {
			if strings.EqualFold(w, "template") && i+1 < len(fixed) {
				named = policy.NameKey(unquoted(fixed[i+1]))
			}
		}
		if named == tmpl && !teamPlace {
			return fmt.Sprintf("%s names the request's template again; give it once.", q), fixed
		}
		if named != "" {
			return fmt.Sprintf("%s; this request's template is %s.", what, named), fixed
		}
		pos := at
		if at > 0 && strings.EqualFold(args[at-1], "team") {
			pos = at - 1
		}
		fixed = slices.Insert(fixed, pos, "template", tmpl)
		if mention {
			return fmt.Sprintf("%s; a request names its template after the word template, without the @.", what), fixed
		}
		return fmt.Sprintf("%s; a request names its template after the word template.", what), fixed
	case "submit":
		return fmt.Sprintf("%s; a job's template is the word after /gpu submit.", what), fixed
	}
	return fmt.Sprintf("%s; a team is named as the policy writes it: %s.", what, policy.FewNames(tmpl, slices.Sorted(maps.Keys(teams)), "or")), fixed
}

// submitWordInRequest finds the first word of a request written as /gpu submit writes it (team=T,
// data=C, for=D, class=C, gpus=N: keys no template parameter may have), or its template written
// template=NAME before any template is named: the sentence that says
// how a request writes it, and args with it written so; "" where there is none.
func submitWordInRequest(verb string, args []string) ([]string, string) {
	if verb != "request" {
		return nil, ""
	}
	for i, w := range args {
		k, v, ok := strings.Cut(w, "=")
		if !ok || v == "" {
			continue
		}
		q := policy.Quoted(w, 40)
		fixed := slices.Delete(slices.Clone(args), i, i+1)
		v = unquoted(v)
		switch k = strings.ToLower(k); k {
		case "template":
			// template=NAME where the request names no template yet (a template may have a
			// parameter called template, given after template NAME): the template, written
			// before the parameters typed ahead of it.
			at := i
			named := false
			for j, p := range args[:i] {
				named = named || strings.EqualFold(p, "template")
				if strings.Contains(p, "=") && at == i {
					at = j
				}
			}
			if named {
				continue
			}
			return slices.Insert(fixed, at, "template", v), fmt.Sprintf("%s is not how a request names its template; a request writes template %s.", q, v)
		case "team", "data", "for":
			what := map[string]string{"team": "a team", "data": "a data class", "for": "how long"}[k]
			return slices.Insert(fixed, i, k, v), fmt.Sprintf("%s is how /gpu submit names %s; a request writes %s %s.", q, what, k, v)
		case "class":
			at := 0
			if len(fixed) > 0 && looksNumeric(unquoted(fixed[0])) {
				at = 1
			}
			return slices.Insert(fixed, at, v), fmt.Sprintf("%s is how /gpu submit names a class; a request names it after the number of GPUs, as in /gpu request 1 %s.", q, v)
		case "gpus":
			return slices.Insert(fixed, 0, v), fmt.Sprintf("%s is how /gpu submit names the number of GPUs; a request names it first, as in /gpu request %s.", q, v)
		}
	}
	return nil, ""
}

// teamInHandle is the one team whose name is a part of a user group's handle, between - _ or .
// (ljud-team, leads_bild-2 for team ljud, bild-2); "" where none or more than one is.
func teamInHandle(handle string, names []string) string {
	found := ""
	for _, t := range names {
		for at := 0; at+len(t) <= len(handle); at++ {
			if handle[at:at+len(t)] != t {
				continue
			}
			sep := func(i int) bool { return i < 0 || i >= len(handle) || strings.ContainsRune("-_.", rune(handle[i])) }
			if sep(at-1) && sep(at+len(t)) {
				if found != "" && found != t {
					return ""
				}
				found = t
			}
		}
	}
	return found
}

// groupNotTeam finds a mention (@leads, as Slack sends a user group's mention) where a command
// names a team (after team, as team=, as /gpu quota's team, or any word of /gpu report's) that names no
// team: its index, the team its handle is closest to ("" where none is) and the sentence that
// says a user group is not a team, naming that team or how teams are named; "" where there is none.
func groupNotTeam(verb string, args []string, teams map[string]bool) (int, string, string) {
	names := slices.Sorted(maps.Keys(teams))
	for i := range args[:namesEnd(verb, args)] {
		w, ok := teamWord(verb, args, i)
		if !ok {
			continue
		}
		name, mention := policy.Mentioned(w)
		if !mention || teams[policy.FoldAccents(name)] || len(names) == 0 {
			continue
		}
		q := policy.Quoted(w, 40)
		key := policy.NameKey(policy.FoldAccents(name))
		near := policy.NearMiss(key, names)
		if near == "" {
			near = teamInHandle(key, names)
		}
		if near != "" {
			return i, near, fmt.Sprintf("%s names a user group or a person, not a team; did you mean team %s?", q, near)
		}
		return i, "", fmt.Sprintf("%s names a user group or a person, not a team; a team is named without the @, as the policy writes it: %s.", q, policy.FewNames(name, names, "or"))
	}
	return 0, "", ""
}

// teamWord is args[i] where it stands for a team of verb: after team, as team=, as /gpu quota's
// team or as any word of /gpu report's (a week and a team, in either order), unquoted; ok is false
// where args[i] names no team.
func teamWord(verb string, args []string, i int) (string, bool) {
	w := args[i]
	k, v, kv := strings.Cut(w, "=")
	switch {
	case kv && strings.EqualFold(k, "team"):
		w = v
	case kv:
		return "", false
	case i > 0 && strings.EqualFold(args[i-1], "team"):
	case i == 0 && verb == "quota", verb == "report":
	default:
		return "", false
	}
	return unquoted(w), true
}

// classWhereTeamGoes finds a mention where a command names a team (as teamWord reads it) whose
// handle is a class of the policy (@kete for class kete) and names no team, and, where plain, a
// class's name written without the @ (team kete), which the policy's teams (known) do not have:
// its index and the class.
func classWhereTeamGoes(verb string, args []string, classes, teams map[string]bool, plain bool) (int, string) {
	for i := range args[:namesEnd(verb, args)] {
		w, ok := teamWord(verb, args, i)
		if !ok {
			continue
		}
		name, mention := policy.Mentioned(w)
		key := policy.NameKey(policy.FoldAccents(name))
		if (mention || plain && teams != nil) && classes[key] && !teams[policy.FoldAccents(name)] {
			return i, key
		}
	}
	return -1, ""
}

// withoutTeam is args without the team named at args[at]: the word, and the team before it
// where it follows that keyword (team @leads), so that the command charges the asker's own team.
func withoutTeam(args []string, at int) []string {
	if at > 0 && strings.EqualFold(args[at-1], "team") {
		return slices.Delete(args, at-1, at+1)
	}
	return slices.Delete(args, at, at+1)
}

// classWhereTeam is the refusal of a class mentioned where a team goes (at, in args of verb):
// one sentence saying it is a class, not a team, and args put right, the class where a class
// goes (after the GPU count of a request, an estimate or a quota request, in place of the one
// typed; a job's class=, where it names none) and no team; nil args where the command takes no
// class (/gpu quota, /gpu report).
func classWhereTeam(verb string, args []string, at int, typed, class string, classes map[string]bool) (string, []string) {
	q := policy.Quoted(typed, 40)
	fixed := withoutTeam(slices.Clone(args), at)
	switch verb {
	case "request", "estimate", "quota-request":
		for i, w := range fixed[:namesEnd(verb, fixed)] {
			if classes[policy.NameKey(policy.FoldAccents(w))] {
				fixed[i] = class
				break
			}
		}
		if _, mention := policy.Mentioned(typed); !mention {
			return fmt.Sprintf("%s is a class, not a team; a class is named after the number of GPUs.", q), fixed
		}
		return fmt.Sprintf("%s is a class, not a team; a class is named without the @, after the number of GPUs.", q), fixed
	case "quota":
		return fmt.Sprintf("%s is a class, not a team; /gpu quota shows your team's quota of every class, %s among them.", q, class), fixed
	case "report":
		return fmt.Sprintf("%s is a class, not a team; /gpu report shows the use of every class, %s among them.", q, class), fixed
	}
	if verb == "submit" {
		if !slices.ContainsFunc(fixed, func(w string) bool { return strings.HasPrefix(strings.ToLower(w), "class=") }) {
			fixed = append(fixed, "class="+class)
		}
		return fmt.Sprintf("%s is a class, not a team; a job names its class as class=%s.", q, class), fixed
	}
	return fmt.Sprintf("%s is a class, not a team; a class is named without the @.", q), fixed
}

// namesEnd is where the words of a command's args that can name things end: before the reason
// of deny (every word after the lease) and of a quota request (from "because" on), which are free
// text.
func namesEnd(verb string, args []string) int {
	switch verb {
	case "deny":
		return min(len(args), 1)
	case "quota-request":
		if i := becauseAt(args); i >= 0 {
			return i
		}
	}
	return len(args)
}

// reasonMarks are the marks that may follow the word before a reason (because: poster session,
// because - poster session) and are not part of it.
const reasonMarks = ":,;.!-–—"

// becauseAt is the index of the word "because" that starts a quota request's reason, written
// alone or with marks after it (because:, because,); -1 when there is none.
func becauseAt(args []string) int {
	for i, a := range args {
		if strings.EqualFold(a, "because") {
			return i
		}
	}
	for i, a := range args {
		if b := strings.TrimRight(a, reasonMarks); b != a && strings.EqualFold(b, "because") {
			return i
		}
	}
	return -1
}

// accentedName finds the first word of a command's args, outside its free-text reason, that is
// no name as typed but one with its accents left out, as the policy writes names (a to z), or
// with a dash that looks like the hyphen written as the hyphen (bild‐2 for bild-2): a
// team (équipe-vision, or team=Équipe-Vision, for team equipe-vision; @harakeke, written as a
// mention, for team harakeke), a class (fér for fer) or
// a data class after data (médical for medical); or a team's channel typed without the accents
// the policy gives it (#sante for #santé). It returns the word's index, the name meant (the
// team, for a channel), the sentence that refuses the word and, for a channel, the channel
// meant; "" where there is none.
func accentedName(verb string, args []string, classes, teams map[string]bool, channels map[string]string) (int, string, string, string) {
	end := namesEnd(verb, args)
	for i, w := range args[:end] {
		k, v, kv := strings.Cut(w, "=")
		if kv {
			if k = strings.ToLower(k); k != "team" && k != "class" && k != "data" {
				continue // a template's parameter, whose value is the template's to judge
			}
			w = v
		}
		w = unquoted(w)
		q := policy.Quoted(w, 40)
		name, mention := policy.Mentioned(w)
		// Accents left out, and a dash that looks like the hyphen (bild‐2, a100–80g) read as it.
		folded := policy.FoldAccents(plainDashes.Replace(name))
		if mention {
			// @harakeke (a Slack user group, or a team written as a person is mentioned): a team
			// named without the @, as team harakeke is.
			afterData := kv && k == "data" || !kv && i > 0 && strings.EqualFold(args[i-1], "data")
			if teams[folded] && !classes[folded] && (!kv || k == "team") && !afterData {
				return i, folded, fmt.Sprintf("%s is not a team name; did you mean %s?", q, folded), ""
			}
			// @abyss where a class goes: the class, without the @.
			if _, teamPlace := teamWord(verb, args, i); teamPlace || afterData || teams == nil {
				continue
			}
			if key := policy.NameKey(folded); classes[key] && !teams[key] && (!kv || k == "class") && (verb == "request" || verb == "estimate" || verb == "quota-request" || kv) {
				return i, key, fmt.Sprintf("%s is not a class name; did you mean %s?", q, key), ""
			}
			continue
		}
		if strings.HasPrefix(w, "#") {
			if _, ok := channels[policy.ChannelKey(w)]; ok {
				continue
			}
			var meant, team string
			for ch, t := range channels {
				if t != "" && policy.FoldAccents(ch) == folded {
					if meant != "" {
						meant = "" // two channels alike: which one is meant is unclear
						break
					}
					meant, team = ch, t
				}
			}
			if meant == "" {
				meant, team = channelMistyped(channels, w)
			}
			if meant != "" {
				return i, team, fmt.Sprintf("%s is the channel of no team; did you mean %s, the channel of team %s?", q, meant, team), meant
			}
			if t := policy.NameKey(strings.TrimPrefix(folded, "#")); teams[t] && !classes[t] {
				// #vision: a team's name written as a channel is.
				return i, t, fmt.Sprintf("%s is the channel of no team; did you mean team %s?", q, t), ""
			}
			continue
		}
		if folded == policy.NameKey(w) {
			continue // no accent to put right
		}
		afterData := kv && k == "data" || !kv && i > 0 && strings.EqualFold(args[i-1], "data")
		switch {
		case afterData && policy.ValidDataClass(folded):
			return i, folded, fmt.Sprintf("%s is not a data class, which is written with the letters a to z, digits, dots, - and _; did you mean %s?", q, folded), ""
		case !afterData && teams[folded] && !classes[folded] && (!kv || k == "team"):
			return i, folded, fmt.Sprintf("%s is not a team name; did you mean %s?", q, folded), ""
		case !afterData && classes[folded] && !teams[folded] && (!kv || k == "class"):
			return i, folded, fmt.Sprintf("%s is not a class name; did you mean %s?", q, folded), ""
		}
	}
	return 0, "", "", ""
}

// strayQuote finds the first word of a command's args, outside its free-text reason and its
// template parameters (but for team= and class=, which name things), that a quote opens and none closes (or that a quote closes and none opens): its index and the
// sentence that says so (from its capital letter, as every refusal is), naming the word without
// the quote; "" when every quote is paired. Such
// a word, quoted again in a refusal, would read as ""interactive".
func strayQuote(verb string, args []string) (int, string) {
	end := namesEnd(verb, args)
	for i, w := range args[:end] {
		if k, v, ok := strings.Cut(w, "="); ok && k != "" && !strings.ContainsAny(k, `"'`) {
			if k = strings.ToLower(k); k != "team" && k != "class" {
				continue // a template's parameter, whose value may be free text with a quote in it
			}
			w = v
		}
		if w == "" {
			continue
		}
		open, shut := w[0] == '"' || w[0] == '\'', w[len(w)-1] == '"' || w[len(w)-1] == '\''
		if open && shut && len(w) >= 2 && w[0] == w[len(w)-1] || !open && !shut {
			continue
		}
		name := strings.Trim(w, `"'`)
		if name == "" {
			return i, "A quote stands alone and is not closed; leave it out."
		}
		q := policy.Quoted(name, 40)
		bare := q[1 : len(q)-1]
		if open {
			return i, fmt.Sprintf("The quote before %s is not closed; leave it out or close it, as in %s.", bare, q)
		}
		return i, fmt.Sprintf("The quote after %s was never opened; leave it out or open it too, as in %s.", bare, q)
	}
	return 0, ""
}

// shown is a command line as it shows: without the characters that do not show themselves
// (Unicode's format characters: zero-width spaces and joiners, the byte order mark, soft hyphens,
// the bidirectional controls) and without control characters other than white space. Pasted
// text carries them unseen; a name is read as the letters it shows, so "robo<ZWSP>tics" is the
// team robotics, and a right-to-left override is read, and quoted in a refusal, as the letters
// it holds rather than as the word it makes the chat show.
func shown(text string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) || unicode.IsControl(r) && !unicode.IsSpace(r) {
			return -1
		}
		return r
	}, text)
}

// nearVerbOf is nearVerb among verbs, the command words an installation offers, where it knows
// them (nil: it does not).
func nearVerbOf(w string, verbs []string) string {
	if verbs == nil {
		return nearVerb(w)
	}
	return nearest(w, verbs)
}

// nearVerb is the command word closest to a word that is none (request for "requst"), among the
// commands every installation offers; empty when none is close (see nearest).
func nearVerb(w string) string {
	var verbs []string
	for _, s := range table {
		if s.offered == nil && len(s.Words) > 0 {
			verbs = append(verbs, s.Words[0])
		}
	}
	return nearest(w, verbs)
}

// nearest is the one of names closest to w, which is none of them; empty when none is close: one
// letter off for a word of up to four letters, two for a longer one (policy.NearMiss).
func nearest(w string, names []string) string { return policy.NearMiss(w, names) }

// nearExclusive is whether w, no word a request takes, is exclusive or reservation mistyped: a
// letter or two off either, in a word of six letters or more.
func nearExclusive(w string) bool {
	if len(w) < 6 {
		return false
	}
	for _, k := range []string{"exclusive", "reservation"} {
		if d := policy.EditDistance(w, k); d > 0 && d <= 2 {
			return true
		}
	}
	return false
}

// plainQuotes are the typographic quotes that chat apps and keyboards put in for typed ones
// (“ ” „ ‘ ’ ‚), as the plain quotes they stand for.
var plainQuotes = strings.NewReplacer("\u201c", `"`, "\u201d", `"`, "\u201e", `"`, "\u2018", "'", "\u2019", "'", "\u201a", "'")

// words splits a command line at white space, reading smart quotes as plain ones. A quoted value
// of a key (name="x y") is one word, the value without its quotes (name=x y); a quoted phrase
// ("a deadline") is one word with them, which a reason drops (reasonText). A quote that is not
// closed at the end of a word is an ordinary character.
func words(text string) []string {
	text = plainQuotes.Replace(text)
	f, at := fields(text)
	// closes[q][j] is the first word from j on that ends with the quote q (len(f) if none), so
	// that a quote never closed is not looked for from every word after it.
	closes := map[byte][]int{'"': make([]int, len(f)+1), '\'': make([]int, len(f)+1)}
	for q, c := range closes {
		c[len(f)] = len(f)
		for j := len(f) - 1; j >= 0; j-- {
			if c[j] = c[j+1]; closesWith(f[j], q) {
				c[j] = j
			}
		}
	}
	var out []string
	for i := 0; i < len(f); i++ {
		w := f[i]
		key, rest := "", w
		if k, v, ok := strings.Cut(w, "="); ok && k != "" && !strings.ContainsAny(k, `"'`) {
			key, rest = k+"=", v
		}
		if rest == "" || rest[0] != '"' && rest[0] != '\'' {
			out = append(out, w)
			continue
		}
		q := rest[0]
		// The word that opens the quote closes it too when a quote ends what follows the opening one.
		end := closes[q][i+1]
		if len(rest) >= 2 && closesWith(rest, q) {
			end = i
		}
		if end == len(f) {
			out = append(out, w)
			continue
		}
		// The phrase as typed, from its opening quote to its closing one: the white space
		// between its words is kept as it was, so a value reaches the job with its spaces.
		phrase := text[at[i]+len(key) : at[end]+len(f[end])]
		if key != "" {
			// A quote inside written as a shell writes it (\" in "…", \' in '…') is the quote.
			inner := strings.ReplaceAll(phrase[1:len(phrase)-1], `\`+string(q), string(q))
			phrase = key + strings.TrimSpace(inner)
		}
		out = append(out, phrase)
		i = end
	}
	return out
}

// closesWith says whether word ends with the quote q, one that no backslash escapes (\" is a
// quote inside a quoted value, not its end).
func closesWith(word string, q byte) bool {
	if word == "" || word[len(word)-1] != q {
		return false
	}
	n := 0
	for i := len(word) - 2; i >= 0 && word[i] == '\\'; i-- {
		n++
	}
	return n%2 == 0
}

// fields is strings.Fields of text, with where each field starts in text.
func fields(text string) (f []string, at []int) {
	start := -1
	for i, r := range text {
		switch {
		case unicode.IsSpace(r) && start >= 0:
			f, at = append(f, text[start:i]), append(at, start)
			start = -1
		case !unicode.IsSpace(r) && start < 0:
			start = i
		}
	}
	if start >= 0 {
		f, at = append(f, text[start:]), append(at, start)
	}
	return f, at
}

// unquoted is s without one pair of plain quotes around all of it. Where a name goes (a class,
// team, template, data class, user or lease id), a quoted word is the name inside its quotes:
// "interactive" (or “interactive”, which words reads as it) is interactive.
func unquoted(s string) string {
	for _, q := range []string{`"`, "'"} {
		if len(s) >= 2 && strings.HasPrefix(s, q) && strings.HasSuffix(s, q) && !strings.Contains(s[1:len(s)-1], q) {
			return strings.TrimSpace(s[1 : len(s)-1])
		}
	}
	return s
}

// unquotedWords are words that hold no free text, each without the quotes around all of it:
// where a number or a duration goes, as where a name goes, a word in quotes (“1”, "2h", ‘+2’,
// as a phone or a copied example writes them) is the value inside them.
func unquotedWords(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = unquoted(w)
	}
	return out
}

// leaseArg reads the lease id where one goes, quoted or not.
func leaseArg(verb, s string) (qm.LeaseID, *qm.Error) {
	s = unquoted(s)
	id, err := qm.ParseLeaseID(s)
	if err != nil && policy.OtherDigits(s) {
		// L-١, L-１: refused for its digits; where they are of one script, the id they write
		// comes back with the refusal, for the example (typedLeaseExample keeps it only where
		// it names a lease the asker may name).
		msg := "%s is written with digits other than 0-9; write the lease id with the digits 0-9, like L-42."
		if meant, clear := policy.ASCIIDigits(s); clear {
			if id, err := qm.ParseLeaseID(meant); err == nil {
				return id, qm.Invalid(strings.ReplaceAll(leaseExample(verb), leasePlaceholder, id.String()),
					"%s is written with digits other than 0-9; write the lease id with the digits 0-9.", policy.Quoted(s, 40))
			}
		}
		return 0, qm.Invalid(leaseExample(verb), msg, policy.Quoted(s, 40))
	}
	if fixed := plainDashes.Replace(s); err != nil && fixed != s {
		// L–1, L−1: a dash that looks like the hyphen. The id it writes comes back with the
		// refusal, for the example, as for other digits.
		if id, err := qm.ParseLeaseID(fixed); err == nil {
			return id, qm.Invalid(strings.ReplaceAll(leaseExample(verb), leasePlaceholder, id.String()),
				"%s is written with a dash other than the hyphen -; write the lease id with the hyphen: %s.", policy.Quoted(s, 40), id)
		}
	}
	if bare := strings.Trim(s, leaseMarks); err != nil && bare != s && strings.HasPrefix(strings.ToUpper(bare), "L-") {
		// L-1. (L-1) `L-1` L-1,: the id with a mark a sentence or a paste left around it. The
		// id comes back with the refusal, for the example, so that it names this lease.
		if id, err := qm.ParseLeaseID(bare); err == nil {
			return id, qm.Invalid(strings.ReplaceAll(leaseExample(verb), leasePlaceholder, id.String()),
				"%s is not a lease id; write it without the marks around it: %s.", policy.Quoted(s, 40), id)
		}
	}
	if m := leaseOtherWay.FindStringSubmatch(strings.Trim(s, leaseMarks)); err != nil && m != nil {
		// L1, #1, lease-1: one lease all the same, written another way. The id comes back with
		// the refusal, for the example, so that it names this lease.
		if id, err := qm.ParseLeaseID(m[1] + m[2]); err == nil {
			return id, qm.Invalid(strings.ReplaceAll(leaseExample(verb), leasePlaceholder, id.String()),
				"%s is not a lease id; lease ids look like L-42: %s.", policy.Quoted(s, 40), id)
		}
	}
	if err != nil {
		return 0, qm.Invalid(leaseExample(verb), "%s is not a lease id; lease ids look like L-42.", policy.Quoted(s, 40))
	}
	return id, nil
}

// leaseOtherWay is a lease id written another way than L-42 that names one lease all the same:
// without its hyphen or with another mark for it (L42, L_42), as the word lease (lease-42,
// Lease42), or as a number after # (#42).
var leaseOtherWay = regexp.MustCompile(`^(?i:l|lease)[-_.:#=]?([0-9]{1,18})$|^#([0-9]{1,18})$`)

// dataWord reports whether w, after "data", is one of the command's own words (policy.DataWord:
// for, team, exclusive…), which no data class may be: the data class was left out.
func dataWord(w string) bool {
	_, ok := policy.DataWord(policy.NameKey(unquoted(w)))
	return ok
}

// leaseOverTwoWords is the lease id that the first two of args write when joined (L 1, L- 1,
// lease 1), where the first alone names no lease; false where they do not write one.
func leaseOverTwoWords(verb string, args []string) (qm.LeaseID, bool) {
	if len(args) < 2 {
		return 0, false
	}
	if id, _ := leaseArg(verb, args[0]); id != 0 {
		return 0, false
	}
	id, _ := leaseArg(verb, unquoted(args[0])+unquoted(args[1]))
	return id, id != 0
}

// leaseMarks are what a sentence, a paste or chat formatting leaves around a lease id: stops,
// brackets, quotes and the marks of code and emphasis.
const leaseMarks = ".,;:!?()[]{}<>`*_~\"'“”‘’"

// plainDashes are the dashes that look like the hyphen - (which autocorrect, a word processor or
// a copied message put in for it: the hyphen ‐, the non-breaking hyphen, the figure, en and em
// dashes, the minus sign, and the small and full-width hyphen-minus), as the hyphen.
var plainDashes = strings.NewReplacer("\u2010", "-", "\u2011", "-", "\u2012", "-", "\u2013", "-", "\u2014", "-",
	"\u2015", "-", "\u2212", "-", "\ufe63", "-", "\uff0d", "-")

func parseExtend(c Command, args []string) (Command, error) {
	if len(args) == 1 {
		if id, perr := leaseArg(c.Verb, args[0]); perr == nil {
			// The lease and no length: the example extends the lease typed (one the asker may
			// not name is put right as the others are: typedLeaseExample).
			c.Lease = id
			return c, qm.Invalid("/gpu extend "+id.String()+" 2h", "/gpu extend needs how much longer after the lease id, like 2h.")
		}
	}
	if len(args) < 2 {
		return c, missingLease(c.Verb, "/gpu extend needs a lease id and how much longer, like 2h")
	}
	if id, ok := leaseOverTwoWords(c.Verb, args); ok {
		// extend L 1 2h: the extension meant, by the length typed after the id, else by 2h.
		d := 2 * time.Hour
		if v, err := durationOf(unquotedWords(args[2:])); err == nil {
			d = v
		}
		c.Lease, c.Duration = id, d
		return c, qm.Invalid("/gpu extend "+id.String()+" "+policy.FormatDuration(d), "%s is not a lease id; write it as one word: %s.", policy.Quoted(strings.Join(args[:2], " "), 40), id)
	}
	if _, first := leaseArg(c.Verb, args[0]); first != nil {
		// The length first, then the lease (extend 2h L-1): the extension meant, in its order.
		if id, perr := leaseArg(c.Verb, args[len(args)-1]); perr == nil {
			words := unquotedWords(args[:len(args)-1])
			d, err := durationOf(words)
			if err != nil {
				d = meantDuration(strings.Join(words, " "), err) // +2h, 2h.: the length meant
			}
			if d > 0 {
				c.Lease, c.Duration = id, d
				return c, qm.Invalid("/gpu extend "+id.String()+" "+policy.FormatDuration(d),
					"/gpu extend names the lease id first, then how much longer, like %s %s.", id, policy.FormatDuration(d))
			}
		}
	}
	id, perr := leaseArg(c.Verb, args[0])
	c.Lease = id
	if perr != nil && id == 0 {
		return c, perr
	}
	rest := unquotedWords(args[1:])
	if perr == nil {
		// extend L-1 L-2 1h: one lease at a time, each by the length typed (else 2h). A bare
		// number is a length (extend L-1 1 hour), not a lease.
		ids := []qm.LeaseID{id}
		for len(rest) > 0 && len(rest[0]) > 2 && strings.EqualFold(rest[0][:2], "L-") {
			next, err := leaseArg(c.Verb, rest[0])
			if err != nil {
				break
			}
			ids, rest = append(ids, next), rest[1:]
		}
		if len(ids) > 1 {
			d := 2 * time.Hour
			if v, err := durationOf(rest); err == nil {
				d = v
			}
			c.Duration = d
			length := policy.FormatDuration(d)
			return c, qm.Invalid("/gpu extend "+id.String()+" "+length, "/gpu extend takes one lease at a time: %s first, then %s.", id, eachAfter(c.Verb, ids[1:], length))
		}
	}
	if strings.EqualFold(rest[0], "by") || strings.EqualFold(rest[0], "for") {
		if len(rest) == 1 {
			// "/gpu extend L-1 for": the duration is missing, not empty.
			ex := "/gpu extend " + id.String() + " 2h"
			if perr != nil {
				return c, perr.WithExample(ex)
			}
			return c, qm.Invalid(ex, "%s must be followed by how much longer, like 2h.", policy.Quoted(rest[0], 40))
		}
		rest = rest[1:]
	}
	if perr == nil && c.classes[policy.NameKey(rest[0])] {
		// A class where the length goes (extend L-1 train): an extension keeps the lease's
		// class. The example extends the lease by the length typed after it, else by 2h.
		d := 2 * time.Hour
		if len(rest) > 1 {
			if v, err := durationOf(rest[1:]); err == nil {
				d = v
			}
		}
		c.Duration = d
		return c, qm.Invalid("/gpu extend "+id.String()+" "+policy.FormatDuration(d),
			"%s is a class, not a length; /gpu extend takes a lease id and how much longer.", policy.Quoted(rest[0], 40))
	}
	if first, last := durationWords(rest, 0, rest[0]); last < len(rest)-1 && perr == nil {
		// A length, then more: a second length (1h 2h), or words /gpu extend does not take
		// (team reef). The example extends the lease by the first.
		if d, err := parseDur(first); err == nil {
			c.Duration = d
			ex := "/gpu extend " + id.String() + " " + policy.FormatDuration(d)
			more := rest[last+1:]
			if _, err := durationOf(more); err == nil {
				return c, qm.Invalid(ex, "%s gives two lengths; give one.", policy.Quoted(strings.Join(rest, " "), 40))
			}
			return c, qm.Invalid(ex, "%s is not part of /gpu extend, which takes a lease id and how much longer; leave it out.", policy.Quoted(strings.Join(more, " "), 40))
		} else if d := meantDuration(strings.Join(rest[:last+1], " "), err); d > 0 {
			// 1h 30 team reef: the length as people often write it is the first mistake.
			c.Duration = d
			return c, durationProblem(c.Verb, strings.Join(rest[:last+1], " "), err, "30m, 2h or 1d").WithExample("/gpu extend " + id.String() + " " + policy.FormatDuration(d))
		}
	}
	d, err := durationOf(rest)
	if perr != nil {
		// The id in other digits: the example extends it, written with 0-9, by the length typed
		// where that is a duration.
		if err == nil {
			c.Duration = d
			return c, perr.WithExample("/gpu extend " + id.String() + " " + policy.FormatDuration(d))
		}
		return c, perr
	}
	if err != nil {
		// The example extends the lease typed, not one of nobody's.
		ex := "/gpu extend " + id.String() + " 2h"
		if d := meantDuration(strings.Join(rest, " "), err); d > 0 {
			ex = "/gpu extend " + id.String() + " " + policy.FormatDuration(d)
			c.Duration = d
		}
		return c, durationProblem(c.Verb, strings.Join(rest, " "), err, "30m, 2h or 1d").WithExample(ex)
	}
	c.Duration = d
	return c, nil
}

func parseDeny(c Command, args []string) (Command, error) {
	if len(args) < 1 {
		return c, missingLease(c.Verb, "/gpu deny needs a lease id, then an optional reason")
	}
	if id, ok := leaseOverTwoWords(c.Verb, args); ok {
		// deny L 1 REASON: the denial meant, with the reason typed.
		c.Lease = id
		ex := strings.ReplaceAll(leaseExample(c.Verb), leasePlaceholder, id.String())
		if r, rerr := reasonText(c.Verb, denialWords(args[2:])); rerr == nil && r != "" {
			c.Reason, ex = r, "/gpu deny "+id.String()+" "+r
		}
		return c, qm.Invalid(ex, "%s is not a lease id; write it as one word: %s.", policy.Quoted(strings.Join(args[:2], " "), 40), id)
	}
	id, perr := leaseArg(c.Verb, args[0])
	c.Lease = id
	if perr != nil && id != 0 && len(args) > 1 {
		// The id in other digits: the example denies it, written with 0-9, with the reason typed.
		if r, rerr := reasonText(c.Verb, denialWords(args[1:])); rerr == nil && r != "" {
			c.Reason = r
			return c, perr.WithExample("/gpu deny " + id.String() + " " + r)
		}
	}
	if perr != nil {
		return c, perr
	}
	r, perr := reasonText(c.Verb, denialWords(args[1:]))
	if perr != nil {
		// The example denies the lease typed, with a reason within the limit.
		return c, perr.WithExample(strings.ReplaceAll(leaseExample(c.Verb), leasePlaceholder, id.String()))
	}
	c.Reason = r
	return c, nil
}

// denialWords are the words of a denial's reason without a lead word, marked or bare (reason: too
// big, because - booked, reason too big): the words after it are the reason, as after a quota
// request's because. A lead word with nothing after it but marks (reason, Reason:, because -)
// labels a reason that was not written: there are no words, as Discord reads its reason option
// left empty. Words with no such lead are as typed, and so is "because of …", which is the
// reason's own phrase, not a label.
func denialWords(words []string) []string {
	lead := func(w string) bool { return strings.EqualFold(w, "reason") || strings.EqualFold(w, "because") }
	if len(words) > 0 && lead(strings.TrimRight(words[0], reasonMarks)) && strings.Trim(strings.Join(words[1:], ""), reasonMarks) == "" {
		return nil
	}
	switch {
	case len(words) >= 2 && strings.TrimRight(words[0], reasonMarks) != words[0] && lead(strings.TrimRight(words[0], reasonMarks)):
		return words[1:]
	case len(words) >= 3 && lead(words[0]) && strings.Trim(words[1], reasonMarks) == "":
		return words[2:]
	case len(words) >= 2 && lead(words[0]) && !(strings.EqualFold(words[0], "because") && strings.EqualFold(words[1], "of")):
		return words[1:]
	}
	return words
}

// backtickLookalike is the character a backtick in a reason is kept as: it shows the same and
// opens no code in Slack or Discord.
const backtickLookalike = '\u02cb'

// MaxReason is the most characters a reason (a denial's, a quota request's) may have: what the
// chat forms allow (bot.MaxReason, which the adapters know), and what an approval card shows in
// full.
const MaxReason = bot.MaxReason

// invisible are the characters that change how chat shows the text around them without showing
// themselves: bidirectional overrides, embeddings and isolates, direction marks, zero-width
// spaces and the byte order mark. A reason someone typed keeps none of them, so what the
// approvers read is what was typed.
var invisible = strings.NewReplacer(
	"\u202a", "", "\u202b", "", "\u202c", "", "\u202d", "", "\u202e", "",
	"\u2066", "", "\u2067", "", "\u2068", "", "\u2069", "",
	"\u200e", "", "\u200f", "", "\u061c", "",
	"\u200b", "", "\u2060", "", "\ufeff", "", "\u180e", "",
)

// reasonText is the free text of args as a reason: words joined by single spaces, control and
// invisible characters removed, and each backtick kept as its look-alike ˋ (a reason is shown
// to others amid the bot's own text, where a backtick would open code, or close the message's,
// and leave the marks around it formatting); refused when longer than MaxReason characters.
func reasonText(verb string, args []string) (string, *qm.Error) {
	s := strings.Join(strings.Fields(invisible.Replace(strings.Join(args, " "))), " ")
	s = unquoted(s)
	s = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsControl(r):
			return -1
		case r == '`':
			return backtickLookalike
		}
		return r
	}, s)
	if n := utf8.RuneCountInString(s); n > MaxReason {
		return s, bad(verb, "the reason is %d characters long; keep it to %d or fewer.", n, MaxReason)
	}
	return s, nil
}

// parseWords reads the words /gpu templates searches for: all of them, as one search.
func parseWords(c Command, args []string) (Command, error) {
	words := make([]string, len(args))
	for i, a := range args {
		words[i] = unquoted(a)
	}
	c.Arg = strings.Join(words, " ")
	return c, nil
}

func parseTemplate(c Command, args []string) (Command, error) {
	if len(args) > 1 && !strings.Contains(args[0], "=") && strings.Contains(args[1], "=") {
		// template NAME key=value: the preview takes no parameters, and /gpu submit runs the
		// template with them; the example is the template named.
		return c, qm.Invalid("/gpu template "+unquoted(args[0]), "/gpu template takes only a template's name, not %s; /gpu submit runs a template with its parameters.",
			policy.Quoted(strings.Join(args[1:], " "), 60))
	}
	if len(args) != 1 {
		return c, bad(c.Verb, "/gpu template needs one template name; /gpu templates lists them.")
	}
	c.setTemplate(unquoted(args[0]))
	return c, nil
}

// submitKeys are the keys /gpu submit reads itself, with what each names.
var submitKeys = map[string]string{"team": "a team", "for": "the length", "class": "a class", "gpus": "the number of GPUs"}

func parseSubmit(c Command, args []string) (Command, error) {
	if len(args) < 1 {
		return c, bad(c.Verb, "/gpu submit needs a template name; /gpu templates lists them.")
	}
	c.setTemplate(unquoted(args[0]))
	given := map[string]bool{}
	var late *qm.Error // a length refused once the rest is read
	// A key given again (team=, for=, class=, gpus=, data) is refused once the rest is read, with
	// the job as typed for the example, the key given once: its first value kept, as a request
	// keeps the first of a team, data class or template it names twice. twice is that refusal,
	// dropped the words given again.
	var twice *qm.Error
	dropped := map[int]bool{}
	// team= given twice: where each is typed, and the second team.
	teamAt, otherAt, otherTeam := 0, 0, ""
	again := func(at, n int, format string, args ...any) {
		if twice == nil {
			twice = bad(c.Verb, format, args...)
		}
		for j := at; j < at+n; j++ {
			dropped[j] = true
		}
	}
	// A team named as a request names it without its word (#reef-gpu, reef), where no team= is
	// given: refused with the job naming it as team=T, the rest as typed.
	teamGiven := slices.ContainsFunc(args[1:], func(w string) bool { k, _, ok := strings.Cut(strings.ToLower(w), "="); return ok && k == "team" })
	for i := 1; i < len(args) && !teamGiven; i++ {
		w := unquoted(args[i])
		if strings.Contains(w, "=") || strings.EqualFold(args[i-1], "data") || strings.EqualFold(args[i-1], "team") {
			continue
		}
		t, byName := c.channels[policy.ChannelKey(w)], false
		if !channelWord(w) {
			t, byName = "", true
			if k := policy.NameKey(w); c.teams[k] && !c.classes[k] {
				t = k
			}
		}
		if t == "" {
			continue
		}
		fixed := slices.Clone(args)
		fixed[i] = "team=" + t
		if c2, err := parseSubmit(c, fixed); err != nil {
			return c2, err // a mistake elsewhere is refused as that mistake, with its own example
		}
		what := "a team's channel"
		if byName {
			what = "a team"
		}
		e := qm.Invalid("/gpu submit "+typedWords(append([]string{unquoted(fixed[0])}, fixed[1:]...)),
			"%s is %s; a job names its team as team=%s.", policy.Quoted(w, 40), what, t)
		c.Team = t
		c.channelNote = &channelNote{typed: w, team: t, name: byName, err: e}
		return c, e
	}
	// A word a job writes as key=value written as a request writes it (team reef, for 2h), or
	// such a key with no value (class=): refused with the job written right, the rest as typed.
	for i := 1; i < len(args); i++ {
		a := strings.ToLower(args[i])
		if k, v, ok := strings.Cut(a, "="); ok && v == "" && submitKeys[k] != "" {
			rest := append(slices.Clone(args[:i]), args[i+1:]...)
			return c, qm.Invalid("/gpu submit "+typedWords(append([]string{unquoted(rest[0])}, rest[1:]...)),
				"%s gives no %s; name one or leave it out.", policy.Quoted(args[i], 40), strings.TrimPrefix(strings.TrimPrefix(submitKeys[k], "a "), "the "))
		}
		if submitKeys[a] == "" || i+1 >= len(args) || strings.Contains(args[i+1], "=") {
			continue
		}
		v, j := unquoted(args[i+1]), i+1
		if a == "for" {
			v, j = durationWords(args, i+1, v)
			if _, err := parseDur(v); err != nil && durationMeant(v) != "" {
				v = durationMeant(v) // for 1h 30: for=1h30m, which works
			}
		}
		fixed := append(append(slices.Clone(args[:i]), a+"="+v), args[j+1:]...)
		return c, qm.Invalid("/gpu submit "+typedWords(append([]string{unquoted(fixed[0])}, fixed[1:]...)),
			"%s is how a request names %s; /gpu submit writes %s=%s.", policy.Quoted(strings.Join(args[i:j+1], " "), 40), submitKeys[a], a, v)
	}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if k, _, ok := strings.Cut(strings.ToLower(a), "="); ok && submitKeys[k] != "" {
			if k == "team" && given[k] && teamAt > 0 && twice == nil {
				// The second team, for the asker's example where only it is one of theirs.
				if t, perr := c.teamName(c.Verb, a[len("team="):]); perr == nil {
					otherTeam, otherAt = t, i
				}
			}
			if k == "team" && !given[k] {
				teamAt = i
			}
			if given[k] {
				n := 1
				if k == "for" {
					// for=1h 30m: the words that go on writing the length go with it.
					_, j := durationWords(args, i, a[len("for="):])
					n = j - i + 1
				}
				again(i, n, "the command gives %s= twice; give it once.", k)
				i += n - 1
				continue
			}
			given[k] = true
		}
		switch {
		case policy.NameKey(a) == "data":
			// data CLASS, the word a request names its data class with, and read as it reads it:
			// one of the command's own words after it (data for, data team=reef) has left the
			// data class out.
			if w := unquoted(args[min(i+1, len(args)-1)]); i+1 >= len(args) || dataWord(w) || strings.Contains(w, "=") {
				return c, qm.Invalid(submitDataExample, "%s must be followed by a data class.", policy.Quoted(a, 40))
			}
			if given["data"] {
				again(i, 2, "the command gives its data class twice; give it once.")
				i++
				continue
			}
			given["data"] = true
			i++
			v := unquoted(args[i])
			c.DataClass = policy.NameKey(v)
			if !policy.ValidDataClass(c.DataClass) {
				if strings.HasPrefix(v, "@") {
					c.dataMention = v
				}
				return c, qm.Invalid(submitDataExample, "%s is not a data class, which is one word of the letters a to z, digits, dots, - and _.", policy.Quoted(v, 40))
			}
		case strings.HasPrefix(strings.ToLower(a), "team="):
			t, perr := c.teamName(c.Verb, a[len("team="):])
			if perr != nil {
				return c, perr
			}
			c.Team = t
		case strings.HasPrefix(strings.ToLower(a), "for="):
			c.forTyped = true
			// for=1h 30m, for=2 hours: a duration spread over words, as elsewhere.
			v, j := durationWords(args, i, a[len("for="):])
			if minusWord(a[len("for="):]) && i+1 < len(args) {
				// "for=- 2h": the minus written apart is the same slip as for=-2h.
				v, j = durationWords(args, i+1, a[len("for="):]+args[i+1])
			}
			d, err := parseDur(v)
			if err != nil {
				typed := "for=" + strings.TrimPrefix(strings.Join(args[i:j+1], " "), a[:len("for=")])
				c.Duration = meantDuration(typed, err)
				if late == nil {
					// Refused once the rest is read, so that the example keeps the other words
					// typed, and for= with the length meant where it is clear (-2h, ٢h), else
					// one that works (for=0h, for=xyz: submitExample).
					late, i = durationProblem(c.Verb, typed, err, "for=2h"), j
					continue
				}
				return c, durationProblem(c.Verb, typed, err, "for=2h")
			}
			i = j
			c.Duration = d
		default:
			c.Params = append(c.Params, a)
		}
	}
	if late != nil {
		return c, late
	}
	if twice != nil {
		kept := []string{unquoted(args[0])}
		for i, w := range args[1:] {
			if !dropped[i+1] {
				kept = append(kept, w)
			}
		}
		if otherTeam != "" {
			// The same job naming the second team instead, for an asker in it but not in the first.
			other := []string{unquoted(args[0])}
			for i, w := range args[1:] {
				if (!dropped[i+1] || i+1 == otherAt) && i+1 != teamAt {
					other = append(other, w)
				}
			}
			c.teamAgain = &teamAgain{first: c.Team, second: otherTeam, example: "/gpu submit " + typedWords(other)}
		}
		return c, twice.WithExample("/gpu submit " + typedWords(kept))
	}
	return c, nil
}

// teamAgain is a job's team given twice (team=robotics team=reef): the first, which the command
// keeps, the second, and the job naming the second instead of the first.
type teamAgain struct{ first, second, example string }

// keepWorkingTeam is err, the refusal of c, a job naming its team twice, with the job naming the
// second team as its example where only the second is a team of the asker (of the policy, where
// the asker is not known): the example keeps the team that works, not the one typed first.
func (b *Bot) keepWorkingTeam(c Command, err error) error {
	var e *qm.Error
	if c.teamAgain == nil || !errors.As(err, &e) {
		return err
	}
	works := func(t string) bool {
		if c.Who != nil {
			return slices.ContainsFunc(c.Who.Teams, func(m string) bool { return policy.SameName(m, t) })
		}
		_, ok := b.pol().Team(t)
		return ok
	}
	if !works(c.teamAgain.first) && works(c.teamAgain.second) {
		return e.WithExample(c.teamAgain.example)
	}
	return err
}

// typedWords joins words as words reads them back: a key's value with white space or a quote in
// it (name=x y, as words reads name="x y") in quotes again, a quote inside it escaped.
func typedWords(ws []string) string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w
		if k, v, ok := strings.Cut(w, "="); ok && k != "" && strings.ContainsFunc(v, func(r rune) bool { return unicode.IsSpace(r) || r == '"' }) {
			out[i] = k + `="` + strings.ReplaceAll(v, `"`, `\"`) + `"`
		}
	}
	return strings.Join(out, " ")
}

// durationProblem refuses v, which err says is no duration: one longer than any duration may be
// is told so, anything else that it is not a duration; eg is how one is written.
func durationProblem(verb, v string, err error, eg string) *qm.Error {
	if e, _ := durationSlip(verb, v, eg); e != nil {
		return e
	}
	if errors.Is(err, policy.ErrDurationTooLong) {
		return bad(verb, "%s is longer than any lease may last (10 years at most); write a duration like %s.", policy.Quoted(v, 40), eg)
	}
	if errors.Is(err, errShortDuration) {
		if verb == "quota-request" {
			return bad(verb, "%s is shorter than an hour, the shortest length accepted for a quota increase; write one like %s.", policy.Quoted(v, 40), eg)
		}
		return bad(verb, "%s is shorter than a minute, the shortest length accepted; write one like %s.", policy.Quoted(v, 40), eg)
	}
	if errors.Is(err, errZeroDuration) {
		return bad(verb, "%s is no length of time; write one like %s.", policy.Quoted(v, 40), eg)
	}
	var order *policy.UnitOrderError
	if errors.As(err, &order) {
		// The length meant as it is typed where v was: for=2h after for=, as durationSlip writes it.
		meant := policy.FormatDuration(order.Meant)
		if k, _, ok := strings.Cut(strings.TrimSpace(v), "="); ok {
			meant = k + "=" + meant
		}
		if order.Repeated {
			return bad(verb, "%s names %s twice, so how long is unclear; write each unit once, largest first, like %s.", policy.Quoted(v, 40), order.Unit, meant)
		}
		return bad(verb, "%s writes %s before %s, so how long is unclear; write the largest unit first, each once, like %s.", policy.Quoted(v, 40), order.Smaller, order.Unit, meant)
	}
	if meant := durationMeant(v); meant != "" {
		return bad(verb, "%s is not a duration; write it like %s.", policy.Quoted(v, 40), meant)
	}
	return bad(verb, "%s is not a duration; write it like %s.", policy.Quoted(v, 40), eg)
}

var (
	// decimalComma is a number with a decimal comma and a unit (1,5h), as many write it.
	decimalComma = regexp.MustCompile(`^(.*=)?(\d+),(\d{1,2})([a-z]+)$`)
	// bareMinutes is hours followed by minutes without their unit (1h30, 1hr30).
	bareMinutes = regexp.MustCompile(`^(.*=)?(\d+)(?:h|hr|hrs|hour|hours)(\d{1,2})$`)
	// clockTime is hours and minutes as a clock writes them (1:30).
	clockTime = regexp.MustCompile(`^(.*=)?(\d{1,3}):([0-5]\d)$`)
)

// durationMeant is the duration v was most likely meant as, written the way that works: 1.5h
// for 1,5h, 1h30m for 1h30 and for the clock's 1:30, 45m for 0:45, 2h for 2h. (a stop after it); empty where there is none to
// be sure of (1,000h is no decimal). v may be written over words (1,5 h, 1h 30): they are read
// as one.
func durationMeant(v string) string {
	v = strings.ToLower(strings.Join(strings.Fields(v), ""))
	meant := ""
	if m := clockTime.FindStringSubmatch(v); m != nil {
		v = m[1] + m[2] + "h" + m[3] // 1:30 is 1h30, read as it is below
	}
	if m := decimalComma.FindStringSubmatch(v); m != nil {
		meant = m[1] + m[2] + "." + m[3] + m[4]
	} else if m := bareMinutes.FindStringSubmatch(v); m != nil {
		meant = m[1] + m[2] + "h" + m[3] + "m"
		if strings.Trim(m[2], "0") == "" {
			meant = m[1] + strings.TrimPrefix(m[3], "0") + "m" // 0:45, 0h45: 45m
		}
	}
	if t := strings.TrimRight(v, ".,;:!?"); meant == "" && t != v {
		meant = t // 2h. 3h, 90m!: a duration that ends a sentence or a clause
	}
	if meant == "" {
		return ""
	}
	d := meant
	if i := strings.LastIndex(d, "="); i >= 0 {
		d = d[i+1:]
	}
	if _, err := parseDur(d); err != nil {
		return "" // none (1,000h), or no length of time (0:00)
	}
	return meant
}

// durationSlip is v (a duration's words, perhaps after for=) written as a duration that works
// but for a minus or a plus before it (-2h, +2h) or digits other than 0-9 (٢h, ２h): the refusal that says which,
// with the duration meant, and that duration (0 where it is not clear which one was meant). nil
// where v is no such slip.
func durationSlip(verb, v, eg string) (*qm.Error, time.Duration) {
	prefix, body := "", strings.TrimSpace(v)
	if i := strings.Index(body, "="); i >= 0 {
		prefix, body = body[:i+1], strings.TrimSpace(body[i+1:])
	}
	other := policy.OtherDigits(body)
	meant, clear := body, true
	if other {
		meant, clear = policy.ASCIIDigits(body)
	}
	r, size := utf8.DecodeRuneInString(meant)
	negative := policy.MinusSign(r)
	// +2h: the amount to add, as "extend L-1 +2h" says it; the duration meant is 2h.
	plus := r == '+' || r == '\uff0b'
	if negative || plus {
		meant = strings.TrimSpace(meant[size:])
	}
	d, err := parseDur(meant)
	if err != nil || !clear {
		d = 0
	}
	q := policy.Quoted(v, 40)
	switch {
	case negative && d > 0:
		return bad(verb, "%s", policy.NegativeDurationWords(v, prefix+policy.FormatDuration(d))), d
	case plus && d > 0 && !other:
		return bad(verb, "%s has a + before it, but a duration is written without one; write it like %s.", q, prefix+policy.FormatDuration(d)), d
	case other && d > 0:
		return bad(verb, "%s", policy.OtherDigitsDurationWords(v, prefix+policy.FormatDuration(d))), d
	case other:
		return bad(verb, "%s is written with digits other than 0-9; write the duration with the digits 0-9, like %s.", q, eg), 0
	}
	return nil, 0
}

// minusWord reports whether w is a minus sign alone (-, −, the full-width －, or a dash that
// stands for one: policy.MinusSign), which before a duration makes it negative as -2h does.
func minusWord(w string) bool {
	r, size := utf8.DecodeRuneInString(w)
	return size == len(w) && w != "" && policy.MinusSign(r)
}

// slipDuration is the duration v was meant as where v is a durationSlip, else 0.
func slipDuration(v string) time.Duration {
	_, d := durationSlip("", v, "")
	return d
}

// meantDuration is the length v, which parseDur refused with err, was meant as, for a refusal's
// example to keep: the duration of a slip (-2h, ٢h), of one written as people often write it
// (1,5h, 1h30: durationMeant), or what one naming a unit twice or out of order adds up to (1h1h
// is 2h, as the refusal says); 0 where no length is clear.
func meantDuration(v string, err error) time.Duration {
	if d := slipDuration(v); d > 0 {
		return d
	}
	if m := durationMeant(v); m != "" {
		if i := strings.LastIndex(m, "="); i >= 0 {
			m = m[i+1:]
		}
		if d, err := parseDur(m); err == nil {
			return d
		}
	}
	var order *policy.UnitOrderError
	if errors.As(err, &order) && order.Meant >= time.Minute && order.Meant <= policy.LongestDuration {
		return order.Meant.Round(time.Minute)
	}
	return 0
}

// in09 is w, a number written with digits other than 0-9, written with 0-9, where its digits are
// of one script; "" otherwise (w has no other digits, or mixes scripts).
func in09(w string) string {
	if !policy.OtherDigits(w) {
		return ""
	}
	s, clear := policy.ASCIIDigits(w)
	if !clear {
		return ""
	}
	return s
}

// otherDigits refuses w, a number written with digits other than 0-9, naming it with 0-9 (meant)
// where that is clear, else with the example eg.
func otherDigits(verb, w, meant, eg string) *qm.Error {
	if meant != "" {
		return bad(verb, "%s", policy.OtherDigitsNumberWords(w, meant))
	}
	return bad(verb, "%s is written with digits other than 0-9; write the number with the digits 0-9, like %s.", policy.Quoted(w, 40), eg)
}

// errZeroDuration is a duration of no time (0, 0m): a duration, but no length for anything.
var errZeroDuration = errors.New("zero duration")

// errShortDuration is a duration of more than no time but less than a minute (20s, 0.0001h):
// shorter than anything lasts. It is a zero duration to whatever only asks whether a word is a
// length of something.
var errShortDuration = fmt.Errorf("shorter than a minute: %w", errZeroDuration)

func parseDur(s string) (time.Duration, error) {
	d, err := policy.ParseDuration(s)
	if err != nil && strings.Trim(s, "0") == "" && s != "" {
		return 0, errZeroDuration // a bare 0 needs no unit
	}
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, errZeroDuration
	}
	if d < time.Minute {
		return 0, errShortDuration
	}
	if d >= time.Minute {
		// Leases are kept, shown and checked by the minute: 3h1s is 3h, as every reply writes it.
		d = d.Round(time.Minute)
	}
	return d, nil
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// looksNumeric is true for words like 2, -3, 0, 1.5.
// timesCount reads "2x" or "2×" as the count 2; ok is false for anything else.
func timesCount(s string) (string, bool) {
	for _, x := range []string{"x", "×"} {
		if n, ok := strings.CutSuffix(s, x); ok && n != "" && strings.Trim(n, "0123456789") == "" {
			return n, true
		}
	}
	return "", false
}

// numberLike is true for a word that begins as a number does (a digit of any script, or a sign
// before one), which no class or team name does.
func numberLike(s string) bool {
	s = strings.TrimLeft(s, "+-")
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsDigit(r)
}

func looksNumeric(s string) bool {
	// A digit first: ParseFloat also reads inf, infinity and nan, which may be a class's name.
	if !strings.ContainsAny(s, "0123456789") {
		return false
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// otherMinus reports whether s is a whole number written with a minus sign other than the
// hyphen-minus (−2 with the minus sign, a full-width －, a dash), which reads as negative.
func otherMinus(s string) bool {
	r, size := utf8.DecodeRuneInString(s)
	digits := s[size:]
	return r != '-' && policy.MinusSign(r) && digits != "" && strings.Trim(digits, "0123456789") == ""
}

func parseCount(verb, s string) (int, *qm.Error) {
	s = unquoted(s) // "2" is 2
	if otherMinus(s) {
		return 0, bad(verb, "the number of GPUs must be at least 1, not %s.", s)
	}
	n, err := strconv.Atoi(s)
	if err != nil && policy.OtherDigits(s) {
		// The number meant, where it is clear, for the example.
		meant := in09(s)
		m, aerr := strconv.Atoi(meant)
		if meant != "" && (m > qm.MaxRequestGPUs || errors.Is(aerr, strconv.ErrRange)) {
			// Too many as well: one refusal says both, and names what works typed back.
			return qm.MaxRequestGPUs, bad(verb, "%s is written with digits other than 0-9, and %s GPUs is more than any request can hold; write at most %d, with the digits 0-9.", policy.Quoted(s, 40), truncate(strings.TrimLeft(meant, "0"), 40), qm.MaxRequestGPUs)
		}
		return max(m, 0), otherDigits(verb, s, meant, "2")
	}
	if errors.Is(err, strconv.ErrRange) {
		// A whole number with more digits than any count holds: too many (or too few) GPUs,
		// as one a little past the limit is.
		if strings.HasPrefix(s, "-") {
			return 0, bad(verb, "the number of GPUs must be at least 1, not %s.", truncate(s, 40))
		}
		return 0, bad(verb, "%s GPUs is more than any request can hold (at most %d).", truncate(s, 40), qm.MaxRequestGPUs)
	}
	if err != nil {
		return 0, bad(verb, "%s is not a whole number of GPUs.", policy.Quoted(s, 40))
	}
	if n < 1 {
		return 0, bad(verb, "the number of GPUs must be at least 1, not %d.", n)
	}
	if n > qm.MaxRequestGPUs {
		return 0, bad(verb, "%d GPUs is more than any request can hold (at most %d).", n, qm.MaxRequestGPUs)
	}
	return n, nil
}

// flagTwice refuses a flag word given twice (exclusive exclusive, or exclusive reservation, which
// say the same): the word given again, named as typed; before is the words before it, where the
// first one stands.
func flagTwice(verb, typed string, before []string) *qm.Error {
	first := ""
	for _, w := range before {
		if lw := strings.ToLower(w); lw == "exclusive" || lw == "reservation" {
			first = w
		}
	}
	if first == "" || strings.EqualFold(first, typed) {
		return bad(verb, "%s is given twice; give it once.", policy.Quoted(typed, 40))
	}
	return bad(verb, "%s and %s say the same; give one of them.", policy.Quoted(first, 40), policy.Quoted(typed, 40))
}

func parseRequest(c Command, args []string) (Command, error) {
	args = unquotedWords(args) // a request holds no free text
	seen := map[string]bool{}
	isClass := func(w string) bool { return c.classes[policy.NameKey(w)] }
	var maybe []string // the policy's classes named like a filler word, as typed
	once := func(what string) *qm.Error {
		if seen[what] {
			return bad("request", "the request names its %s twice; give it once.", what)
		}
		seen[what] = true
		return nil
	}
	// After a mistake the rest is read on, so that a refusal's example can keep what was typed
	// right (typedExample); the first mistake is the refusal.
	var first *qm.Error
	note := func(e *qm.Error) {
		if first == nil {
			first = e
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		la := policy.NameKey(a)
		if n, ok := timesCount(la); ok && !seen["gpus"] && c.Class == "" {
			a, la = n, n // "2x", "2×": 2 GPUs, as the replies write "2 × CLASS"
		}
		next := func(what string) (string, *qm.Error) {
			if i+1 >= len(args) {
				return "", bad("request", "%s must be followed by a %s.", policy.Quoted(a, 40), what)
			}
			i++
			return args[i], nil
		}
		switch {
		case la == "for" || la == "duration":
			v, perr := next("duration such as 4h")
			if perr != nil {
				note(perr)
				continue
			}
			from := i
			if minusWord(v) && i+1 < len(args) {
				// "for - 2h": the minus written apart is the same slip as -2h.
				i++
				v += args[i]
			}
			v, i = durationWordsBut(args, i, v, isClass)
			if perr := once("duration"); perr != nil {
				note(perr)
				continue
			}
			d, err := parseDur(v)
			if err != nil {
				note(durationProblem("request", strings.Join(args[from:i+1], " "), err, "30m, 4h or 2d"))
				c.Duration = meantDuration(strings.Join(args[from:i+1], " "), err)
				continue
			}
			c.Duration = d
		case la == "template":
			if i+1 < len(args) && strings.IndexAny(args[i+1], "0123456789") == 0 {
				if _, err := parseDur(args[i+1]); err == nil {
					// template 4h: a length, which no template is named like (a template's name
					// starts with a letter): the template's name was left out, and the length
					// is read as the request's.
					note(bad("request", "%s must be followed by a template name.", policy.Quoted(a, 40)))
					continue
				}
			}
			if i+1 < len(args) && unquoted(args[i+1]) == args[i+1] && dataWord(args[i+1]) {
				// template for 4h, template team reef: another of the request's words, not a
				// template's name; the name was left out, and the word is read as itself.
				note(bad("request", "%s must be followed by a template name.", policy.Quoted(a, 40)))
				continue
			}
			v, perr := next("template name")
			if perr != nil {
				note(perr)
				continue
			}
			if perr := once("template"); perr != nil {
				note(perr)
				continue
			}
			c.setTemplate(unquoted(v))
		case la == "team":
			if i+1 < len(args) && c.teamLeftOut(args[i+1]) {
				// team for 2h: the team's name was left out, and the word is read as itself.
				note(bad("request", "%s must be followed by a team name.", policy.Quoted(a, 40)))
				continue
			}
			v, perr := next("team name")
			if perr != nil {
				note(perr)
				continue
			}
			if perr := once("team"); perr != nil {
				note(perr)
				continue
			}
			t, perr := c.teamName("request", v)
			if perr != nil {
				note(perr)
				continue
			}
			c.Team = t
		case la == "data":
			if i+1 >= len(args) || dataWord(args[i+1]) {
				// Nothing after it, or one of the request's own words (data for 2h, data team
				// reef): the data class was left out, and that word is read as itself.
				note(qm.Invalid(dataExample, "%s must be followed by a data class.", policy.Quoted(a, 40)))
				continue
			}
			v, _ := next("data class")
			if perr := once("data class"); perr != nil {
				note(perr)
				continue
			}
			v = unquoted(v)
			c.DataClass = policy.NameKey(v)
			if !policy.ValidDataClass(c.DataClass) {
				c.DataClass = ""
				if strings.HasPrefix(v, "@") {
					c.dataMention = v
				}
				note(qm.Invalid(dataExample, "%s is not a data class, which is one word of the letters a to z, digits, dots, - and _.", policy.Quoted(v, 40)))
				continue
			}
		case strings.Contains(a, "=") && c.Template != "":
			c.Params = append(c.Params, a) // the template's key=value parameters
		case strings.Contains(a, "="):
			note(bad("request", "%s is a template parameter, but the request names no template; put it after template NAME.", policy.Quoted(a, 40)))
			continue
		case la == "exclusive" || la == "reservation":
			if c.Exclusive {
				note(flagTwice("request", a, args[:i]))
				continue
			}
			c.Exclusive = true
		case !c.classes[la] && !c.teams[la] && nearExclusive(la):
			// exclusiv, exlcusive: the word meant, which the example keeps.
			note(bad("request", "%s is not a word a request takes; did you mean exclusive?", policy.Quoted(a, 40)))
			c.Exclusive = true
			continue
		case la == "×": // "2 × train", as the replies write it
		case la == "gpu" || la == "gpus" || la == "x":
			// "2 gpus", "2 x train": filler words, unless the policy has a class of that name:
			// then it is the class, where no other word names one.
			if c.classes[la] && !slices.Contains(maybe, la) {
				maybe = append(maybe, la)
			}
		case looksNumeric(a) && i+1 < len(args) && unitWord(args[i+1]) &&
			(seen["gpus"] || c.Class != "" || c.classes != nil && !c.classes[policy.NameKey(args[i+1])]):
			// "2 hours", "for 4h 1 train 2 h": a number and a unit where no number of GPUs goes,
			// or where the unit is no class of the policy, is a duration.
			if perr := once("duration"); perr != nil {
				note(perr)
				continue
			}
			from := i
			i++
			v, j := durationWordsBut(args, i, a+args[i], isClass)
			i = j
			d, err := parseDur(v)
			if err != nil {
				note(durationProblem("request", strings.Join(args[from:i+1], " "), err, "30m, 4h or 2d"))
				c.Duration = meantDuration(strings.Join(args[from:i+1], " "), err)
				continue
			}
			c.Duration = d
		case looksNumeric(a) && !seen["gpus"] && c.Class == "":
			n, perr := parseCount("request", a)
			if perr != nil {
				note(perr)
				continue
			}
			seen["gpus"] = true
			c.GPUs = n
		default:
			a = unquoted(a) // a class name in quotes is the class
			la = policy.NameKey(a)
			if d, err := parseDur(a); err == nil && !looksNumeric(a) {
				if perr := once("duration"); perr != nil {
					note(perr)
					continue
				}
				if v, j := durationWordsBut(args, i, a, isClass); j > i {
					typed := strings.Join(args[i:j+1], " ")
					i = j
					var err error
					if d, err = parseDur(v); err != nil {
						// 2h 15: a length as people often write it, refused with the length meant.
						note(durationProblem("request", typed, err, "30m, 4h or 2d"))
						c.Duration = meantDuration(typed, err)
						continue
					}
				}
				c.Duration = d
				continue
			}
			var order *policy.UnitOrderError
			if _, err := parseDur(a); errors.Is(err, policy.ErrDurationTooLong) || errors.As(err, &order) || errors.Is(err, errZeroDuration) && !looksNumeric(a) {
				if _, j := durationWordsBut(args, i, a, isClass); j > i {
					a = a + " " + strings.Join(args[i+1:j+1], " ") // "0h 0m", quoted as typed
				}
				note(durationProblem("request", a, err, "30m, 4h or 2d"))
				if !seen["duration"] {
					c.Duration = meantDuration(a, err)
				}
				continue
			}
			if durationMeant(a) != "" && !c.classes[la] && !seen["duration"] {
				// 1h30, 1,5h: a duration as people often write it, refused with the length meant.
				seen["duration"] = true
				_, err := parseDur(a)
				note(durationProblem("request", a, err, "30m, 4h or 2d"))
				c.Duration = meantDuration(a, err)
				continue
			}
			if minusWord(a) && i+1 < len(args) && !seen["duration"] {
				// "- 2h": the minus written apart is the same slip as -2h.
				if v, j := durationWordsBut(args, i+1, a+args[i+1], isClass); slipDuration(v) > 0 {
					seen["duration"] = true
					note(durationProblem("request", strings.Join(args[i:j+1], " "), nil, "30m, 4h or 2d"))
					c.Duration = slipDuration(v)
					i = j
					continue
				}
			}
			if slip, d := durationSlip("request", a, "30m, 4h or 2d"); d > 0 && !seen["duration"] {
				// -2h, ٢h: a duration but for its sign or its digits.
				seen["duration"] = true
				note(slip)
				c.Duration = d
				continue
			}
			if !seen["gpus"] && c.Class == "" && policy.OtherDigits(a) && !c.classes[la] {
				// ١٢, ２: GPUs written with other digits; the example keeps the number meant.
				n, perr := parseCount("request", a)
				note(perr)
				seen["gpus"] = true
				c.GPUs = n
				continue
			}
			if !seen["gpus"] && c.Class == "" && otherMinus(a) {
				// −2: a negative number of GPUs, as -2 is, not a class.
				_, perr := parseCount("request", a)
				note(perr)
				seen["gpus"] = true
				continue
			}
			if looksNumeric(a) {
				note(bad("request", "%s is out of place: put the number of GPUs first, before the class.", policy.Quoted(a, 40)))
				if n, perr := parseCount("request", a); perr == nil && !seen["gpus"] {
					// train 2: the example keeps the number of GPUs meant, put first.
					seen["gpus"] = true
					c.GPUs = n
				}
				continue
			}
			if channelWord(a) && c.channels != nil && !seen["team"] {
				// #vision-gpu without the word team: a request names its team after team; the
				// example names the team of that channel.
				if t, ok := c.channels[policy.ChannelKey(unquoted(a))]; ok && t != "" {
					e := bad("request", "%s is a team's channel; a request names its team after the word team, like team %s.", policy.Quoted(a, 40), t)
					if first == nil {
						c.channelNote = &channelNote{typed: a, team: t, err: e}
					}
					note(e)
					seen["team"] = true
					c.Team = t
					continue
				}
			}
			if c.teams[la] && !c.classes[la] && !seen["team"] {
				// A team's name without the word team: a request names its team after team.
				e := bad("request", "%s is a team; a request names its team after the word team, like team %s.", policy.Quoted(a, 40), la)
				if first == nil {
					c.channelNote = &channelNote{typed: a, team: la, name: true, err: e}
				}
				note(e)
				seen["team"] = true
				c.Team = la
				continue
			}
			if !seen["gpus"] && c.Class == "" && numberLike(a) && !c.classes[la] {
				// 0x10, 2k, ٢: where the number of GPUs goes, and no class's name, which begins with a letter.
				note(bad("request", "%s is not a whole number of GPUs.", policy.Quoted(a, 40)))
				continue
			}
			if i > 0 && policy.SameName(unquoted(args[i-1]), a) {
				// data silt silt, tidal tidal: the word typed again, not a second class.
				note(bad("request", "%s is given twice; give it once.", policy.Quoted(a, 40)))
				continue
			}
			if c.Class != "" && c.classes != nil && !c.classes[c.Class] && c.classes[la] {
				// "2 gpus of train", "two train": the word taken for the class is no class of
				// the policy and this one is: that word is what does not belong, and the class
				// (in the example too) is this one.
				typed := c.classTyped
				if typed == "" {
					typed = c.Class
				}
				note(bad("request", "%s is not part of a request; the class is %s.", policy.Quoted(typed, 40), la))
				c.Class, c.classTyped = la, ""
				continue
			}
			if c.Class != "" && c.classes != nil && !c.classes[la] && nearest(la, slices.Sorted(maps.Keys(c.classes))) == "" {
				// until 5pm, because urgent: a word no request takes, and no class of the policy
				// (nor one mistyped), so not a second class either.
				note(bad("request", "%s is not part of a request, which takes a number of GPUs, a class, for DURATION, template T, team T, data CLASS and exclusive; leave it out.", policy.Quoted(a, 40)))
				continue
			}
			if c.Class != "" {
				note(bad("request", "%s is not part of a request; the class is already %s.", policy.Quoted(a, 40), c.Class))
				continue
			}
			if !validName(la) {
				note(bad("request", "%s is not a class name.", policy.Quoted(a, 40)))
				continue
			}
			c.Class = la
			if u := unquoted(a); u != la && c.classes != nil && !c.classes[la] {
				c.classTyped = u // no class of the policy: a refusal quotes it as typed
			}
		}
	}
	if first != nil {
		return c, first
	}
	if c.Class == "" && len(maybe) == 1 {
		c.Class = maybe[0]
	}
	if c.Class == "" && len(maybe) > 1 {
		ex := fmt.Sprintf("/gpu request %d %s", max(1, c.GPUs), maybe[0])
		if c.Duration > 0 {
			ex += " for " + policy.FormatDuration(c.Duration)
		}
		return c, qm.Invalid(ex, "%s and %s both name a class, so which one this request is for is unclear; name one class only.", policy.Quoted(maybe[0], 40), policy.Quoted(maybe[1], 40))
	}
	return c, nil
}

// unitWord reports whether w is a unit of time alone, such as h, hours or d.
func unitWord(w string) bool {
	for _, r := range w {
		if r < 'a' || r > 'z' {
			if r < 'A' || r > 'Z' {
				return false
			}
		}
	}
	_, err := policy.ParseDuration("1" + w)
	return w != "" && err == nil
}

// teamName reads a team's name as typed: A to Z in lower case and nothing else folded, as names
// are compared (policy.SameName); one that could be no team's name is refused. Knowing the
// policy, a team's channel (#vision-gpu) names that team.
func (c Command) teamName(verb, s string) (string, *qm.Error) {
	s = unquoted(s)
	if channelWord(s) && c.channels != nil {
		team, ok := c.channels[policy.ChannelKey(s)]
		switch {
		case ok && team != "":
			return team, nil
		case ok:
			return "", bad(verb, "%s is the channel of more than one team; name the team instead.", policy.Quoted(s, 40))
		}
		return "", bad(verb, "%s is the channel of no team; name the team instead.", policy.Quoted(s, 40))
	}
	t := policy.NameKey(s)
	if !validName(t) {
		// What Discord writes for a role or a person picked where the team goes.
		if id, ok := strings.CutPrefix(s, "<@&"); ok && discordID(id) {
			return "", bad(verb, "%s is a Discord role, not a team; name the team instead.", policy.Quoted(s, 40))
		}
		if id, ok := strings.CutPrefix(s, "<@"); ok && discordID(strings.TrimPrefix(id, "!")) {
			return "", bad(verb, "%s is a person, not a team; name the team instead.", policy.Quoted(s, 40))
		}
		return "", bad(verb, "%s is not a team name.", policy.Quoted(s, 40))
	}
	return t, nil
}

// teamLeftOut reports whether w, the word after "team", is one of a request's own words (for,
// data, exclusive…) that names no team of the policy: the team's name was left out. A team named
// like such a word is that team; with the policy's teams unknown, nothing is left out.
func (c Command) teamLeftOut(w string) bool {
	k := policy.NameKey(unquoted(w))
	return c.teams != nil && !c.teams[k] && dataWord(k)
}

// discordID reports whether s is a Discord id closing a mention: digits, then ">".
func discordID(s string) bool {
	id, ok := strings.CutSuffix(s, ">")
	return ok && id != "" && strings.Trim(id, "0123456789") == ""
}

// channelWord reports whether s names a chat channel: #name, as typed or as Slack passes a channel
// picked from its list, or <#CHANNEL_ID>, as Discord passes one.
func channelWord(s string) bool {
	if strings.HasPrefix(s, "#") {
		return true
	}
	id, ok := strings.CutPrefix(s, "<#")
	return ok && discordID(id)
}

// validName reports whether s, with A to Z in lower case, is written as a class or team name can be.
func validName(s string) bool {
	if s == "" || len(s) > 40 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// durationWords reads a duration written over several words ("1h 30m", "4 h", "2 hours"): v, the
// word at args[i], joined with each word after it that goes on writing it, a unit after a bare
// number or smaller units after larger ones ("2h 3h" is two durations). It returns the joined
// text and the index of the last word taken.
func durationWords(args []string, i int, v string) (string, int) {
	return durationWordsBut(args, i, v, nil)
}

// durationWordsBut is durationWords where a word that isClass says names a class is not taken as
// a unit written apart from its number ("for 2h 1 m" with a class m asks for 1 GPU of it).
func durationWordsBut(args []string, i int, v string, isClass func(string) bool) (string, int) {
	// Judged as written with 0-9, so that "٢ hours" is one duration, refused for its digits.
	plain := func(s string) string {
		p, _ := policy.ASCIIDigits(s)
		return p
	}
	for i+1 < len(args) {
		w, step := args[i+1], 1
		if i+2 < len(args) && allDigits(plain(w)) && unitWord(plain(args[i+2])) && (isClass == nil || !isClass(args[i+2])) {
			// A number and its unit as two words after the duration's first part: "2 hours 30
			// minutes", "1h 30 min". Whether they go on writing it is judged below, as one word.
			w, step = w+args[i+2], 2
		}
		pv, pw := plain(v), plain(w)
		if pw == "" || pv == "" {
			break
		}
		if step == 1 && durationMeant(pv+pw) != "" && (!allDigits(pw) || len(pw) == 2 && minutesAfter(args, i+2, isClass)) {
			// A length as people often write it over two words (1,5 h; 1h 30, the minutes a
			// bare number of two digits, as a clock writes them: "2h 5" is a length and a
			// number out of place, not 2h5m): taken whole, to be refused with the length meant
			// (durationMeant).
			return v + w, i + 1
		}
		if isDigit(pv[len(pv)-1]) && isDigit(pw[0]) {
			break // two numbers side by side are two ("2 4h" is not 24h)
		}
		if _, err := parseDur(pv + pw); err != nil && !errors.Is(err, errZeroDuration) {
			break // a duration of no time goes on as any other, to be refused whole ("0 hours")
		}
		_, smallest := durationUnits(pv)
		largest, _ := durationUnits(pw)
		if smallest != 0 && (largest == 0 || largest >= smallest) {
			break
		}
		i += step
		v += w
	}
	return v, i
}

// minutesAfter reports whether a bare number after a length in hours (the 30 of "1h 30") may be
// read as its minutes, args[next] being the word after the number: always where every word is
// the length's (isClass nil), else only where no word follows or the next begins another part
// of a request (team, data, template, exclusive, a key=value), so that the number of GPUs
// written after the length ("for 2h 1 tidal") stays the number of GPUs.
func minutesAfter(args []string, next int, isClass func(string) bool) bool {
	if isClass == nil || next >= len(args) {
		return true
	}
	w := policy.NameKey(args[next])
	return valueKeyword(w) || w == "exclusive" || w == "reservation" || strings.Contains(w, "=")
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

// durationOf reads words that should be one duration, as durationWords joins them.
func durationOf(words []string) (time.Duration, error) {
	if len(words) == 0 {
		return 0, fmt.Errorf("empty duration")
	}
	v, last := durationWords(words, 0, words[0])
	d, err := parseDur(v)
	if err == nil && last != len(words)-1 {
		return 0, fmt.Errorf("%q is more than one duration", strings.Join(words, " "))
	}
	return d, err
}

// durationUnits are the largest and the smallest unit a duration's text names (hours and minutes
// for 1h30m); 0 when it names none.
func durationUnits(s string) (largest, smallest time.Duration) {
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r < 'a' || r > 'z' }) {
		u, err := policy.ParseDuration("1" + f)
		if err != nil {
			continue
		}
		largest = max(largest, u)
		if smallest == 0 || u < smallest {
			smallest = u
		}
	}
	return largest, smallest
}

func parseEstimate(c Command, args []string) (Command, error) {
	if len(args) >= 2 && c.classes[policy.NameKey(unquoted(args[0]))] {
		// The class first, without the number of GPUs (as a request may leave it out): read
		// again as 1 GPU, so that the example is the estimate as meant; a mistake elsewhere is
		// refused as that mistake.
		fixed, err := parseEstimate(c, append([]string{"1"}, args...))
		if err != nil {
			return fixed, err
		}
		return fixed, bad("estimate", "/gpu estimate names the number of GPUs before the class, like 1 %s.", fixed.Class)
	}
	if len(args) < 3 || len(args) == 3 && strings.EqualFold(args[2], "for") {
		// 2 train, with no length: the example keeps the GPUs and the class typed, with the
		// default length.
		missing := bad("estimate", "/gpu estimate needs a number of GPUs, a class and a duration.")
		if len(args) == 0 {
			return c, missing
		}
		if k := policy.NameKey(unquoted(args[0])); c.classes[k] {
			c.Class = k // the class alone: the example keeps it
			return c, missing
		}
		n, perr := parseCount("estimate", unquoted(args[0]))
		if perr != nil {
			return c, missing
		}
		c.GPUs = n
		if len(args) > 1 {
			if fixed, err := parseEstimate(c, []string{args[0], args[1], "4h"}); err == nil {
				c.Class = fixed.Class
			}
		}
		return c, missing
	}
	args = unquotedWords(args) // an estimate holds no free text
	n, perr := parseCount("estimate", args[0])
	c.GPUs = n
	// GPUs in other digits, or a number that is no count of GPUs (0, -1, 2.5, more than any
	// request holds): refused once the rest is read, so that the example keeps the class and
	// the length typed.
	var digits *qm.Error
	if w := unquoted(args[0]); perr != nil && (policy.OtherDigits(w) || looksNumeric(w) || otherMinus(w)) {
		digits, perr = perr, nil
	}
	if perr != nil {
		return c, perr
	}
	class := unquoted(args[1])
	c.Class = policy.NameKey(class)
	var notClass *qm.Error // refused once the rest is read, so that the example keeps its length
	if !validName(c.Class) {
		c.Class, notClass = "", bad("estimate", "%s is not a class name.", policy.Quoted(class, 40))
	}
	rest := args[2:]
	var flags []string // the flag words at the end, last first
	for len(rest) > 0 && (strings.EqualFold(rest[len(rest)-1], "exclusive") || strings.EqualFold(rest[len(rest)-1], "reservation")) {
		flags = append(flags, rest[len(rest)-1])
		c.Exclusive, rest = true, rest[:len(rest)-1] // as /gpu request reads it
	}
	var twice *qm.Error // the flag given twice, refused once the rest is read
	if len(flags) > 1 {
		twice = flagTwice("estimate", flags[len(flags)-2], flags[len(flags)-1:])
	}
	if len(rest) > 0 && strings.EqualFold(rest[0], "for") {
		rest = rest[1:]
	}
	if len(rest) == 0 {
		return c, bad("estimate", "/gpu estimate needs a number of GPUs, a class and a duration.")
	}
	// A request's words after the duration (team T, data C, template T), as a request copied into
	// an estimate has them: refused once the rest is read, named as typed, and left out of the
	// example.
	var requestWords *qm.Error
	for i := 1; i < len(rest); i++ {
		// A team, as a request's team is named without the word team (its channel, mistyped
		// or not, its mention, its name), is no part of a duration either.
		t := policy.NameKey(strings.TrimLeft(rest[i], "@#"))
		switch w := strings.ToLower(rest[i]); {
		case w == "team", w == "data", w == "template", channelWord(rest[i]), c.teams[t] && !c.classes[t]:
			requestWords = bad("estimate", "%s is not part of an estimate, which takes a number of GPUs, a class, a duration and exclusive; leave it out.", policy.Quoted(strings.Join(rest[i:], " "), 60))
			rest = rest[:i]
		}
	}
	// Words after a duration that reads (2h soon, 2h 3h): refused as what they are once the
	// rest is read, and left out of the example, which keeps the duration typed.
	var trailing *qm.Error
	if v, last := durationWords(rest, 0, rest[0]); last < len(rest)-1 {
		if _, err := parseDur(v); err == nil {
			extra := rest[last+1:]
			if _, err := durationOf(extra); err == nil {
				trailing = bad("estimate", "The estimate names its duration twice; give it once.")
			} else {
				trailing = bad("estimate", "%s is not part of an estimate, which takes a number of GPUs, a class, a duration and exclusive; leave it out.", policy.Quoted(strings.Join(extra, " "), 60))
			}
			rest = rest[:last+1]
		}
	}
	d, err := durationOf(rest)
	if err != nil {
		c.Duration = meantDuration(strings.Join(rest, " "), err)
		return c, durationProblem("estimate", strings.Join(rest, " "), err, "30m, 4h or 2d")
	}
	c.Duration = d
	if digits != nil {
		return c, digits
	}
	if notClass != nil {
		return c, notClass
	}
	if requestWords != nil {
		return c, requestWords
	}
	if trailing != nil {
		return c, trailing
	}
	if twice != nil {
		return c, twice
	}
	return c, nil
}

func parseQuota(c Command, args []string) (Command, error) {
	if len(args) > 1 && nearest(args[0], []string{"request"}) == "request" {
		// /gpu quota requst +2 train because …: the quota request meant.
		return c, qm.Invalid("/gpu quota request "+strings.Join(args[1:], " "), "%s is not a word of /gpu quota; did you mean /gpu quota request?", policy.Quoted(args[0], 40))
	}
	if len(args) > 1 {
		e := bad(c.Verb, "/gpu quota takes at most a team name, but got %s.", policy.Quoted(strings.Join(args, " "), 40))
		for _, a := range args {
			// A team among the words (by its name or its channel): the example shows its quota.
			if t, perr := c.teamName(c.Verb, a); perr == nil && (c.teams[t] || channelWord(a)) {
				c.Arg = t
				return c, e.WithExample("/gpu quota " + t)
			}
		}
		return c, e
	}
	if len(args) == 1 {
		t, perr := c.teamName(c.Verb, args[0])
		if perr != nil {
			return c, perr
		}
		c.Arg = t
	}
	return c, nil
}

// extraGPUs reads w, the extra GPUs of a quota request (+4), as the number it is: n, with late
// a refusal to give once the rest of the request is read (the number meant is clear: written
// with other digits, without its +, or more than any request holds, which asks for the most it
// holds), or err, a refusal to give now.
func extraGPUs(verb, w string) (n int, late *qm.Error, err *qm.Error) {
	num, plus := strings.CutPrefix(w, "+")
	if policy.OtherDigits(num) {
		if meant := in09(num); meant != "" {
			if m, err := strconv.Atoi(meant); err == nil && m >= 1 {
				if m > qm.MaxRequestGPUs {
					// The number meant is too many as well: one refusal says both, and names
					// what works typed back.
					return qm.MaxRequestGPUs, bad(verb, "%s is written with digits other than 0-9, and +%s GPUs is more than any quota request can hold; write at most +%d, with the digits 0-9.", policy.Quoted(w, 40), truncate(strings.TrimLeft(meant, "0"), 40), qm.MaxRequestGPUs), nil
				}
				return m, otherDigits(verb, w, "+"+meant, "+4"), nil
			}
		}
		return 0, nil, otherDigits(verb, w, "", "+4")
	}
	if num == "" || strings.Trim(num, "0123456789") != "" {
		if !plus {
			return 0, nil, bad(verb, "%s should be the extra GPUs written like +4.", policy.Quoted(w, 40))
		}
		return 0, nil, bad(verb, "%s is not a number of extra GPUs like +4.", policy.Quoted(w, 40))
	}
	m, perr := strconv.Atoi(num)
	if errors.Is(perr, strconv.ErrRange) || perr == nil && m > qm.MaxRequestGPUs {
		return qm.MaxRequestGPUs, bad(verb, "+%s GPUs is more than any quota request can hold (at most +%d).", truncate(strings.TrimLeft(num, "0"), 40), qm.MaxRequestGPUs), nil
	}
	if perr != nil {
		return 0, nil, bad(verb, "%s is not a number of extra GPUs like +4.", policy.Quoted(w, 40))
	}
	if m < 1 {
		return 1, bad(verb, "%s is not a number of extra GPUs like +4.", policy.Quoted(w, 40)), nil
	}
	if !plus {
		return m, bad(verb, "%s should be the extra GPUs written like +%d.", policy.Quoted(w, 40), m), nil
	}
	return m, nil, nil
}

func parseQuotaRequest(c Command, args []string) (Command, error) {
	because := becauseAt(args)
	if because >= 0 {
		// because: poster session, because - poster session: the reason follows the mark, and
		// is read without it.
		args = slices.Clone(args)
		args[because] = "because"
		if because+1 < len(args) && strings.Trim(args[because+1], reasonMarks) == "" {
			args = slices.Delete(args, because+1, because+2)
		}
	}
	noReason := func() (Command, error) {
		// +2 train for 3d, and no reason: read again with one, so that the example keeps the
		// GPUs, the class, the length and the team typed; a mistake in them is refused as that.
		head := args
		if because >= 0 {
			head = args[:because]
		}
		fixed, err := parseQuotaRequest(c, append(slices.Clone(head), "because", "a reason"))
		fixed.Reason = ""
		if err != nil {
			if because < 0 {
				// +2 train deadline: the words that no quota request reads before its reason,
				// from the last place where because would make the rest a reason, are the
				// reason typed without the word because. A word with a digit is taken for a
				// mistyped length, as before.
				for k := len(args) - 1; k >= 2; k-- {
					if strings.ContainsAny(args[k], "0123456789") || strings.EqualFold(args[k], "for") || strings.EqualFold(args[k], "team") {
						continue
					}
					meant, merr := parseQuotaRequest(c, slices.Insert(slices.Clone(args), k, "because"))
					if merr == nil {
						return meant, bad(c.Verb, "%s is not part of a quota request; a quota request's reason follows the word because.", policy.Quoted(strings.Join(args[k:], " "), 40))
					}
				}
			}
			return fixed, err
		}
		return fixed, bad(c.Verb, "a quota request needs a reason after \"because\".")
	}
	if because < 0 || because == len(args)-1 {
		return noReason()
	}
	r, long := reasonText(c.Verb, args[because+1:])
	if long == nil && r == "" {
		return noReason()
	}
	c.Reason = r
	head := unquotedWords(args[:because]) // free text only after "because"
	if len(head) < 2 {
		if len(head) == 1 {
			// +2 and no class: the example keeps the GPUs asked for.
			if n, late, err := extraGPUs(c.Verb, head[0]); late == nil && err == nil {
				c.GPUs = n
			}
		}
		return c, bad(c.Verb, "a quota request needs +N and a class.")
	}
	var swapped *qm.Error // the class before +N (train +2), refused once the rest is read
	if !strings.HasPrefix(head[0], "+") && strings.HasPrefix(head[1], "+") {
		if _, late, err := extraGPUs(c.Verb, head[1]); late == nil && err == nil {
			swapped = bad(c.Verb, "%s goes before the class: +N, then the class.", policy.Quoted(head[1], 40))
			head[0], head[1] = head[1], head[0]
		}
	}
	// The extra GPUs: +N. Refused once the rest is read (digits other than 0-9, no +, more than
	// any request holds), so that the example keeps the rest as typed.
	n, digits, err := extraGPUs(c.Verb, head[0])
	if err != nil {
		return c, err
	}
	c.GPUs = n
	class := unquoted(head[1])
	c.Class = policy.NameKey(class)
	var notClass *qm.Error // refused once the rest is read, so that the example keeps its length
	if !validName(c.Class) {
		c.Class, notClass = "", bad(c.Verb, "%s is not a class name.", policy.Quoted(class, 40))
	}
	tail := head[2:]
	var twice *qm.Error // the class typed again (+2 train train), refused once the rest is read
	if len(tail) > 0 && notClass == nil && policy.SameName(unquoted(tail[0]), c.Class) {
		twice = bad(c.Verb, "%s is given twice; give it once.", policy.Quoted(tail[0], 40))
		tail = tail[1:]
	}
	var noData *qm.Error  // data CLASS, as a request names one, refused once the rest is read
	var channel *qm.Error // a team's channel without the word team, refused once the rest is read
	for i := 0; i < len(tail); i++ {
		if strings.EqualFold(tail[i], "data") && noData == nil {
			n := min(2, len(tail)-i)
			noData = bad(c.Verb, "%s is not part of a quota request, which takes no data class; leave it out.", policy.Quoted(strings.Join(tail[i:i+n], " "), 40))
			tail = append(tail[:i:i], tail[i+n:]...)
			i--
			continue
		}
		t, ok := c.channels[policy.ChannelKey(tail[i])]
		ok = ok && t != "" && channelWord(tail[i])
		byName := !ok && c.teams[policy.NameKey(tail[i])] && !c.classes[policy.NameKey(tail[i])]
		if byName {
			t = policy.NameKey(tail[i])
		}
		if (ok || byName) && (i == 0 || !strings.EqualFold(tail[i-1], "team")) {
			// #vision-gpu, or vision, without the word team: a quota request names its team
			// after team, as a request does; refused once the rest is read, the example naming
			// that team.
			if c.Team != "" || channel != nil {
				return c, bad(c.Verb, "%s is given twice; give it once.", policy.Quoted(tail[i], 40))
			}
			if byName {
				channel = bad(c.Verb, "%s is a team; a quota request names its team after the word team, like team %s.", policy.Quoted(tail[i], 40), t)
			} else {
				channel = bad(c.Verb, "%s is a team's channel; a quota request names its team after the word team, like team %s.", policy.Quoted(tail[i], 40), t)
			}
			c.channelNote = &channelNote{typed: tail[i], team: t, name: byName, err: channel}
			c.Team = t
			tail = append(tail[:i:i], tail[i+1:]...)
			i--
			continue
		}
		// team T, for someone in several teams: where the other words are, before "because".
		if !strings.EqualFold(tail[i], "team") {
			continue
		}
		if i+1 < len(tail) && c.Team != "" {
			return c, bad(c.Verb, "%s is given twice; give it once.", policy.Quoted(tail[i], 40))
		}
		if i+1 == len(tail) || c.Team != "" {
			return c, bad(c.Verb, "\"team\" must be followed by one team name, given once.")
		}
		if c.teamLeftOut(tail[i+1]) {
			// team for 3d: the team's name was left out; read again without the word team, so
			// that the example keeps the rest.
			for j := 0; j+1 < because; j++ {
				if strings.EqualFold(unquoted(args[j]), "team") && c.teamLeftOut(args[j+1]) {
					fixed, err := parseQuotaRequest(c, slices.Delete(slices.Clone(args), j, j+1))
					if err != nil {
						return fixed, err
					}
					return fixed, bad(c.Verb, "\"team\" must be followed by a team name.")
				}
			}
			return c, bad(c.Verb, "\"team\" must be followed by a team name.")
		}
		t, perr := c.teamName(c.Verb, tail[i+1])
		if perr != nil {
			return c, perr
		}
		c.Team = t
		tail = append(tail[:i:i], tail[i+2:]...)
		i--
	}
	if len(tail) > 0 {
		if strings.EqualFold(tail[0], "for") {
			if len(tail) == 1 {
				// "for because": the duration is missing, not empty.
				return c, bad(c.Verb, "%s must be followed by how long, like 2w, or left out for a week.", policy.Quoted(tail[0], 40))
			}
			tail = tail[1:]
			if again := slices.IndexFunc(tail, func(w string) bool { return strings.EqualFold(w, "for") }); again > 0 {
				// for 1w for 1w: the first duration kept, the second "for" refused as given twice.
				if d, err := durationOf(tail[:again]); err == nil {
					c.Duration = d
					return c, bad(c.Verb, "%s is given twice; give it once.", policy.Quoted(tail[again], 40))
				}
			}
		}
		d, err := durationOf(tail)
		if err != nil {
			typed := strings.Join(tail, " ")
			c.Duration = meantDuration(typed, err)
			if c.Duration > qm.MaxQuotaIncrease && policy.OtherDigits(typed) {
				// Longer than an increase lasts as well: one refusal says both, and the
				// example asks for the longest.
				meant := c.Duration
				c.Duration = qm.MaxQuotaIncrease
				return c, bad(c.Verb, "%s is written with digits other than 0-9, and %s is longer than a quota increase lasts; write at most %s, with the digits 0-9.", policy.Quoted(typed, 40), policy.FormatDuration(meant), policy.FormatDuration(qm.MaxQuotaIncrease))
			}
			return c, durationProblem(c.Verb, typed, err, "2w")
		}
		c.Duration = d
	}
	if digits != nil {
		return c, digits
	}
	if notClass != nil {
		return c, notClass
	}
	if twice != nil {
		return c, twice
	}
	if noData != nil {
		return c, noData
	}
	if channel != nil {
		return c, channel
	}
	if swapped != nil {
		return c, swapped
	}
	if long != nil {
		// Only the reason is wrong: the example asks for what was asked, with the reason's
		// opening words.
		return c, long.WithExample("/gpu quota request " + strings.Join(head, " ") + " because " + opening(r))
	}
	return c, nil
}

// opening is the first words of a reason, to show in an example: up to about 60 characters,
// cut at a space, with "…" when something was left out.
func opening(reason string) string {
	const most = 60
	if utf8.RuneCountInString(reason) <= most {
		return reason
	}
	cut := string([]rune(reason)[:most])
	if i := strings.LastIndexByte(cut, ' '); i > 0 {
		cut = cut[:i]
	}
	return cut + "…"
}
