package commands

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

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

// AddTemplates offers the template commands on b.
func AddTemplates(b *Bot, cat *templates.Catalog, s workload.Settings) {
	b.Templates = &Templates{Bot: b, Catalog: cat, Settings: s}
}

// list is /gpu templates [WORD …]: the templates holding every word, or all of them.
func (t *Templates) list(_ context.Context, _ bot.Request, c Command) []bot.Reply {
	found := t.Catalog.Search(c.Arg)
	all := len(t.Catalog.List())
	if len(found) == 0 {
		return []bot.Reply{{Error: true, Ephemeral: true, Text: fmt.Sprintf("No template matches %s; /gpu templates lists all %d. Example: /gpu templates %s", policy.Quoted(c.Arg, 40), all, SearchExample(t.Catalog, c.Arg))}}
	}
	head := fmt.Sprintf("%d templates. /gpu template NAME shows one with its Slurm script and Kubernetes manifest.", all)
	if c.Arg != "" {
		head = fmt.Sprintf("%d of %d templates match %s. /gpu template NAME shows one with its Slurm script and Kubernetes manifest.", len(found), all, policy.Quoted(c.Arg, 40))
	}
	r := bot.Reply{Text: head}
	for _, tp := range found {
		r.Sections = append(r.Sections, bot.Section{Title: tp.Name + " — " + tp.Title,
			Text: fmt.Sprintf("%s, %s. %s", tp.Kind, t.gpusOf(tp), tp.Example())})
	}
	return []bot.Reply{r}
}

// SearchExample is the word to search cat by, given as the example where words found no
// template (/gpu templates, quartermaster templates list): the template name the words, or one
// of them, are a near miss of; else pytorch where it finds a template; else the first template's
// name. Empty for an empty catalog.
func SearchExample(cat *templates.Catalog, words string) string {
	list := cat.List()
	if len(list) == 0 {
		return ""
	}
	names := make([]string, len(list))
	for i, tp := range list {
		names[i] = tp.Name
	}
	for _, w := range append([]string{strings.Join(strings.Fields(words), "-")}, strings.Fields(words)...) {
		if near := policy.NearMiss(w, names); near != "" {
			return near
		}
	}
	if len(cat.Search("pytorch")) > 0 {
		return "pytorch"
	}
	return list[0].Name
}

// gpusOf is TemplateGPUs on the nodes the backend reports.
func (t *Templates) gpusOf(tp *templates.Template) string {
	return TemplateGPUs(t.Bot.pol(), tp, t.Bot.Svc.NodeSize, t.Bot.Svc.NodeCount)
}

// TemplateGPUs says what a template runs on by default, per node as the nodes of the cluster
// hold it (nodeSize and nodeCount, 0 where not known): on the class it would go to for its
// example (the first of its candidates), its GPUs per node no more than a node of that class
// holds, which is "a whole node" where it fills one. /gpu templates and /gpu template say it, and
// so do quartermaster templates list and show given a policy.
func TemplateGPUs(p *policy.Policy, tp *templates.Template, nodeSize, nodeCount func(class string) int) string {
	if tp.CPUOnly() {
		return "CPU only"
	}
	per, whole, class := tp.GPUs, false, ""
	if len(p.Classes) > 0 {
		class = CandidateClasses(p, tp, tp.ExampleParams(), 0, nodeSize, nodeCount)[0].Class
		if size := nodeSize(class); size > 0 {
			per, whole = min(per, size), per >= size
		}
	}
	switch {
	case tp.MultiNode && whole:
		return fmt.Sprintf("%s per node (a whole %s node), several nodes", qm.GPUCount(per, ""), class)
	case tp.MultiNode:
		return fmt.Sprintf("%s per node, several nodes", qm.GPUCount(per, ""))
	case whole:
		return fmt.Sprintf("%s (a whole %s node)", qm.GPUCount(per, ""), class)
	default:
		return qm.GPUCount(per, "")
	}
}

// show is /gpu template NAME: what it is, its parameters, and what it renders to for an example
// lease of the asker's team (the first team of the policy for someone the directory does not
// know), on both backends.
func (t *Templates) show(ctx context.Context, req bot.Request, c Command) []bot.Reply {
	tp, err := t.Catalog.Get(c.templateAsTyped())
	if err != nil {
		return []bot.Reply{t.Bot.refuse(ctx, c.Verb, err)}
	}
	p := t.Bot.pol()
	params := tp.ExampleParams()
	first := t.candidates(tp, params, 0)[0]
	l := &qm.Lease{ID: 42, User: req.User, Template: tp.Name, Params: map[string]string(params), Class: first.Class, GPUs: first.GPUs, Duration: qm.DefaultDuration}
	if c, ok := p.Class(l.Class); ok && c.MaxDuration.Duration > 0 {
		l.Duration = min(l.Duration, c.MaxDuration.Duration)
	}
	if c.Who != nil && len(c.Who.Teams) > 0 {
		l.Team = c.Who.Teams[0]
	} else if len(p.Teams) > 0 {
		l.Team = p.Teams[0].Name
	}
	w, err := workload.Render(t.Catalog, p, l, t.settings())
	if err != nil {
		t.Bot.log().Error("render template for show", "template", tp.Name, "err", err)
		return []bot.Reply{{Error: true, Ephemeral: true, Text: fmt.Sprintf("%s cannot be shown for team %s on this installation; a platform admin has been told in the log. Example: /gpu templates", tp.Name, l.Team)}}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s — %s (v%d, %s, %s). %s", tp.Name, tp.Title, tp.Version, tp.Kind, t.gpusOf(tp), strings.TrimSpace(tp.Description))
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
			if prm.Pattern != "" {
				// What a value must be, as a refusal of one that is not says it.
				fmt.Fprintf(&b, ", which must be %s", prm.Expects())
			}
		}
		b.WriteString(".")
	}
	fmt.Fprintf(&b, " Example: %s", tp.Example())
	held := fmt.Sprintf("%d × %s", l.GPUs, l.Class)
	if tp.CPUOnly() {
		held = "a CPU-only job in class " + l.Class // as the lease's status says it
	}
	what := fmt.Sprintf("for an example lease %s of %s, team %s: %s for %s (%s)", l.ID, l.User, l.Team, held, policy.FormatDuration(l.Duration), tp.Example())
	return []bot.Reply{{Text: b.String(), Sections: []bot.Section{
		{Title: "Slurm batch script " + what, Text: "```\n" + w.SlurmScript + "```"},
		{Title: "Kubernetes manifest " + what, Text: "```\n" + w.KubernetesYAML + "```"},
	}}}
}

// DefaultGPUs is what a template runs on when the user does not say: its GPUs on each of the
// nodes its parameters ask for (at least one GPU for a template that uses GPUs; none for a
// CPU-only one), no more per node than the cluster's largest node holds (0: unknown). An array
// template (a sweep) of fewer tasks than its GPUs run at once asks for no more than all its tasks
// take at once, as its job runs no more of them.
func DefaultGPUs(tp *templates.Template, params templates.Params, largestNode int) int {
	if tp.CPUOnly() {
		return 0
	}
	per := tp.GPUs
	if task, n := tp.ArrayTaskGPUs(params), tp.ArrayTasks(params); task > 0 && n > 0 {
		per = min(per, max(task, n*task))
	}
	if largestNode > 0 && per > largestNode {
		per = largestNode
	}
	return max(1, per*TemplateNodes(tp, params))
}

