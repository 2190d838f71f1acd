package commands

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// ParamType is what kind of value a command parameter takes. Adapters with typed options
// (Discord's application commands) register each parameter with its type; the text grammar reads
// the same parameters from words.
type ParamType string

// Parameter types.
const (
	TInt      ParamType = "integer"  // a whole number
	TString   ParamType = "string"   // one word
	TDuration ParamType = "duration" // 30m, 4h, 2d
	TLease    ParamType = "lease"    // a lease id such as L-42 (adapters may autocomplete it)
	TClass    ParamType = "class"    // a class of the policy (adapters offer the policy's classes as choices)
	TTemplate ParamType = "template" // a template name (adapters may autocomplete it)
	TTeam     ParamType = "team"     // a team name
	TFlag     ParamType = "flag"     // present or not
	TText     ParamType = "text"     // the rest of the line
	TWeek     ParamType = "week"     // an ISO week such as 2026-W48, or "this week" or "last week"
)

// Param is one parameter of a command.
type Param struct {
	Name     string
	Type     ParamType
	Required bool
	// Keyword is the word that introduces the value in text ("for 4h", "team vision"); empty for a
	// positional parameter. A keyword ending in "=" or "+" is written joined to the value
	// ("for=2h", "+4"). For a flag it is the word itself.
	Keyword string
	Help    string
	// DiscordHelp is Help on Discord, where it is also the option's description (at most 100
	// characters), for a parameter whose value Discord users name in Discord's own terms; empty:
	// Help.
	DiscordHelp string
	// Placeholder is the word help shows for the value, as the command's usage writes it (T in
	// "team T"); empty: the type's (N, CLASS, DURATION, LEASE, …).
	Placeholder string
	// dataClasses: help names the data classes of the asker's team after Help.
	dataClasses bool
	// Leases, for a lease id, is which leases the command takes from the person who types it, as
	// the adapters that suggest ids read it: LeasesAny, LeasesOwn, LeasesRunning or LeasesToDecide.
	Leases string
	// Teams, for a team, is which teams the command takes from the person who types it, as the
	// adapters that suggest teams read it (TeamsFor): TeamsCharged, TeamsQuota or TeamsReport.
	Teams string
}

// Which leases a command takes from the person who types it (Param.Leases).
const (
	LeasesAny      = ""         // theirs, and those they see or decide (/gpu status)
	LeasesOwn      = "own"      // their own that have not ended (/gpu release, cancel)
	LeasesRunning  = "running"  // their own workspaces that hold GPUs (/gpu extend, keep)
	LeasesToDecide = "decision" // those waiting for their decision (/gpu approve, deny)
)

// HelpFor is what p is, in words: on Discord (options), as Discord users name it.
func (p Param) HelpFor(options bool) string {
	if options && p.DiscordHelp != "" {
		return p.DiscordHelp
	}
	return p.Help
}

// Typed is how a user types p, as the command's usage writes it: "N", "for DURATION", "+N",
// "for=DURATION", "exclusive".
func (p Param) Typed() string {
	if p.Type == TFlag {
		return p.Keyword
	}
	v := p.Placeholder
	if v == "" {
		switch p.Type {
		case TInt:
			v = "N"
		case TText, TString:
			v = strings.ToUpper(p.Name)
		default:
			v = strings.ToUpper(string(p.Type))
		}
	}
	switch {
	case p.Keyword == "":
		return v
	case strings.HasSuffix(p.Keyword, "=") || strings.HasSuffix(p.Keyword, "+"):
		return p.Keyword + v
	default:
		return p.Keyword + " " + v
	}
}

// Option is how a platform that takes a command's parameters as typed options (Discord) takes
// p: the option's name, registered from the table as p.Name, a colon and its value as help and
// usage write it: "duration:DURATION", "data:DATA", "exclusive:True".
func (p Param) Option() string {
	if p.Type == TFlag {
		return p.Name + ":True"
	}
	return p.Name + ":" + strings.ToUpper(strings.ReplaceAll(p.Name, "-", "_"))
}

// takesOptions reports whether req comes from a platform whose /gpu takes a command's
// parameters as typed options (Discord's /gpu request gpus:2 duration:8h), not words after it.
func takesOptions(req bot.Request) bool { return req.Account.Platform == "discord" }

