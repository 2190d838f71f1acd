package templates

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"hash/fnv"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"
	"time"
)

// Input is everything the lease service knows when it starts a workload from a template. The
// service fills it from the lease, the class and the team; Params come from ParseParams.
type Input struct {
	Lease string // lease id, e.g. "L-42": in the Slurm job name and comment, and Kubernetes labels
	User  string // e.g. "alice@acme.example"
	Team  string // e.g. "vision"
	Class string // e.g. "train"

	// GPUs is how many GPUs the lease holds in all. GPUsPerNode is the most one node of the class
	// holds (0: no limit). Nodes is how many nodes the lease spans (0: the template's nnodes
	// parameter decides, default 1); GPUs split evenly over them.
	GPUs        int
	GPUsPerNode int
	Nodes       int
	// PlacedNodes is how many whole nodes the service placed the lease on (0 or 1: one, or the
	// scheduler places it). A multi-node template runs on that many where nnodes is not given,
	// and on no fewer where it is; a template that runs on one node cannot take such a lease,
	// except an array, whose tasks each take one node of them.
	PlacedNodes int

	Duration time.Duration // the lease's length: Slurm --time, the Kubernetes Job's activeDeadlineSeconds

	Slurm      SlurmTarget
	Kubernetes KubernetesTarget
	Storage    Storage
	Images     Images

	// Token is the secret that an interactive workspace with connect.token asks for (Jupyter,
	// code-server, an API key). Empty: the workload makes one up and prints it to its log.
	Token string

	Params Params // the user's key=value parameters
}

// SlurmTarget is how a class maps to Slurm.
type SlurmTarget struct {
	Partition string // e.g. "train"
	GRES      string // GPU GRES without the count, e.g. "gpu:h100"
	Account   string // optional: the Slurm account (the team, where accounting is on)
	NodeList  string // where the service placed the lease, e.g. "gpu01,gpu02": becomes --nodelist
	// Instance names the installation on the cluster (its job comments' prefix): a workspace's
	// port is drawn from it and the lease id, so that two installations sharing the cluster
	// do not give their L-1s the same port.
	Instance string
	// Exclusive asks for whole nodes (--exclusive): a reservation, or a lease of an exclusive
	// class that Slurm places itself.
	Exclusive bool
	// EnforceBinding keeps the job's CPUs to those bound to its GPUs in gres.conf (Cores=), and so
	// its GPUs to the sockets of its CPUs (--gres-flags=enforce-binding): a multi-GPU lease the
	// service placed on one node. Slurm has no option to name GPU indexes; see docs/slurm.md.
	EnforceBinding bool
	// Container is how the nodes run an image: "" (the nodes' own software; the image is only
	// recorded), "apptainer", or "pyxis" (srun --container-image).
	Container string
	// RunAs is the Unix account the job runs as (the one that submits it): an SSH workspace's
	// server runs as it and, not being root, logs in only it, so its connect line names it.
	// Empty: the lease's user's name.
	RunAs string
}

// KubernetesTarget is how a class maps to Kubernetes.
type KubernetesTarget struct {
	Namespace    string            // default TeamNamespace(team)
	Resource     string            // GPU resource name, default "nvidia.com/gpu"
	NodeSelector map[string]string // from the class, e.g. {"gpu.acme/class": "train"}
	// Tolerations from the class: the taints of its nodes that its pods tolerate.
	Tolerations    []Toleration
	PreferredNodes []string // optional placement hint: preferred node names
	// Nodes pins the pods to these nodes (a required node affinity on the node name): where the
	// service placed the lease.
	Nodes []string
	// AvoidNodes keeps the pods off these nodes (a required node affinity, node name NotIn): the
	// GPU nodes the service knows, for a job that asks for no GPU.
	AvoidNodes []string
	// ExclusiveTeam keeps pods of other teams of the same class off the pods' nodes, and these
	// pods off theirs: a required pod anti-affinity by team across namespaces, so an exclusive
	// class holds wherever the scheduler places.
	ExclusiveTeam bool
	// ExclusiveLease keeps every other lease's pods off the pods' nodes: a reservation of whole
	// nodes.
	ExclusiveLease bool
	// Instance is the installation's quartermaster.io/instance label (default DefaultInstance),
	// on every object and pod and in every Service's selector: installations sharing a cluster
	// number their leases alike and share the teams' namespaces, so each one's object names begin
	// with its own instance where it is not the default ("prod-l-42-jupyterlab"; see
	// KubernetesName).
	Instance string
}

