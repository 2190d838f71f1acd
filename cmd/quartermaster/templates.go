package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/acme/quartermaster/commands"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/workload"
)

func init() {
	registerCommand("templates", subcommand{
		summary: "browse and render workload templates",
		usage:   strings.ReplaceAll(strings.TrimPrefix(templatesUsage, "usage:\n  "), "\n  ", "\n"),
		flags:   func() *flag.FlagSet { return renderFlags(&renderOptions{}) },
		run:     runTemplates,
		checks:  true, // it only reads and prints
	})
}

const templatesUsage = `usage:
  quartermaster templates list [WORD ...] [--policy FILE]
  quartermaster templates show NAME [--policy FILE]
  quartermaster templates render NAME [--policy FILE] [--backend slurm|kubernetes] [--class CLASS]
                                      [--gpus N] [--duration 4h] [--lease L-42] [--team TEAM]
                                      [--user USER] [--team-image REF] [--project-image REF]
                                      [key=value ...]
render shows the Slurm script and the Kubernetes manifest a lease of the policy (QM_POLICY or
--policy; default the embedded example) would get, both when --backend is not given. Given a
policy, list and show say a template's GPUs per node as its simulated cluster's nodes hold them.
list with words lists the templates holding every one (name, tags, title or description).`

// runTemplates is `quartermaster templates`: list, show and render the embedded templates.
func runTemplates(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return needsVerb("templates", true, []string{"list", "show", "render"}, "list", args, nil)
	}
	cat, err := templateCatalog()
	if err != nil {
		return err
	}
	switch args[0] {
	case "list":
		words, gpus, err := browseArgs("list", "", args[1:])
		if err != nil {
			return err
		}
		// Several words are one search, as /gpu templates takes them: the templates holding all.
		word := strings.Join(words, " ")
		if len(cat.Search(word)) == 0 && len(cat.List()) > 0 {
			fs, _ := browseFlags()
			return refusal(fmt.Sprintf("no template matches %q (quartermaster templates list shows all %d)", word, len(cat.List())), "templates",
				append([]string{"list", commands.SearchExample(cat, word)}, withoutWords(fs, args[1:], words)...))
		}
		return listTemplates(stdout, cat, word, gpus)
	case "show":
		words, gpus, err := browseArgs("show", "pytorch-ddp", args[1:])
		if err != nil {
			return err
		}
		fs, _ := browseFlags()
		switch {
		case len(words) == 0:
			return refusal("templates show needs a template name", "templates", append([]string{"show", "pytorch-ddp"}, args[1:]...))
		case len(words) == 1 && words[0] == "": // show "$NAME" with NAME unset
			return refusal("templates show needs a template name", "templates", append([]string{"show", "pytorch-ddp"}, withoutWords(fs, args[1:], words)...))
		case len(words) > 1:
			return refusal(fmt.Sprintf("templates show takes one template name, but got %q too", words[1]), "templates",
				append([]string{"show"}, withoutWords(fs, args[1:], words[1:])...))
		}
		t, err := cat.Get(words[0])
		if err != nil {
			return shellError(unknownTemplate(cat, words[0], "/gpu template", err), "show", fs, args[1:])
		}
		showTemplate(stdout, cat, t, gpus)
		return nil
	case "render":
		return renderTemplate(stdout, stderr, cat, args[1:])
	default:
		if err := notAVerb("templates", args[0], []string{"list", "show", "render"}, args, []string{"list"}); err != nil {
			return err
		}
		return errUsage{fmt.Sprintf("unknown templates command %q\n%s", args[0], templatesUsage)}
	}
}