// Spec is one /gpu command: its words, typed parameters, grammar, handler and help. Every place
// that lists, parses, documents or registers commands reads this table: help, the grammar, the
// Slack manifest's check, the console and typed registration on other platforms.
type Spec struct {
	// Name identifies the command (and names it on platforms with typed commands): "request",
	// "quota-request".
	Name string
	// Words are what the user types after /gpu to choose it: ["request"], ["quota", "request"].
	Words   []string
	Usage   string
	Summary string
	// Examples work on any policy: {class} stands for the first class in which the asker's team
	// has GPUs (the policy's first class where none is known), {duration} for 4h
	// and {short} for 2h, or the class's max_duration where that is shorter, {template} for an
	// interactive template and {batch} for a batch template of the installed catalog, {person}
	// for the policy directory's first person.
	Examples []string
	Params   []Param
	// Anyone may run it, even someone Quartermaster does not know (help, browsing templates).
	// Everything else, the catalog, prices and rules included, answers only people it knows.
	Public bool
	parse  func(c Command, args []string) (Command, error)
	run    func(ctx context.Context, b *Bot, req bot.Request, c Command) []bot.Reply
	// offered says whether this installation offers it (templates installed, say); nil: always.
	offered func(b *Bot) bool
	// unoffered says why it is not offered, where that is not offered, and who can change that:
	// it goes on the refusal's one sentence ("" leaves the refusal pointing at /gpu help alone).
	unoffered string
}

// Text is the command line an adapter with typed options sends through the grammar: the words,
// then each given parameter as the grammar reads it. Values are taken as given; the grammar
// judges them.
func (s *Spec) Text(values map[string]string) string {
	parts := append([]string{"/gpu"}, s.Words...)
	for _, p := range s.Params {
		v, ok := values[p.Name]
		if !ok || v == "" {
			continue
		}
		switch {
		case p.Type == TFlag:
			if v == "true" || v == "yes" || v == "1" {
				parts = append(parts, p.Keyword)
			}
		case p.Keyword == "":
			parts = append(parts, v)
		case strings.HasSuffix(p.Keyword, "=") || strings.HasSuffix(p.Keyword, "+"):
			parts = append(parts, p.Keyword+v)
		default:
			parts = append(parts, p.Keyword, v)
		}
	}
	return strings.Join(parts, " ")
}

// table is every command, in the order help lists them.
var table []*Spec

// Table lists every command the grammar knows, whether or not an installation offers it.
func Table() []*Spec { return table }

// Lookup finds a command by name ("quota-request") or by its words ("quota request").
func Lookup(name string) (*Spec, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	for _, s := range table {
		if s.Name == name || strings.Join(s.Words, " ") == name {
			return s, true
		}
	}
	return nil, false
}

// match finds the command whose words begin args, the longest first.
func match(args []string) (*Spec, int) {
	var best *Spec
	for _, s := range table {
		if len(s.Words) > len(args) || (best != nil && len(s.Words) <= len(best.Words)) {
			continue
		}
		ok := true
		for i, w := range s.Words {
			if !strings.EqualFold(args[i], w) {
				ok = false
				break
			}
		}
		if ok {
			best = s
		}
	}
	if best == nil {
		return nil, 0
	}
	return best, len(best.Words)
}

// Offered lists the commands this installation offers, in help's order.
func (b *Bot) Offered() []*Spec {
	var out []*Spec
	for _, s := range table {
		if s.offered == nil || s.offered(b) {
			out = append(out, s)
		}
	}
	return out
}

func (b *Bot) offers(s *Spec) bool { return s.offered == nil || s.offered(b) }

// Example renders a spec's first example for this installation's policy and templates.
func (b *Bot) Example(s *Spec) string {
	if len(s.Examples) == 0 {
		return "/gpu help"
	}
	return b.expand(s.Examples[0])
}

// expand fills an example's placeholders from the policy and the template catalog, {class} with
// the catalog's first class.
func (b *Bot) expand(ex string) string { return b.expandWith(b.pol().Classes[0], "", ex) }

