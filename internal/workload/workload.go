// Package workload turns a lease into what a scheduler backend runs for it: the lease's template
// (or the default workspace for a lease that names none), its parameters, and the
// templates.Input built from the lease, its class and its team, rendered for Slurm and
// Kubernetes. The Slurm and Kubernetes backends share it, so one lease renders the same way on
// either.
package workload

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/templates"
)

// Defaults for Settings left empty.
const (
	// DefaultTemplate is what a lease that names no template runs: an SSH server on its GPUs,
	// the most general interactive workspace (a terminal, scp, an IDE's remote mode).
	DefaultTemplate = "ssh-shell"
	// DefaultStorageRoot holds ROOT/TEAM for teams the policy gives no storage path.
	DefaultStorageRoot = "/scratch/quartermaster"
)

// Settings are the install's choices that the policy does not make.
type Settings struct {
	// DefaultTemplate runs for leases that name none; empty means DefaultTemplate.
	DefaultTemplate string
	// StorageRoot is where a team without a storage path in the policy keeps its files
	// (StorageRoot/TEAM); empty means DefaultStorageRoot.
	StorageRoot string
	// Account passes the team as the Slurm account; only where Slurm accounting is on.
	Account bool
	// Container is how Slurm nodes run an image: "", "apptainer" or "pyxis".
	Container string
	// BaseImage replaces the catalog's base image where set.
	BaseImage string
	// Instance names the installation on a shared Slurm cluster (templates.SlurmTarget.Instance).
	Instance string
	// RunAs is the Unix account Slurm jobs run as (templates.SlurmTarget.RunAs).
	RunAs string
	// KubernetesInstance is the installation's quartermaster.io/instance label on a Kubernetes
	// cluster (templates.KubernetesTarget.Instance): it names the objects of its leases.
	KubernetesInstance string
	// NodeSize is the most GPUs a node of a class holds (0: not known), from the scheduler's
	// inventory; nil where it is not known. Where known, a template never puts more on a node,
	// and a lease the service has not placed yet that is larger than a node renders on the whole
	// nodes it will be placed on.
	NodeSize func(class string) int
	// GPUNodes are the nodes with GPUs the scheduler's inventory knows, of every class (GPUNodes
	// makes them of an inventory); nil where it is not known. A CPU-only job's pods keep off them
	// on Kubernetes.
	GPUNodes func() []string
}