// TemplateNodes is how many nodes a template's parameters ask for: its nnodes (or nnodes'
// default) for a multi-node template, else 1.
func TemplateNodes(tp *templates.Template, params templates.Params) int {
	if !tp.MultiNode {
		return 1
	}
	v, ok := params["nnodes"]
	if !ok {
		for _, p := range tp.Parameters {
			if p.Name == "nnodes" {
				v = p.Default
			}
		}
	}
	if n, err := strconv.Atoi(v); err == nil && n > 0 {
		return n
	}
	return 1
}

// NodesHeld is the GPUs a lease of a multi-node template given an nnodes of more than one holds
// on a class whose nodes hold size GPUs each (0: not known): nnodes whole nodes, as the service
// places a lease over several nodes, so that the job runs on as many nodes as nnodes says, with
// all their GPUs, and is billed for them, as Slurm's --nodes takes that many nodes. gpus as
// they are where nnodes is not given or is 1, where the size is not known, or where gpus do not
// split evenly over nnodes or are more than its nodes hold (refused as that).
func NodesHeld(tp *templates.Template, params templates.Params, gpus, size int) int {
	_, given := params["nnodes"]
	nodes := TemplateNodes(tp, params)
	if !tp.MultiNode || !given || nodes < 2 || size <= 0 || tp.GPUs == 0 || gpus%nodes != 0 || gpus/nodes > size {
		return gpus
	}
	return nodes * size
}

// settings are the install's workload settings with the nodes' sizes the backend reports, so
// that a preview or a trial render puts no more on a node than one holds, and its GPU nodes, which
// a CPU-only job keeps off.
func (t *Templates) settings() workload.Settings {
	s := t.Settings
	if s.NodeSize == nil {
		s.NodeSize = t.Bot.Svc.NodeSize
	}
	if s.GPUNodes == nil {
		s.GPUNodes = func() []string { return workload.GPUNodes(t.Bot.Svc.Backend.Inventory()) }
	}
	return s
}

// largestNode is the most GPUs a node holds among the classes with at least nodes nodes (a
// multi-node job needs that many), 0 when the backend does not say.
func (t *Templates) largestNode(nodes int) int {
	return largestNode(t.Bot.pol(), nodes, t.Bot.Svc.NodeSize, t.Bot.Svc.NodeCount)
}

// largestNode is the most GPUs a node holds, by nodeSize (0: not known), among the classes of p
// that have at least nodes nodes by nodeCount (0 or a nil nodeCount: not known, and so counted);
// among all classes when none has that many.
func largestNode(p *policy.Policy, nodes int, nodeSize, nodeCount func(class string) int) int {
	n, all := 0, 0
	for _, c := range p.Classes {
		size := nodeSize(c.Name)
		all = max(all, size)
		if nodeCount != nil && nodes > 1 {
			if k := nodeCount(c.Name); k > 0 && k < nodes {
				continue
			}
		}
		n = max(n, size)
	}
	if n == 0 {
		return all
	}
	return n
}

// Candidate is a class a template may run on when the user names none, and the GPUs it asks
// for there.
type Candidate struct {
	Class string
	GPUs  int
}

// candidates are the classes a template may run on when the user does not say, best first
// (CandidateClasses, with the nodes the backend reports).
func (t *Templates) candidates(tp *templates.Template, params templates.Params, gpus int) []Candidate {
	return CandidateClasses(t.Bot.pol(), tp, params, gpus, t.Bot.Svc.NodeSize, t.Bot.Svc.NodeCount)
}

// CandidateClasses are the classes of p a template may run on when the user does not say, best
// first, each with the GPUs it asks for there: gpus, or where gpus is 0 the template's default
// sized by that class's own nodes (its GPUs per node, no more than a node of the class holds, on
// each of the nodes its parameters ask for). First come the classes that grant those GPUs without
// approval, in the policy's order, leaving out a class whose nodes hold fewer than the template
// needs per node; then the classes whose nodes hold the template's GPUs per node (no more than the
// cluster's largest node holds), the largest nodes first (a multi-node job belongs on the big
// nodes, with a budget owner's approval); the first class when none does. A multi-node template's
// nodes (its nnodes) split its GPUs evenly, and a class holds them only with that many nodes;
// without nnodes (and for an array template, whose tasks each run on one node), gpus more than a
// node of a class holds take that class's whole nodes, as the service places them, and the class
// holds them only with enough nodes. nodeSize is the most GPUs
// a node of a class holds and nodeCount how many nodes it has, 0 (or a nil nodeCount) when
// unknown. A request takes the first in which the team has quota and room;
// `quartermaster templates render` and /gpu template's preview the first.
func CandidateClasses(p *policy.Policy, tp *templates.Template, params templates.Params, gpus int, nodeSize, nodeCount func(class string) int) []Candidate {
	out, _ := candidateClasses(p, tp, params, gpus, nodeSize, nodeCount)
	return out
}