// expandFor is expand for the one who asks (exampleContext): {class} is the first class in which
// their team has GPUs, so that the example works for them as typed.
func (b *Bot) expandFor(ctx context.Context, ex string) string {
	c := b.pol().Classes[0]
	if name, ok := ctx.Value(exampleClassKey{}).(string); ok {
		if cl, ok := b.pol().Class(name); ok {
			c = cl
		}
	}
	data, _ := ctx.Value(exampleDataKey{}).(string)
	return b.expandWith(c, data, ex)
}

type exampleClassKey struct{}

// exampleTeamKey holds the first team of the one who asks.
type exampleTeamKey struct{}

// dataClassesOf is what help adds to the data class parameter: the data classes the asker's
// first team is cleared for, its first being the default.
func (b *Bot) dataClassesOf(ctx context.Context) string {
	team, ok := ctx.Value(exampleTeamKey{}).(string)
	if !ok || b.Svc == nil {
		return ", one of your team's data classes (the default: its first)"
	}
	dcs := b.Svc.DataClassesOf(team)
	if len(dcs) == 1 {
		return fmt.Sprintf("; team %s has one, %s, the default", team, dcs[0])
	}
	return fmt.Sprintf(", one of the data classes of team %s: %s", team, policy.JoinList(append([]string{dcs[0] + " (the default)"}, dcs[1:]...), "or"))
}

// exampleDataKey holds the data class examples name for the one who asks: their first team's first.
type exampleDataKey struct{}

// exampleContext is ctx knowing the class examples name for who: the first class of the catalog,
// in the policy's order, in which their first team has GPUs (the catalog's first class when no
// class has any, or who is in no team).
func (b *Bot) exampleContext(ctx context.Context, who qm.Identity) context.Context {
	if len(who.Teams) == 0 {
		return ctx
	}
	ctx = context.WithValue(ctx, exampleTeamKey{}, who.Teams[0])
	if t, ok := b.pol().Team(who.Teams[0]); ok && len(t.DataClasses) > 0 {
		ctx = context.WithValue(ctx, exampleDataKey{}, t.DataClasses[0])
	}
	q := b.pol().QuotaFor(who.Teams[0])
	for _, c := range b.pol().Classes {
		if q.GPUs[c.Name] > 0 {
			return context.WithValue(ctx, exampleClassKey{}, c.Name)
		}
	}
	return ctx
}

// expandWith fills ex's placeholders for class c and data class data ("": the first data class of
// the policy's first team that has some, else public, what a team without any is cleared for).
func (b *Bot) expandWith(c *policy.Class, data, ex string) string {
	if data == "" {
		data = "public"
		for _, t := range b.pol().Teams {
			if len(t.DataClasses) > 0 {
				data = t.DataClasses[0]
				break
			}
		}
	}
	within := func(d time.Duration) string { // a length the class allows without approval
		if m := c.MaxDuration.Duration; m > 0 && m < d {
			d = m
		}
		return policy.FormatDuration(d)
	}
	r := strings.NewReplacer("{class}", c.Name, "{duration}", within(qm.DefaultDuration), "{short}", within(2*time.Hour),
		"{template}", b.exampleTemplate(true), "{batch}", b.exampleTemplate(false), "{data}", data, "{person}", b.examplePerson())
	return r.Replace(ex)
}

// examplePerson is someone the policy knows, for examples that name a person: the directory's
// first entry, or, where people are known by single sign-on alone, an address of the form.
func (b *Bot) examplePerson() string {
	for _, id := range b.pol().Directory {
		if id != nil && id.User != "" {
			return id.User
		}
	}
	return "someone@example.com"
}

// exampleTemplate names a template of the catalog for examples: an interactive one, or a batch one.
func (b *Bot) exampleTemplate(interactive bool) string {
	if b.Templates == nil {
		return "jupyterlab"
	}
	var names []string
	for _, tp := range b.Templates.Catalog.List() {
		if (tp.Kind == "interactive") == interactive {
			names = append(names, tp.Name)
		}
	}
	if len(names) == 0 {
		names = b.Templates.names()
	}
	sort.Strings(names)
	for _, pref := range []string{"jupyterlab", "cuda-smoke"} {
		for _, n := range names {
			if n == pref {
				return n
			}
		}
	}
	if len(names) == 0 {
		return "jupyterlab"
	}
	return names[0]
}