// browseFlags are list's and show's flags.
func browseFlags() (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("templates", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs, fs.String("policy", os.Getenv("QM_POLICY"), "policy file whose classes and simulated nodes the GPUs are told in")
}

// browseArgs reads list's and show's words and --policy (env QM_POLICY). Given a policy, a
// template's GPUs are said as /gpu templates says them on it: per node as the nodes of its
// simulated cluster hold them, on the class the template would go to; without one, as the
// template asks.
// verb is list or show, and name the template an example of a flag names where args name none.
func browseArgs(verb, name string, args []string) (words []string, gpus func(*templates.Template) string, err error) {
	fs, file := browseFlags()
	if words, err = parseInterleaved(fs, args); err != nil {
		return nil, nil, flagMistakeIn(fs, "quartermaster templates "+verb, withWord(fs, []string{"quartermaster", "templates", verb}, args, name),
			args, map[string]string{"policy": "docs/quartermaster.example.yaml"}, err)
	}
	if *file == "" {
		return words, gpuText, nil
	}
	pol, err := (&commonFlags{policy: *file}).loadPolicy()
	if err != nil {
		return nil, nil, err
	}
	nodeSize := func(class string) int { return classNodeSize(pol, class) }
	nodeCount := func(class string) int { _, n := classNodes(pol, class); return n }
	return words, func(t *templates.Template) string { return commands.TemplateGPUs(pol, t, nodeSize, nodeCount) }, nil
}

func listTemplates(w io.Writer, cat *templates.Catalog, word string, gpus func(*templates.Template) string) error {
	found := cat.Search(word)
	if len(found) == 0 {
		return fmt.Errorf("no template matches %q; quartermaster templates list shows all %d", word, len(cat.List()))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tGPUS\tTITLE")
	for _, t := range found {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Name, t.Kind, gpus(t), t.Title)
	}
	return tw.Flush()
}

func gpuText(t *templates.Template) string {
	switch {
	case t.CPUOnly():
		return "CPU only"
	case t.MultiNode:
		return fmt.Sprintf("%d/node, multi-node", t.GPUs)
	default:
		return fmt.Sprintf("%d", t.GPUs)
	}
}

func showTemplate(w io.Writer, cat *templates.Catalog, t *templates.Template, gpus func(*templates.Template) string) {
	fmt.Fprintf(w, "%s — %s (v%d, %s)\n\n%s\n\n", t.Name, t.Title, t.Version, t.Kind, t.Description)
	fmt.Fprintf(w, "GPUs:    %s\n", gpus(t))
	img := t.Image
	if img == "" {
		ref, desc := cat.BaseImage()
		img = ref + " (" + desc + ")"
	}
	fmt.Fprintf(w, "Image:   %s; a team or project image replaces it\n", img)
	if len(t.Tags) > 0 {
		fmt.Fprintf(w, "Tags:    %s\n", strings.Join(t.Tags, ", "))
	}
	if c := t.Connect; c != nil {
		fmt.Fprintf(w, "Connect: %s on port %d%s\n", c.Protocol, c.Port, c.Path)
	}
	if len(t.Parameters) > 0 {
		fmt.Fprintln(w, "\nParameters:")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, p := range t.Parameters {
			def := p.Default
			if p.Required {
				def = "(required)"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s%s\n", p.Name, p.Type, def, p.Description, limitText(p))
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "\nExample: %s\n", t.Example())
}

func limitText(p templates.Parameter) string {
	switch {
	case len(p.Choices) > 0:
		return " One of: " + strings.Join(p.Choices, ", ") + "."
	case p.Min != "" && p.Max != "":
		return fmt.Sprintf(" From %s to %s.", p.Min, p.Max)
	case p.Min != "":
		return " At least " + p.Min + "."
	case p.Max != "":
		return " At most " + p.Max + "."
	case p.Pattern != "" && p.PatternDescription != "":
		return " Must be " + p.Expects() + " (pattern " + p.Pattern + ")."
	case p.Pattern != "":
		return " Matches " + p.Pattern + "."
	}
	return ""
}

// renderOptions are the flags of templates render.
type renderOptions struct {
	policy, backend, class, lease, team, user, teamImage, projectImage string
	gpus                                                               int
	duration                                                           time.Duration
}

func renderFlags(o *renderOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("templates render", flag.ContinueOnError)
	fs.StringVar(&o.policy, "policy", os.Getenv("QM_POLICY"), "policy file whose classes, partitions and teams the example lease uses (env QM_POLICY; default: the embedded example)")
	fs.StringVar(&o.backend, "backend", "", "slurm or kubernetes (default: both)")
	fs.StringVar(&o.class, "class", "", "a class of the policy (default: the first class that gives the template's GPUs, sized by its own nodes, without approval, else one whose nodes hold its GPUs per node, as /gpu template picks)")
	fs.IntVar(&o.gpus, "gpus", 0, "GPUs the lease holds (default: the template's GPUs on each of its nodes, a sweep's no more than its trials take at once, and no more per node than a node of the class holds on a simulated cluster)")
	fs.DurationVar(&o.duration, "duration", 0, "lease duration (default 4h, what a request naming none gets)")
	fs.StringVar(&o.lease, "lease", "", "lease id (default L-42)")
	fs.StringVar(&o.team, "team", "", "team (default: the policy's first team)")
	fs.StringVar(&o.user, "user", "", "user (default: the first directory entry of the team, else the policy's first)")
	fs.StringVar(&o.teamImage, "team-image", "", "the team's image layer")
	fs.StringVar(&o.projectImage, "project-image", "", "the project's image layer")
	return fs
}

// renderExamples are values of render's flags that work for pytorch-ddp on the embedded example
// policy, for the examples of a flag mistake.
var renderExamples = map[string]string{
	"policy": "docs/quartermaster.example.yaml", "backend": "slurm", "class": "train", "gpus": "8",
	"duration": "4h", "lease": "L-42", "team": "vision", "user": "alice@acme.example",
	"team-image": "registry.example.com/vision/base:2026.11", "project-image": "registry.example.com/vision/detector:1.4",
}

// renderTemplate shows what a lease of the policy would run: the lease is built from the policy
// (its class's partition, GRES and Kubernetes mapping, its team's storage) and rendered the way
// the Slurm and Kubernetes backends render it, with the install's settings (QM_SLURM_ACCOUNTING
// decides whether --account is passed).
func renderTemplate(stdout, stderr io.Writer, cat *templates.Catalog, args []string) error {
	var o renderOptions
	fs := renderFlags(&o)
	fs.SetOutput(io.Discard)

	// Flags and key=value words may come in any order.
	var name string
	var words []string
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		examples := renderExamples
		if m := goFlagError.FindStringSubmatch(err.Error()); m != nil && strings.TrimLeft(m[2], "-") == "gpus" && !strings.HasPrefix(m[1], "flag provided") {
			gpus, cpuOnly := renderGPUs(cat, args)
			if cpuOnly != nil {
				return cpuOnly
			}
			if gpus != "" {
				examples = maps.Clone(renderExamples)
				examples["gpus"] = gpus
			}
		}
		return flagMistakeIn(fs, "quartermaster templates render", withWord(fs, []string{"quartermaster", "templates", "render"}, args, "pytorch-ddp"),
			args, examples, err)
	}
	for _, w := range rest {
		if name == "" && !strings.Contains(w, "=") {
			name = w
		} else {
			words = append(words, w)
		}
	}
	// The examples of refusals before --gpus and --duration are read leave out either where it
	// is below one (render's default then), which would be refused next.
	noneBelowOne := func(a []string) []string {
		if o.gpus <= 0 {
			a = withoutPlaces(a, flagPlaces(fs, a, "gpus"))
		}
		if o.duration <= 0 {
			a = withoutPlaces(a, flagPlaces(fs, a, "duration"))
		}
		return a
	}
	if name == "" {
		return refusal("templates render needs a template name", "templates", append([]string{"render", "pytorch-ddp"}, onceEach(fs, noneBelowOne(args))...))
	}
	render := func(what string, fixed []string) error {
		return refusal(what, "templates", append([]string{"render"}, fixed...))
	}
	if o.backend != "" && o.backend != "slurm" && o.backend != "kubernetes" {
		meant := policy.Closest(strings.ToLower(o.backend), []string{"slurm", "kubernetes"})
		if meant == "" {
			meant = "slurm"
		}
		return render(fmt.Sprintf("--backend is slurm or kubernetes, not %q", o.backend), withFlag(fs, noneBelowOne(args), "backend", meant))
	}
	pol, err := (&commonFlags{policy: o.policy}).loadPolicy()
	if err != nil {
		return err
	}
	t, err := cat.Get(name)
	if err != nil {
		return shellError(unknownTemplate(cat, name, "/gpu submit", err), "render", fs, noneBelowOne(args))
	}
	// --duration or --gpus 0 or below is no length, or holds no GPU: refused as one that is no
	// duration or number is, not taken as the flag not given; one example puts both right.
	var wrong []string
	fixed := args
	if at := flagPlaces(fs, args, "duration"); o.duration <= 0 && len(at) > 0 {
		last := at[len(at)-1]
		typed := args[last.i+last.n-1]
		if last.n == 1 {
			_, typed, _ = strings.Cut(typed, "=")
		}
		wrong = append(wrong, "--duration is how long the lease runs, more than none, not "+typed)
		fixed = withFlag(fs, fixed, "duration", renderExamples["duration"])
	}
	if o.gpus <= 0 && len(flagPlaces(fs, args, "gpus")) > 0 {
		gpus, cpuOnly := renderGPUs(cat, fixed)
		if cpuOnly != nil {
			return cpuOnly
		}
		if gpus == "" {
			gpus = renderExamples["gpus"]
		}
		wrong = append(wrong, fmt.Sprintf("--gpus is how many GPUs the lease holds, one or more, not %d", o.gpus))
		fixed = withFlag(fs, fixed, "gpus", gpus)
	}
	if len(wrong) > 0 {
		return render(strings.Join(wrong, "; and "), fixed)
	}
	params, err := t.ParseParams(words)
	if err != nil {
		// The example keeps the user's parameters that are right, as /gpu submit's does.
		var e *qm.Error
		if errors.As(err, &e) && e.Code == qm.EINVALID {
			err = e.WithExample(commands.KeepParams(t, commands.RightParams(t, words), e.Example))
		}
		return shellError(err, "render", fs, args)
	}
	id := qm.LeaseID(42)
	if o.lease != "" {
		if id, err = qm.ParseLeaseID(o.lease); err != nil {
			return render(fmt.Sprintf("--lease %q is not a lease id", o.lease), withFlag(fs, args, "lease", "L-42"))
		}
	}
	if t.CPUOnly() && o.gpus > 0 {
		return shellError(qm.Errorf(qm.EINVALID, "%s runs on CPUs only and its lease holds no GPU, so it takes no --gpus.", t.Name).WithExample(t.Example()), "render", fs, withoutPlaces(args, flagPlaces(fs, args, "gpus")))
	}
	l := &qm.Lease{ID: id, GPUs: o.gpus, Duration: o.duration, Template: t.Name}
	if l.GPUs <= 0 {
		l.GPUs = commands.DefaultGPUs(t, params, 0)
	}
	if l.Duration <= 0 {
		l.Duration = qm.DefaultDuration
	}
	if o.class == "" {
		// The class /gpu template and /gpu submit would take, with the GPUs they would ask for there.
		nodeSize := func(class string) int { return classNodeSize(pol, class) }
		nodeCount := func(class string) int { _, n := classNodes(pol, class); return n }
		if err := commands.NoClassHolds(pol, t, params, max(0, o.gpus), nodeSize, nodeCount); err != nil {
			return shellError(err, "render", fs, args)
		}
		first := commands.CandidateClasses(pol, t, params, max(0, o.gpus), nodeSize, nodeCount)[0]
		l.Class, l.GPUs = first.Class, first.GPUs
	} else if c, ok := pol.Class(o.class); ok {
		l.Class = c.Name
	} else {
		// The class meant where it is a misspelling of one, else the one render would take.
		meant := policy.Closest(strings.ToLower(o.class), classNames(pol))
		if meant == "" {
			meant = pol.Classes[0].Name
			nodeSize := func(class string) int { return classNodeSize(pol, class) }
			nodeCount := func(class string) int { _, n := classNodes(pol, class); return n }
			if commands.NoClassHolds(pol, t, params, max(0, o.gpus), nodeSize, nodeCount) == nil {
				meant = commands.CandidateClasses(pol, t, params, max(0, o.gpus), nodeSize, nodeCount)[0].Class
			}
		}
		return render(fmt.Sprintf("--class %q is not a class of %s, which has %s", o.class, pol.Source, strings.Join(classNames(pol), ", ")),
			withFlag(fs, args, "class", meant))
	}
	if size := classNodeSize(pol, l.Class); o.gpus <= 0 && size > 0 && t.GPUs > size {
		// No more per node than a node of the class holds, as /gpu template shows it.
		l.GPUs = commands.DefaultGPUs(t, params, size)
	}
	// nnodes given is that many whole nodes of the class, as /gpu submit's lease holds them.
	l.GPUs = commands.NodesHeld(t, params, l.GPUs, classNodeSize(pol, l.Class))
	if nn, given := params["nnodes"]; given && o.gpus > 0 && l.GPUs > o.gpus {
		fmt.Fprintf(stderr, "nnodes=%s runs %s on whole %s nodes: the lease holds %d GPUs, not the %d of --gpus\n", nn, t.Name, l.Class, l.GPUs, o.gpus)
	}
	if o.team != "" && len(pol.Teams) > 0 {
		// A lease is of one of the policy's teams (its storage, its images): the one meant where
		// --team is a misspelling of one, else the policy's first.
		// A team's channel (#vision-gpu) names it too, as report --team and chat take it.
		names := pol.TeamNames()
		tm, ok := pol.Team(o.team)
		channels, ofChannel := []string{}, map[string][]*policy.Team{}
		for _, t := range pol.Teams {
			if t.Channel != "" {
				k := policy.NameKey(t.Channel)
				if len(ofChannel[k]) == 0 {
					channels = append(channels, k)
				}
				ofChannel[k] = append(ofChannel[k], t)
			}
		}
		if of := ofChannel[policy.NameKey(o.team)]; !ok && strings.HasPrefix(o.team, "#") && len(of) == 1 {
			tm, ok = of[0], true
		}
		if !ok {
			meant, hint := "", ""
			if m, _ := pol.TeamMeant(o.team); m != "" {
				meant = m
			} else if strings.HasPrefix(o.team, "#") {
				if c := policy.Closest(policy.NameKey(o.team), channels); c != "" && len(ofChannel[c]) == 1 {
					meant = ofChannel[c][0].Name
					hint = fmt.Sprintf("; did you mean %s, the channel of team %s?", ofChannel[c][0].Channel, meant)
				}
			}
			if meant == "" {
				meant = policy.Closest(strings.ToLower(o.team), names)
			}
			if meant == "" {
				meant = names[0]
			}
			return render(fmt.Sprintf("--team %q is not a team of %s, which has %s%s", o.team, pol.Source, strings.Join(names, ", "), hint),
				withFlag(fs, args, "team", meant))
		}
		o.team = tm.Name
	}
	if l.Team, l.User, err = renderWho(pol, o.team, o.user); err != nil {
		return err
	}
	ws, err := workloadSettings()
	if err != nil {
		return err
	}
	// A Slurm job runs as the account that submits it (the service's, or whoever submits this
	// script), and its SSH server logs in only that account.
	if u, err := user.Current(); err == nil {
		ws.RunAs = u.Username
	}
	// Where the policy's simulated cluster says how many GPUs a node of the class holds, a lease
	// is rendered as the service would place it: no more on a node than one holds, and a lease
	// larger than a node on whole nodes.
	ws.NodeSize = func(class string) int { return classNodeSize(pol, class) }
	// A CPU-only job keeps off the GPU nodes: the simulated cluster's, where the policy has one
	// (the other backends' nodes are known only to the running service).
	ws.GPUNodes = func() []string {
		if pol.Backend != "" && pol.Backend != "sim" {
			return nil
		}
		return workload.GPUNodes(sim.New(pol, sim.NewClock(time.Now())).Inventory())
	}
	in, err := workload.InputFor(pol, l, ws)
	if err != nil {
		return err
	}
	in.Params = params
	if t.Connect != nil && t.Connect.Token {
		in.Token = "example-token"
	}
	in.Images.Team, in.Images.Project = o.teamImage, o.projectImage
	out, err := t.Render(in)
	if err != nil {
		if templates.IsInvalid(err) {
			// The example keeps the user's other parameters, so that typed back it renders.
			var e *qm.Error
			if errors.As(err, &e) {
				err = e.WithExample(commands.KeepParams(t, params, e.Example))
			}
			return shellError(err, "render", fs, args)
		}
		return errUsage{err.Error()}
	}
	switch o.backend {
	case "slurm":
		io.WriteString(stdout, out.SlurmScript)
	case "kubernetes":
		io.WriteString(stdout, out.KubernetesYAML)
	default:
		fmt.Fprintf(stdout, "# --- Slurm batch script ---\n%s\n# --- Kubernetes manifest ---\n%s", out.SlurmScript, out.KubernetesYAML)
	}
	if c := out.SlurmConnect; c != nil && o.backend != "kubernetes" {
		fmt.Fprintf(stderr, "connect (Slurm): %s\n", c.Address("NODE", in.Token))
	}
	if c := out.KubernetesConnect; c != nil && o.backend != "slurm" {
		fmt.Fprintf(stderr, "connect (Kubernetes): %s\n", c.Address("", in.Token))
	}
	return nil
}

// renderGPUs is the --gpus that render args (whose --gpus is no number, or has none) works with:
// the GPUs render gives the template typed on the policy typed, its parameters as typed, as
// --gpus not given would; empty where that is not known (no template typed, a policy that does
// not load). A CPU-only template takes no --gpus: its refusal, with args less --gpus, instead.
func renderGPUs(cat *templates.Catalog, args []string) (string, error) {
	var o renderOptions
	fs := renderFlags(&o)
	fs.SetOutput(io.Discard)
	without := withoutPlaces(args, flagPlaces(fs, args, "gpus"))
	rest, err := parseInterleaved(fs, without)
	if err != nil {
		return "", nil
	}
	var name string
	var words []string
	for _, w := range rest {
		if name == "" && !strings.Contains(w, "=") {
			name = w
		} else {
			words = append(words, w)
		}
	}
	t, err := cat.Get(name)
	if err != nil {
		return "", nil
	}
	if t.CPUOnly() {
		return "", shellError(qm.Errorf(qm.EINVALID, "%s runs on CPUs only and its lease holds no GPU, so it takes no --gpus.", t.Name).WithExample(t.Example()), "render", fs, without)
	}
	params, err := t.ParseParams(words)
	if err != nil {
		params = t.ExampleParams()
	}
	pol, err := (&commonFlags{policy: o.policy}).loadPolicy()
	if err != nil {
		return "", nil
	}
	nodeSize := func(class string) int { return classNodeSize(pol, class) }
	nodeCount := func(class string) int { _, n := classNodes(pol, class); return n }
	if c, ok := pol.Class(o.class); ok {
		gpus := commands.DefaultGPUs(t, params, classNodeSize(pol, c.Name))
		return strconv.Itoa(commands.NodesHeld(t, params, gpus, classNodeSize(pol, c.Name))), nil
	}
	if commands.NoClassHolds(pol, t, params, 0, nodeSize, nodeCount) != nil {
		return "", nil
	}
	return strconv.Itoa(commands.CandidateClasses(pol, t, params, 0, nodeSize, nodeCount)[0].GPUs), nil
}

// classNodes is what the policy's simulated cluster has of the class, where the policy runs on
// it: the most GPUs a node holds and how many nodes there are; 0 and 0 where a scheduler's nodes
// are not known here.
func classNodes(pol *policy.Policy, class string) (size, count int) {
	if pol.Backend == "" || pol.Backend == "sim" {
		for _, g := range pol.Sim.Nodes {
			if g != nil && g.Class == class {
				size, count = max(size, g.GPUs), count+g.Count
			}
		}
	}
	return size, count
}

// classNodeSize is the most GPUs a node of the class holds (classNodes).
func classNodeSize(pol *policy.Policy, class string) int {
	size, _ := classNodes(pol, class)
	return size
}

// renderWho is the example lease's team and user: those asked for, else the policy's first team
// and someone of its directory in that team.
func renderWho(pol *policy.Policy, team, user string) (string, string, error) {
	if team == "" {
		if len(pol.Teams) == 0 {
			return "", "", errUsage{fmt.Sprintf("%s has no teams; name one with --team, e.g. --team research", pol.Source)}
		}
		team = pol.Teams[0].Name
	}
	if user == "" {
		t, _ := pol.Team(team)
		for _, id := range pol.Directory {
			if user == "" {
				user = id.User
			}
			if t != nil && len(pol.TeamsOf(id.Groups)) > 0 && pol.TeamsOf(id.Groups)[0].Name == t.Name {
				user = id.User
				break
			}
		}
		if user == "" {
			user = "someone@example.org"
		}
	}
	return team, user, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// unknownTemplate is cat.Get's refusal (err) of name where no template is near it: its sentence
// lists the catalog's templates, rather than only saying how to list them beside an example of
// the first as if it were the one meant; the example is the first, as command (/gpu template,
// /gpu submit with the parameters its example gives) takes it.
func unknownTemplate(cat *templates.Catalog, name, command string, err error) error {
	var e *qm.Error
	list := cat.List()
	if !errors.As(err, &e) || len(list) == 0 {
		return err
	}
	key := policy.NameKey(strings.TrimSpace(name))
	names := make([]string, len(list))
	for i, t := range list {
		names[i] = t.Name
	}
	if policy.NearMiss(key, names) != "" || len(cat.Search(key)) > 0 {
		return err
	}
	ex := "/gpu template " + list[0].Name
	if command == "/gpu submit" {
		ex = list[0].Example()
	}
	c := e.WithExample(ex)
	c.Message = fmt.Sprintf("There is no template %s; the templates are %s (quartermaster templates list shows what each is)", policy.Quoted(name, 40), policy.JoinList(names, "and"))
	return c
}

// shellError turns a template error written for chat (/gpu template X, /gpu submit X k=v) into
// one for the shell: the same sentence, with the quartermaster templates command that works, the
// flags typed (fs's, in args) kept.
func shellError(err error, verb string, fs *flag.FlagSet, args []string) error {
	var e *qm.Error
	if !errors.As(err, &e) {
		return err
	}
	msg := strings.NewReplacer("/gpu templates", "quartermaster templates list", " lists ", " shows ").Replace(e.Message)
	ex := e.Example
	for _, chat := range []string{"/gpu template ", "/gpu submit "} {
		if rest, ok := strings.CutPrefix(ex, chat); ok {
			// /gpu submit's gpus= and class= are render's --gpus and --class.
			words := strings.Fields(rest)
			for i, w := range words {
				for _, key := range []string{"gpus", "class"} {
					if v, ok := strings.CutPrefix(w, key+"="); ok && i > 0 {
						words[i] = "--" + key + " " + v
					}
				}
			}
			ex = "quartermaster templates " + verb + " " + strings.Join(words, " ")
		}
	}
	if strings.HasPrefix(ex, "/gpu") {
		ex = ""
	}
	words, ok := strings.CutPrefix(ex, "quartermaster templates "+verb+" ")
	if !ok {
		c := e.WithExample(ex)
		c.Message = msg
		return c
	}
	// The example keeps the flags typed (--policy, --backend…) that it does not give itself,
	// after the template's name, each once.
	example := strings.Fields(words)
	typed := onceEach(fs, args)
	var places []flagAt
	fs.VisitAll(func(f *flag.Flag) {
		if !slices.Contains(example, "--"+f.Name) {
			places = append(places, flagPlaces(fs, typed, f.Name)...)
		}
	})
	slices.SortFunc(places, func(a, b flagAt) int { return cmp.Compare(a.i, b.i) })
	var kept []string
	for _, p := range places {
		kept = append(kept, typed[p.i:p.i+p.n]...)
	}
	if len(example) > 0 {
		example = append(append(example[:1:1], kept...), example[1:]...)
	}
	return refusal(strings.TrimSpace(msg), "templates", append([]string{verb}, example...))
}

// withWord is line with name after it where args (read by fs) give no word of their own (a
// template's name; not a flag, a flag's value nor a key=value parameter), for an example.
func withWord(fs *flag.FlagSet, line, args []string, name string) []string {
	for i, a := range args {
		if a == "--" {
			break
		}
		if name != "" && !strings.HasPrefix(a, "-") && !strings.Contains(a, "=") && !isFlagValue(fs, args, i) {
			return line
		}
	}
	if name == "" {
		return line
	}
	return append(slices.Clone(line), name)
}