// candidateClasses is CandidateClasses, and whether any class holds the template (false: the
// first class stands in).
func candidateClasses(p *policy.Policy, tp *templates.Template, params templates.Params, gpus int, nodeSize, nodeCount func(class string) int) ([]Candidate, bool) {
	nodes := max(1, TemplateNodes(tp, params))
	largest := largestNode(p, nodes, nodeSize, nodeCount)
	// Without nnodes, a multi-node lease larger than a node runs on whole nodes (as many as its
	// GPUs take there), and so does an array's (each task on one of them), so each class is
	// sized by its own nodes.
	_, nnodesGiven := params["nnodes"]
	task := tp.ArrayTaskGPUs(params)
	spread := (tp.MultiNode && !nnodesGiven || task > 0) && tp.GPUs > 0 && gpus > 0
	nodesOn := func(c *policy.Class) int { // the nodes the job takes on c
		if size := nodeSize(c.Name); spread && size > 0 && gpus > size {
			return (gpus + size - 1) / size
		}
		return nodes
	}
	tooFew := func(c *policy.Class) bool { // too few nodes for the job
		n := nodesOn(c)
		if nodeCount == nil || n <= 1 || nodeSize(c.Name) == 0 {
			return false
		}
		k := nodeCount(c.Name)
		return k > 0 && k < n
	}
	gpusOn := func(c *policy.Class) int {
		own := nodeSize(c.Name)
		if gpus > 0 {
			return NodesHeld(tp, params, gpus, own)
		}
		size := own
		if size == 0 {
			size = largest
		}
		return NodesHeld(tp, params, DefaultGPUs(tp, params, size), own)
	}
	all := gpus
	if all == 0 {
		all = DefaultGPUs(tp, params, largest)
	}
	perNode := all
	if tp.MultiNode && tp.GPUs > 0 {
		perNode = min(all, tp.GPUs, (all+nodes-1)/nodes)
		if largest > 0 {
			perNode = min(perNode, largest)
		}
	}
	perNodeOn := func(c *policy.Class) int { // what a node of c must hold
		switch {
		case spread:
			n := nodesOn(c)
			return max(task, (gpus+n-1)/n)
		case gpus > 0 && nnodesGiven && nodes > 1 && tp.MultiNode && tp.GPUs > 0:
			return (gpus + nodes - 1) / nodes // gpus= over the nnodes given
		}
		return perNode
	}
	var out []Candidate
	taken := map[string]bool{}
	for _, c := range p.Classes {
		if tooFew(c) {
			continue
		}
		size, n := nodeSize(c.Name), gpusOn(c)
		need := perNodeOn(c)
		if gpus == 0 {
			need = min(perNode, max(1, tp.MinGPUs))
		}
		if (size == 0 || need <= size && task <= size) && (c.MaxGPUs == 0 || n <= c.MaxGPUs) {
			out = append(out, Candidate{c.Name, n})
			taken[c.Name] = true
		}
	}
	var rest []*policy.Class
	for _, c := range p.Classes {
		if size := nodeSize(c.Name); !taken[c.Name] && !tooFew(c) && (size == 0 || perNodeOn(c) <= size && task <= size) {
			rest = append(rest, c)
		}
	}
	// Where gpus= and nnodes are both given, the fewest GPUs first (each class holds nnodes of its
	// whole nodes: the nearest to what was asked for). Then the largest nodes first; on a tie, an
	// exclusive class (whole nodes for training) over a shared one.
	sort.SliceStable(rest, func(i, j int) bool {
		if gi, gj := gpusOn(rest[i]), gpusOn(rest[j]); gpus > 0 && nnodesGiven && gi != gj {
			return gi < gj
		}
		si, sj := nodeSize(rest[i].Name), nodeSize(rest[j].Name)
		if si != sj {
			return si > sj
		}
		return rest[i].Isolation == "exclusive" && rest[j].Isolation != "exclusive"
	})
	for _, c := range rest {
		out = append(out, Candidate{c.Name, gpusOn(c)})
	}
	if len(out) == 0 {
		return []Candidate{{p.Classes[0].Name, gpusOn(p.Classes[0])}}, false
	}
	return out, true
}

// noClassHolds is NoClassHolds on the nodes the backend reports.
func (t *Templates) noClassHolds(tp *templates.Template, params templates.Params, gpus int) error {
	return NoClassHolds(t.Bot.pol(), tp, params, gpus, t.Bot.Svc.NodeSize, t.Bot.Svc.NodeCount)
}

// NoClassHolds is the refusal of a template that no class of p holds (CandidateClasses finds
// none), in the cluster's terms. A multi-node template: how many nodes its GPUs take on the class
// whose nodes hold the most together, and how many that class has. A template that runs on one
// node: the largest node. An array (a sweep) larger than any class: how many nodes it takes. Each
// with an example that fits (the user's other words kept). nil where some class holds it, where
// nodeSize and nodeCount do not say what the nodes hold, or for a CPU-only template.
func NoClassHolds(p *policy.Policy, tp *templates.Template, params templates.Params, gpus int, nodeSize, nodeCount func(class string) int) error {
	if tp.GPUs == 0 || nodeCount == nil {
		return nil
	}
	if _, fits := candidateClasses(p, tp, params, gpus, nodeSize, nodeCount); fits {
		return nil
	}
	task := tp.ArrayTaskGPUs(params)
	if err := trialBeyondEveryNode(p, tp, params, gpus, nodeSize, nodeCount); err != nil {
		return err
	}
	if !tp.MultiNode && task == 0 {
		best, size := biggestNodeClass(p, nodeSize)
		if best == nil || gpus <= size {
			return nil
		}
		msg := fmt.Sprintf("%s runs on one node, and the largest node here holds %s (class %s), fewer than the %d asked for.",
			tp.Name, qm.GPUCount(size, ""), best.Name, gpus)
		g := min(size, tp.MaxGPUs)
		return qm.Invalid(fitExample(p, tp, params, g, nil, nodeSize, nodeCount), "%s", msg)
	}
	size, count := 0, 0
	var best *policy.Class
	for _, c := range p.Classes {
		s, k := nodeSize(c.Name), nodeCount(c.Name)
		if s > 0 && k > 0 && s >= task && s*k > size*count {
			best, size, count = c, s, k
		}
	}
	if best == nil {
		return nil
	}
	if task > 0 { // an array: its tasks on as many whole nodes as its GPUs take
		if gpus <= size*count {
			return nil
		}
		return qm.Invalid(fitExample(p, tp, params, size*count, nil, nodeSize, nodeCount), "%s", tooFewNodes(tp, gpus, best.Name, size, count))
	}
	nn, nnodesGiven := params["nnodes"]
	nodes := TemplateNodes(tp, params)
	enough := false // some class has the nodes nnodes asks for
	for _, c := range p.Classes {
		enough = enough || nodeCount(c.Name) >= nodes
	}
	var msg string
	switch {
	case gpus > 0 && !nnodesGiven:
		msg = tooFewNodes(tp, gpus, best.Name, size, count)
	case gpus > 0 && enough:
		msg = fmt.Sprintf("%s on %s over nnodes=%s puts %s on each node, and no class has %d nodes that hold them: class %s has %d nodes of %s.",
			tp.Name, qm.GPUCount(gpus, ""), nn, qm.GPUCount((gpus+nodes-1)/nodes, ""), nodes, best.Name, count, qm.GPUCount(size, ""))
	default:
		msg = fmt.Sprintf("%s nnodes=%s needs %d nodes, and no class has that many: class %s has %d nodes of %s.",
			tp.Name, nn, nodes, best.Name, count, qm.GPUCount(size, ""))
	}
	// The example: the GPUs asked for on as few of best's nodes as split them evenly, else all of
	// its nodes.
	g, k := gpus, (gpus+size-1)/size
	for g > 0 && k <= count && g%k != 0 {
		k++
	}
	if g == 0 || k > count {
		k = count
		if g > 0 {
			g = size * count
		}
	}
	return qm.Invalid(fitExample(p, tp, params, g, map[string]string{"nnodes": strconv.Itoa(k)}, nodeSize, nodeCount), "%s", msg)
}

// tooFewNodes says that tp on gpus GPUs takes more nodes of class, whose count nodes hold size
// GPUs each, than it has.
func tooFewNodes(tp *templates.Template, gpus int, class string, size, count int) string {
	return fmt.Sprintf("%s on %d GPUs takes %d nodes of class %s, whose nodes hold %s each, and %s has only %d nodes.",
		tp.Name, gpus, (gpus+size-1)/size, class, qm.GPUCount(size, ""), class, count)
}