// usageHint is the one-line list of offered commands (the Slack manifest's usage hint).
func UsageHint(specs []*Spec) string {
	var names []string
	seen := map[string]bool{}
	for _, s := range specs {
		if !seen[s.Words[0]] {
			seen[s.Words[0]] = true
			names = append(names, s.Words[0])
		}
	}
	return "[" + strings.Join(names, " | ") + "]"
}

func noArgs(c Command, args []string) (Command, error) {
	if len(args) > 0 {
		return c, bad(c.Verb, "/gpu %s takes no arguments, but got %s.", c.Verb, policy.Quoted(strings.Join(unquotedWords(args), " "), 40))
	}
	return c, nil
}

func oneLease(c Command, args []string) (Command, error) {
	if len(args) > 1 {
		// The example names the lease typed, where one lease was, never another of the asker's.
		named := func(id qm.LeaseID, format string, a ...any) (Command, error) {
			c.Lease = id
			return c, qm.Invalid(strings.ReplaceAll(leaseExample(c.Verb), leasePlaceholder, id.String()), format, a...)
		}
		if id, ok := leaseOverTwoWords(c.Verb, args); ok && len(args) == 2 {
			// L 1, L- 1, lease 1: one id over two words.
			return named(id, "%s is not a lease id; write it as one word: %s.", policy.Quoted(strings.Join(args, " "), 40), id)
		}
		var ids []qm.LeaseID
		var others []string
		for _, a := range args {
			if id, perr := leaseArg(c.Verb, a); perr == nil {
				ids = append(ids, id)
			} else {
				others = append(others, unquoted(a))
			}
		}
		if len(ids) > 1 && len(others) == 0 {
			// L-1 L-2: one at a time, the first typed first (never another of the asker's).
			return named(ids[0], "/gpu %s takes one lease at a time: %s first, then %s.", c.Verb, ids[0], eachAfter(c.Verb, ids[1:], ""))
		}
		if len(ids) == 1 {
			// L-1 now, L-1 please: the lease and words the command does not take.
			return named(ids[0], "/gpu %s takes exactly one lease id and nothing else; leave out %s.", c.Verb, policy.Quoted(strings.Join(others, " "), 40))
		}
	}
	if len(args) != 1 {
		return c, missingLease(c.Verb, "/gpu %s needs exactly one lease id", c.Verb)
	}
	id, perr := leaseArg(c.Verb, args[0])
	c.Lease = id
	if perr != nil {
		return c, perr
	}
	return c, nil
}

// eachAfter is the commands that do verb to each of ids in turn, with tail after each id (the
// length of an extension): "/gpu release L-2 and /gpu release L-3".
func eachAfter(verb string, ids []qm.LeaseID, tail string) string {
	var cmds []string
	for _, id := range ids {
		cmds = append(cmds, strings.TrimSpace("/gpu "+verb+" "+id.String()+" "+tail))
	}
	return policy.JoinList(cmds, "and")
}

