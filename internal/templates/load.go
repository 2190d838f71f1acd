package templates

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/template"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Kinds of template: an interactive workspace (with connect details) or a batch job. Both are a
// Job on Kubernetes; a workspace's runs until its lease ends rather than by itself.
const (
	KindInteractive = "interactive"
	KindBatch       = "batch"
)

// Files the loader reads besides the definitions.
const (
	layoutSlurm      = "layouts/slurm.sh.tmpl"
	layoutKubernetes = "layouts/kubernetes.yaml.tmpl"
	defaultsFile     = "layouts/defaults.yaml"
)

// definition is one templates/NAME.yaml file as written.
type definition struct {
	Name          string        `yaml:"name"`
	Version       int           `yaml:"version"`
	Title         string        `yaml:"title"`
	Description   string        `yaml:"description"`
	Tags          []string      `yaml:"tags"`
	Kind          string        `yaml:"kind"`
	Image         string        `yaml:"image"`
	Resources     resourcesDef  `yaml:"resources"`
	MultiNode     bool          `yaml:"multi_node"`
	LeaderEndsJob bool          `yaml:"leader_ends_job"`
	Array         *arrayDef     `yaml:"array"`
	Example       string        `yaml:"example"`
	Parameters    []paramDef    `yaml:"parameters"`
	Connect       *connectDef   `yaml:"connect"`
	Ports         []portDef     `yaml:"ports"`
	Mounts        []mountDef    `yaml:"mounts"`
	Checks        []checkDef    `yaml:"checks"`
	Setup         string        `yaml:"setup"`
	Run           string        `yaml:"run"`
	Slurm         slurmDef      `yaml:"slurm"`
	Kubernetes    kubernetesDef `yaml:"kubernetes"`
}

type resourcesDef struct {
	GPUs            *int `yaml:"gpus"` // default GPUs per node; 0 = CPU only
	MinGPUs         int  `yaml:"min_gpus"`
	MaxGPUs         int  `yaml:"max_gpus"`
	CPUsPerGPU      int  `yaml:"cpus_per_gpu"`
	MemoryGiBPerGPU int  `yaml:"memory_gib_per_gpu"`
	CPUs            int  `yaml:"cpus"`       // CPU-only templates
	MemoryGiB       int  `yaml:"memory_gib"` // CPU-only templates
	ShmGiB          int  `yaml:"shm_gib"`
}

type arrayDef struct {
	Count       string `yaml:"count"`         // int parameter: number of tasks
	GPUsPerTask string `yaml:"gpus_per_task"` // int parameter: GPUs each task gets
}

type paramDef struct {
	Name        string   `yaml:"name"`
	Type        string   `yaml:"type"`
	Description string   `yaml:"description"`
	Default     *string  `yaml:"default"`
	Example     string   `yaml:"example"`
	Min         string   `yaml:"min"`
	Max         string   `yaml:"max"`
	Choices     []string `yaml:"choices"`
	Pattern     string   `yaml:"pattern"`
	// PatternDescription says in words what the pattern admits, as a refusal says it: "NAME
	// must be …" (optional; without it a refusal shows the parameter's example value and
	// description).
	PatternDescription string `yaml:"pattern_description"`
}

type connectDef struct {
	Protocol   string `yaml:"protocol"` // http | ssh
	Port       int    `yaml:"port"`
	Path       string `yaml:"path"`
	Token      bool   `yaml:"token"`       // the server wants the lease's token (QM_TOKEN)
	TokenParam string `yaml:"token_param"` // the URL query parameter that carries it, if any
}

type portDef struct {
	Name string `yaml:"name"`
	Port int    `yaml:"port"`
}

type mountDef struct {
	Parameter string `yaml:"parameter"` // a path parameter naming a directory in the team storage
	At        string `yaml:"at"`        // where the workload sees it
	Env       string `yaml:"env"`       // variable that holds where it is
	ReadOnly  bool   `yaml:"read_only"`
}

// checkDef is a rule across parameters and the lease: when FailIf renders to "true" the user gets
// Message (and a working example).
type checkDef struct {
	FailIf  string `yaml:"fail_if"`
	Message string `yaml:"message"`
}

type slurmDef struct {
	Directives []string `yaml:"directives"`
	Setup      string   `yaml:"setup"`
}