// biggestNodeClass is the class whose nodes hold the most GPUs, and how many; nil and 0 where no
// class's node size is known (the first such class where several hold as many).
func biggestNodeClass(p *policy.Policy, nodeSize func(class string) int) (*policy.Class, int) {
	var best *policy.Class
	size := 0
	for _, c := range p.Classes {
		if s := nodeSize(c.Name); s > size {
			best, size = c, s
		}
	}
	return best, size
}

// trialBeyondEveryNode is the refusal of an array template (a sweep) whose tasks each take more
// GPUs than any node holds: in the terms of the largest node, with an example whose tasks take
// a whole one of it (the GPUs asked for, no more than that class's nodes hold, else one node's);
// nil where some node holds a task, or for a template that is not an array.
func trialBeyondEveryNode(p *policy.Policy, tp *templates.Template, params templates.Params, gpus int, nodeSize, nodeCount func(class string) int) error {
	task, name := tp.ArrayTaskGPUs(params), tp.ArrayTaskParam()
	if task == 0 || name == "" {
		return nil
	}
	best, size := biggestNodeClass(p, nodeSize)
	if best == nil || task <= size {
		return nil
	}
	msg := fmt.Sprintf("%s=%d gives each task of %s more GPUs than any node here holds: the largest node holds %s (class %s).",
		name, task, tp.Name, qm.GPUCount(size, ""), best.Name)
	per := min(size, max(1, tp.MaxGPUs))
	g := per * max(1, min(gpus/per, max(1, nodeCount(best.Name))*(size/per)))
	return qm.Invalid(fitExample(p, tp, params, g, map[string]string{name: strconv.Itoa(per)}, nodeSize, nodeCount), "%s", msg)
}

// fitExample is /gpu submit of tp with gpus= (where gpus > 0), the parameters set, and the rest
// of the user's params, where a class holds that; else the template's own example.
func fitExample(p *policy.Policy, tp *templates.Template, params templates.Params, gpus int, set map[string]string, nodeSize, nodeCount func(class string) int) string {
	var first []string
	if gpus > 0 {
		first = append(first, fmt.Sprintf("gpus=%d", gpus))
	}
	ex, ok := withParams(tp, params, first, set)
	if !ok {
		return tp.Example()
	}
	ps := templates.Params{}
	for k, v := range params {
		ps[k] = v
	}
	for k, v := range set {
		ps[k] = v
	}
	if _, fits := candidateClasses(p, tp, ps, gpus, nodeSize, nodeCount); !fits {
		return tp.Example()
	}
	return ex
}

// classTooSmall is the refusal of a multi-node template whose nnodes asks a class named with
// class= for more nodes than it has: in nodes, with an example on that class that fits (the
// user's other words kept); nil where the class has the nodes, or the backend does not say. (GPUs
// beyond what the class holds are the service's to refuse: "the cluster has only …".)
func (t *Templates) classTooSmall(tp *templates.Template, params templates.Params, class string, gpus int, gpusGiven bool) error {
	size, count := t.Bot.Svc.NodeSize(class), t.Bot.Svc.NodeCount(class)
	nn, nnodesGiven := params["nnodes"]
	asked := TemplateNodes(tp, params)
	if size == 0 || count == 0 || !tp.MultiNode || !nnodesGiven || asked <= count {
		return nil
	}
	msg := fmt.Sprintf("Class %s has %s of %s, fewer than the %d that %s nnodes=%s asks for.", class, nNodes(count), qm.GPUCount(size, ""), asked, tp.Name, nn)
	words := []string{"class=" + class}
	if gpusGiven {
		// The GPUs asked for (no more than the class holds) on as few of its nodes as split them
		// evenly, else all of them.
		g, k := min(gpus, size*count), 0
		for k = (g + size - 1) / size; k <= count && g%k != 0; k++ {
		}
		if k > count {
			g, k = size*count, count
		}
		words = append(words, fmt.Sprintf("gpus=%d", g))
		count = k
	}
	ex, ok := withParams(tp, params, words, map[string]string{"nnodes": strconv.Itoa(count)})
	if !ok {
		ex = tp.Example()
	}
	return qm.Invalid(ex, "%s", msg)
}

// gpusOverNodes refuses gpus= that the template's nodes cannot run as asked, before any class is
// chosen or lease asked for: gpus= that do not split evenly over an nnodes given (each node runs
// as many GPUs), and on a class named with class=, more GPUs than a node of it holds for a
// template that runs on one node. Each with an example of the nearest count that works (for an
// uneven split the next count that splits evenly where a node holds its share, else the one
// below), the user's other words kept; nil where gpus= is not given or fits.
func (t *Templates) gpusOverNodes(tp *templates.Template, params templates.Params, class string, gpus int) error {
	if gpus == 0 || tp.GPUs == 0 {
		return nil
	}
	var words []string
	if class != "" {
		words = append(words, "class="+class)
	}
	example := func(g int) string {
		ex, ok := withParams(tp, params, append(words, fmt.Sprintf("gpus=%d", g)), nil)
		if !ok {
			return tp.Example()
		}
		return ex
	}
	_, nnodesGiven := params["nnodes"]
	nodes := TemplateNodes(tp, params)
	if tp.MultiNode && nnodesGiven && nodes > 1 && gpus%nodes != 0 && t.hasNodes(class, nodes) {
		size := t.largestNode(nodes)
		if class != "" {
			size = t.Bot.Svc.NodeSize(class)
		}
		per := (gpus + nodes - 1) / nodes
		if size > 0 && per > size {
			per = max(1, gpus/nodes)
		}
		what := fmt.Sprintf("%d GPUs do not", gpus)
		if gpus == 1 {
			what = "1 GPU does not"
		}
		return qm.Invalid(example(per*nodes), "%s split evenly over %d nodes (nnodes=%s), and each node runs as many.", what, nodes, params["nnodes"])
	}
	size := t.Bot.Svc.NodeSize(class)
	if class != "" && !tp.MultiNode && tp.ArrayTaskGPUs(params) == 0 && size > 0 && gpus > size {
		return qm.Invalid(example(min(size, max(1, tp.MaxGPUs))), "%s runs on one node, and a node of class %s holds %s, fewer than the %d asked for.",
			tp.Name, class, qm.GPUCount(size, ""), gpus)
	}
	return nil
}

// hasNodes reports whether class (any class, where empty) has nodes nodes, or the backend does
// not say.
func (t *Templates) hasNodes(class string, nodes int) bool {
	if class != "" {
		k := t.Bot.Svc.NodeCount(class)
		return k == 0 || k >= nodes
	}
	for _, c := range t.Bot.pol().Classes {
		if k := t.Bot.Svc.NodeCount(c.Name); k == 0 || k >= nodes {
			return true
		}
	}
	return false
}

// nNodes is "1 node", "4 nodes".
func nNodes(n int) string {
	return policy.Count(n, "node", "nodes")
}