func init() {
	lease := Param{Name: "lease", Type: TLease, Required: true, Help: "a lease id such as L-42 (see /gpu list)"}
	leaseOf := func(which string) Param { p := lease; p.Leases = which; return p }
	// A request and a job name the data class they touch with the same word.
	dataParam := Param{Name: "data", Type: TString, Keyword: "data", Placeholder: "CLASS", Help: "the data class the work touches", dataClasses: true}
	table = []*Spec{
		{Name: "help", Words: []string{"help"}, Usage: "/gpu help [COMMAND]", Summary: "this help, or one command's help with examples",
			Examples: []string{"/gpu help", "/gpu help request"}, Public: true,
			Params: []Param{{Name: "command", Type: TString, Help: "a command to explain"}},
			parse: func(c Command, args []string) (Command, error) {
				if len(args) > 0 && (strings.EqualFold(args[0], "/gpu") || strings.EqualFold(args[0], "gpu")) {
					args = args[1:] // /gpu help /gpu extend: the command as it is typed
				}
				c.Arg = strings.ToLower(unquoted(strings.Join(args, " ")))
				return c, nil
			},
			run: func(ctx context.Context, b *Bot, req bot.Request, c Command) []bot.Reply {
				return []bot.Reply{b.help(ctx, c.Arg, takesOptions(req))}
			}},
		{Name: "catalog", Words: []string{"catalog"}, Usage: "/gpu catalog", Summary: "classes, prices, limits, free GPUs and the predicted wait",
			Examples: []string{"/gpu catalog"}, parse: noArgs,
			run: func(ctx context.Context, b *Bot, req bot.Request, c Command) []bot.Reply { return b.catalog(ctx, req) }},
		{Name: "request", Words: []string{"request"}, Usage: "/gpu request [N] [CLASS] [for DURATION] [template T [key=value …]] [team T] [data CLASS] [exclusive]",
			Summary:  "ask for GPUs: granted at once within policy, else a budget owner decides",
			Examples: []string{"/gpu request 1 {class} for {duration}", "/gpu request 1 {class} for {short} template {template}"},
			Params: []Param{
				{Name: "gpus", Type: TInt, Help: "how many GPUs (default 1)"},
				{Name: "class", Type: TClass, Help: "the class from the catalog (default: the first your team has room in)"},
				{Name: "duration", Type: TDuration, Keyword: "for", Help: "how long, like 4h (default 4h, at most the class's limit)"},
				{Name: "template", Type: TTemplate, Keyword: "template", Placeholder: "T", Help: "a workspace template (see /gpu templates)"},
				{Name: "params", Type: TText, Placeholder: "key=value …", Help: "the template's parameters"},
				{Name: "team", Type: TTeam, Keyword: "team", Placeholder: "T", Help: "the team to charge, if you are in several", Teams: TeamsCharged},
				dataParam,
				{Name: "exclusive", Type: TFlag, Keyword: "exclusive", Help: "whole nodes for this lease alone"},
			},
			parse: parseRequest, run: func(ctx context.Context, b *Bot, req bot.Request, c Command) []bot.Reply {
				return b.request(ctx, req, c)
			}},
		{Name: "estimate", Words: []string{"estimate"}, Usage: "/gpu estimate N CLASS DURATION [exclusive]", Summary: "cost and predicted wait, nothing reserved",
			Examples: []string{"/gpu estimate 1 {class} {duration}"},
			Params: []Param{{Name: "gpus", Type: TInt, Required: true, Help: "how many GPUs"}, {Name: "class", Type: TClass, Required: true, Help: "the class"},
				{Name: "duration", Type: TDuration, Required: true, Help: "how long, like 8h"},
				{Name: "exclusive", Type: TFlag, Keyword: "exclusive", Help: "whole nodes for this lease alone, as a request with exclusive gets"}},
			parse: parseEstimate, run: func(ctx context.Context, b *Bot, req bot.Request, c Command) []bot.Reply {
				return b.estimate(ctx, req, c)
			}},
		{Name: "list", Words: []string{"list"}, Usage: "/gpu list", Summary: "your leases", Examples: []string{"/gpu list"}, parse: noArgs,
			run: func(ctx context.Context, b *Bot, req bot.Request, c Command) []bot.Reply { return b.list(ctx, req) }},
		{Name: "status", Words: []string{"status"}, Usage: "/gpu status LEASE", Summary: "one lease and its history", Examples: []string{"/gpu status L-42"},
			Params: []Param{lease}, parse: oneLease,
			run: func(ctx context.Context, b *Bot, req bot.Request, c Command) []bot.Reply {
				return b.status(ctx, req, c)
			}},
		{Name: "extend", Words: []string{"extend"}, Usage: "/gpu extend LEASE DURATION", Summary: "make a lease longer (beyond policy, a budget owner decides)",
			Examples: []string{"/gpu extend L-42 2h"},
			Params:   []Param{leaseOf(LeasesRunning), {Name: "duration", Type: TDuration, Required: true, Help: "how much longer, like 2h"}},
			parse:    parseExtend, run: func(ctx context.Context, b *Bot, req bot.Request, c Command) []bot.Reply {
				return b.extend(ctx, req, c)
			}},
		{Name: "keep", Words: []string{"keep"}, Usage: "/gpu keep LEASE", Summary: "answer an idle warning: keep the workspace", Examples: []string{"/gpu keep L-42"},
			Params: []Param{leaseOf(LeasesRunning)}, parse: oneLease,
			run: func(ctx context.Context, b *Bot, req bot.Request, c Command) []bot.Reply { return b.keep(ctx, req, c) }},
		{Name: "release", Words: []string{"release"}, Usage: "/gpu release LEASE", Summary: "end a lease now, running or waiting", Examples: []string{"/gpu release L-42"},
			Params: []Param{leaseOf(LeasesOwn)}, parse: oneLease,
			run: func(ctx context.Context, b *Bot, req bot.Request, c Command) []bot.Reply {
				return b.release(ctx, req, c)
			}},
		{Name: "cancel", Words: []string{"cancel"}, Usage: "/gpu cancel LEASE", Summary: "withdraw a request or lease that still waits (one that runs: /gpu release)", Examples: []string{"/gpu cancel L-42"},
			Params: []Param{leaseOf(LeasesOwn)}, parse: oneLease,
			run: func(ctx context.Context, b *Bot, req bot.Request, c Command) []bot.Reply {
				return b.cancel(ctx, req, c)
			}},
		{Name: "approve", Words: []string{"approve"}, Usage: "/gpu approve LEASE", Summary: "approve an exception (budget owners)", Examples: []string{"/gpu approve L-42"},
			Params: []Param{leaseOf(LeasesToDecide)}, parse: oneLease,
			run: func(ctx context.Context, b *Bot, req bot.Request, c Command) []bot.Reply {
				return b.decide(ctx, req, c, true)
			}},
		{Name: "deny", Words: []string{"deny"}, Usage: "/gpu deny LEASE [REASON]", Summary: "deny an exception (budget owners)", Examples: []string{"/gpu deny L-42 use the {class} class"},
			Params: []Param{leaseOf(LeasesToDecide), {Name: "reason", Type: TText, Help: "why, for the requester"}}, parse: parseDeny,
			run: func(ctx context.Context, b *Bot, req bot.Request, c Command) []bot.Reply {
				return b.decide(ctx, req, c, false)
			}},
		{Name: "approvals", Words: []string{"approvals"}, Usage: "/gpu approvals", Summary: "what waits for your decision", Examples: []string{"/gpu approvals"}, parse: noArgs,
			run: func(ctx context.Context, b *Bot, req bot.Request, c Command) []bot.Reply {
				return b.approvals(ctx, req)
			}},
		{Name: "quota", Words: []string{"quota"}, Usage: "/gpu quota [TEAM]", Summary: "use against quota this week", Examples: []string{"/gpu quota"},
			Params: []Param{{Name: "team", Type: TTeam, Help: "a team (default: your first, naming your others; a budget owner in no team: the teams they own)", Teams: TeamsQuota}}, parse: parseQuota,
			run: func(ctx context.Context, b *Bot, req bot.Request, c Command) []bot.Reply { return b.quota(ctx, req, c) }},
		{Name: "quota-request", Words: []string{"quota", "request"}, Usage: "/gpu quota request +N CLASS [for DURATION] [team T] because REASON",
			Summary: "ask your budget owners for more quota", Examples: []string{"/gpu quota request +2 {class} for 1w because paper deadline"},
			Params: []Param{{Name: "gpus", Type: TInt, Required: true, Keyword: "+", Help: "how many more GPUs"}, {Name: "class", Type: TClass, Required: true, Help: "the class"},
				{Name: "duration", Type: TDuration, Keyword: "for", Help: "for how long (default " + policy.FormatDuration(qm.DefaultQuotaIncrease) + ")"},
				{Name: "team", Type: TTeam, Keyword: "team", Placeholder: "T", Help: "the team whose quota, if you are in several", Teams: TeamsCharged}, {Name: "reason", Type: TText, Required: true, Keyword: "because", Help: "why, for the budget owners"}},
			parse: parseQuotaRequest,
			run: func(ctx context.Context, b *Bot, req bot.Request, c Command) []bot.Reply {
				return b.quotaRequest(ctx, req, c)
			}},
		{Name: "templates", Words: []string{"templates"}, Usage: "/gpu templates [WORD …]", Summary: "browse workload templates", Examples: []string{"/gpu templates", "/gpu templates notebook", "/gpu templates vs code"},
			Public: true, Params: []Param{{Name: "word", Type: TText, Help: "words to search for (a template holding them all is listed)"}}, parse: parseWords,
			offered: hasTemplates, run: func(ctx context.Context, b *Bot, req bot.Request, c Command) []bot.Reply {
				return b.Templates.list(ctx, req, c)
			}},
		{Name: "template", Words: []string{"template"}, Usage: "/gpu template NAME", Summary: "a template's Slurm script and Kubernetes manifest", Examples: []string{"/gpu template {template}"},
			Public: true, Params: []Param{{Name: "name", Type: TTemplate, Required: true, Placeholder: "NAME", Help: "the template"}}, parse: parseTemplate,
			offered: hasTemplates, run: func(ctx context.Context, b *Bot, req bot.Request, c Command) []bot.Reply {
				return b.Templates.show(ctx, req, c)
			}},
		{Name: "submit", Words: []string{"submit"}, Usage: "/gpu submit TEMPLATE [key=value …] [class=C] [gpus=N] [team=T] [for=DURATION] [data CLASS]", Summary: "a batch job from a template, under a new lease",
			Examples: []string{"/gpu submit {batch}"},
			Params: []Param{{Name: "template", Type: TTemplate, Required: true, Help: "the template"}, {Name: "params", Type: TText, Placeholder: "key=value …", Help: "the template's parameters"},
				{Name: "class", Type: TClass, Keyword: "class=", Placeholder: "C", Help: "the class (default: the first that fits and your team has room in)"}, {Name: "gpus", Type: TInt, Keyword: "gpus=", Help: "how many GPUs (default: the template's)"},
				{Name: "team", Type: TTeam, Keyword: "team=", Placeholder: "T", Help: "the team to charge", Teams: TeamsCharged}, {Name: "duration", Type: TDuration, Keyword: "for=", Help: "how long, like 2h"},
				dataParam},
			parse:   parseSubmit,
			offered: hasTemplates, run: func(ctx context.Context, b *Bot, req bot.Request, c Command) []bot.Reply {
				return b.Templates.submit(ctx, req, c)
			}},
		{Name: "login", Words: []string{"login"}, Usage: "/gpu login", Summary: "a one-time link to sign in with your organisation's single sign-on",
			Examples: []string{"/gpu login"}, Public: true, parse: noArgs, offered: hasSSO, unoffered: SSONotSetUp,
			run: func(ctx context.Context, b *Bot, req bot.Request, c Command) []bot.Reply { return b.login(ctx, req, c) }},
		{Name: "logout", Words: []string{"logout"}, Usage: "/gpu logout", Summary: "unlink this chat account from your sign-in",
			Examples: []string{"/gpu logout"}, Public: true, parse: noArgs, offered: hasSSO, unoffered: SSONotSetUp,
			run: func(ctx context.Context, b *Bot, req bot.Request, c Command) []bot.Reply {
				return b.logout(ctx, req, c)
			}},
		{Name: "unlink", Words: []string{"unlink"}, Usage: "/gpu unlink EMAIL|ACCOUNT", Summary: "unlink someone's chat accounts (platform admins)",
			Examples: []string{"/gpu unlink {person}"}, offered: hasSSO, unoffered: SSONotSetUp,
			Params: []Param{{Name: "who", Type: TString, Required: true, Placeholder: "EMAIL|ACCOUNT", Help: "an email, or a chat account as platform:workspace:user",
				DiscordHelp: "the person: mention them (type @ and pick their name), or their email"}},
			parse: parseUnlink,
			run: func(ctx context.Context, b *Bot, req bot.Request, c Command) []bot.Reply {
				return b.unlink(ctx, req, c)
			}},
		{Name: "report", Words: []string{"report"}, Usage: "/gpu report [WEEK] [TEAM]",
			Summary:  "a week's showback: GPU-hours, cost, idle and reclaimed hours, approvals, waits (owners see their teams, admins all)",
			Examples: []string{"/gpu report", "/gpu report this week"},
			Params: []Param{{Name: "week", Type: TWeek, Help: "an ISO week like 2026-W48, or this week (so far) or last week (default: the last complete week; before one, this week so far)"},
				{Name: "team", Type: TTeam, Help: "one team (budget owners: theirs; platform admins: any)", Teams: TeamsReport}},
			parse: parseReport, offered: func(b *Bot) bool { return b.Reports != nil },
			run: func(ctx context.Context, b *Bot, req bot.Request, c Command) []bot.Reply {
				return Report(ctx, b, b.Reports, req, c.Params)
			}},
		{Name: "policy", Words: []string{"policy"}, Usage: "/gpu policy", Summary: "the published rules, in words", Examples: []string{"/gpu policy"}, parse: noArgs,
			run: func(ctx context.Context, b *Bot, req bot.Request, c Command) []bot.Reply {
				return []bot.Reply{b.policyText(ctx, req.User)}
			}},
	}
}