// GPUNodes are the names of the nodes of inv that hold GPUs, each once, sorted.
func GPUNodes(inv []qm.Node) []string {
	var out []string
	for _, n := range inv {
		if n.GPUs > 0 {
			out = append(out, n.Name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Workload is a lease's workload, rendered.
type Workload struct {
	Template *templates.Template
	Input    templates.Input
	templates.Rendered
	// Paths are the storage the workload reaches, checked to be its team's (CheckGrant).
	Paths Paths
}

// Render builds the lease's workload. Errors that the lease's own template or parameters cause
// are qm.EINVALID errors (templates.IsInvalid) and read as one sentence; others are the install's to fix.
func Render(cat *templates.Catalog, p *policy.Policy, l *qm.Lease, s Settings) (*Workload, error) {
	name := l.Template
	if name == "" {
		name = s.DefaultTemplate
		if name == "" {
			name = DefaultTemplate
		}
	}
	t, err := cat.Get(name)
	if err != nil {
		return nil, err
	}
	in, err := InputFor(p, l, s)
	if err != nil {
		return nil, err
	}
	if t.Connect != nil && t.Connect.Token {
		if in.Token, err = NewToken(); err != nil {
			return nil, err
		}
	}
	if len(l.Params) > 0 {
		words := make([]string, 0, len(l.Params))
		for k, v := range l.Params {
			words = append(words, k+"="+v)
		}
		if in.Params, err = t.ParseParams(words); err != nil {
			return nil, err
		}
	}
	r, err := t.Render(in)
	if err != nil {
		return nil, err
	}
	w := &Workload{Template: t, Input: in, Rendered: r}
	if w.Paths, err = CheckGrant(p, w); err != nil {
		return nil, err
	}
	return w, nil
}

// InputFor is the templates.Input of a lease: its id, user, team, class mapping, GPUs,
// duration and the team's storage. Params and Token are left to the caller.
func InputFor(p *policy.Policy, l *qm.Lease, s Settings) (templates.Input, error) {
	c, ok := p.Class(l.Class)
	if !ok {
		return templates.Input{}, fmt.Errorf("workload: lease %s has class %q, which the policy does not have", l.ID, l.Class)
	}
	in := templates.Input{
		Lease:    l.ID.String(),
		User:     l.User,
		Team:     l.Team,
		Class:    c.Name,
		GPUs:     l.GPUs,
		Duration: l.Duration,
		Slurm: templates.SlurmTarget{
			Partition: c.Slurm.Partition,
			GRES:      c.Slurm.GRES,
			Container: s.Container,
			Instance:  s.Instance,
			RunAs:     s.RunAs,
		},
		Kubernetes: templates.KubernetesTarget{
			Resource:     c.Kubernetes.Resource,
			NodeSelector: c.Kubernetes.NodeSelector,
			Instance:     s.KubernetesInstance,
		},
		Images: templates.Images{Base: s.BaseImage},
	}
	for _, t := range c.Kubernetes.Tolerations {
		in.Kubernetes.Tolerations = append(in.Kubernetes.Tolerations, templates.Toleration(t))
	}
	if l.CPUOnly() {
		keepOffGPUNodes(&in, s)
	}
	if in.Slurm.Partition == "" {
		// A class without a slurm map (the sim and Kubernetes backends need none) still renders
		// both ways, for previews: its Slurm side names the class as the partition, any GPU.
		in.Slurm.Partition = c.Name
	}
	if in.Slurm.GRES == "" {
		in.Slurm.GRES = "gpu"
	}
	if s.Account {
		in.Slurm.Account = l.Team
	}
	placeInput(&in, c, l)
	if s.NodeSize != nil {
		if size := s.NodeSize(c.Name); size > 0 {
			in.GPUsPerNode = size
			if l.Node == "" && l.GPUs > size {
				// Larger than a node: the service will place it on whole nodes.
				in.PlacedNodes = (l.GPUs + size - 1) / size
			}
		}
	}
	root := s.StorageRoot
	if root == "" {
		root = DefaultStorageRoot
	}
	in.Storage.Path = strings.TrimSuffix(root, "/") + "/" + l.Team
	if t, ok := p.Team(l.Team); ok {
		if t.Storage.Path != "" {
			in.Storage.Path = t.Storage.Path
		}
		in.Storage.PVC = t.Storage.PVC
	}
	return in, nil
}

// placeInput pins the workload where the service placed the lease and keeps exclusive classes
// exclusive.
//
//   - A placed lease (Node set: one node, or several joined by commas) runs only there: Slurm's
//     --nodelist, a required node affinity on Kubernetes. One placed on several (whole) nodes
//     spans them all: the template runs on that many nodes (--nodes, an Indexed Job's pods, the
//     world size QM_NNODES) with its GPUs split evenly over them where nnodes is not given; an
//     nnodes of fewer nodes, or a template that runs on one node only, is refused; an array's
//     tasks (a sweep's trials) each take one node of them. GPU indexes are not passed: neither
//     scheduler lets a job pick them, and the node's own allocator decides (Slurm: from gres.conf's
//     Links= and Cores=; Kubernetes: the device plugin). A multi-GPU lease the service placed on
//     one node also asks Slurm for CPUs bound to its GPUs (--gres-flags=enforce-binding), which
//     keeps its GPUs on the sockets of its CPUs where gres.conf gives Cores= (docs/slurm.md).
//   - A reservation (Exclusive) holds whole nodes: Slurm's --exclusive; on Kubernetes no other
//     lease's pods share its nodes.
//   - A lease of an exclusive class: on Kubernetes a required pod anti-affinity keeps other
//     teams' pods of the class off its nodes (and its pods off theirs), wherever the scheduler
//     places. Slurm has no such rule by team without its MCS plugin, so there the service places
//     these leases on nodes free of other teams; one it hands over unplaced (the inventory not
//     known yet) asks for whole nodes (--exclusive) rather than share one with another team.
//   - A CPU-only lease (no GPUs) holds no GPU and is placed nowhere, on any class: it is pinned to
//     no node (even one it ran on before), asks for no whole node and carries no anti-affinity by
//     team; the scheduler runs it where CPUs are free (Slurm: the class's partition).
func placeInput(in *templates.Input, c *policy.Class, l *qm.Lease) {
	if l.CPUOnly() {
		return
	}
	if l.Node != "" {
		in.Slurm.NodeList = l.Node
		names := strings.Split(l.Node, ",")
		var kube []string
		for _, n := range names {
			if n = strings.TrimSpace(n); n != "" && templates.IsKubernetesNodeName(n) {
				kube = append(kube, n)
			}
		}
		if len(kube) == len(names) { // a Slurm node Kubernetes cannot name: no pin there
			in.Kubernetes.Nodes = kube
		}
		if len(names) > 1 && !strings.Contains(l.Node, "[") {
			// Whole nodes: the workload spans them all, its GPUs split evenly over them.
			in.PlacedNodes = len(names)
		}
	}
	in.Slurm.Exclusive = l.Exclusive || (c.Exclusive() && l.Node == "")
	in.Slurm.EnforceBinding = !l.Exclusive && len(l.GPUIndex) > 1 && l.Node != "" && !strings.Contains(l.Node, ",")
	in.Kubernetes.ExclusiveTeam = c.Exclusive()
	in.Kubernetes.ExclusiveLease = l.Exclusive
}

// keepOffGPUNodes makes a CPU-only job's pods run on nodes without GPUs, as a cluster admin
// expects of pods that ask for none, whose CPUs and memory the GPU jobs there need: they carry
// none of the class's node selector or tolerations (which pick and open its GPU pool), so a pool
// tainted nvidia.com/gpu (or with the class's own taint) keeps them off as it keeps off any pod
// without GPUs (the Kubernetes backend adds no GPU toleration to them either). Where the
// inventory knows the GPU nodes (of every class, whether the class finds them by labels or by its
// GPU resource alone), a required node affinity keeps the pods off them by name, so an untainted
// pool is left to GPU jobs too: labels alone could not say it on every policy, since a class's
// node_selector may name labels that nodes without GPUs carry as well. Previews and the backend
// both render it here, so what a preview shows is what is made.
func keepOffGPUNodes(in *templates.Input, s Settings) {
	in.Kubernetes.NodeSelector, in.Kubernetes.Tolerations = nil, nil
	if s.GPUNodes == nil {
		return
	}
	for _, n := range s.GPUNodes() {
		if templates.IsKubernetesNodeName(n) { // a Slurm node's name may be none
			in.Kubernetes.AvoidNodes = append(in.Kubernetes.AvoidNodes, n)
		}
	}
}

// NewToken is a fresh secret for an interactive workspace (Jupyter's token, code-server's
// password): 24 random bytes in hex.
func NewToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("workload: token: %w", err)
	}
	return hex.EncodeToString(b), nil
}