// withParams is /gpu submit of tp with the words given first, then the parameters set and the
// rest of the user's params, in the template's order; false where they do not parse or a value
// cannot be typed.
func withParams(tp *templates.Template, params templates.Params, first []string, set map[string]string) (string, bool) {
	var words []string
	typed := append([]string(nil), first...)
	for _, prm := range tp.Parameters {
		v, ok := set[prm.Name]
		if !ok {
			v, ok = params[prm.Name]
		}
		if !ok {
			continue
		}
		words = append(words, prm.Name+"="+v)
		if v == "" || strings.ContainsAny(v, " \t") {
			if strings.ContainsAny(v, "\"'") {
				return "", false
			}
			v = `"` + v + `"`
		}
		typed = append(typed, prm.Name+"="+v)
	}
	if _, err := tp.ParseParams(words); err != nil {
		return "", false
	}
	return strings.TrimSpace("/gpu submit " + tp.Name + " " + strings.Join(typed, " ")), true
}

// KeepParams is a refusal's example of tp ("/gpu submit NAME k=v …") with the user's other
// params kept, so that a refusal of one parameter does not drop the others the user gave: the
// words of an example that puts a parameter right over the user's, in the template's order;
// where the example is the template's own (the refusal of a word that is no parameter of it),
// the user's params over its words, which fill in only what the user left out. A required
// parameter given by neither takes the template's example's value. example as it is where it
// is not of tp or the words do not parse. /gpu submit and quartermaster templates
// render keep them alike.
func KeepParams(tp *templates.Template, params templates.Params, example string) string {
	rest, ok := strings.CutPrefix(example, "/gpu submit "+tp.Name)
	if !ok || rest != "" && rest[0] != ' ' {
		return example
	}
	own := example == tp.Example()
	var first []string
	set := map[string]string{}
	for _, w := range words(rest) {
		k, v, _ := strings.Cut(w, "=")
		switch _, given := params[k]; {
		case k == "class", k == "gpus":
			first = append(first, w)
		case own && given:
		default:
			set[k] = v
		}
	}
	// A required parameter that neither gives: the template's example's, or it is refused next.
	ownParams := tp.ExampleParams()
	for _, prm := range tp.Parameters {
		_, inSet := set[prm.Name]
		_, given := params[prm.Name]
		if v, ok := ownParams[prm.Name]; prm.Required && !inSet && !given && ok {
			set[prm.Name] = v
		}
	}
	if ex, ok := withParams(tp, params, first, set); ok {
		return ex
	}
	return example
}

// RightParams are those of a template's key=value words that are right on their own (a
// parameter of it, with a value it takes), the first where one is given twice: what the example
// of a refusal of the others keeps (KeepParams).
func RightParams(tp *templates.Template, words []string) templates.Params {
	params := templates.Params{}
	for _, w := range words {
		if p, err := tp.ParseParams([]string{w}); err == nil {
			for k, v := range p {
				if _, dup := params[k]; !dup {
					params[k] = v
				}
			}
		}
	}
	return params
}

// candidatesFit is candidates, and whether any class holds the template.
func (t *Templates) candidatesFit(tp *templates.Template, params templates.Params, gpus int) ([]Candidate, bool) {
	return candidateClasses(t.Bot.pol(), tp, params, gpus, t.Bot.Svc.NodeSize, t.Bot.Svc.NodeCount)
}