func hasTemplates(b *Bot) bool { return b.Templates != nil }

// help is /gpu help, or /gpu help COMMAND: one command's usage, parameters and examples. With
// options (Discord), each parameter is named as the option it is typed as (Param.Option).
func (b *Bot) help(ctx context.Context, topic string, options bool) bot.Reply {
	if topic != "" {
		s, ok := Lookup(topic)
		if !ok || !b.offers(s) {
			// A misspelled topic gets the one it is near; anything else, the topics there are.
			var topics []string
			for _, o := range b.Offered() {
				if options {
					topics = append(topics, o.Name) // as /gpu help's command option takes it
				} else {
					topics = append(topics, strings.Join(o.Words, " "))
				}
			}
			if near := nearest(topic, topics); near != "" {
				return bot.Reply{Error: true, Ephemeral: true, Text: fmt.Sprintf("%s is not a /gpu command; the nearest is /gpu %s. Example: /gpu help %s", policy.Quoted(topic, 40), near, near)}
			}
			return bot.Reply{Error: true, Ephemeral: true, Text: fmt.Sprintf("%s is not a /gpu command; the help topics are %s. Example: /gpu help", policy.Quoted(topic, 40), policy.JoinList(topics, "and"))}
		}
		r := bot.Reply{Text: fmt.Sprintf("`%s` — %s.", s.Usage, s.Summary)}
		var lines []string
		for _, p := range s.Params {
			req := "optional"
			if p.Required {
				req = "required"
			}
			help := p.HelpFor(options)
			if p.dataClasses {
				help += b.dataClassesOf(ctx)
			}
			typed := p.Typed()
			if options {
				typed = p.Option()
			}
			lines = append(lines, fmt.Sprintf("`%s`, %s: %s", typed, req, help))
		}
		if len(lines) > 0 {
			r.Sections = append(r.Sections, bot.Section{Title: "Parameters", Text: strings.Join(lines, "\n")})
		}
		var ex []string
		for _, e := range s.Examples {
			ex = append(ex, b.expandFor(ctx, e))
		}
		r.Sections = append(r.Sections, bot.Section{Title: "Examples", Text: strings.Join(ex, "\n")})
		// The commands that go on from this one's words (quota → quota request), found from it.
		var more []string
		for _, o := range b.Offered() {
			if len(o.Words) > len(s.Words) && slices.EqualFunc(o.Words[:len(s.Words)], s.Words, strings.EqualFold) {
				topic := strings.Join(o.Words, " ")
				if options {
					topic = o.Name // as /gpu help's command option takes it: quota-request
				}
				more = append(more, fmt.Sprintf("`%s` — %s (/gpu help %s)", o.Usage, o.Summary, topic))
			}
		}
		if len(more) > 0 {
			r.Sections = append(r.Sections, bot.Section{Title: "See also", Text: strings.Join(more, "\n")})
		}
		return r
	}
	r := bot.Reply{Text: "Quartermaster gets you GPUs without a ticket. Commands (/gpu help COMMAND for one, with examples):"}
	var lines []string
	for _, s := range b.Offered() {
		lines = append(lines, fmt.Sprintf("`%s` — %s", s.Usage, s.Summary))
	}
	r.Sections = []bot.Section{{Text: strings.Join(lines, "\n")}}
	return r
}
