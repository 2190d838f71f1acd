package commands

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/workload"
)

// Templates answers /gpu templates, /gpu template and /gpu submit from a template catalog.
type Templates struct {
	Bot     *Bot
	Catalog *templates.Catalog
	// Settings are the install's rendering choices (default template, storage root, account),
	// the same the backend renders with.
	Settings workload.Settings
}

// AddTemplates plugs the template verbs into b.
func AddTemplates(b *Bot, cat *templates.Catalog, s workload.Settings) {
	t := &Templates{Bot: b, Catalog: cat, Settings: s}
	if b.Extra == nil {
		b.Extra = map[string]func(context.Context, bot.Request, Command) []bot.Reply{}
	}
	b.Extra["templates"] = t.list
	b.Extra["template"] = t.show
	b.Extra["submit"] = t.submit
	b.knownTemplate = func(name string) bool {
		_, err := cat.Get(name)
		return err == nil
	}
}

// inputReply turns a template input error ("what was wrong; example: /gpu …") into the bot's
// form: one sentence, then an example that works.
func inputReply(err error) bot.Reply {
	msg, ex, ok := strings.Cut(err.Error(), "; example: ")
	msg = strings.TrimSuffix(msg, ".") // it may start with a parameter's name: keep its case
	if !ok {
		ex = "/gpu templates"
	}
	return bot.Reply{Error: true, Ephemeral: true, Text: msg + ". Example: " + ex}
}

// list is /gpu templates [WORD].
func (t *Templates) list(_ context.Context, _ bot.Request, c Command) []bot.Reply {
	found := t.Catalog.Search(c.Arg)
	all := len(t.Catalog.List())
	if len(found) == 0 {
		return []bot.Reply{{Error: true, Ephemeral: true, Text: fmt.Sprintf("No template matches %q; /gpu templates lists all %d. Example: /gpu templates pytorch", truncate(c.Arg, 40), all)}}
	}
	head := fmt.Sprintf("%d templates. /gpu template NAME shows one with its Slurm script and Kubernetes manifest.", all)
	if c.Arg != "" {
		head = fmt.Sprintf("%d of %d templates match %q. /gpu template NAME shows one with its Slurm script and Kubernetes manifest.", len(found), all, truncate(c.Arg, 40))
	}
	r := bot.Reply{Text: head}
	for _, tp := range found {
		r.Sections = append(r.Sections, bot.Section{Title: tp.Name + " — " + tp.Title,
			Text: fmt.Sprintf("%s, %s. %s", tp.Kind, gpusOf(tp), tp.Example())})
	}
	return []bot.Reply{r}
}

func gpusOf(tp *templates.Template) string {
	switch {
	case tp.CPUOnly():
		return "CPU only"
	case tp.MultiNode:
		return fmt.Sprintf("%d GPUs per node, several nodes", tp.GPUs)
	case tp.GPUs == 1:
		return "1 GPU"
	default:
		return fmt.Sprintf("%d GPUs", tp.GPUs)
	}
}

// show is /gpu template NAME: what it is, its parameters, and what it renders to for an example
// lease of the asker's team (the first team of the policy for someone the directory does not
// know), on both backends.
func (t *Templates) show(ctx context.Context, req bot.Request, c Command) []bot.Reply {
	tp, err := t.Catalog.Get(c.Template)
	if err != nil {
		return []bot.Reply{inputReply(err)}
	}
	p := t.Bot.pol()
	l := &qm.Lease{ID: 42, User: "alice@acme.example", Class: t.defaultClass(tp, defaultGPUs(tp, nil)), GPUs: defaultGPUs(tp, nil), Duration: qm.DefaultDuration}
	if len(p.Teams) > 0 {
		l.Team = p.Teams[0].Name
	}
	if id, err := t.Bot.Svc.Resolve(ctx, req.User); err == nil && len(id.Teams) > 0 {
		l.User, l.Team = req.User, id.Teams[0]
	}
	w, err := workload.Render(t.Catalog, p, l, t.Settings)
	if err != nil {
		t.Bot.log().Error("render template for show", "template", tp.Name, "err", err)
		return []bot.Reply{{Error: true, Ephemeral: true, Text: fmt.Sprintf("%s cannot be shown for team %s on this installation; a platform admin has been told in the log. Example: /gpu templates", tp.Name, l.Team)}}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s — %s (v%d, %s, %s). %s", tp.Name, tp.Title, tp.Version, tp.Kind, gpusOf(tp), strings.TrimSpace(tp.Description))
	if len(tp.Parameters) > 0 {
		b.WriteString(" Parameters: ")
		for i, prm := range tp.Parameters {
			if i > 0 {
				b.WriteString("; ")
			}
			def := "default " + prm.Default
			if prm.Required {
				def = "required"
			} else if prm.Default == "" {
				def = "default empty"
			}
			fmt.Fprintf(&b, "%s (%s, %s): %s", prm.Name, prm.Type, def, strings.TrimSuffix(prm.Description, "."))
		}
		b.WriteString(".")
	}
	fmt.Fprintf(&b, " Example: %s", tp.Example())
	what := fmt.Sprintf("for an example lease %s of %s, team %s: %d × %s for %s", l.ID, l.User, l.Team, l.GPUs, l.Class, policy.FormatDuration(l.Duration))
	return []bot.Reply{{Text: b.String(), Sections: []bot.Section{
		{Title: "Slurm batch script " + what, Text: "```\n" + w.SlurmScript + "```"},
		{Title: "Kubernetes manifest " + what, Text: "```\n" + w.KubernetesYAML + "```"},
	}}}
}

// defaultGPUs is what a template runs on when the user does not say: its GPUs on each of the
// nodes its parameters ask for (at least one GPU: every lease holds one).
func defaultGPUs(tp *templates.Template, params templates.Params) int {
	nodes := 1
	if tp.MultiNode {
		v, ok := params["nnodes"]
		if !ok {
			for _, p := range tp.Parameters {
				if p.Name == "nnodes" {
					v = p.Default
				}
			}
		}
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			nodes = n
		}
	}
	return max(1, tp.GPUs*nodes)
}