type kubernetesDef struct {
	Setup string `yaml:"setup"`
	// GracePeriod is templated: seconds between SIGTERM and SIGKILL (default 30).
	GracePeriod string `yaml:"termination_grace_seconds"`
}

type defaults struct {
	BaseImage struct {
		Ref         string `yaml:"ref"`
		Description string `yaml:"description"`
	} `yaml:"base_image"`
	MasterPort     int    `yaml:"master_port"`
	SlurmPortRange [2]int `yaml:"slurm_port_range"`
}

// LoadError is a problem with a template definition or layout, at a file and line.
type LoadError struct {
	File string
	Line int // 0 when the problem is with the file as a whole
	Msg  string
}

func (e *LoadError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}

// Load reads a catalog from fsys: every NAME.yaml at its root is a template definition, and
// layouts/ holds the Slurm and Kubernetes layouts and the catalog-wide defaults. The embedded
// catalog is Load(templates.FS) (package github.com/acme/quartermaster/templates).
//
// Every definition is checked: unknown fields, bad types and limits, template syntax, and that its
// example renders for both backends. The first problem found is returned as a *LoadError naming the
// file and line.
func Load(fsys fs.FS) (*Catalog, error) {
	c := &Catalog{byName: map[string]*Template{}}
	if err := c.loadLayouts(fsys); err != nil {
		return nil, err
	}
	names, err := fs.Glob(fsys, "*.yaml")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	if len(names) == 0 {
		return nil, &LoadError{File: ".", Msg: "no template definitions (*.yaml)"}
	}
	for _, file := range names {
		data, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, &LoadError{File: file, Msg: err.Error()}
		}
		t, err := c.parse(file, data)
		if err != nil {
			return nil, err
		}
		if prev, ok := c.byName[t.Name]; ok {
			return nil, &LoadError{File: file, Line: t.nameLine, Msg: fmt.Sprintf("template %q is already defined in %s", t.Name, prev.File)}
		}
		c.byName[t.Name] = t
		c.list = append(c.list, t)
	}
	sort.Slice(c.list, func(i, j int) bool { return c.list[i].Name < c.list[j].Name })
	return c, nil
}

func (c *Catalog) loadLayouts(fsys fs.FS) error {
	data, err := fs.ReadFile(fsys, defaultsFile)
	if err != nil {
		return &LoadError{File: defaultsFile, Msg: err.Error()}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c.defaults); err != nil {
		return yamlErr(defaultsFile, err)
	}
	if !imageRE.MatchString(c.defaults.BaseImage.Ref) {
		return &LoadError{File: defaultsFile, Msg: "base_image.ref must be an image reference"}
	}
	if c.defaults.MasterPort <= 0 || c.defaults.MasterPort > 65535 {
		return &LoadError{File: defaultsFile, Msg: "master_port must be a port number"}
	}
	if r := c.defaults.SlurmPortRange; r[0] < 1024 || r[1] > 65535 || r[0] > r[1] {
		return &LoadError{File: defaultsFile, Msg: "slurm_port_range must be two ports [low, high] above 1023"}
	}
	for _, l := range []struct {
		file string
		dst  **template.Template
	}{{layoutSlurm, &c.slurm}, {layoutKubernetes, &c.kube}} {
		data, err := fs.ReadFile(fsys, l.file)
		if err != nil {
			return &LoadError{File: l.file, Msg: err.Error()}
		}
		t := template.New(path.Base(l.file)).Option("missingkey=error")
		t.Funcs(funcs(t))
		if _, err := t.Parse(string(data)); err != nil {
			return tmplErr(l.file, 1, err)
		}
		*l.dst = t
	}
	return nil
}

