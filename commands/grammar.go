// Package commands is the /gpu grammar and its handlers: text in, bot replies out. It knows the
// domain and the neutral bot model and no chat SDK, so Slack, Discord and the console share it.
package commands

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// Verb is one /gpu command.
type Verb struct {
	Name    string
	Usage   string
	Summary string
	Example string
}

// Verbs is the command registry: the grammar, the help text and the Slack manifest's usage hint
// all come from it.
var Verbs = []Verb{
	{"help", "/gpu help", "this help", "/gpu help"},
	{"catalog", "/gpu catalog", "classes, prices, limits, free GPUs and the predicted wait", "/gpu catalog"},
	{"request", "/gpu request [N] [CLASS] [for DURATION] [template T] [team T] [data CLASS] [exclusive]", "ask for GPUs", "/gpu request 1 interactive for 4h"},
	{"estimate", "/gpu estimate N CLASS DURATION", "cost and predicted wait, nothing reserved", "/gpu estimate 2 train 8h"},
	{"list", "/gpu list", "your leases", "/gpu list"},
	{"status", "/gpu status LEASE", "one lease and its history", "/gpu status L-42"},
	{"extend", "/gpu extend LEASE DURATION", "make a lease longer", "/gpu extend L-42 2h"},
	{"keep", "/gpu keep LEASE", "answer an idle warning: keep the workspace", "/gpu keep L-42"},
	{"release", "/gpu release LEASE", "end a lease now", "/gpu release L-42"},
	{"approve", "/gpu approve LEASE", "approve an exception (budget owners)", "/gpu approve L-42"},
	{"deny", "/gpu deny LEASE [REASON]", "deny an exception (budget owners)", "/gpu deny L-42 use the interactive class"},
	{"approvals", "/gpu approvals", "what waits for your decision", "/gpu approvals"},
	{"quota", "/gpu quota [TEAM] | /gpu quota request +N CLASS [for DURATION] because REASON", "use against quota this week, or ask for more", "/gpu quota"},
	{"templates", "/gpu templates [WORD]", "browse workload templates", "/gpu templates pytorch"},
	{"template", "/gpu template NAME", "a template's Slurm script and Kubernetes manifest", "/gpu template jupyterlab"},
	{"submit", "/gpu submit TEMPLATE [key=value …]", "a batch job from a template", "/gpu submit cuda-smoke"},
	{"report", "/gpu report [WEEK] [TEAM]", "a week's showback: GPU-hours, cost, idle and reclaimed hours, approvals, waits", "/gpu report 2026-W48"},
	{"policy", "/gpu policy", "the published rules, in words", "/gpu policy"},
}

// VerbByName finds a verb.
func VerbByName(name string) (Verb, bool) {
	for _, v := range Verbs {
		if v.Name == name {
			return v, true
		}
	}
	return Verb{}, false
}

// Command is a parsed /gpu command.
type Command struct {
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
	// quota, templates, report: a free argument
	Arg string
	// quota request
	QuotaRequest bool
	// submit parameters; report's words
	Params []string
}

// ParseError is bad input: one sentence and an example that works.
type ParseError struct {
	Msg     string
	Example string
}

func (e *ParseError) Error() string { return e.Msg + " Example: " + e.Example }

func bad(verb, format string, args ...any) *ParseError {
	v, ok := VerbByName(verb)
	ex := "/gpu request 1 interactive for 4h"
	if ok {
		ex = v.Example
	}
	return &ParseError{Msg: fmt.Sprintf(format, args...), Example: ex}
}