// TolerateGPUTaint is tols with a toleration of the taint named after the GPU resource
// (nvidia.com/gpu:NoSchedule, Exists), which many clusters put on their GPU pools so that only
// pods asking for GPUs land there: without it a GPU job would wait as unschedulable on such a
// pool. A class asking for another NVIDIA resource (a MIG slice, nvidia.com/mig-1g.10gb, or a
// shared GPU, nvidia.com/gpu.shared) runs on nodes of such a pool too, tainted nvidia.com/gpu all
// the same, so it tolerates that key as well. A toleration of the key for NoSchedule that tols
// has already (the class's kubernetes.tolerations) is kept as it is, with none added; one for
// another effect only (NoExecute) gets this one beside it. On a node without the taint the
// toleration changes nothing. A job that asks for no GPU gets none (it keeps off GPU pools).
func TolerateGPUTaint(tols []Toleration, resource string) []Toleration {
	out := append([]Toleration(nil), tols...)
	keys := []string{resource}
	if resource != DefaultGPUResource && strings.HasPrefix(resource, "nvidia.com/") {
		keys = append(keys, DefaultGPUResource)
	}
	for _, key := range keys {
		tolerated := false
		for _, t := range out {
			noSchedule := t.Effect == "" || t.Effect == "NoSchedule"
			if noSchedule && (t.Key == key || (t.Key == "" && t.Operator == "Exists")) {
				tolerated = true
			}
		}
		if !tolerated {
			out = append(out, Toleration{Key: key, Operator: "Exists", Effect: "NoSchedule"})
		}
	}
	return out
}

// Toleration is a pod's toleration of a node taint, as the policy's class lists it: an empty
// operator is Kubernetes's Equal, an empty effect every effect. The manifest writes it as JSON,
// leaving out what is empty.
type Toleration struct {
	Key      string `json:"key,omitempty"`
	Operator string `json:"operator,omitempty"`
	Value    string `json:"value,omitempty"`
	Effect   string `json:"effect,omitempty"`
}

// Storage is the team's storage grant: the only thing mounted besides the image.
type Storage struct {
	Path string // e.g. "/projects/vision": mounted at the same path on both backends
	PVC  string // the team namespace's PersistentVolumeClaim, default "team-storage"
}

// Images are the layers of the image choice; the most specific one given wins: Project, then
// Team, then the template's own image, then Base, then the catalog's base image
// (CUDA 12.4 / PyTorch 2.3 / NCCL 2.21 / Python 3.11).
type Images struct {
	Base, Team, Project string
}

// Rendered is one template rendered for one lease, for both backends.
type Rendered struct {
	Name      string // Slurm job name, e.g. "qm-l-42-pytorch-ddp"; the Kubernetes objects are KubernetesName's
	Namespace string // Kubernetes namespace
	Image     string // the image chosen from the layers

	// SlurmScript is the batch script for sbatch. Slurm writes its output under JobDir, which
	// must exist before submission (sbatch does not create it).
	SlurmScript string
	// KubernetesYAML is the manifest: a Job (for interactive workspaces too, whose deadline can
	// then be raised when a lease is extended), with a Service where something listens or nodes
	// rendezvous; documents separated by "---".
	KubernetesYAML string

	JobDir string // team-storage directory for this lease's logs and checkpoints
	// Mounts are the team-storage directories mounted for the template's path parameters.
	Mounts      []string
	Nodes       int
	GPUsPerNode int
	Tasks       int // array tasks (Slurm --array, Kubernetes Indexed Job); 0 when not an array

	// How to reach an interactive workspace on each backend; nil for batch templates.
	SlurmConnect, KubernetesConnect *Connect
}

// Connect is how a user reaches an interactive workspace.
type Connect struct {
	Protocol string // "http" or "ssh"
	Host     string // Kubernetes: the Service's DNS name; Slurm: empty until the job has a node
	Port     int
	Path     string // http path, e.g. "/lab"
	Token    bool   // the server wants the lease's token (Input.Token)
	// TokenParam is the URL query parameter that carries the token ("token" for Jupyter); empty
	// when the token is given another way (an API key header, a login form).
	TokenParam string
	User       string // ssh login name
}

// Address is what to tell the user: a URL for http ("http://HOST:PORT/lab?token=TOKEN") or a
// command for ssh ("ssh -p PORT USER@HOST"). host "" uses c.Host.
func (c Connect) Address(host, token string) string {
	if host == "" {
		host = c.Host
	}
	if c.Protocol == "ssh" {
		return fmt.Sprintf("ssh -p %d %s@%s", c.Port, c.User, host)
	}
	u := fmt.Sprintf("http://%s:%d%s", host, c.Port, c.Path)
	if c.TokenParam != "" && token != "" {
		u += "?" + c.TokenParam + "=" + token
	}
	return u
}

// Defaults for Input fields left empty.
const (
	DefaultGPUResource = "nvidia.com/gpu"
	DefaultPVC         = "team-storage"
	// DefaultInstance names an installation that names none: its quartermaster.io/instance label
	// on Kubernetes, and the prefix of its Slurm job comments (SlurmComment).
	DefaultInstance    = "qm"
	DefaultGracePeriod = 30 // seconds between SIGTERM and SIGKILL on Kubernetes
	maxDuration        = 366 * 24 * time.Hour
)