var (
	nameRE   = regexp.MustCompile(`^[a-z][a-z0-9-]{0,30}[a-z0-9]$`)
	tagRE    = regexp.MustCompile(`^[a-z0-9][a-z0-9.+-]*$`)
	envRE    = regexp.MustCompile(`^QM_[A-Z0-9_]+$`)
	choiceRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
	imageRE  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,254}$`)
)

// reserved parameter names: the renderer gives them meaning.
const paramNodes = "nnodes"

// SubmitWords are the keys that /gpu submit reads itself (class=, gpus=, team=, for=), with what
// they do there: a parameter of the same name could never be given, so none may be named so.
var SubmitWords = map[string]string{
	"class": "class=C picks the class",
	"gpus":  "gpus=N sets the GPUs",
	"team":  "team=T charges a team",
	"for":   "for=D sets how long",
}

// DataWord is the word /gpu submit names a job's data class with (data CLASS, as a request does,
// or data=CLASS): no parameter may be named so, or it would take a data class typed for the job.
const DataWord = "data"

// parse turns one definition file into a Template, or says what is wrong and where.
func (c *Catalog) parse(file string, data []byte) (*Template, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlErr(file, err)
	}
	if len(root.Content) == 0 {
		return nil, &LoadError{File: file, Msg: "empty definition"}
	}
	var def definition
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&def); err != nil {
		return nil, yamlErr(file, err)
	}
	at := func(p ...any) int { return lineOf(&root, p...) }
	bad := func(line int, format string, args ...any) error {
		return &LoadError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	if line, list, n, ok := emptyEntry(root.Content[0], ""); ok {
		return nil, bad(line, "%s entry %d is empty; fill it in or remove its line", list, n)
	}

	t := &Template{
		Name:          def.Name,
		Version:       def.Version,
		Title:         strings.TrimSpace(def.Title),
		Description:   strings.TrimSpace(def.Description),
		Tags:          def.Tags,
		Kind:          def.Kind,
		Image:         def.Image,
		MultiNode:     def.MultiNode,
		LeaderEndsJob: def.LeaderEndsJob,
		File:          file,
		catalog:       c,
		nameLine:      at("name"),
		def:           def,
		lines:         map[string]int{},
	}
	switch {
	case !nameRE.MatchString(def.Name):
		return nil, bad(at("name"), "name must be 2-32 lower-case letters, digits and dashes, starting with a letter")
	case definitionName(file) != def.Name:
		return nil, bad(at("name"), "name %q must match the file name %s", def.Name, path.Base(file))
	case def.Version < 1:
		return nil, bad(at("version"), "version must be a whole number from 1, raised whenever the output changes")
	case t.Title == "":
		return nil, bad(at("title"), "title is required")
	case t.Description == "":
		return nil, bad(at("description"), "description is required")
	case def.Kind != KindInteractive && def.Kind != KindBatch:
		return nil, bad(at("kind"), "kind must be interactive or batch, not %q", def.Kind)
	case def.Image != "" && !imageRE.MatchString(def.Image):
		return nil, bad(at("image"), "image %q is not an image reference", def.Image)
	case strings.TrimSpace(def.Run) == "":
		return nil, bad(at("run"), "run is required: the shell that starts the workload on each node")
	}
	for i, tag := range def.Tags {
		if !tagRE.MatchString(tag) {
			return nil, bad(at("tags", i), "tag %q must be lower-case letters, digits and . + -", tag)
		}
	}

	// Resources.
	r := def.Resources
	t.GPUs = 1
	if r.GPUs != nil {
		t.GPUs = *r.GPUs
	}
	t.MinGPUs, t.MaxGPUs = r.MinGPUs, r.MaxGPUs
	switch {
	case t.GPUs < 0 || t.GPUs > 64:
		return nil, bad(at("resources", "gpus"), "resources.gpus must be between 0 (CPU only) and 64")
	case t.GPUs == 0 && (r.MinGPUs != 0 || r.MaxGPUs != 0 || r.CPUsPerGPU != 0 || r.MemoryGiBPerGPU != 0):
		return nil, bad(at("resources"), "a CPU-only template (gpus: 0) takes cpus and memory_gib, not GPU limits")
	case t.GPUs > 0 && (r.CPUs != 0 || r.MemoryGiB != 0):
		return nil, bad(at("resources"), "a GPU template takes cpus_per_gpu and memory_gib_per_gpu, not cpus and memory_gib")
	}
	if t.GPUs > 0 {
		if t.MinGPUs == 0 {
			t.MinGPUs = 1
		}
		if t.MaxGPUs == 0 {
			t.MaxGPUs = 64
		}
		if t.MinGPUs < 1 || t.MinGPUs > t.GPUs || t.MaxGPUs < t.GPUs {
			return nil, bad(at("resources"), "resources need 1 <= min_gpus <= gpus <= max_gpus")
		}
		t.cpusPerGPU, t.memPerGPU = orDefault(r.CPUsPerGPU, 8), orDefault(r.MemoryGiBPerGPU, 32)
	} else {
		t.cpus, t.mem = orDefault(r.CPUs, 4), orDefault(r.MemoryGiB, 16)
	}
	t.shm = orDefault(r.ShmGiB, 8)
	for _, v := range []int{t.cpusPerGPU, t.memPerGPU, t.cpus, t.mem, t.shm} {
		if v < 0 || v > 4096 {
			return nil, bad(at("resources"), "resources must be between 0 and 4096")
		}
	}

	// Parameters.
	seen := map[string]bool{}
	for i, pd := range def.Parameters {
		p, msg, field := buildParam(pd)
		if meaning, ok := SubmitWords[p.Name]; ok && msg == "" {
			msg, field = fmt.Sprintf("parameter name %q is a word /gpu submit reads itself (%s), so the parameter could never be given; rename it, e.g. name: %s_name", p.Name, meaning, p.Name), "name"
		}
		if p.Name == DataWord && msg == "" {
			rename := "dataset"
			if slices.ContainsFunc(def.Parameters, func(o paramDef) bool { return o.Name == rename }) {
				rename = "data_path"
			}
			msg, field = fmt.Sprintf("template %s cannot have a parameter named %q, since /gpu submit reads data (data CLASS, data=CLASS) as the job's data class; rename it, e.g. name: %s", t.Name, p.Name, rename), "name"
		}
		if msg == "" && seen[p.Name] {
			msg, field = fmt.Sprintf("parameter %q is declared twice", p.Name), "name"
		}
		if msg != "" {
			if field != "" {
				return nil, bad(at("parameters", i, field), "%s", msg)
			}
			return nil, bad(at("parameters", i), "%s", msg)
		}
		seen[p.Name] = true
		t.Parameters = append(t.Parameters, p)
	}
	if def.MultiNode {
		p := t.param(paramNodes)
		if p == nil {
			return nil, bad(at("multi_node"), "a multi-node template declares an int parameter %q (nodes, default 1)", paramNodes)
		}
		if p.Type != TypeInt || p.Default != "1" || !p.hasMin || p.min != 1 {
			return nil, bad(at("parameters"), "parameter %q must be an int with default 1 and min 1", paramNodes)
		}
	} else if t.param(paramNodes) != nil {
		return nil, bad(at("parameters"), "parameter %q is only for templates with multi_node: true", paramNodes)
	}
	if def.LeaderEndsJob && !def.MultiNode {
		return nil, bad(at("leader_ends_job"), "leader_ends_job needs multi_node: true")
	}
	if def.Array != nil {
		if def.MultiNode || def.Kind != KindBatch || t.GPUs == 0 {
			return nil, bad(at("array"), "an array template is a single-node GPU batch template")
		}
		for _, f := range []struct{ key, name string }{{"count", def.Array.Count}, {"gpus_per_task", def.Array.GPUsPerTask}} {
			p := t.param(f.name)
			if p == nil || p.Type != TypeInt || !p.hasMin || p.min < 1 {
				return nil, bad(at("array", f.key), "array.%s must name an int parameter with min 1", f.key)
			}
		}
	}

	// Connect and ports.
	if def.Kind == KindInteractive {
		if def.MultiNode {
			return nil, bad(at("multi_node"), "an interactive template runs on one node")
		}
		if def.Connect == nil {
			return nil, bad(at("kind"), "an interactive template says how to connect (connect: protocol, port)")
		}
	}
	if cd := def.Connect; cd != nil {
		if def.Kind != KindInteractive {
			return nil, bad(at("connect"), "only interactive templates have connect details")
		}
		switch {
		case cd.Protocol != "http" && cd.Protocol != "ssh":
			return nil, bad(at("connect", "protocol"), "connect.protocol must be http or ssh")
		case cd.Port < 1024 || cd.Port > 65535:
			return nil, bad(at("connect", "port"), "connect.port must be between 1024 and 65535")
		case cd.Path != "" && (cd.Protocol != "http" || !strings.HasPrefix(cd.Path, "/")):
			return nil, bad(at("connect", "path"), "connect.path is an http path starting with /")
		case cd.Token && cd.Protocol != "http":
			return nil, bad(at("connect", "token"), "connect.token is for http")
		case cd.TokenParam != "" && (!cd.Token || !keyRE.MatchString(cd.TokenParam)):
			return nil, bad(at("connect", "token_param"), "connect.token_param is a query parameter name, with token: true")
		}
		t.Connect = &Connect{Protocol: cd.Protocol, Port: cd.Port, Path: cd.Path, Token: cd.Token, TokenParam: cd.TokenParam}
		t.ports = append(t.ports, portView{Name: cd.Protocol, Port: cd.Port})
	}
	for i, pd := range def.Ports {
		if def.Connect == nil || !nameRE.MatchString(pd.Name) || len(pd.Name) > 15 || pd.Port < 1024 || pd.Port > 65535 {
			return nil, bad(at("ports", i), "ports are extra {name, port} of an interactive template: a short lower-case name and a port from 1024")
		}
		for _, q := range t.ports {
			if q.Name == pd.Name || q.Port == pd.Port {
				return nil, bad(at("ports", i), "port %s/%d is declared twice", pd.Name, pd.Port)
			}
		}
		t.ports = append(t.ports, portView(pd))
	}
	for i, m := range def.Mounts {
		p := t.param(m.Parameter)
		switch {
		case p == nil || p.Type != TypePath:
			return nil, bad(at("mounts", i, "parameter"), "mounts[].parameter must name a path parameter")
		case !strings.HasPrefix(m.At, "/") || pathProblem(strings.TrimPrefix(m.At, "/")) != "":
			return nil, bad(at("mounts", i, "at"), "mounts[].at must be an absolute path")
		case !envRE.MatchString(m.Env):
			return nil, bad(at("mounts", i, "env"), "mounts[].env must be a QM_ variable name")
		}
	}

	// Bodies: parse now, so a syntax error names its line in the file.
	t.tmpl = template.New(file).Option("missingkey=error")
	t.tmpl.Funcs(funcs(t.tmpl))
	parse := func(name, text string, line int) error {
		if _, err := t.tmpl.New(name).Parse(text); err != nil {
			return tmplErr(file, line, err)
		}
		t.lines[name] = line
		return nil
	}
	bodies := []struct {
		name, text string
		path       []any
	}{
		{"setup", def.Setup, []any{"setup"}},
		{"run", def.Run, []any{"run"}},
		{"slurm.setup", def.Slurm.Setup, []any{"slurm", "setup"}},
		{"kubernetes.setup", def.Kubernetes.Setup, []any{"kubernetes", "setup"}},
		{"kubernetes.termination_grace_seconds", def.Kubernetes.GracePeriod, []any{"kubernetes", "termination_grace_seconds"}},
	}
	for i, d := range def.Slurm.Directives {
		if !strings.HasPrefix(d, "--") || strings.ContainsAny(d, "\n") {
			return nil, bad(at("slurm", "directives", i), "a directive is one sbatch option starting with --")
		}
		if written, option := serviceOption(d); written != "" {
			if written != option {
				written += " (" + option + ")"
			}
			return nil, bad(at("slurm", "directives", i), "slurm.directives.%d: %s is set by the service from the lease (the job name qm-<lease>-<template>, the comment, partition, account, GPUs, time limit, nodes, CPUs, memory, output file and placement), and sbatch would take the template's instead without a word; remove it (slurm.directives may add other options, e.g. --signal=B:USR1@60)",
				i, written)
		}
		bodies = append(bodies, struct {
			name, text string
			path       []any
		}{fmt.Sprintf("slurm.directives.%d", i), d, []any{"slurm", "directives", i}})
	}
	for i, ch := range def.Checks {
		if strings.TrimSpace(ch.Message) == "" || strings.TrimSpace(ch.FailIf) == "" {
			return nil, bad(at("checks", i), "a check has fail_if (a template that renders true or false) and message")
		}
		bodies = append(bodies, struct {
			name, text string
			path       []any
		}{fmt.Sprintf("checks.%d", i), ch.FailIf, []any{"checks", i, "fail_if"}})
	}
	for _, b := range bodies {
		if err := parse(b.name, b.text, bodyLine(&root, b.path...)); err != nil {
			return nil, err
		}
		if n := sbatchLine(b.text); n > 0 && (b.name == "setup" || b.name == "run" || b.name == "slurm.setup") {
			return nil, bad(bodyLine(&root, b.path...)+n-1, "%s: an #SBATCH line here is ignored, since sbatch reads them only at the top of the script; put the option in slurm.directives instead, e.g. slurm: {directives: [\"--requeue\"]}", b.name)
		}
		if b.name == "run" && strings.Contains(b.text, "QM_RUN") {
			return nil, bad(at(b.path...), "QM_RUN ends the workload block; use another word")
		}
		// The checks only decide; every other body ends up in the script or the manifest.
		if !strings.HasPrefix(b.name, "checks.") {
			if param, line, found := unquotedParam(t.tmpl.Lookup(b.name), t.unsafeParams()); found {
				return nil, &LoadError{File: file, Line: bodyLine(&root, b.path...) + line - 1, Msg: unquotedMessage(b.name, param)}
			}
		}
	}

	for i := range t.Parameters {
		p := &t.Parameters[i]
		if p.Required {
			continue
		}
		if _, err := t.check(p, p.Default); err != nil {
			msg, _, _ := strings.Cut(err.Error(), ". Example:")
			return nil, bad(at("parameters", i, "default"), "default %q does not pass its own limits: %s", p.Default, msg)
		}
	}

	// The example must work: it is what every error message offers.
	t.example = strings.TrimSpace(def.Example)
	exParams, err := t.ParseParams(strings.Fields(t.example))
	if err != nil {
		return nil, bad(at("example"), "example %q does not parse: %v", t.example, err)
	}
	for i := range t.Parameters {
		p := &t.Parameters[i]
		switch {
		case exParams[p.Name] != "":
			p.exampleVal = exParams[p.Name]
		case p.Example != "":
			p.exampleVal = p.Example
		default:
			p.exampleVal = p.Default
		}
		if _, err := t.check(p, p.exampleVal); err != nil {
			return nil, bad(at("parameters", i), "parameter %s has no valid example value (set example:)", p.Name)
		}
	}
	for _, backend := range []string{"slurm", "kubernetes"} {
		in, err := t.normalize(ExampleInput(t, "", exParams))
		if err == nil {
			_, err = t.render(in, backend)
		}
		if err != nil {
			var le *LoadError
			if errors.As(err, &le) {
				return nil, le
			}
			return nil, bad(at("example"), "example does not render for %s: %v", backend, err)
		}
	}
	return t, nil
}

func buildParam(pd paramDef) (p Parameter, msg, field string) {
	p = Parameter{
		Name:        pd.Name,
		Type:        pd.Type,
		Description: strings.TrimSpace(pd.Description),
		Example:     pd.Example,
		Min:         pd.Min,
		Max:         pd.Max,
		Choices:     pd.Choices,
		Pattern:     pd.Pattern,

		PatternDescription: strings.TrimSpace(pd.PatternDescription),
	}
	if !keyRE.MatchString(pd.Name) || len(pd.Name) > 32 {
		return p, "a parameter name is lower-case letters, digits and _, starting with a letter", "name"
	}
	if p.Description == "" {
		return p, fmt.Sprintf("parameter %s needs a description", p.Name), ""
	}
	if pd.Default != nil {
		p.Default = *pd.Default
	} else {
		p.Required = true
	}
	bound := func(s string) (int64, string) {
		switch p.Type {
		case TypeInt:
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return 0, fmt.Sprintf("%q is not a whole number", s)
			}
			return n, ""
		case TypeDuration:
			d, err := time.ParseDuration(s)
			if err != nil {
				return 0, fmt.Sprintf("%q is not a duration", s)
			}
			return int64(d), ""
		}
		return 0, "min and max are for int and duration parameters"
	}
	switch p.Type {
	case TypeInt, TypeString, TypeBool, TypeDuration, TypeEnum, TypePath:
	default:
		return p, fmt.Sprintf("type must be int, string, bool, duration, enum or path, not %q", p.Type), "type"
	}
	if p.Min != "" {
		var m string
		if p.min, m = bound(p.Min); m != "" {
			return p, "min: " + m, "min"
		}
		p.hasMin = true
	}
	if p.Max != "" {
		var m string
		if p.max, m = bound(p.Max); m != "" {
			return p, "max: " + m, "max"
		}
		p.hasMax = true
	}
	if p.hasMin && p.hasMax && p.min > p.max {
		return p, "min is above max", "min"
	}
	if (len(p.Choices) > 0) != (p.Type == TypeEnum) {
		return p, "an enum parameter lists its choices, and only an enum has choices", "choices"
	}
	for _, ch := range p.Choices {
		if !choiceRE.MatchString(ch) {
			return p, fmt.Sprintf("choice %q must be letters, digits and . _ -", ch), "choices"
		}
	}
	if p.Pattern != "" {
		if p.Type != TypeString && p.Type != TypePath {
			return p, "pattern is for string and path parameters", "pattern"
		}
		re, err := regexp.Compile("^(?:" + p.Pattern + ")$")
		if err != nil {
			return p, "pattern: " + err.Error(), "pattern"
		}
		p.re = re
	}
	if p.PatternDescription != "" {
		switch {
		case p.Pattern == "":
			return p, "pattern_description describes a pattern: give the pattern too", "pattern_description"
		case !printable(p.PatternDescription):
			return p, "pattern_description is words on one line", "pattern_description"
		case utf8.RuneCountInString(p.PatternDescription) > maxPatternDescription:
			return p, fmt.Sprintf("pattern_description is at most %d characters", maxPatternDescription), "pattern_description"
		}
	}
	return p, "", ""
}

// emptyEntry finds the first empty entry of any list under n (a "-" with nothing after it, ~,
// null or a blank text): its line, the list's dotted name and the entry's number from 1.
func emptyEntry(n *yaml.Node, at string) (line int, list string, num int, found bool) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			if at != "" {
				key = at + "." + key
			}
			if line, list, num, found = emptyEntry(n.Content[i+1], key); found {
				return
			}
		}
	case yaml.SequenceNode:
		for i, item := range n.Content {
			v := item
			for v.Kind == yaml.AliasNode && v.Alias != nil {
				v = v.Alias
			}
			if v.Kind == yaml.ScalarNode && (v.ShortTag() == "!!null" || strings.TrimSpace(v.Value) == "") {
				return item.Line, at, i + 1, true
			}
			if item.Kind == yaml.AliasNode {
				continue
			}
			if line, list, num, found = emptyEntry(item, fmt.Sprintf("%s.%d", at, i+1)); found {
				return
			}
		}
	}
	return 0, "", 0, false
}

func orDefault(v, d int) int {
	if v == 0 {
		return d
	}
	return v
}

// lineOf finds the line of the node at p (mapping keys and sequence indexes) under root, or the
// line of the deepest node on the way when the path does not exist.
func lineOf(root *yaml.Node, p ...any) int {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	for _, step := range p {
		var next *yaml.Node
		switch s := step.(type) {
		case string:
			if n.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(n.Content); i += 2 {
					if n.Content[i].Value == s {
						line = n.Content[i].Line
						next = n.Content[i+1]
					}
				}
			}
		case int:
			if n.Kind == yaml.SequenceNode && s >= 0 && s < len(n.Content) {
				next = n.Content[s]
				line = next.Line
			}
		}
		if next == nil {
			return line
		}
		n = next
	}
	return line
}

// bodyLine is the file line of the first line of a text value: the line after the indicator for a
// block scalar (| or >), else the value's own line.
func bodyLine(root *yaml.Node, p ...any) int {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for _, step := range p {
		var next *yaml.Node
		switch s := step.(type) {
		case string:
			if n.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(n.Content); i += 2 {
					if n.Content[i].Value == s {
						next = n.Content[i+1]
					}
				}
			}
		case int:
			if n.Kind == yaml.SequenceNode && s >= 0 && s < len(n.Content) {
				next = n.Content[s]
			}
		}
		if next == nil {
			return lineOf(root, p...)
		}
		n = next
	}
	if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return n.Line + 1
	}
	return n.Line
}

var (
	yamlLineRE     = regexp.MustCompile(`line (\d+): (.*)`)
	unknownFieldRE = regexp.MustCompile(`field (\S+) not found in type \S+`)
)

// yamlErr turns a yaml.v3 error into a LoadError with the file and the first line it names.
func yamlErr(file string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n")
	msg = strings.TrimSpace(msg)
	msg = unknownFieldRE.ReplaceAllString(msg, `unknown field "$1"`)
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		rest := m[2]
		// yaml.v3 reports a parser error ("did not find expected …") at the 0-based line of the
		// construct it was parsing; the file line is one more.
		if strings.HasPrefix(rest, "did not find expected") {
			line++
		}
		if i := strings.Index(rest, "\n"); i >= 0 {
			rest = rest[:i]
		}
		return &LoadError{File: file, Line: line, Msg: rest}
	}
	return &LoadError{File: file, Msg: msg}
}

var tmplLineRE = regexp.MustCompile(`^template: ([^:]+):(\d+):(?:\d+:)? ?(.*)$`)

// tmplErr turns a text/template error in a body that starts at file line base into a LoadError
// at the right file line.
func tmplErr(file string, base int, err error) error {
	msg := err.Error()
	if m := tmplLineRE.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[2])
		return &LoadError{File: file, Line: base + n - 1, Msg: m[1] + ": " + strings.TrimSpace(m[3])}
	}
	return &LoadError{File: file, Line: base, Msg: msg}
}

// AddDir adds an installation's own templates to a loaded catalog: every NAME.yaml or NAME.yml at
// the root of fsys is a definition, checked as a shipped one is and rendered through the catalog's
// layouts. A definition with a problem, or one taking the name of a template already in the
// catalog, is left out and returned as a *LoadError naming its file and line, in file order; the
// others are added. Notes for people there (README, *.md, *.txt), hidden files and folders are
// passed over; any other file is returned as a *LoadError too, since it is not loaded. Call it
// before the catalog is shared: the catalog is read-only afterwards.
func (c *Catalog) AddDir(fsys fs.FS) []error {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return []error{err}
	}
	var problems []error
	added := map[string]string{} // name: the file of the directory that defines it
	for _, e := range entries {
		file := e.Name()
		if e.IsDir() || !isDefinitionFile(file) {
			if !e.IsDir() && !forPeople(file) {
				problems = append(problems, &LoadError{File: file, Msg: "not a template definition, which is a NAME.yaml or NAME.yml file"})
			}
			continue
		}
		data, err := fs.ReadFile(fsys, file)
		if err != nil {
			problems = append(problems, &LoadError{File: file, Msg: err.Error()})
			continue
		}
		t, err := c.parse(file, data)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		if prev, ok := added[t.Name]; ok {
			problems = append(problems, &LoadError{File: file, Line: t.nameLine,
				Msg: fmt.Sprintf("template %q is already defined in %s; give it another name", t.Name, prev)})
			continue
		}
		if _, ok := c.byName[t.Name]; ok {
			problems = append(problems, &LoadError{File: file, Line: t.nameLine,
				Msg: fmt.Sprintf("template %q is already a template of the catalog; give it another name", t.Name)})
			continue
		}
		added[t.Name] = file
		c.byName[t.Name] = t
		c.list = append(c.list, t)
	}
	sort.Slice(c.list, func(i, j int) bool { return c.list[i].Name < c.list[j].Name })
	return problems
}

// isDefinitionFile is whether file is named as a template definition: NAME.yaml or NAME.yml.
func isDefinitionFile(file string) bool {
	return !strings.HasPrefix(file, ".") && (strings.HasSuffix(file, ".yaml") || strings.HasSuffix(file, ".yml"))
}

// definitionName is the template name a definition's file gives: its name less .yaml or .yml.
func definitionName(file string) string {
	base := path.Base(file)
	if n, ok := strings.CutSuffix(base, ".yaml"); ok {
		return n
	}
	return strings.TrimSuffix(base, ".yml")
}

// forPeople is whether a file of a template directory that is no definition is there for people
// to read, or hidden (an editor's swap file), and so passed over without a word.
func forPeople(file string) bool {
	lower := strings.ToLower(file)
	return strings.HasPrefix(file, ".") || strings.HasSuffix(lower, ".md") || strings.HasSuffix(lower, ".txt") ||
		strings.HasPrefix(lower, "readme") || strings.HasPrefix(lower, "license")
}
