package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	qmtemplates "github.com/acme/quartermaster/templates"

	"github.com/acme/quartermaster/internal/templates"
)

func init() {
	register("templates", "browse and render workload templates", runTemplates)
}

const templatesUsage = `usage:
  quartermaster templates list [WORD]
  quartermaster templates show NAME
  quartermaster templates render NAME [--backend slurm|kubernetes] [--class interactive|train]
                                      [--gpus N] [--duration 4h] [--lease L-42] [--team vision]
                                      [--user alice@acme.example] [--team-image REF] [--project-image REF]
                                      [key=value ...]
render shows the Slurm script and the Kubernetes manifest an example lease would get (both when
--backend is not given).`

// runTemplates is `quartermaster templates`: list, show and render the embedded templates.
func runTemplates(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		return errUsage{templatesUsage}
	}
	cat, err := templates.Load(qmtemplates.FS)
	if err != nil {
		return err
	}
	switch args[0] {
	case "list":
		if len(args) > 2 {
			return errUsage{"list takes at most one word to search for\n" + templatesUsage}
		}
		word := ""
		if len(args) == 2 {
			word = args[1]
		}
		return listTemplates(stdout, cat, word)
	case "show":
		if len(args) != 2 {
			return errUsage{"show takes one template name, e.g. quartermaster templates show pytorch-ddp"}
		}
		t, err := cat.Get(args[1])
		if err != nil {
			return err
		}
		showTemplate(stdout, cat, t)
		return nil
	case "render":
		return renderTemplate(stdout, stderr, cat, args[1:])
	default:
		return errUsage{fmt.Sprintf("unknown templates command %q\n%s", args[0], templatesUsage)}
	}
}

func listTemplates(w io.Writer, cat *templates.Catalog, word string) error {
	found := cat.Search(word)
	if len(found) == 0 {
		return fmt.Errorf("no template matches %q; quartermaster templates list shows all %d", word, len(cat.List()))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tGPUS\tTITLE")
	for _, t := range found {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Name, t.Kind, gpuText(t), t.Title)
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

func showTemplate(w io.Writer, cat *templates.Catalog, t *templates.Template) {
	fmt.Fprintf(w, "%s — %s (v%d, %s)\n\n%s\n\n", t.Name, t.Title, t.Version, t.Kind, t.Description)
	fmt.Fprintf(w, "GPUs:    %s\n", gpuText(t))
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
	case p.Pattern != "":
		return " Matches " + p.Pattern + "."
	}
	return ""
}

func renderTemplate(stdout, stderr io.Writer, cat *templates.Catalog, args []string) error {
	fs := flag.NewFlagSet("templates render", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	backend := fs.String("backend", "", "slurm or kubernetes (default: both)")
	class := fs.String("class", "", "example class: interactive or train (default: by the template's kind)")
	gpus := fs.Int("gpus", 0, "GPUs the lease holds (default: the template's default on each node)")
	duration := fs.Duration("duration", 0, "lease duration (default 4h)")
	lease := fs.String("lease", "", "lease id (default L-42)")
	team := fs.String("team", "", "team (default vision)")
	user := fs.String("user", "", "user (default alice@acme.example)")
	teamImage := fs.String("team-image", "", "the team's image layer")
	projectImage := fs.String("project-image", "", "the project's image layer")

	// Flags and key=value words may come in any order.
	var name string
	var words []string
	rest := args
	for len(rest) > 0 {
		if err := fs.Parse(rest); err != nil {
			return errUsage{err.Error() + "\n" + templatesUsage}
		}
		rest = fs.Args()
		if len(rest) == 0 {
			break
		}
		if name == "" && !strings.Contains(rest[0], "=") {
			name = rest[0]
		} else {
			words = append(words, rest[0])
		}
		rest = rest[1:]
	}
	if name == "" {
		return errUsage{"render needs a template name, e.g. quartermaster templates render pytorch-ddp --backend slurm nnodes=2"}
	}
	if *backend != "" && *backend != "slurm" && *backend != "kubernetes" {
		return errUsage{fmt.Sprintf("--backend is slurm or kubernetes, not %q", *backend)}
	}
	if *class != "" && !contains(templates.ExampleClasses(), *class) {
		return errUsage{fmt.Sprintf("--class is one of the example classes (%s), not %q", strings.Join(templates.ExampleClasses(), ", "), *class)}
	}
	t, err := cat.Get(name)
	if err != nil {
		return err
	}
	params, err := t.ParseParams(words)
	if err != nil {
		return err
	}
	in := templates.ExampleInput(t, *class, params)
	if *gpus > 0 {
		in.GPUs = *gpus
	}
	if *duration > 0 {
		in.Duration = *duration
	}
	if *lease != "" {
		in.Lease = *lease
	}
	if *team != "" {
		in.Team, in.Slurm.Account, in.Kubernetes.Namespace = *team, *team, ""
		in.Storage.Path = "/projects/" + *team
	}
	if *user != "" {
		in.User = *user
	}
	in.Images.Team, in.Images.Project = *teamImage, *projectImage
	out, err := t.Render(in)
	if err != nil {
		if templates.IsInvalid(err) {
			return err
		}
		return errUsage{err.Error()}
	}
	switch *backend {
	case "slurm":
		io.WriteString(stdout, out.SlurmScript)
	case "kubernetes":
		io.WriteString(stdout, out.KubernetesYAML)
	default:
		fmt.Fprintf(stdout, "# --- Slurm batch script ---\n%s\n# --- Kubernetes manifest ---\n%s", out.SlurmScript, out.KubernetesYAML)
	}
	if c := out.SlurmConnect; c != nil && *backend != "kubernetes" {
		fmt.Fprintf(stderr, "connect (Slurm): %s\n", c.Address("NODE", in.Token))
	}
	if c := out.KubernetesConnect; c != nil && *backend != "slurm" {
		fmt.Fprintf(stderr, "connect (Kubernetes): %s\n", c.Address("", in.Token))
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