// Parse reads a /gpu command. The leading "/gpu" is optional.
func Parse(text string) (Command, error) {
	f := strings.Fields(text)
	if len(f) > 0 && strings.EqualFold(f[0], "/gpu") {
		f = f[1:]
	}
	if len(f) == 0 {
		return Command{Verb: "help"}, nil
	}
	verb := strings.ToLower(f[0])
	args := f[1:]
	if _, ok := VerbByName(verb); !ok {
		return Command{}, &ParseError{Msg: fmt.Sprintf("%q is not a /gpu command; /gpu help lists them.", truncate(f[0], 40)), Example: "/gpu request 1 interactive for 4h"}
	}
	c := Command{Verb: verb}
	switch verb {
	case "help", "catalog", "list", "approvals", "policy":
		if len(args) > 0 && verb != "help" {
			return c, bad(verb, "/gpu %s takes no arguments, but got %q.", verb, truncate(strings.Join(args, " "), 40))
		}
		if verb == "help" && len(args) > 0 {
			c.Arg = strings.ToLower(args[0])
		}
	case "request":
		return parseRequest(c, args)
	case "estimate":
		return parseEstimate(c, args)
	case "status", "keep", "release", "approve":
		if len(args) != 1 {
			return c, bad(verb, "/gpu %s needs exactly one lease id, like L-42.", verb)
		}
		id, err := qm.ParseLeaseID(args[0])
		if err != nil {
			return c, bad(verb, "%q is not a lease id; lease ids look like L-42.", truncate(args[0], 40))
		}
		c.Lease = id
	case "deny":
		if len(args) < 1 {
			return c, bad(verb, "/gpu deny needs a lease id, then an optional reason.")
		}
		id, err := qm.ParseLeaseID(args[0])
		if err != nil {
			return c, bad(verb, "%q is not a lease id; lease ids look like L-42.", truncate(args[0], 40))
		}
		c.Lease = id
		c.Reason = strings.Join(args[1:], " ")
	case "extend":
		if len(args) < 2 {
			return c, bad(verb, "/gpu extend needs a lease id and how much longer, like 2h.")
		}
		id, err := qm.ParseLeaseID(args[0])
		if err != nil {
			return c, bad(verb, "%q is not a lease id; lease ids look like L-42.", truncate(args[0], 40))
		}
		c.Lease = id
		rest := args[1:]
		if strings.EqualFold(rest[0], "by") || strings.EqualFold(rest[0], "for") {
			rest = rest[1:]
		}
		d, err := parseDur(strings.Join(rest, ""))
		if err != nil {
			return c, bad(verb, "%q is not a duration; write it like 30m, 2h or 1d.", truncate(strings.Join(rest, " "), 40))
		}
		c.Duration = d
	case "quota":
		return parseQuota(c, args)
	case "report":
		if len(args) > 2 {
			return c, bad(verb, "/gpu report takes a week and a team at most, but got %q.", truncate(strings.Join(args, " "), 40))
		}
		c.Params = args
	case "templates":
		if len(args) > 1 {
			return c, bad(verb, "/gpu %s takes at most one word, but got %q.", verb, truncate(strings.Join(args, " "), 40))
		}
		if len(args) == 1 {
			c.Arg = args[0]
		}
	case "template":
		if len(args) != 1 {
			return c, bad(verb, "/gpu template needs one template name; /gpu templates lists them.")
		}
		c.Template = strings.ToLower(args[0])
	case "submit":
		if len(args) < 1 {
			return c, bad(verb, "/gpu submit needs a template name; /gpu templates lists them.")
		}
		c.Template = strings.ToLower(args[0])
		for _, a := range args[1:] {
			switch {
			case strings.HasPrefix(a, "team="):
				c.Team = strings.TrimPrefix(a, "team=")
			case strings.HasPrefix(a, "for="):
				d, err := parseDur(strings.TrimPrefix(a, "for="))
				if err != nil {
					return c, bad(verb, "%q is not a duration; write it like for=2h.", truncate(a, 40))
				}
				c.Duration = d
			default:
				c.Params = append(c.Params, a)
			}
		}
	}
	return c, nil
}

func parseDur(s string) (time.Duration, error) {
	d, err := policy.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, fmt.Errorf("zero duration")
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
func looksNumeric(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

func parseCount(verb, s string) (int, *ParseError) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, bad(verb, "%q is not a whole number of GPUs.", truncate(s, 40))
	}
	if n < 1 {
		return 0, bad(verb, "the number of GPUs must be at least 1, not %d.", n)
	}
	if n > qm.MaxRequestGPUs {
		return 0, bad(verb, "%d GPUs is more than any request can hold (at most %d).", n, qm.MaxRequestGPUs)
	}
	return n, nil
}

