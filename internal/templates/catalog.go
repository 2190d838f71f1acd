// Package templates owns the workload template catalog: loading the versioned definitions
// (templates/*.yaml, embedded by package github.com/acme/quartermaster/templates), checking a
// user's key=value parameters against them, and rendering one definition to both a Slurm batch
// script and a Kubernetes manifest for a lease.
//
// It depends on the standard library and yaml.v3 only: the backends submit what it renders.
//
//	cat, err := templates.Load(qmtemplates.FS)
//	t, err := cat.Get("pytorch-ddp")
//	params, err := t.ParseParams([]string{"nnodes=2", "script=train.py"})
//	out, err := t.Render(templates.Input{Lease: "L-42", ..., Params: params})
//	// out.SlurmScript, out.KubernetesYAML
//
// Errors caused by user input are *qm.Error (qm.EINVALID): one sentence with a working example.
package templates

import (
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"sort"
	"strings"
	"text/template"
)

// Catalog is a loaded set of templates. It is read-only after Load and safe for concurrent use.
type Catalog struct {
	list     []*Template
	byName   map[string]*Template
	defaults defaults
	slurm    *template.Template
	kube     *template.Template
}

// Template is one workload template: what it is, what it takes and what it needs. Fields are for
// reading; change the definition file instead.
type Template struct {
	Name        string // e.g. "pytorch-ddp"; the file is NAME.yaml
	Version     int    // raised whenever the rendered output changes
	Title       string // e.g. "PyTorch DDP (torchrun)"
	Description string
	Tags        []string
	Kind        string // KindInteractive or KindBatch
	Image       string // the template's own image, replacing the base image; "" = base image
	File        string // the definition file, for messages

	// GPUs is the default GPUs per node; 0 means the template runs on CPUs only.
	GPUs             int
	MinGPUs, MaxGPUs int  // per node, when GPUs > 0
	MultiNode        bool // it can span nodes: the nnodes parameter sets how many
	LeaderEndsJob    bool // on several nodes, the job ends when the first node's workload ends

	Parameters []Parameter // in the order the definition lists them
	Connect    *Connect    // how to reach an interactive workspace; nil for batch templates

	catalog               *Catalog
	def                   definition
	tmpl                  *template.Template
	lines                 map[string]int // body name -> file line of its first line
	nameLine              int
	example               string
	ports                 []portView
	cpusPerGPU, memPerGPU int
	cpus, mem, shm        int
}

// CPUOnly reports whether the template asks for no GPUs.
func (t *Template) CPUOnly() bool { return t.GPUs == 0 }

// List is every template, sorted by name.
func (c *Catalog) List() []*Template {
	return append([]*Template(nil), c.list...)
}

// Search is the templates whose name, title, tags or description contain word, capitals and
// accents aside (jüpyter finds JupyterLab, as the chat adapters' suggestions match what is typed),
// best matches first: name, then tag, then title, then description. Several words ("vs code")
// find the templates that contain every one of them, each where it may, best matches (summed over
// the words) first. An empty word lists all.
func (c *Catalog) Search(word string) []*Template {
	words := strings.Fields(searchFold(word))
	if len(words) == 0 {
		return c.List()
	}
	type hit struct {
		t    *Template
		rank int
	}
	var hits []hit
	for _, t := range c.list {
		rank := 0
		for _, w := range words {
			r := wordRank(t, w)
			if r == 0 {
				rank = 0
				break
			}
			rank += r
		}
		if rank > 0 {
			hits = append(hits, hit{t, rank})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].rank > hits[j].rank })
	out := make([]*Template, len(hits))
	for i, h := range hits {
		out[i] = h.t
	}
	return out
}

// wordRank is how well t matches one folded word: 4 in its name, 3 a tag, 2 its title, 1 its
// description, 0 nowhere.
func wordRank(t *Template, w string) int {
	switch {
	case strings.Contains(t.Name, w):
		return 4
	case hasTag(t, w):
		return 3
	case strings.Contains(searchFold(t.Title), w):
		return 2
	case strings.Contains(searchFold(t.Description), w):
		return 1
	}
	return 0
}

// searchFold is s as Search compares it: accented Latin letters written with a to z, in lower case.
func searchFold(s string) string { return strings.ToLower(policy.FoldAccents(s)) }

func hasTag(t *Template, w string) bool {
	for _, tag := range t.Tags {
		if strings.Contains(tag, w) {
			return true
		}
	}
	return false
}

// Get is the template called name. An unknown name is a *qm.Error that suggests the closest
// names and how to list them.
func (c *Catalog) Get(name string) (*Template, error) {
	key := policy.NameKey(strings.TrimSpace(name)) // A to Z case aside: a look-alike letter names no template
	if t, ok := c.byName[key]; ok {
		return t, nil
	}
	names := make([]string, len(c.list))
	for i, t := range c.list {
		names[i] = t.Name
	}
	shown := policy.Quoted(name, 40)
	if near := policy.NearMiss(key, names); near != "" {
		return nil, qm.Invalid("/gpu template "+near, "There is no template %s; did you mean %s?", shown, near)
	}
	if found := c.Search(key); len(found) > 0 {
		return nil, qm.Invalid("/gpu template "+found[0].Name, "There is no template %s; /gpu templates %s lists %d that match.", shown, clip(key), len(found))
	}
	return nil, qm.Invalid("/gpu template "+c.list[0].Name, "There is no template %s; /gpu templates lists all %d.", shown, len(c.list))
}