var (
	leaseRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]{0,38}[A-Za-z0-9])?$`)
	// teamRE is a team or class name as the policy writes it (lower case, digits, - and _), that
	// also makes a Kubernetes label value: it begins and ends with a letter or digit.
	teamRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9_-]{0,38}[a-z0-9])?$`)
	// userRE is a login or an e-mail address, up to the 254 characters an address may have: the
	// characters an address may hold unquoted, letters, marks and digits of any script included
	// (an internationalised address, jürgen.müller@…), none that ends a line or a word and no
	// invisible formatting character. The script quotes it (shq) and the manifest writes it with
	// json.
	userRE     = regexp.MustCompile("^[\\p{L}\\p{M}\\p{N}A-Za-z0-9.!#$%&'*+/=?^_`{|}~@-]{1,254}$")
	nodeListRE = regexp.MustCompile(`^[A-Za-z0-9_.,\[\]-]+$`)
	dnsLabelRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
	dnsSubRE   = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$`)
	tokenRE    = regexp.MustCompile(`^[A-Za-z0-9_-]{0,128}$`)
	sshUserRE  = regexp.MustCompile(`^[a-z_][a-z0-9_.-]{0,31}$`)
)

// TeamNamespace is a team's Kubernetes namespace: "qm-" + team where that is a DNS label. A
// team name that is not one that way (the policy allows "_" in names, which DNS labels do not)
// has each such character written as "-" and a hash of the whole name appended, so that two teams
// whose names differ only there (ml_research and ml-research) never share a namespace, nor the
// storage claim in it: ml_research's is qm-ml-research-HHHHHHHH.
func TeamNamespace(team string) string {
	if ns := "qm-" + team; len(ns) <= 63 && dnsLabelRE.MatchString(ns) {
		return ns
	}
	var b strings.Builder
	for _, r := range strings.ToLower(team) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-")
	if len(name) > 40 {
		name = strings.TrimRight(name[:40], "-")
	}
	h := fnv.New32a()
	h.Write([]byte(team))
	if name == "" {
		return fmt.Sprintf("qm-%08x", h.Sum32())
	}
	return fmt.Sprintf("qm-%s-%08x", name, h.Sum32())
}

// IsKubernetesNodeName reports whether s can name a Kubernetes node (a DNS subdomain). Slurm
// allows node names that Kubernetes does not, so a lease placed on such a node renders without
// that placement for Kubernetes.
func IsKubernetesNodeName(s string) bool { return len(s) <= 253 && dnsSubRE.MatchString(s) }

// Render renders the template for one lease: the Slurm script and the Kubernetes manifest from
// the same definition and values. Problems with the user's parameters, or a lease that does not
// fit the template (too few GPUs, nodes that do not match), are *qm.Error (qm.EINVALID); an Input that the
// service filled wrongly is a plain error.
func (t *Template) Render(in Input) (Rendered, error) {
	in, err := t.normalize(in)
	if err != nil {
		return Rendered{}, err
	}
	slurm, err := t.render(in, "slurm")
	if err != nil {
		return Rendered{}, err
	}
	kube, err := t.render(in, "kubernetes")
	if err != nil {
		return Rendered{}, err
	}
	out := Rendered{
		Name:           slurm.Name,
		Namespace:      in.Kubernetes.Namespace,
		Image:          slurm.Image,
		SlurmScript:    slurm.text,
		KubernetesYAML: kube.text,
		JobDir:         slurm.JobDir,
		Nodes:          slurm.Nodes,
		GPUsPerNode:    slurm.GPUsPerNode,
	}
	if slurm.Array != nil {
		out.Tasks = slurm.Array.Count
	}
	for _, m := range slurm.Mounts {
		out.Mounts = append(out.Mounts, m.Source)
	}
	if slurm.Connect != nil {
		sc, kc := *slurm.Connect, *kube.Connect
		kc.Host = fmt.Sprintf("%s.%s.svc", kube.Name, kube.Kubernetes.Namespace)
		out.SlurmConnect, out.KubernetesConnect = &sc, &kc
	}
	return out, nil
}

// normalize fills defaults and checks what the service passed.
func (t *Template) normalize(in Input) (Input, error) {
	bad := func(format string, args ...any) (Input, error) {
		return in, fmt.Errorf("templates: render %s: "+format, append([]any{t.Name}, args...)...)
	}
	if in.Kubernetes.Namespace == "" && teamRE.MatchString(in.Team) {
		in.Kubernetes.Namespace = TeamNamespace(in.Team)
	}
	if in.Kubernetes.Resource == "" {
		in.Kubernetes.Resource = DefaultGPUResource
	}
	if in.Kubernetes.Instance == "" {
		in.Kubernetes.Instance = DefaultInstance
	}
	if in.Slurm.Instance == "" {
		// As the Slurm backend submits it: the job's comment, and the port drawn from it, are
		// the default installation's.
		in.Slurm.Instance = DefaultInstance
	}
	if in.Storage.PVC == "" {
		in.Storage.PVC = DefaultPVC
	}
	in.Storage.Path = strings.TrimSuffix(in.Storage.Path, "/")
	switch {
	case !leaseRE.MatchString(in.Lease):
		return bad("lease id %q must be 1-40 letters, digits and . _ -", in.Lease)
	case !teamRE.MatchString(in.Team):
		return bad("team %q must be lower-case letters, digits, - and _, beginning and ending with a letter or digit", in.Team)
	case !userRE.MatchString(in.User):
		return bad("user %q must be a login or e-mail address", in.User)
	case !teamRE.MatchString(in.Class):
		return bad("class %q must be lower-case letters, digits, - and _, beginning and ending with a letter or digit", in.Class)
	case in.GPUs < 0 || in.GPUsPerNode < 0 || in.Nodes < 0 || in.PlacedNodes < 0 || in.GPUs > 4096 || in.Nodes > 512 || in.PlacedNodes > 512:
		return bad("GPUs, GPUs per node and nodes must be small non-negative numbers")
	case in.Duration <= 0 || in.Duration > maxDuration:
		return bad("duration %s must be positive and at most a year", in.Duration)
	case !policy.IsSlurmWord(in.Slurm.Partition):
		return bad("Slurm partition %q is not a partition name", in.Slurm.Partition)
	case t.GPUs > 0 && !policy.IsGRES(in.Slurm.GRES):
		return bad("Slurm GRES %q must look like gpu:h100", in.Slurm.GRES)
	case in.Slurm.Account != "" && !policy.IsSlurmWord(in.Slurm.Account):
		return bad("Slurm account %q is not an account name", in.Slurm.Account)
	case in.Slurm.NodeList != "" && !nodeListRE.MatchString(in.Slurm.NodeList):
		return bad("Slurm node list %q is not a host list", in.Slurm.NodeList)
	case in.Slurm.Container != "" && in.Slurm.Container != "apptainer" && in.Slurm.Container != "pyxis":
		return bad("Slurm container %q must be empty, apptainer or pyxis", in.Slurm.Container)
	case !dnsLabelRE.MatchString(in.Kubernetes.Namespace):
		return bad("namespace %q is not a DNS label", in.Kubernetes.Namespace)
	case !policy.IsResourceName(in.Kubernetes.Resource):
		return bad("GPU resource %q must look like nvidia.com/gpu", in.Kubernetes.Resource)
	case !policy.IsStoragePath(in.Storage.Path) || in.Storage.Path == "" || strings.Contains(in.Storage.Path+"/", "/../") || strings.Contains(in.Storage.Path, "//"):
		return bad("storage path %q must be an absolute path of letters, digits and . _ - + /", in.Storage.Path)
	case !policy.IsPVCName(in.Storage.PVC):
		return bad("PVC %q is not a Kubernetes name", in.Storage.PVC)
	case !tokenRE.MatchString(in.Token):
		return bad("token must be letters, digits, - and _")
	}
	for k, v := range in.Kubernetes.NodeSelector {
		if !policy.IsLabelKey(k) || !policy.IsLabelValue(v) {
			return bad("node selector %s=%s is not a Kubernetes label", k, v)
		}
	}
	if !policy.IsLabelValue(in.Kubernetes.Instance) {
		return bad("instance %q is not a Kubernetes label value", in.Kubernetes.Instance)
	}
	for _, tol := range in.Kubernetes.Tolerations {
		if msg := policy.TolerationProblem(policy.Toleration(tol)); msg != "" {
			return bad("toleration %+v: %s", tol, msg)
		}
	}
	if !t.CPUOnly() {
		in.Kubernetes.Tolerations = TolerateGPUTaint(in.Kubernetes.Tolerations, in.Kubernetes.Resource)
	}
	for _, n := range in.Kubernetes.PreferredNodes {
		if !dnsSubRE.MatchString(n) {
			return bad("preferred node %q is not a node name", n)
		}
	}
	for _, n := range in.Kubernetes.Nodes {
		if !IsKubernetesNodeName(n) {
			return bad("node %q is not a node name", n)
		}
	}
	for _, n := range in.Kubernetes.AvoidNodes {
		if !IsKubernetesNodeName(n) {
			return bad("node %q is not a node name", n)
		}
	}
	for _, img := range []string{in.Images.Base, in.Images.Team, in.Images.Project} {
		if img != "" && !imageRE.MatchString(img) {
			return bad("image %q is not an image reference", img)
		}
	}
	return in, nil
}

// view is what layouts and bodies see: {{.P.epochs}}, {{.Nodes}}, {{.Backend}} and so on.
type view struct {
	Backend       string // "slurm" or "kubernetes"
	Template      *Template
	Name          string
	Lease         string
	User          string
	Team          string
	Class         string
	Nodes         int
	GPUsPerNode   int
	GPUs          int // GPUs the workload uses in all (nodes x GPUs per node, or per task x parallel)
	CPUs          int // per node
	MemoryGiB     int // per node
	ShmGiB        int
	Duration      time.Duration
	Slurm         SlurmTarget
	Kubernetes    KubernetesTarget
	Storage       Storage
	JobDir        string
	Image         string
	Token         string
	NeedsToken    bool
	MasterPort    int
	Connect       *Connect
	Ports         []portView
	Mounts        []mountView
	Array         *arrayView
	LeaderEndsJob bool
	GracePeriod   int
	P             map[string]any // parameter values: int, bool, string or time.Duration

	Setup      string
	Run        string
	Directives []string

	text string // the rendered layout
}

type portView struct {
	Name string
	Port int
}

type mountView struct {
	Env      string
	At       string
	Source   string // absolute path in the team storage
	SubPath  string // the same, relative to the storage root
	ReadOnly bool
}

type arrayView struct {
	Count    int
	Parallel int
}

// render renders one backend. Render has normalized in; the loader calls it with ExampleInput.
func (t *Template) render(in Input, backend string) (*view, error) {
	vals, err := t.values(in.Params)
	if err != nil {
		return nil, err
	}
	v := &view{
		Backend:       backend,
		Template:      t,
		Name:          objectName("qm", in.Lease, t.Name),
		Lease:         in.Lease,
		User:          in.User,
		Team:          in.Team,
		Class:         in.Class,
		Duration:      in.Duration,
		Slurm:         in.Slurm,
		Kubernetes:    in.Kubernetes,
		Storage:       in.Storage,
		JobDir:        in.Storage.Path + "/.quartermaster/" + in.Lease,
		Image:         t.image(in.Images),
		Token:         in.Token,
		MasterPort:    t.catalog.defaults.MasterPort,
		LeaderEndsJob: t.LeaderEndsJob,
		GracePeriod:   DefaultGracePeriod,
		ShmGiB:        t.shm,
		P:             vals,
	}
	if backend == "kubernetes" {
		v.Name = KubernetesName(in.Kubernetes.Instance, in.Lease, t.Name)
	}
	if err := t.topology(in, vals, v); err != nil {
		return nil, err
	}
	for _, p := range t.Parameters {
		s, ok := vals[p.Name].(string)
		if !ok || p.Type != TypePath || !strings.HasPrefix(s, "/") {
			continue
		}
		if !strings.HasPrefix(s+"/", in.Storage.Path+"/") {
			return nil, inputErr(t.exampleFor(&p), "%s must be inside the team storage %s, not %s", p.Name, in.Storage.Path, clip(s))
		}
		// The workload sees every path relative to the storage root, where it runs: an absolute
		// one inside the storage names the same file as its relative form, and a body that
		// writes "$QM_DATA/"{{shq .P.x}} never gets the storage root twice.
		if vals[p.Name] = strings.TrimLeft(strings.TrimPrefix(s, in.Storage.Path), "/"); vals[p.Name] == "" {
			vals[p.Name] = "."
		}
	}
	for _, m := range t.def.Mounts {
		rel := vals[m.Parameter].(string)
		if strings.HasPrefix(rel, "/") {
			rel = strings.TrimPrefix(strings.TrimPrefix(rel, in.Storage.Path), "/")
		}
		rel = path.Clean(rel)
		if rel == "." {
			p := t.param(m.Parameter)
			return nil, inputErr(t.exampleFor(p), "%s must name a directory inside the team storage, not its root", p.Name)
		}
		v.Mounts = append(v.Mounts, mountView{Env: m.Env, At: m.At, Source: in.Storage.Path + "/" + rel, SubPath: rel, ReadOnly: m.ReadOnly})
	}
	if t.Connect != nil {
		c := *t.Connect
		if backend == "slurm" {
			c.Port = t.slurmPort(in.Slurm.Instance, in.Lease)
		}
		if c.Protocol == "ssh" {
			c.User = sshUser(in.User)
			if backend == "slurm" && sshUserRE.MatchString(in.Slurm.RunAs) {
				c.User = in.Slurm.RunAs
			}
		}
		v.Connect = &c
		v.NeedsToken = c.Token
		if backend == "kubernetes" {
			v.Ports = t.ports
		} else {
			v.Ports = []portView{{Name: c.Protocol, Port: c.Port}}
		}
	}

	exec := func(name string) (string, error) {
		var b bytes.Buffer
		if err := t.tmpl.ExecuteTemplate(&b, name, v); err != nil {
			var ie *qm.Error
			if errors.As(err, &ie) {
				return "", ie
			}
			return "", tmplErr(t.File, t.lines[name], err)
		}
		return strings.TrimSpace(b.String()), nil
	}
	for i, ch := range t.def.Checks {
		out, err := exec(fmt.Sprintf("checks.%d", i))
		if err != nil {
			return nil, err
		}
		switch out {
		case "true":
			return nil, inputErr(t.Example(), "%s", strings.TrimSpace(ch.Message))
		case "false":
		default:
			return nil, &LoadError{File: t.File, Line: t.lines[fmt.Sprintf("checks.%d", i)], Msg: fmt.Sprintf("check renders %q, not true or false", clip(out))}
		}
	}
	var setups []string
	for _, name := range []string{"setup", backend + ".setup"} {
		s, err := exec(name)
		if err != nil {
			return nil, err
		}
		if s != "" {
			setups = append(setups, s)
		}
	}
	v.Setup = strings.Join(setups, "\n\n")
	if v.Run, err = exec("run"); err != nil {
		return nil, err
	}
	if backend == "slurm" {
		for i := range t.def.Slurm.Directives {
			d, err := exec(fmt.Sprintf("slurm.directives.%d", i))
			if err != nil {
				return nil, err
			}
			if d != "" {
				v.Directives = append(v.Directives, d)
			}
		}
	} else if t.def.Kubernetes.GracePeriod != "" {
		name := "kubernetes.termination_grace_seconds"
		s, err := exec(name)
		if err != nil {
			return nil, err
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > 86400 {
			return nil, &LoadError{File: t.File, Line: t.lines[name], Msg: fmt.Sprintf("termination_grace_seconds renders %q, not seconds", clip(s))}
		}
		v.GracePeriod = n
	}

	layout, file := t.catalog.slurm, layoutSlurm
	if backend == "kubernetes" {
		layout, file = t.catalog.kube, layoutKubernetes
	}
	var b bytes.Buffer
	if err := layout.Execute(&b, v); err != nil {
		return nil, tmplErr(file, 1, err)
	}
	v.text = strings.TrimLeft(b.String(), "\n")
	if !strings.HasSuffix(v.text, "\n") {
		v.text += "\n"
	}
	return v, nil
}

// topology works out nodes, GPUs per node and array tasks from the lease and the parameters.
func (t *Template) topology(in Input, vals map[string]any, v *view) error {
	nodes := 1
	if t.MultiNode {
		nodes = vals[paramNodes].(int)
		_, given := in.Params[paramNodes]
		if in.Nodes > 0 {
			if given && nodes != in.Nodes {
				return inputErr(t.command(fmt.Sprintf("%s=%d", paramNodes, in.Nodes)), "%s=%d does not match the lease, which spans %d nodes", paramNodes, nodes, in.Nodes)
			}
			nodes = in.Nodes
		} else if p := in.PlacedNodes; p > 1 {
			if given && nodes < p {
				return inputErr(t.command(fmt.Sprintf("%s=%d", paramNodes, p)), "%s=%d is fewer than the %d whole nodes the lease holds", paramNodes, nodes, p)
			}
			if !given {
				nodes = p
			}
		}
	} else if n := max(in.Nodes, in.PlacedNodes); n > 1 && t.def.Array == nil {
		// An array's tasks each run on one node, anywhere among the lease's nodes.
		if in.GPUsPerNode > 0 && in.GPUs > in.GPUsPerNode {
			return inputErr(t.Example(), "%s runs on one node, and a node of class %s holds %s, fewer than the lease's %d", t.Name, in.Class, qm.GPUCount(in.GPUsPerNode, ""), in.GPUs)
		}
		return inputErr(t.Example(), "%s runs on one node, but the lease spans %d nodes", t.Name, n)
	}
	v.Nodes = nodes
	if t.GPUs == 0 {
		v.CPUs, v.MemoryGiB = t.cpus, t.mem
		return nil
	}
	if in.GPUs == 0 {
		return inputErr(t.Example(), "%s needs GPUs, but the lease holds none", t.Name)
	}
	if a := t.def.Array; a != nil {
		count, per := vals[a.Count].(int), vals[a.GPUsPerTask].(int)
		switch {
		case per > in.GPUs:
			return inputErr(t.command(fmt.Sprintf("%s=%d", a.GPUsPerTask, in.GPUs)), "%s=%d is more than the lease's %s", a.GPUsPerTask, per, qm.GPUCount(in.GPUs, ""))
		case in.GPUsPerNode > 0 && per > in.GPUsPerNode:
			return inputErr(t.command(fmt.Sprintf("%s=%d", a.GPUsPerTask, in.GPUsPerNode)), "%s=%d is more than a node of class %s holds (%d)", a.GPUsPerTask, per, in.Class, in.GPUsPerNode)
		case per < t.MinGPUs || per > t.MaxGPUs:
			return inputErr(t.exampleFor(t.param(a.GPUsPerTask)), "%s=%d is out of range for %s: it must be between %d and %d", a.GPUsPerTask, per, t.Name, t.MinGPUs, t.MaxGPUs)
		}
		v.GPUsPerNode = per
		v.Array = &arrayView{Count: count, Parallel: min(count, in.GPUs/per)}
		v.GPUs = per * v.Array.Parallel
		v.CPUs, v.MemoryGiB = per*t.cpusPerGPU, per*t.memPerGPU
		return nil
	}
	if in.GPUs%nodes != 0 {
		if in.GPUs == 1 {
			return inputErr(t.Example(), "the lease's 1 GPU does not split evenly over %d nodes", nodes)
		}
		return inputErr(t.Example(), "the lease's %d GPUs do not split evenly over %d nodes", in.GPUs, nodes)
	}
	per := in.GPUs / nodes
	switch {
	case in.GPUsPerNode > 0 && per > in.GPUsPerNode:
		need := (in.GPUs + in.GPUsPerNode - 1) / in.GPUsPerNode
		if t.MultiNode {
			return inputErr(t.command(fmt.Sprintf("%s=%d", paramNodes, need)), "%d GPUs per node is more than a node of class %s holds (%d); spread the lease over more nodes", per, in.Class, in.GPUsPerNode)
		}
		return inputErr(t.Example(), "%s runs on one node, and a node of class %s holds %s, fewer than the lease's %d", t.Name, in.Class, qm.GPUCount(in.GPUsPerNode, ""), in.GPUs)
	case per < t.MinGPUs:
		return inputErr(t.Example(), "%s needs at least %s per node, but the lease gives it %d", t.Name, qm.GPUCount(t.MinGPUs, ""), per)
	case per > t.MaxGPUs:
		return inputErr(t.Example(), "%s uses at most %d GPUs per node, but the lease gives it %d", t.Name, t.MaxGPUs, per)
	}
	v.GPUsPerNode, v.GPUs = per, in.GPUs
	v.CPUs, v.MemoryGiB = per*t.cpusPerGPU, per*t.memPerGPU
	return nil
}

// image picks the most specific image given.
func (t *Template) image(l Images) string {
	for _, img := range []string{l.Project, l.Team, t.Image, l.Base} {
		if img != "" {
			return img
		}
	}
	return t.catalog.defaults.BaseImage.Ref
}

// BaseImage is the catalog's base image and its description
// ("CUDA 12.4 / PyTorch 2.3 / NCCL 2.21 / Python 3.11").
func (c *Catalog) BaseImage() (ref, description string) {
	return c.defaults.BaseImage.Ref, c.defaults.BaseImage.Description
}

// slurmPort is the port an interactive server listens on under Slurm: derived from the lease, so
// workspaces sharing a node do not collide and the service knows it without asking the job.
func (t *Template) slurmPort(instance, lease string) int {
	r := t.catalog.defaults.SlurmPortRange
	h := fnv.New32a()
	if instance != "" {
		h.Write([]byte(instance + ":"))
	}
	h.Write([]byte(lease))
	return r[0] + int(h.Sum32()%uint32(r[1]-r[0]+1))
}

// objectName is a DNS label that carries the lease id: prefix + "-" + lease + "-" + template,
// lower case.
func objectName(prefix, lease, tmpl string) string {
	var b strings.Builder
	b.WriteString(prefix + "-")
	for _, r := range strings.ToLower(lease) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	b.WriteString("-" + tmpl)
	// 63 is the DNS label limit; Indexed Job pods append "-<index>-<suffix>", so stay well below.
	name := b.String()
	if len(name) > 52 {
		name = name[:52]
	}
	return strings.TrimRight(name, "-")
}

// SlurmComment is the comment a lease's Slurm job carries, which the Slurm backend submits it with
// and knows its jobs by: the installation's instance and the lease id, "qm:L-42" (instance ""
// is the default, DefaultInstance).
func SlurmComment(instance, lease string) string {
	if instance == "" {
		instance = DefaultInstance
	}
	return instance + ":" + lease
}

// KubernetesName is the name of a lease's Job and Service: "qm-l-42-jupyterlab" for the default
// installation (instance "" or "qm"), and for another one its instance in place of "qm"
// ("prod-l-42-jupyterlab"), so that installations sharing a cluster, whose leases are numbered
// alike, never take each other's objects. An instance that is not a short DNS label as it is
// (upper case, "_" or ".", over 20 characters) is written that way and followed by a hash of
// it, "staging-2-cc326dcb" for Staging_2, so that two instances never share a prefix; one that
// begins with a digit, which a Service's name cannot, is written after "qm-" ("qm-2026-prod-HHHHHHHH").
func KubernetesName(instance, lease, tmpl string) string {
	if instance == "" || instance == DefaultInstance {
		return objectName("qm", lease, tmpl)
	}
	var b strings.Builder
	for _, r := range instance {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else if r >= 'A' && r <= 'Z' {
			b.WriteRune(r - 'A' + 'a')
		} else {
			b.WriteByte('-')
		}
	}
	prefix := strings.Trim(b.String(), "-")
	if len(prefix) > 20 {
		prefix = strings.TrimRight(prefix[:20], "-")
	}
	if prefix != "" && (prefix[0] < 'a' || prefix[0] > 'z') {
		// A Service's name begins with a letter.
		prefix = "qm-" + prefix
	}
	if prefix != instance {
		h := fnv.New32a()
		h.Write([]byte(instance))
		if prefix == "" {
			prefix = "qm"
		}
		prefix = fmt.Sprintf("%s-%08x", prefix, h.Sum32())
	}
	return objectName(prefix, lease, tmpl)
}

func sshUser(user string) string {
	u, _, _ := strings.Cut(user, "@")
	u = strings.ToLower(u)
	if !sshUserRE.MatchString(u) {
		return "user"
	}
	return u
}

// funcs are the helpers layouts and bodies may call. include needs the template set it runs in.
func funcs(set *template.Template) template.FuncMap {
	return template.FuncMap{
		"shq":          shellQuote,
		"json":         jsonString,
		"indent":       indent,
		"seconds":      func(d time.Duration) int64 { return int64((d + time.Second - 1) / time.Second) },
		"minutes":      func(d time.Duration) int64 { return int64((d + time.Minute - 1) / time.Minute) },
		"slurmTime":    slurmTime,
		"slurmComment": SlurmComment,
		"add":          func(a, b int) int { return a + b },
		"sub":          func(a, b int) int { return a - b },
		"mul":          func(a, b int) int { return a * b },
		"ro": func(ro bool) string {
			if ro {
				return ":ro"
			}
			return ""
		},
		"enroot":      enrootImage,
		"pyxisMounts": pyxisMounts,
		"include": func(name string, data any) (string, error) {
			var b bytes.Buffer
			err := set.ExecuteTemplate(&b, name, data)
			return b.String(), err
		},
	}
}

var shellSafeRE = regexp.MustCompile(`^[A-Za-z0-9_./+=:@%,-]+$`)

// shellQuote makes any value one shell word that expands to exactly itself.
func shellQuote(v any) string {
	s := fmt.Sprint(v)
	if shellSafeRE.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// jsonString writes v as a JSON value, which YAML reads as the same scalar.
func jsonString(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// indent indents every non-empty line of s by n spaces.
func indent(n int, s string) string {
	pad := strings.Repeat(" ", n)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = pad + l
		}
	}
	return strings.Join(lines, "\n")
}

// slurmTime writes d for --time, rounded up to a whole minute: "D-HH:MM:SS" or "HH:MM:SS".
func slurmTime(d time.Duration) string {
	m := int64((d + time.Minute - 1) / time.Minute)
	days, h, mins := m/(24*60), (m/60)%24, m%60
	if days > 0 {
		return fmt.Sprintf("%d-%02d:%02d:00", days, h, mins)
	}
	return fmt.Sprintf("%02d:%02d:00", h, mins)
}

// enrootImage writes an image reference the way Pyxis/enroot read it: "registry#repo:tag".
func enrootImage(ref string) string {
	first, rest, ok := strings.Cut(ref, "/")
	if ok && (strings.ContainsAny(first, ".:") || first == "localhost") {
		return first + "#" + rest
	}
	return ref
}

func pyxisMounts(v *view) string {
	mounts := []string{v.Storage.Path + ":" + v.Storage.Path}
	for _, m := range v.Mounts {
		s := m.Source + ":" + m.At
		if m.ReadOnly {
			s += ":ro"
		}
		mounts = append(mounts, s)
	}
	return strings.Join(mounts, ",")
}

// exampleClasses are the classes of the example policy (docs/quartermaster.example.yaml), for
// rendering without a lease.
var exampleClasses = map[string]struct {
	partition, gres string
	gpusPerNode     int
}{
	"interactive": {"interactive", "gpu:l40s", 4},
	"train":       {"train", "gpu:h100", 8},
}

// ExampleClasses names the classes ExampleInput knows.
func ExampleClasses() []string {
	names := make([]string, 0, len(exampleClasses))
	for n := range exampleClasses {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ExampleInput is a lease as the example policy would grant it, for showing a template without
// one: lease L-42 for alice@acme.example of team vision, 4 hours, on class ("" picks interactive
// for interactive templates and train for batch ones), with the template's default GPUs on each
// of the nodes its parameters ask for. An unknown class is treated as train.
func ExampleInput(t *Template, class string, params Params) Input {
	if class == "" {
		class = "train"
		if t.Kind == KindInteractive {
			class = "interactive"
		}
	}
	c, ok := exampleClasses[class]
	if !ok {
		c = exampleClasses["train"]
	}
	nodes := 1
	if t.MultiNode {
		if n, err := strconv.Atoi(params[paramNodes]); err == nil && n > 0 && n <= 512 {
			nodes = n
		}
	}
	gpus := min(t.GPUs, c.gpusPerNode) * nodes
	if a := t.def.Array; a != nil {
		if p := t.param(a.GPUsPerTask); p != nil {
			per, err := strconv.Atoi(params[a.GPUsPerTask])
			if err != nil {
				per, _ = strconv.Atoi(p.Default)
			}
			gpus = max(gpus, min(per, c.gpusPerNode))
		}
	}
	return Input{
		Lease:       "L-42",
		User:        "alice@acme.example",
		Team:        "vision",
		Class:       class,
		GPUs:        gpus,
		GPUsPerNode: c.gpusPerNode,
		Duration:    4 * time.Hour,
		Slurm:       SlurmTarget{Partition: c.partition, GRES: c.gres, Account: "vision"},
		Kubernetes: KubernetesTarget{
			Namespace:    "qm-vision",
			Resource:     DefaultGPUResource,
			NodeSelector: map[string]string{"gpu.acme/class": class},
		},
		Storage: Storage{Path: "/projects/vision", PVC: DefaultPVC},
		Token:   "example-token",
		Params:  params,
	}
}