func parseRequest(c Command, args []string) (Command, error) {
	seen := map[string]bool{}
	once := func(what string) *ParseError {
		if seen[what] {
			return bad("request", "the request names its %s twice.", what)
		}
		seen[what] = true
		return nil
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		la := strings.ToLower(a)
		next := func(what string) (string, *ParseError) {
			if i+1 >= len(args) {
				return "", bad("request", "%q must be followed by a %s.", a, what)
			}
			i++
			return args[i], nil
		}
		switch {
		case la == "for" || la == "duration":
			v, perr := next("duration such as 4h")
			if perr != nil {
				return c, perr
			}
			if perr := once("duration"); perr != nil {
				return c, perr
			}
			d, err := parseDur(v)
			if err != nil {
				return c, bad("request", "%q is not a duration; write it like 30m, 4h or 2d.", truncate(v, 40))
			}
			c.Duration = d
		case la == "template":
			v, perr := next("template name")
			if perr != nil {
				return c, perr
			}
			c.Template = strings.ToLower(v)
		case la == "team":
			v, perr := next("team name")
			if perr != nil {
				return c, perr
			}
			c.Team = strings.ToLower(v)
		case la == "data":
			v, perr := next("data class such as internal")
			if perr != nil {
				return c, perr
			}
			c.DataClass = strings.ToLower(v)
		case la == "exclusive" || la == "reservation":
			c.Exclusive = true
		case la == "gpu" || la == "gpus" || la == "x":
			// "2 gpus", "2 x train": filler words
		case looksNumeric(a) && !seen["gpus"] && c.Class == "":
			n, perr := parseCount("request", a)
			if perr != nil {
				return c, perr
			}
			seen["gpus"] = true
			c.GPUs = n
		default:
			if d, err := parseDur(a); err == nil && !looksNumeric(a) {
				if perr := once("duration"); perr != nil {
					return c, perr
				}
				c.Duration = d
				continue
			}
			if looksNumeric(a) {
				return c, bad("request", "%q is out of place: put the number of GPUs first, before the class.", truncate(a, 40))
			}
			if c.Class != "" {
				return c, bad("request", "%q is not part of a request; the class is already %s.", truncate(a, 40), c.Class)
			}
			if !validName(la) {
				return c, bad("request", "%q is not a class name.", truncate(a, 40))
			}
			c.Class = la
		}
	}
	return c, nil
}

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

func parseEstimate(c Command, args []string) (Command, error) {
	if len(args) != 3 && !(len(args) == 4 && strings.EqualFold(args[2], "for")) {
		return c, bad("estimate", "/gpu estimate needs a number of GPUs, a class and a duration.")
	}
	n, perr := parseCount("estimate", args[0])
	if perr != nil {
		return c, perr
	}
	c.GPUs = n
	c.Class = strings.ToLower(args[1])
	if !validName(c.Class) {
		return c, bad("estimate", "%q is not a class name.", truncate(args[1], 40))
	}
	v := args[len(args)-1]
	d, err := parseDur(v)
	if err != nil {
		return c, bad("estimate", "%q is not a duration; write it like 30m, 4h or 2d.", truncate(v, 40))
	}
	c.Duration = d
	return c, nil
}

func parseQuota(c Command, args []string) (Command, error) {
	if len(args) == 0 {
		return c, nil
	}
	if !strings.EqualFold(args[0], "request") {
		if len(args) > 1 {
			return c, bad("quota", "/gpu quota takes at most a team name, but got %q.", truncate(strings.Join(args, " "), 40))
		}
		c.Arg = strings.ToLower(args[0])
		return c, nil
	}
	ex := &ParseError{Example: "/gpu quota request +4 train for 2w because paper deadline"}
	c.QuotaRequest = true
	rest := args[1:]
	because := -1
	for i, a := range rest {
		if strings.EqualFold(a, "because") {
			because = i
			break
		}
	}
	if because < 0 || because == len(rest)-1 {
		ex.Msg = "a quota request needs a reason after \"because\"."
		return c, ex
	}
	c.Reason = strings.Join(rest[because+1:], " ")
	head := rest[:because]
	if len(head) < 2 {
		ex.Msg = "a quota request needs +N and a class."
		return c, ex
	}
	if !strings.HasPrefix(head[0], "+") {
		ex.Msg = fmt.Sprintf("%q should be the extra GPUs written like +4.", truncate(head[0], 40))
		return c, ex
	}
	n, err := strconv.Atoi(head[0][1:])
	if err != nil || n < 1 || n > qm.MaxRequestGPUs {
		ex.Msg = fmt.Sprintf("%q is not a number of extra GPUs like +4.", truncate(head[0], 40))
		return c, ex
	}
	c.GPUs = n
	c.Class = strings.ToLower(head[1])
	if !validName(c.Class) {
		ex.Msg = fmt.Sprintf("%q is not a class name.", truncate(head[1], 40))
		return c, ex
	}
	tail := head[2:]
	if len(tail) > 0 {
		if strings.EqualFold(tail[0], "for") {
			tail = tail[1:]
		}
		d, err := parseDur(strings.Join(tail, ""))
		if err != nil {
			ex.Msg = fmt.Sprintf("%q is not a duration; write it like 2w.", truncate(strings.Join(tail, " "), 40))
			return c, ex
		}
		c.Duration = d
	}
	return c, nil
}