// defaultClass is the first class in the catalog that gives gpus GPUs without approval, else the
// first class.
func (t *Templates) defaultClass(_ *templates.Template, gpus int) string {
	p := t.Bot.pol()
	for _, c := range p.Classes {
		if c.MaxGPUs == 0 || gpus <= c.MaxGPUs {
			return c.Name
		}
	}
	return p.Classes[0].Name
}

// submit is /gpu submit TEMPLATE [key=value …] [class=C] [gpus=N] [team=T] [for=D]: a batch job
// from a template under a new lease. Everything is checked before the lease is asked for, and
// the backend renders and submits exactly what was checked.
func (t *Templates) submit(ctx context.Context, req bot.Request, c Command) []bot.Reply {
	tp, err := t.Catalog.Get(c.Template)
	if err != nil {
		return []bot.Reply{inputReply(err)}
	}
	var class string
	var gpus int
	var words []string
	for _, a := range c.Params {
		k, v, _ := strings.Cut(a, "=")
		switch strings.ToLower(k) {
		case "class":
			class = strings.ToLower(v)
			if _, ok := t.Bot.pol().Class(class); !ok {
				return []bot.Reply{{Error: true, Ephemeral: true, Text: fmt.Sprintf("There is no class %q; the catalog has %s. Example: /gpu submit %s class=%s",
					truncate(v, 40), strings.Join(t.Bot.pol().ClassNames(), ", "), tp.Name, t.Bot.pol().Classes[0].Name)}}
			}
		case "gpus":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > qm.MaxRequestGPUs {
				return []bot.Reply{{Error: true, Ephemeral: true, Text: fmt.Sprintf("gpus=%s is not a number of GPUs. Example: /gpu submit %s gpus=%d", truncate(v, 20), tp.Name, max(1, tp.GPUs))}}
			}
			gpus = n
		default:
			words = append(words, a)
		}
	}
	params, err := tp.ParseParams(words)
	if err != nil {
		return []bot.Reply{inputReply(err)}
	}
	if gpus == 0 {
		gpus = defaultGPUs(tp, params)
	}
	if class == "" {
		class = t.defaultClass(tp, gpus)
	}
	lr := qm.LeaseRequest{User: req.User, GPUs: gpus, Class: class, Duration: c.Duration, Template: tp.Name,
		Params: map[string]string(params), Team: c.Team, RequestKey: req.Key}
	if _, _, err := t.Bot.Svc.Normalize(ctx, &lr); err != nil {
		return []bot.Reply{t.Bot.fail("submit", err)}
	}
	// Render it now, as the backend will, so a lease that does not fit the template (too few GPUs,
	// a node count that does not divide them) is refused before anything is made.
	trial := &qm.Lease{ID: 1, User: lr.User, Team: lr.Team, Class: lr.Class, GPUs: lr.GPUs, Duration: lr.Duration, Template: lr.Template, Params: lr.Params}
	if _, err := workload.Render(t.Catalog, t.Bot.pol(), trial, t.Settings); err != nil {
		if errors.Is(err, templates.ErrInvalid) {
			return []bot.Reply{inputReply(err)}
		}
		return []bot.Reply{t.Bot.fail("submit", err)}
	}
	out, err := t.Bot.Svc.Request(ctx, lr)
	if err != nil && out == nil {
		return []bot.Reply{t.Bot.fail("submit", err)}
	}
	r := t.Bot.outcome(ctx, out, err)
	if !r.Error {
		r.Text = fmt.Sprintf("%s (template %s v%d) runs under lease %s. ", tp.Title, tp.Name, tp.Version, out.Lease.ID) + r.Text
	}
	return []bot.Reply{r}
}
