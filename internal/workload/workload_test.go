package workload_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/workload"
	qmtemplates "github.com/acme/quartermaster/templates"
)

func setup(t *testing.T) (*templates.Catalog, *policy.Policy) {
	t.Helper()
	cat, err := templates.Load(qmtemplates.FS)
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.LoadFile("../../docs/quartermaster.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return cat, p
}

func TestRenderFromLease(t *testing.T) {
	cat, p := setup(t)
	p.Teams[0].Storage.PVC = "vision-data"
	l := &qm.Lease{ID: 42, User: "alice@acme.example", Team: "vision", Class: "train", GPUs: 2, Duration: 90 * time.Minute}
	w, err := workload.Render(cat, p, l, workload.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if w.Template.Name != workload.DefaultTemplate || w.Input.Token != "" || w.SlurmConnect == nil {
		t.Errorf("template %s, token %q", w.Template.Name, w.Input.Token)
	}
	for _, s := range []string{"--partition=train\n", "--gres=gpu:h100:2\n", "--time=01:30:00\n", "--comment=qm:L-42\n", "/projects/vision/.quartermaster/L-42/"} {
		if !strings.Contains(w.SlurmScript, s) {
			t.Errorf("script lacks %q", s)
		}
	}
	if strings.Contains(w.SlurmScript, "--account") {
		t.Error("an account without accounting")
	}
	for _, s := range []string{`claimName: "vision-data"`, `"gpu.acme/class": "train"`, `"nvidia.com/gpu": "2"`, "activeDeadlineSeconds: 5400"} {
		if !strings.Contains(w.KubernetesYAML, s) {
			t.Errorf("manifest lacks %q", s)
		}
	}

	// A team the policy does not list keeps its files under the storage root; the account is the
	// team where accounting is on; a template that wants a token gets a fresh one.
	l = &qm.Lease{ID: 43, User: "zed@acme.example", Team: "misc", Class: "interactive", GPUs: 1, Duration: time.Hour, Template: "jupyterlab", Params: map[string]string{"root": "nb"}}
	w, err = workload.Render(cat, p, l, workload.Settings{StorageRoot: "/data/teams/", Account: true})
	if err != nil {
		t.Fatal(err)
	}
	if w.Input.Storage.Path != "/data/teams/misc" || !strings.Contains(w.SlurmScript, "--account=misc\n") || len(w.Input.Token) != 48 {
		t.Errorf("storage %q, token %q", w.Input.Storage.Path, w.Input.Token)
	}
	if addr := w.SlurmConnect.Address("gpu01", w.Input.Token); !strings.HasSuffix(addr, "/lab?token="+w.Input.Token) {
		t.Errorf("connect %s", addr)
	}
}

func TestRenderRefuses(t *testing.T) {
	cat, p := setup(t)
	for _, l := range []*qm.Lease{
		{ID: 1, User: "alice@acme.example", Team: "vision", Class: "train", GPUs: 1, Duration: time.Hour, Template: "nope"},
		{ID: 1, User: "alice@acme.example", Team: "vision", Class: "train", GPUs: 1, Duration: time.Hour, Template: "cuda-smoke", Params: map[string]string{"size": "1"}},
	} {
		if _, err := workload.Render(cat, p, l, workload.Settings{}); !templates.IsInvalid(err) {
			t.Errorf("%s %v: %v, want an input error", l.Template, l.Params, err)
		}
	}
	// A template that runs on one node, on a lease placed on two whole nodes, and nnodes against them.
	for _, l := range []*qm.Lease{
		{ID: 1, User: "alice@acme.example", Team: "vision", Class: "train", GPUs: 16, Duration: time.Hour, Node: "h100-01,h100-02", Exclusive: true, Template: "ssh-shell"},
		{ID: 1, User: "alice@acme.example", Team: "vision", Class: "train", GPUs: 16, Duration: time.Hour, Node: "h100-01,h100-02", Template: "pytorch-ddp", Params: map[string]string{"nnodes": "1"}},
	} {
		if _, err := workload.Render(cat, p, l, workload.Settings{}); !templates.IsInvalid(err) {
			t.Errorf("%s %v on %s: %v, want an input error", l.Template, l.Params, l.Node, err)
		}
	}
	l := &qm.Lease{ID: 1, User: "alice@acme.example", Team: "vision", Class: "gold", GPUs: 1, Duration: time.Hour}
	if _, err := workload.Render(cat, p, l, workload.Settings{}); err == nil || templates.IsInvalid(err) {
		t.Errorf("unknown class: %v, want an install error", err)
	}
}

// TestPlacement: a lease the service placed runs only on its node(s), and a multi-GPU one on one
// node gets CPUs bound to its GPUs (Slurm: --gres-flags=enforce-binding); a reservation holds whole
// nodes; an exclusive class never shares a node with another team, placed or not (Kubernetes:
// anti-affinity by team; Slurm: whole nodes when Slurm places it); a shared class, unplaced,
// carries none of this.
func TestPlacement(t *testing.T) {
	cat, p := setup(t)
	for _, c := range []struct {
		name                 string
		lease                qm.Lease
		slurmHas, slurmLacks []string
		kubeHas, kubeLacks   []string
	}{
		{"placed on an exclusive class",
			qm.Lease{Class: "train", GPUs: 2, Node: "h100-01", GPUIndex: []int{2, 3}},
			[]string{"#SBATCH --nodelist=h100-01\n", "#SBATCH --gres-flags=enforce-binding\n"}, []string{"--exclusive", "#SBATCH --ntasks-per-node"},
			[]string{"key: metadata.name", `values: ["h100-01"]`, `{key: quartermaster.io/team, operator: NotIn, values: ["vision"]}`, `{key: quartermaster.io/class, operator: In, values: ["train"]}`, "namespaceSelector: {}"},
			[]string{"quartermaster.io/lease, operator: Exists"}},
		{"exclusive class placed by Slurm",
			qm.Lease{Class: "train", GPUs: 2},
			[]string{"#SBATCH --exclusive\n"}, []string{"--nodelist"},
			[]string{`{key: quartermaster.io/team, operator: NotIn, values: ["vision"]}`}, []string{"matchFields"}},
		{"reservation of two whole nodes",
			qm.Lease{Class: "train", GPUs: 16, Node: "h100-01,h100-02", Exclusive: true, Template: "pytorch-ddp", Params: map[string]string{"nnodes": "2", "script": "train.py"}},
			[]string{"#SBATCH --nodelist=h100-01,h100-02\n", "#SBATCH --exclusive\n", "#SBATCH --nodes=2\n"}, []string{"--gres-flags"},
			[]string{`values: ["h100-01", "h100-02"]`, `{key: quartermaster.io/lease, operator: NotIn, values: ["L-42"]}`}, nil},
		{"sixteen GPUs the service placed on two whole nodes, nnodes not given",
			qm.Lease{Class: "train", GPUs: 16, Node: "h100-01,h100-02", Template: "pytorch-ddp", Params: map[string]string{"script": "train.py"}},
			[]string{"#SBATCH --nodelist=h100-01,h100-02\n", "#SBATCH --nodes=2\n", "#SBATCH --gres=gpu:h100:8\n", "QM_NNODES=2 QM_GPUS_PER_NODE=8"}, []string{"--gres=gpu:h100:16"},
			[]string{`values: ["h100-01", "h100-02"]`, "completions: 2\n", "parallelism: 2\n", `"nvidia.com/gpu": "8"`, `{name: QM_NNODES, value: "2"}`}, []string{`"nvidia.com/gpu": "16"`}},
		{"nnodes=4 on two whole nodes: four pods of 4 GPUs, as asked",
			qm.Lease{Class: "train", GPUs: 16, Node: "h100-01,h100-02", Template: "pytorch-ddp", Params: map[string]string{"nnodes": "4", "script": "train.py"}},
			[]string{"#SBATCH --nodes=4\n", "#SBATCH --gres=gpu:h100:4\n"}, nil,
			[]string{"completions: 4\n", `"nvidia.com/gpu": "4"`, `values: ["h100-01", "h100-02"]`}, nil},
		{"a sweep the service placed on two whole nodes: its trials spread over them",
			qm.Lease{Class: "train", GPUs: 16, Node: "h100-01,h100-02", Template: "hparam-sweep", Params: map[string]string{"trials": "32"}},
			[]string{"#SBATCH --gres=gpu:h100:1\n", "#SBATCH --array=0-31%16\n"}, nil,
			[]string{`values: ["h100-01", "h100-02"]`, "parallelism: 16\n", `"nvidia.com/gpu": "1"`}, nil},
		{"placed on a Slurm node whose name Kubernetes cannot take",
			qm.Lease{Class: "interactive", GPUs: 1, Node: "GPU_01", GPUIndex: []int{3}},
			[]string{"#SBATCH --nodelist=GPU_01\n"}, []string{"--exclusive", "--gres-flags"},
			nil, []string{"affinity:"}},
		{"placed on a two-letter node",
			qm.Lease{Class: "interactive", GPUs: 1, Node: "vm"},
			[]string{"#SBATCH --nodelist=vm\n"}, nil,
			[]string{`values: ["vm"]`}, nil},
		{"shared class placed by the scheduler",
			qm.Lease{Class: "interactive", GPUs: 1},
			nil, []string{"--nodelist", "--exclusive", "--gres-flags"},
			nil, []string{"affinity:"}},
		{"two GPUs the scheduler placed on the service's node",
			qm.Lease{Class: "interactive", GPUs: 2, Node: "l40s-01"},
			[]string{"#SBATCH --nodelist=l40s-01\n"}, []string{"--gres-flags"},
			nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := c.lease
			l.ID, l.User, l.Team, l.Duration = 42, "alice@acme.example", "vision", time.Hour
			w, err := workload.Render(cat, p, &l, workload.Settings{})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range c.slurmHas {
				if !strings.Contains(w.SlurmScript, s) {
					t.Errorf("script lacks %q", s)
				}
			}
			for _, s := range c.slurmLacks {
				if strings.Contains(w.SlurmScript, s) {
					t.Errorf("script has %q", s)
				}
			}
			for _, s := range c.kubeHas {
				if !strings.Contains(w.KubernetesYAML, s) {
					t.Errorf("manifest lacks %q", s)
				}
			}
			for _, s := range c.kubeLacks {
				if strings.Contains(w.KubernetesYAML, s) {
					t.Errorf("manifest has %q", s)
				}
			}
		})
	}
}

// TestClassOfAnotherCluster: a class of another cluster's GPUs (amd.com/gpu on nodes tainted
// dedicated=gpu:NoSchedule) renders its resource, its node selector and the tolerations its
// policy lists, so its pods can land on its nodes.
func TestClassOfAnotherCluster(t *testing.T) {
	cat, p := setup(t)
	c, _ := p.Class("train")
	c.Kubernetes.Resource = "amd.com/gpu"
	c.Kubernetes.NodeSelector = map[string]string{"node.kubernetes.io/instance-type": "MI300X-8"}
	c.Kubernetes.Tolerations = []policy.Toleration{{Key: "dedicated", Value: "gpu", Effect: "NoSchedule"}, {Key: "amd.com/gpu", Operator: "Exists"}}
	l := &qm.Lease{ID: 42, User: "alice@acme.example", Team: "vision", Class: "train", GPUs: 4, Duration: time.Hour, Template: "pytorch-ddp"}
	w, err := workload.Render(cat, p, l, workload.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"amd.com/gpu": "4"`, `"node.kubernetes.io/instance-type": "MI300X-8"`,
		"tolerations:\n      - {\"key\":\"dedicated\",\"value\":\"gpu\",\"effect\":\"NoSchedule\"}\n      - {\"key\":\"amd.com/gpu\",\"operator\":\"Exists\"}\n"} {
		if !strings.Contains(w.KubernetesYAML, s) {
			t.Errorf("manifest lacks %q:\n%s", s, w.KubernetesYAML)
		}
	}
}