// submit is /gpu submit TEMPLATE [key=value …] [class=C] [gpus=N] [team=T] [for=D]: a workload
// from a template (a batch job, or a workspace) under a new lease.
func (t *Templates) submit(ctx context.Context, req bot.Request, c Command) []bot.Reply {
	tp, err := t.Catalog.Get(c.templateAsTyped())
	if err != nil {
		return []bot.Reply{t.Bot.refuse(ctx, c.Verb, t.submitMeant(c, err))}
	}
	var words []string
	// Each of class= and gpus= comes at most once (parseSubmit); noGPU: gpus= given to a
	// template that uses none.
	noGPU := false
	for _, a := range c.Params {
		k, v, _ := strings.Cut(a, "=")
		switch k = strings.ToLower(k); {
		case k == "gpus" && tp.CPUOnly():
			noGPU = true
		case k == "class":
			c.Class = policy.NameKey(v)
			if _, ok := t.Bot.pol().Class(c.Class); !ok {
				// The job as typed, with the class nearest to the one typed (as "did you mean"
				// finds one), else the asker's.
				meant := c
				meant.Params = slices.DeleteFunc(slices.Clone(c.Params), func(p string) bool { return p == a })
				cl := &policy.Class{}
				near := nearest(c.Class, t.Bot.pol().ClassNames())
				if k := t.Bot.classStarting(c.Class); near == "" && k != nil {
					near = k.Name
				}
				if near != "" {
					meant.Params = append([]string{"class=" + near}, meant.Params...)
					cl, _ = t.Bot.pol().Class(near)
				}
				ex, ok := t.Bot.typedSubmit(tp, meant, typedDuration(cl, c.Duration))
				if !ok {
					ex = fmt.Sprintf("/gpu submit %s class={class}", tp.Name)
				}
				return []bot.Reply{t.Bot.refuse(ctx, c.Verb, qm.Invalid(ex,
					"There is no class %s; the catalog has %s.", policy.Quoted(v, 40), t.Bot.classesFirst(cl.Name)))}
			}
		case k == templates.DataWord:
			// data=phi, written as the other words of /gpu submit are: the data class is
			// named as a request names it (no template has a parameter named data).
			// data=@silt, a mention of one of the policy's data classes: named without the @.
			dc, how := policy.NameKey(unquoted(v)), "with"
			if name := t.Bot.mentionedDataClass(unquoted(v)); name != "" {
				dc, how = name, "without the @:"
			}
			if !policy.ValidDataClass(dc) {
				dc = t.Bot.expandFor(ctx, "{data}")
			}
			// The job as typed, data=… written as data CLASS.
			meant := c
			meant.Params = slices.DeleteFunc(slices.Clone(c.Params), func(p string) bool { return p == a })
			meant.DataClass = dc
			ex, ok := t.Bot.typedSubmit(tp, meant, typedDuration(&policy.Class{}, c.Duration))
			if !ok {
				ex = tp.Example() + " data " + dc
			}
			return []bot.Reply{t.Bot.refuse(ctx, c.Verb, qm.Invalid(ex,
				"%s is no parameter of %s; a job names its data class as a request does, %s data %s.", policy.Quoted(truncate(a, 40), 50), tp.Name, how, dc))}
		case k == "gpus":
			if slip, n := policy.NumberSlip(v); slip != "" && n >= 1 && n <= qm.MaxRequestGPUs {
				// gpus=٢: the number meant, in 0-9, with the job asking for it as the example.
				meant := "gpus=" + strconv.Itoa(n)
				return []bot.Reply{t.Bot.refuse(ctx, c.Verb, qm.Invalid(withoutGPUs(t.Bot.pol(), tp, c.Params)+" "+meant,
					"%s", policy.OtherDigitsNumberWords(truncate(a, 40), meant)))}
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > qm.MaxRequestGPUs {
				return []bot.Reply{t.Bot.refuse(ctx, c.Verb, qm.Invalid(withoutGPUs(t.Bot.pol(), tp, c.Params), "gpus=%s is not a number of GPUs.", truncate(v, 20)))}
			}
			c.GPUs = n
		default:
			words = append(words, a)
		}
	}
	c.Params = words
	if noGPU {
		return []bot.Reply{t.Bot.refuse(ctx, c.Verb, qm.Invalid(cpuExample(tp, c.Class, words),
			"%s uses no GPU, so gpus= does not apply to it; leave gpus= out.", tp.Name))}
	}
	return t.launch(ctx, req, c, tp)
}

// withoutGPUs is /gpu submit of tp with the user's words but gpus= (and a class= that p does not
// have), where they parse (the template's GPUs then apply); else the template's example.
func withoutGPUs(p *policy.Policy, tp *templates.Template, words []string) string {
	var first, rest []string
	for _, w := range words {
		switch k, _, _ := strings.Cut(strings.ToLower(w), "="); k {
		case "gpus":
		case "class":
			if c, ok := p.Class(policy.NameKey(w[len("class="):])); ok {
				first = append(first, "class="+c.Name)
			}
		default:
			rest = append(rest, w)
		}
	}
	ps, err := tp.ParseParams(rest)
	if err != nil {
		return tp.Example()
	}
	if ex, ok := withParams(tp, ps, first, nil); ok {
		return ex
	}
	return tp.Example()
}

// cpuExample is /gpu submit of a template that uses no GPU with the user's words (class= where
// given, and the parameters that parse) over those of the template's example.
func cpuExample(tp *templates.Template, class string, words []string) string {
	set := map[string]string{}
	if ps, err := tp.ParseParams(words); err == nil {
		set = ps
	}
	var first []string
	if class != "" {
		first = append(first, "class="+class)
	}
	if ex, ok := withParams(tp, tp.ExampleParams(), first, set); ok {
		return ex
	}
	return tp.Example()
}

// launch starts a template's workload under a new lease (/gpu submit, and /gpu request with a
// template). Everything is checked before the lease is asked for, and the backend renders and
// runs exactly what was checked.
func (t *Templates) launch(ctx context.Context, req bot.Request, c Command, tp *templates.Template) []bot.Reply {
	params, err := tp.ParseParams(c.Params)
	if err != nil {
		return []bot.Reply{t.Bot.refuse(ctx, c.Verb, t.paramsExample(ctx, c, tp, err))}
	}
	if tp.CPUOnly() && c.GPUs > 0 {
		return []bot.Reply{t.Bot.refuse(ctx, c.Verb, qm.Invalid(cpuExample(tp, c.Class, c.Params),
			"%s uses no GPU, so it asks for no GPUs; leave the number out.", tp.Name))}
	}
	gpus := c.GPUs
	if gpus == 0 && c.Class != "" {
		// On a class the user named, a node holds what a node of that class holds.
		size := t.largestNode(TemplateNodes(tp, params))
		if n := t.Bot.Svc.NodeSize(c.Class); n > 0 {
			size = n
		}
		gpus = DefaultGPUs(tp, params, size)
	}
	if err := t.gpusOverNodes(tp, params, c.Class, c.GPUs); err != nil {
		return []bot.Reply{t.Bot.fail(ctx, c.Verb, t.userExample(ctx, c, tp, params, err))}
	}
	if c.Class != "" {
		if err := t.classTooSmall(tp, params, c.Class, gpus, c.GPUs > 0); err != nil {
			return []bot.Reply{t.Bot.fail(ctx, c.Verb, t.userExample(ctx, c, tp, params, err))}
		}
		gpus = NodesHeld(tp, params, gpus, t.Bot.Svc.NodeSize(c.Class))
	}
	lr := qm.LeaseRequest{User: req.User, Who: c.Who, GPUs: gpus, Class: c.Class, Duration: c.Duration, Template: tp.Name,
		Params: map[string]string(params), Team: c.Team, DataClass: c.DataClass, Exclusive: c.Exclusive, RequestKey: req.Key,
		CPUOnly: tp.CPUOnly()}
	if lr.Class == "" {
		// Without gpus=, each class asks for the template's GPUs as its own nodes hold them.
		cands, fits := t.candidatesFit(tp, params, gpus)
		if !fits {
			if err := t.noClassHolds(tp, params, gpus); err != nil {
				return []bot.Reply{t.Bot.fail(ctx, c.Verb, err)}
			}
		}
		lr.GPUs, lr.ClassGPUs = cands[0].GPUs, make(map[string]int, len(cands))
		for _, cand := range cands {
			lr.Classes = append(lr.Classes, cand.Class)
			lr.ClassGPUs[cand.Class] = cand.GPUs
		}
	}
	if _, _, err := t.Bot.Svc.Normalize(ctx, &lr); err != nil {
		return []bot.Reply{t.Bot.fail(ctx, c.Verb, templateExample(c.Verb, tp, t.userExample(ctx, c, tp, params, err)))}
	}
	// Render it now, as the backend will, so a lease that does not fit the template (too few GPUs,
	// a node count that does not divide them) is refused before anything is made.
	trial := &qm.Lease{ID: 1, User: lr.User, Team: lr.Team, Class: lr.Class, GPUs: lr.GPUs, Duration: lr.Duration, Template: lr.Template, Params: lr.Params}
	if _, err := workload.Render(t.Catalog, t.Bot.pol(), trial, t.settings()); err != nil {
		return []bot.Reply{t.Bot.fail(ctx, c.Verb, t.userExample(ctx, c, tp, params, err))}
	}
	out, err := t.Bot.Svc.Request(ctx, lr)
	if err != nil && out == nil {
		return []bot.Reply{t.Bot.fail(ctx, c.Verb, templateExample(c.Verb, tp, t.userExample(ctx, c, tp, params, err)))}
	}
	if out.Duplicate && req.Click {
		return []bot.Reply{requestedAgain(out.Lease)}
	}
	r := t.Bot.outcome(ctx, out, err)
	if !r.Error && !out.AskedBefore {
		verb := "runs"
		if !out.Lease.State.Running() || out.Lease.State == qm.Provisioning {
			verb = "will run" // waits for approval, for capacity, or for the scheduler
		}
		r.Text = fmt.Sprintf("%s (template %s v%d) %s under lease %s. ", tp.Title, tp.Name, tp.Version, verb, out.Lease.ID) + t.wholeNodesNote(tp, params, c.GPUs, out.Lease) + r.Text
	}
	return []bot.Reply{r}
}

// userExample keeps the user's words in the example of a refusal of a template's lease. An example
// of the template that changes some of its words (nnodes=3 for nnodes=2) keeps the user's
// class=, gpus= and other parameters, the example's words over them. A refusal with no example
// gets the command typed: on a class named with class=, the GPUs typed where the class holds them
// for the template (more become as many as it holds). The service's own request of the template
// that fits the quota (a refusal past the GPUs at once or the week's GPU-hours) is written in the
// words typed, on its class and GPUs. Each keeps the team typed where the asker
// is in it, the length typed within the class's max_duration and the data class typed, and fits
// what the team's quota leaves (typedSubmit). Anything else is left as it is.
func (t *Templates) userExample(ctx context.Context, c Command, tp *templates.Template, params templates.Params, err error) error {
	var e *qm.Error
	if !errors.As(err, &e) || e.Code != qm.EINVALID && (e.Code != qm.EFORBIDDEN || e.Example != "" && !strings.HasPrefix(e.Example, "/gpu request ")) {
		return err
	}
	class, gpus := c.Class, c.GPUs
	set := map[string]string{}
	switch rest, ok := strings.CutPrefix(e.Example, "/gpu submit "+tp.Name); {
	case e.Example == "" && class != "" && gpus > 0:
		// The GPUs typed stay where the class holds them; more become the most it holds.
		most := t.classGPUs(tp, params, class)
		if most == 0 {
			return err
		}
		gpus = min(gpus, most)
	case e.Example == "":
		// No example of its own: the command typed, with its length put right below.
	case !ok && e.Code == qm.EFORBIDDEN:
		// The service's own request of the template that fits the quota (/gpu request N C for D
		// template TP …): its class and GPUs, in the words typed; typedSubmit fits the length.
		f := strings.Fields(e.Example)
		if len(f) < 8 || f[1] != "request" || f[4] != "for" || f[6] != "template" || f[7] != tp.Name {
			return err
		}
		n, cerr := strconv.Atoi(f[2])
		if cerr != nil {
			return err
		}
		class, gpus = f[3], n
	case !ok || e.Example == tp.Example() || rest != "" && rest[0] != ' ':
		return err
	default:
		for _, w := range words(rest) {
			k, v, _ := strings.Cut(w, "=")
			switch k {
			case "class":
				class = v
			case "gpus":
				n, cerr := strconv.Atoi(v)
				if cerr != nil {
					return err
				}
				gpus = n
			default:
				set[k] = v
			}
		}
	}
	ex, ok := t.typedSubmit(ctx, c, tp, params, class, gpus, set)
	if !ok {
		return err
	}
	return e.WithExample(ex)
}

// paramsExample is the refusal err of c's template parameters (an unknown one, a value its type
// does not take) with, as its example, the command typed with only the parameter put right: the
// user's other parameters (KeepParams, as quartermaster templates render keeps them), and the
// class, GPUs (where the class holds them, and none for a template that uses no GPU), team,
// length and data class typed (typedSubmit).
func (t *Templates) paramsExample(ctx context.Context, c Command, tp *templates.Template, err error) error {
	var e *qm.Error
	if !errors.As(err, &e) || e.Code != qm.EINVALID {
		return err
	}
	kept := KeepParams(tp, RightParams(tp, c.Params), e.Example)
	rest, ok := strings.CutPrefix(kept, "/gpu submit "+tp.Name)
	if !ok {
		return err
	}
	params, perr := tp.ParseParams(words(rest))
	if perr != nil {
		return e.WithExample(kept)
	}
	// A class the policy does not have would be refused next: the example names none.
	class := c.Class
	if _, known := t.Bot.pol().Class(class); !known {
		class = ""
	}
	gpus := c.GPUs
	switch {
	case tp.CPUOnly():
		gpus = 0
	case class != "" && gpus > 0:
		if most := t.classGPUs(tp, params, class); most > 0 {
			gpus = min(gpus, most)
		}
	}
	ex, ok := t.typedSubmit(ctx, c, tp, params, class, gpus, nil)
	if !ok {
		return e.WithExample(kept)
	}
	return e.WithExample(ex)
}

// typedSubmit is /gpu submit of tp on class with gpus, the parameters set over params, and the
// team typed where the asker is in it, the length typed within the class's max_duration and the
// data class typed. On a class, its GPUs and length fit what the team's quota leaves: GPUs cut
// down to size (fewer than typed) no more than it leaves at once, where it leaves none the quota
// request that helps; and the week's GPU-hours left, a shorter length else fewer GPUs. false
// where the parameters cannot be typed.
func (t *Templates) typedSubmit(ctx context.Context, c Command, tp *templates.Template, params templates.Params, class string, gpus int, set map[string]string) (string, bool) {
	cl := &policy.Class{}
	if k, ok := t.Bot.pol().Class(class); ok {
		cl = k
	}
	team := t.Bot.typedTeam(c)
	d, length := typedDuration(cl, c.Duration), c.Duration > 0
	if class != "" && gpus > 0 {
		sized := gpus < c.GPUs
		switch g, dd, fits := t.Bot.fitQuota(ctx, c, team, cl.Name, gpus, d, sized, t.takes(tp, params, cl.Name)); {
		case fits:
			length = length || dd != d
			gpus, d = g, dd
		case sized:
			return qm.QuotaRequestExample(gpus, cl.Name, team), true
		}
	}
	var first []string
	if class != "" {
		first = append(first, "class="+class)
	}
	if gpus > 0 {
		first = append(first, fmt.Sprintf("gpus=%d", gpus))
	}
	if team != "" {
		first = append(first, "team="+team)
	}
	if length {
		// The length typed, within the class's max_duration (or any lease's longest).
		first = append(first, "for="+policy.FormatDuration(d))
	}
	ex, ok := withParams(tp, params, first, set)
	if !ok {
		return "", false
	}
	if c.DataClass != "" && policy.ValidDataClass(c.DataClass) {
		ex += " data " + c.DataClass
	}
	return ex, true
}

// takes says whether a lease of tp with these parameters on class can hold n GPUs as asked: n
// split over its nodes as the template runs, no more than its nodes hold, and not rounded up to
// whole nodes.
func (t *Templates) takes(tp *templates.Template, params templates.Params, class string) func(int) bool {
	return func(n int) bool {
		return t.gpusOverNodes(tp, params, class, n) == nil && t.classTooSmall(tp, params, class, n, true) == nil &&
			NodesHeld(tp, params, n, t.Bot.Svc.NodeSize(class)) == n
	}
}

// classGPUs is the most GPUs a lease of tp on class can hold with these parameters: a node's (no
// more than the template uses) for a template that runs on one node; its nnodes whole nodes where
// nnodes is given; else all of the class's nodes. 0 where the backend does not say.
func (t *Templates) classGPUs(tp *templates.Template, params templates.Params, class string) int {
	size, count := t.Bot.Svc.NodeSize(class), t.Bot.Svc.NodeCount(class)
	if size == 0 || count == 0 {
		return 0
	}
	_, nnodesGiven := params["nnodes"]
	switch {
	case !tp.MultiNode && tp.ArrayTaskGPUs(params) == 0:
		return min(size, max(1, tp.MaxGPUs))
	case tp.MultiNode && nnodesGiven:
		return min(TemplateNodes(tp, params), count) * size
	default:
		return size * count
	}
}

// wholeNodesNote says, where a lease holds more GPUs than gpus= asked for because it runs on whole
// nodes, how many nodes and GPUs it holds: "nnodes=2 runs jax on 2 whole duo nodes of 2 GPUs:
// the lease holds 4 GPUs, not the 2 asked for. "; "" otherwise.
func (t *Templates) wholeNodesNote(tp *templates.Template, params templates.Params, asked int, l *qm.Lease) string {
	size := t.Bot.Svc.NodeSize(l.Class)
	if asked == 0 || l.GPUs <= asked || size == 0 || l.GPUs%size != 0 {
		return ""
	}
	why := fmt.Sprintf("gpus=%d", asked)
	if nn, ok := params["nnodes"]; ok && tp.MultiNode {
		why = "nnodes=" + nn
	}
	return fmt.Sprintf("%s runs %s on %s of %s: the lease holds %d GPUs, not the %d asked for. ",
		why, tp.Name, strings.Replace(nNodes(l.GPUs/size), " node", " whole "+l.Class+" node", 1), qm.GPUCount(size, ""), l.GPUs, asked)
}

// submitExample gives a /gpu submit refused for its own words (a duration of no time, a word
// given twice) the example of the template typed, where the catalog has it, rather than /gpu
// submit's general one, which names another template.
func (b *Bot) submitExample(c Command, err error) error {
	var e *qm.Error
	if c.Verb != "submit" || b.Templates == nil || c.Template == "" || !errors.As(err, &e) || e.Code != qm.EINVALID {
		return err
	}
	tp, gerr := b.Templates.Catalog.Get(c.Template)
	if gerr != nil {
		return err
	}
	if rest, ok := strings.CutPrefix(e.Example, "/gpu submit {batch}"); ok && rest != "" {
		return e.WithExample(tp.Example() + rest) // the template typed, then what the refusal shows
	}
	if s, ok := Lookup(c.Verb); e.Example != "" && (!ok || len(s.Examples) == 0 || e.Example != s.Examples[0]) {
		return err // an example of its own
	}
	if c.Duration > 0 || c.forTyped {
		// The length typed (a negative one made positive, one in other digits in 0-9) stays,
		// within the class's max_duration where a class is typed; for= with no length in it
		// (for=0h, for=xyz) stays with the length a request leaving it out would get.
		cl := &policy.Class{}
		if k, ok := b.pol().Class(c.Class); ok {
			cl = k
		}
		name := "/gpu submit " + tp.Name
		if ex, ok := b.typedSubmit(tp, c, typedDuration(cl, c.Duration)); ok {
			return e.WithExample(ex)
		}
		if rest, ok := strings.CutPrefix(tp.Example(), name); ok {
			return e.WithExample(name + " for=" + policy.FormatDuration(typedDuration(cl, c.Duration)) + rest)
		}
	}
	return e.WithExample(tp.Example())
}

// typedSubmit is the /gpu submit c typed, with d its length (none where c has none): its class= and gpus= where they are
// right, the parameters of tp that are right, and a required one it left out as the template's
// example gives it, then its team and data class; ok false where that does not parse.
func (b *Bot) typedSubmit(tp *templates.Template, c Command, d time.Duration) (string, bool) {
	var first []string
	if c.Duration > 0 || c.forTyped && d > 0 {
		first = append(first, "for="+policy.FormatDuration(d))
	}
	var others []string
	for _, w := range c.Params {
		k, v, _ := strings.Cut(w, "=")
		switch strings.ToLower(k) {
		case "class":
			if cl, ok := b.pol().Class(policy.NameKey(v)); ok {
				first = append(first, "class="+cl.Name)
			}
		case "gpus":
			if n, err := strconv.Atoi(v); err == nil && n >= 1 && n <= qm.MaxRequestGPUs && !tp.CPUOnly() {
				first = append(first, fmt.Sprintf("gpus=%d", n))
			}
		default:
			others = append(others, w)
		}
	}
	params := RightParams(tp, others)
	set := map[string]string{}
	own := tp.ExampleParams()
	for _, prm := range tp.Parameters {
		if _, given := params[prm.Name]; !given && prm.Required {
			if v, ok := own[prm.Name]; ok {
				set[prm.Name] = v
			}
		}
	}
	ex, ok := withParams(tp, params, first, set)
	if !ok {
		return "", false
	}
	if c.Team != "" {
		ex += " team=" + c.Team
	}
	if c.DataClass != "" {
		ex += " data " + c.DataClass
	}
	return ex, true
}

// templateExample gives a /gpu submit refusal that brings no example of its own (the cluster's
// size, a class's limits) the template's example, rather than /gpu submit's general one, which
// names another template.
func templateExample(verb string, tp *templates.Template, err error) error {
	var e *qm.Error
	if verb != "submit" || !errors.As(err, &e) || e.Example != "" || e.Code != qm.EINVALID && e.Code != qm.EFORBIDDEN {
		return err
	}
	return &qm.Error{Code: e.Code, Message: e.Message, Example: tp.Example()}
}

// submitMeant is err, the refusal of a job whose template is none of the catalog's, with the job
// of the template meant as its example where the refusal asks whether that one was meant (its
// mention, @cuda-smoke, or a typo): the parameters typed that it takes kept, as a job shows
// them, not /gpu template, which runs nothing. err as it is otherwise.
func (t *Templates) submitMeant(c Command, err error) error {
	var e *qm.Error
	if !errors.As(err, &e) || e.Code != qm.EINVALID {
		return err
	}
	tp := t.meantTemplate(c)
	if tp == nil {
		return err
	}
	meant := c
	meant.setTemplate(tp.Name)
	ex, ok := t.Bot.typedSubmit(tp, meant, typedDuration(&policy.Class{}, c.Duration))
	if !ok {
		ex = tp.Example()
	}
	return e.WithExample(ex)
}

// meantTemplate is the template c meant where its own is none of the catalog's: the one its
// mention names (@cuda-smoke), or the one a typo is nearest (cuda-smok); nil where none is clear.
func (t *Templates) meantTemplate(c Command) *templates.Template {
	typed := strings.TrimPrefix(strings.TrimSpace(c.templateAsTyped()), "@")
	if tp, err := t.Catalog.Get(typed); err == nil {
		return tp
	}
	near := policy.NearMiss(policy.NameKey(typed), t.names())
	if near == "" {
		return nil
	}
	tp, err := t.Catalog.Get(near)
	if err != nil {
		return nil
	}
	return tp
}

// names are the catalog's templates' names.
func (t *Templates) names() []string {
	var names []string
	for _, tp := range t.Catalog.List() {
		names = append(names, tp.Name)
	}
	return names
}

// requestMeant is err, the refusal of a request whose template is none of the catalog's, with
// the request as typed naming the template meant (meantTemplate) as its example, not /gpu
// template NAME, which starts nothing; ctx knows that request (typedExample writes it). ctx and
// err as they are otherwise.
func (t *Templates) requestMeant(ctx context.Context, c Command, err error) (context.Context, error) {
	var e *qm.Error
	if !errors.As(err, &e) || e.Code != qm.EINVALID {
		return ctx, err
	}
	tp := t.meantTemplate(c)
	if tp == nil {
		return ctx, err
	}
	meant := c
	meant.setTemplate(tp.Name)
	return withTyped(ctx, meant), e.WithExample("/gpu submit " + tp.Name)
}
