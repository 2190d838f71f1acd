package templates_test

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	qmtemplates "github.com/acme/quartermaster/templates"

	"github.com/acme/quartermaster/internal/templates"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

var (
	catOnce sync.Once
	cat     *templates.Catalog
	catErr  error
)

// catalog is the embedded catalog, loaded once for all tests.
func catalog(t testing.TB) *templates.Catalog {
	t.Helper()
	catOnce.Do(func() { cat, catErr = templates.Load(qmtemplates.FS) })
	if catErr != nil {
		t.Fatalf("Load(templates.FS): %v", catErr)
	}
	return cat
}

// renderCase is one template rendered for one lease.
type renderCase struct {
	name string // golden file stem
	tmpl *templates.Template
	in   templates.Input
}

// exampleParams are the parameters of the template's own example command.
func exampleParams(t testing.TB, tp *templates.Template) templates.Params {
	t.Helper()
	words := strings.Fields(tp.Example())
	var kv []string
	for _, w := range words {
		if strings.Contains(w, "=") {
			kv = append(kv, w)
		}
	}
	p, err := tp.ParseParams(kv)
	if err != nil {
		t.Fatalf("%s: example %q: %v", tp.Name, tp.Example(), err)
	}
	return p
}

// cases is every template with its example, plus variants that exercise the other paths of the
// layouts: container runtimes, image layers, placement hints. A CPU-only template is rendered with
// the settings the service builds for its lease (serviceInput).
func cases(t testing.TB) []renderCase {
	c := catalog(t)
	var out []renderCase
	for _, tp := range c.List() {
		in := templates.ExampleInput(tp, "", exampleParams(t, tp))
		if tp.CPUOnly() {
			// What a CPU-only lease really gets: none of its GPU class's node selector.
			in = serviceInput(t, tp, "", exampleParams(t, tp))
		}
		out = append(out, renderCase{tp.Name, tp, in})
	}
	get := func(name string) *templates.Template {
		tp, err := c.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		return tp
	}

	ddp := get("pytorch-ddp")
	in := templates.ExampleInput(ddp, "train", templates.Params{"script": "train.py"})
	in.GPUs, in.Nodes = 16, 2
	in.Slurm.Container = "pyxis"
	in.Slurm.NodeList = "gpu[01-02]"
	in.Kubernetes.PreferredNodes = []string{"gpu01", "gpu02"}
	in.Images = templates.Images{Base: "registry.acme.example/base:2024.06", Team: "registry.acme.example/vision/torch:1.4"}
	out = append(out, renderCase{"pytorch-ddp.pyxis-team-image-hints", ddp, in})

	ds := get("jupyter-dataset")
	in = templates.ExampleInput(ds, "", templates.Params{"dataset": "/projects/vision/datasets/coco"})
	in.Slurm.Container = "apptainer"
	in.Images.Project = "registry.acme.example/vision/coco-tools:3"
	in.Token = ""
	out = append(out, renderCase{"jupyter-dataset.apptainer-project-image", ds, in})

	sweep := get("hparam-sweep")
	in = templates.ExampleInput(sweep, "train", templates.Params{"trials": "6", "gpus_per_trial": "2"})
	in.GPUs = 8
	out = append(out, renderCase{"hparam-sweep.two-gpus-per-trial", sweep, in})

	// An exclusive reservation the service placed on two nodes.
	placed := get("ssh-shell")
	in = templates.ExampleInput(placed, "train", templates.Params{})
	in.GPUs, in.GPUsPerNode = 8, 8
	in.Slurm.NodeList, in.Slurm.Exclusive = "gpu07", true
	in.Kubernetes.Nodes = []string{"gpu07"}
	in.Kubernetes.ExclusiveTeam, in.Kubernetes.ExclusiveLease = true, true
	out = append(out, renderCase{"ssh-shell.placed-exclusive", placed, in})

	// Four GPUs the service placed in one NVLink island of one node: the node, and CPUs bound to
	// the GPUs.
	island := get("pytorch-ddp")
	in = templates.ExampleInput(island, "train", templates.Params{"script": "train.py"})
	in.GPUs, in.GPUsPerNode, in.Nodes = 4, 4, 1
	in.Slurm.NodeList, in.Slurm.EnforceBinding = "gpu03", true
	in.Kubernetes.Nodes = []string{"gpu03"}
	out = append(out, renderCase{"pytorch-ddp.placed-one-island", island, in})

	return out
}

func render(t testing.TB, rc renderCase) templates.Rendered {
	t.Helper()
	out, err := rc.tmpl.Render(rc.in)
	if err != nil {
		t.Fatalf("%s: Render: %v", rc.name, err)
	}
	return out
}

// TestRenderGolden renders every template for both backends and compares with testdata/.
// go test ./internal/templates -update rewrites the files.
func TestRenderGolden(t *testing.T) {
	seen := map[string]bool{}
	for _, rc := range cases(t) {
		t.Run(rc.name, func(t *testing.T) {
			out := render(t, rc)
			if out.SlurmScript == "" || out.KubernetesYAML == "" {
				t.Fatal("empty rendering")
			}
			golden(t, rc.name+".slurm.sh", out.SlurmScript)
			golden(t, rc.name+".kubernetes.yaml", out.KubernetesYAML)
			seen[rc.name+".slurm.sh"], seen[rc.name+".kubernetes.yaml"] = true, true
		})
	}
	// A golden file nothing renders any more is stale.
	files, _ := filepath.Glob(filepath.Join("testdata", "*"))
	for _, f := range files {
		base := filepath.Base(f)
		if (strings.HasSuffix(base, ".slurm.sh") || strings.HasSuffix(base, ".kubernetes.yaml")) && !seen[base] {
			if *update {
				os.Remove(f)
				continue
			}
			t.Errorf("testdata/%s matches no template or case; run go test ./internal/templates -update", base)
		}
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v; run go test ./internal/templates -update", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (go test ./internal/templates -update rewrites it):\n%s", path, diff(string(want), got))
	}
}

// diff shows the first lines that differ.
func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + a + "\n  got:  " + b
		}
	}
	return "(same lines, different line endings)"
}

var runBlockRE = regexp.MustCompile(`(?s)<<'QM_RUN' \|\| true\n(.*?)\nQM_RUN\n`)

// TestScriptsParse checks every Slurm script, every Kubernetes container script and the workload
// inside each with bash -n, so a quoting mistake in a definition fails here, not on a cluster.
func TestScriptsParse(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	for _, rc := range cases(t) {
		t.Run(rc.name, func(t *testing.T) {
			t.Parallel()
			out := render(t, rc)
			scripts := map[string]string{"slurm": out.SlurmScript}
			for i, doc := range kubeScripts(t, out.KubernetesYAML) {
				scripts["kubernetes-"+strconv.Itoa(i)] = doc
			}
			for name, s := range scripts {
				bashN(t, name, s)
				m := runBlockRE.FindStringSubmatch(s)
				if m == nil {
					t.Fatalf("%s: no workload block", name)
				}
				bashN(t, name+" workload", m[1])
			}
		})
	}
}

func bashN(t *testing.T, name, script string) {
	t.Helper()
	cmd := exec.Command("bash", "-n")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%s: bash -n: %v\n%s\n--- script ---\n%s", name, err, out, script)
	}
}

func TestSlurmScriptHeader(t *testing.T) {
	for _, rc := range cases(t) {
		out := render(t, rc)
		s := out.SlurmScript
		want := []string{
			"#!/bin/bash\n",
			"#SBATCH --job-name=" + out.Name + "\n",
			"#SBATCH --comment=qm:" + rc.in.Lease + "\n", // as the Slurm backend submits it
			"#SBATCH --partition=" + rc.in.Slurm.Partition + "\n",
			"#SBATCH --time=04:00:00\n",
			"#SBATCH --nodes=" + strconv.Itoa(out.Nodes) + "\n",
			"#SBATCH --output=/projects/vision/.quartermaster/L-42/",
		}
		// One task per node; with CPUs bound to the GPUs, the default of one task (a job that names
		// its task count then gets every core bound to its GPUs from Slurm 22.05).
		if rc.in.Slurm.EnforceBinding {
			want = append(want, "#SBATCH --gres-flags=enforce-binding\n")
			if strings.Contains(s, "#SBATCH --ntasks") {
				t.Errorf("%s: a job with CPUs bound to its GPUs names its task count", rc.name)
			}
		} else {
			want = append(want, "#SBATCH --ntasks-per-node=1\n")
		}
		if rc.tmpl.CPUOnly() {
			if strings.Contains(s, "--gres") {
				t.Errorf("%s: a CPU-only template asks for GPUs", rc.name)
			}
		} else {
			want = append(want, "#SBATCH --gres="+rc.in.Slurm.GRES+":"+strconv.Itoa(out.GPUsPerNode)+"\n")
		}
		for _, w := range want {
			if !strings.Contains(s, w) {
				t.Errorf("%s: Slurm script lacks %q", rc.name, w)
			}
		}
		if !strings.Contains(strings.ToLower(out.Name), "l-42") {
			t.Errorf("%s: job name %q does not carry the lease id", rc.name, out.Name)
		}
		// Every #SBATCH line comes before the first command, or sbatch ignores it.
		seenCommand := false
		for _, line := range strings.Split(s, "\n")[1:] {
			switch {
			case strings.HasPrefix(line, "#SBATCH"):
				if seenCommand {
					t.Errorf("%s: %q comes after a command", rc.name, line)
				}
			case line != "" && !strings.HasPrefix(line, "#"):
				seenCommand = true
			}
		}
	}
}

func TestCheckpointTemplate(t *testing.T) {
	tp, _ := catalog(t).Get("checkpoint-training")
	out, err := tp.Render(templates.ExampleInput(tp, "", templates.Params{"checkpoint_lead": "10m"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"#SBATCH --signal=B:USR1@600\n", "#SBATCH --requeue\n", "trap qm_checkpoint USR1", "scontrol requeue \"$SLURM_JOB_ID\""} {
		if !strings.Contains(out.SlurmScript, w) {
			t.Errorf("Slurm script lacks %q", w)
		}
	}
	if !strings.Contains(out.KubernetesYAML, "terminationGracePeriodSeconds: 600\n") {
		t.Error("manifest does not give the checkpoint lead as grace period")
	}
	in := templates.ExampleInput(tp, "", templates.Params{"checkpoint_lead": "30m"})
	in.Duration = 20 * time.Minute
	if _, err := tp.Render(in); err == nil || !strings.Contains(err.Error(), "checkpoint_lead must be shorter than the lease. Example: /gpu submit checkpoint-training") {
		t.Errorf("lead longer than the lease: got %v", err)
	}
}

func TestSweepIsAnArray(t *testing.T) {
	tp, _ := catalog(t).Get("hparam-sweep")
	in := templates.ExampleInput(tp, "train", templates.Params{"trials": "10", "gpus_per_trial": "2"})
	in.GPUs = 8
	out, err := tp.Render(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.SlurmScript, "#SBATCH --array=0-9%4\n") || !strings.Contains(out.SlurmScript, "#SBATCH --gres=gpu:h100:2\n") {
		t.Errorf("want a 10-task array, 4 at once, 2 GPUs each:\n%s", out.SlurmScript)
	}
	for _, w := range []string{"completionMode: Indexed", "completions: 10", "parallelism: 4", `"nvidia.com/gpu": "2"`} {
		if !strings.Contains(out.KubernetesYAML, w) {
			t.Errorf("manifest lacks %q", w)
		}
	}
	if out.Tasks != 10 {
		t.Errorf("Tasks = %d, want 10", out.Tasks)
	}
}

func TestImageLayers(t *testing.T) {
	c := catalog(t)
	ddp, _ := c.Get("pytorch-ddp")
	vllm, _ := c.Get("vllm-server")
	base, desc := c.BaseImage()
	if !strings.Contains(desc, "CUDA 12.4") || !strings.Contains(desc, "PyTorch 2.3") || !strings.Contains(desc, "NCCL 2.21") || !strings.Contains(desc, "Python 3.11") {
		t.Errorf("base image description %q", desc)
	}
	tests := []struct {
		tmpl   *templates.Template
		layers templates.Images
		want   string
	}{
		{ddp, templates.Images{}, base},
		{ddp, templates.Images{Base: "b:1"}, "b:1"},
		{ddp, templates.Images{Base: "b:1", Team: "t:1"}, "t:1"},
		{ddp, templates.Images{Base: "b:1", Team: "t:1", Project: "p:1"}, "p:1"},
		{ddp, templates.Images{Project: "p:1"}, "p:1"},
		{vllm, templates.Images{}, vllm.Image},
		{vllm, templates.Images{Base: "b:1"}, vllm.Image},
		{vllm, templates.Images{Team: "t:1"}, "t:1"},
	}
	for _, tc := range tests {
		in := templates.ExampleInput(tc.tmpl, "", nil)
		in.Images = tc.layers
		out, err := tc.tmpl.Render(in)
		if err != nil {
			t.Fatal(err)
		}
		if out.Image != tc.want {
			t.Errorf("%s with %+v: image %q, want %q", tc.tmpl.Name, tc.layers, out.Image, tc.want)
		}
		if !strings.Contains(out.SlurmScript, "export QM_IMAGE="+tc.want+"\n") || !strings.Contains(out.KubernetesYAML, `image: "`+tc.want+`"`) {
			t.Errorf("%s: image %q not in both renderings", tc.tmpl.Name, tc.want)
		}
	}
}

func TestConnect(t *testing.T) {
	c := catalog(t)
	for _, tp := range c.List() {
		out := render(t, renderCase{tp.Name, tp, templates.ExampleInput(tp, "", exampleParams(t, tp))})
		if tp.Kind == templates.KindBatch {
			if out.SlurmConnect != nil || out.KubernetesConnect != nil {
				t.Errorf("%s: a batch template has connect details", tp.Name)
			}
			continue
		}
		sc, kc := out.SlurmConnect, out.KubernetesConnect
		if sc == nil || kc == nil {
			t.Fatalf("%s: an interactive template without connect details", tp.Name)
		}
		if sc.Port < 20000 || sc.Port > 39999 {
			t.Errorf("%s: Slurm port %d outside the lease port range", tp.Name, sc.Port)
		}
		if !strings.Contains(out.SlurmScript, "export QM_PORT="+strconv.Itoa(sc.Port)+"\n") {
			t.Errorf("%s: Slurm script does not listen on %d", tp.Name, sc.Port)
		}
		if kc.Host != out.Name+".qm-vision.svc" || kc.Port != tp.Connect.Port {
			t.Errorf("%s: Kubernetes connect %+v", tp.Name, kc)
		}
	}
	jl, _ := c.Get("jupyterlab")
	out, _ := jl.Render(templates.ExampleInput(jl, "", nil))
	if got := out.KubernetesConnect.Address("", "s3cret"); got != "http://qm-l-42-jupyterlab.qm-vision.svc:8888/lab?token=s3cret" {
		t.Errorf("jupyter address %q", got)
	}
	ssh, _ := c.Get("ssh-shell")
	out, _ = ssh.Render(templates.ExampleInput(ssh, "", nil))
	if got := out.SlurmConnect.Address("gpu07", ""); got != "ssh -p "+strconv.Itoa(out.SlurmConnect.Port)+" alice@gpu07" {
		t.Errorf("ssh command %q", got)
	}
	// The port is a function of the installation and the lease: the same lease of the same
	// installation listens on the same port after a restart; another lease, or the same lease
	// id of another installation sharing the cluster, on another.
	port := func(instance, lease string) int {
		in := templates.ExampleInput(jl, "", nil)
		in.Slurm.Instance, in.Lease = instance, lease
		r, err := jl.Render(in)
		if err != nil {
			t.Fatal(err)
		}
		return r.SlurmConnect.Port
	}
	if a, b := port("qm", "L-1"), port("qm", "L-1"); a != b {
		t.Errorf("L-1 of qm listens on %d, then on %d", a, b)
	}
	if a, b := port("qm", "L-1"), port("qm", "L-2"); a == b {
		t.Errorf("L-1 and L-2 of qm both listen on %d", a)
	}
	if a, b := port("qm", "L-1"), port("qm-staging", "L-1"); a == b {
		t.Errorf("L-1 of two installations both listen on %d", a)
	}
}

// TestLeaseFit covers leases that do not fit a template: each is one sentence with an example.
func TestLeaseFit(t *testing.T) {
	c := catalog(t)
	get := func(n string) *templates.Template { tp, _ := c.Get(n); return tp }
	tests := []struct {
		name   string
		tmpl   string
		params templates.Params
		edit   func(*templates.Input)
		want   string
	}{
		{"one-node template on two nodes", "jupyterlab", nil, func(in *templates.Input) { in.Nodes = 2; in.GPUs = 2 },
			"jupyterlab runs on one node, but the lease spans 2 nodes. Example: /gpu submit jupyterlab root=notebooks"},
		{"nnodes against the lease", "pytorch-ddp", templates.Params{"nnodes": "3"}, func(in *templates.Input) { in.Nodes = 2; in.GPUs = 16 },
			"nnodes=3 does not match the lease, which spans 2 nodes. Example: /gpu submit pytorch-ddp nnodes=2"},
		{"uneven split", "pytorch-ddp", templates.Params{"nnodes": "3"}, func(in *templates.Input) { in.GPUs = 16 },
			"The lease's 16 GPUs do not split evenly over 3 nodes. Example: /gpu submit pytorch-ddp nnodes=2 script=train.py"},
		{"one GPU over two nodes", "pytorch-ddp", templates.Params{"nnodes": "2"}, func(in *templates.Input) { in.GPUs = 1 },
			"The lease's 1 GPU does not split evenly over 2 nodes. Example: /gpu submit pytorch-ddp nnodes=2 script=train.py"},
		{"one-GPU nodes", "cuda-smoke", nil, func(in *templates.Input) { in.GPUs, in.GPUsPerNode = 2, 1 },
			"cuda-smoke runs on one node, and a node of class train holds 1 GPU, fewer than the lease's 2. Example: /gpu submit cuda-smoke size=4096"},
		{"trial bigger than a one-GPU lease", "hparam-sweep", templates.Params{"gpus_per_trial": "2"}, func(in *templates.Input) { in.GPUs = 1 },
			"gpus_per_trial=2 is more than the lease's 1 GPU. Example: /gpu submit hparam-sweep gpus_per_trial=1"},
		{"too many per node", "pytorch-ddp", nil, func(in *templates.Input) { in.GPUs = 16 },
			"16 GPUs per node is more than a node of class train holds (8); spread the lease over more nodes. Example: /gpu submit pytorch-ddp nnodes=2"},
		{"one node too small", "cuda-smoke", nil, func(in *templates.Input) { in.GPUs = 16 },
			"cuda-smoke runs on one node, and a node of class train holds 8 GPUs, fewer than the lease's 16. Example: /gpu submit cuda-smoke size=4096"},
		{"no GPUs", "cuda-smoke", nil, func(in *templates.Input) { in.GPUs = 0 },
			"cuda-smoke needs GPUs, but the lease holds none. Example: /gpu submit cuda-smoke size=4096"},
		{"trial bigger than lease", "hparam-sweep", templates.Params{"gpus_per_trial": "4"}, func(in *templates.Input) { in.GPUs = 2 },
			"gpus_per_trial=4 is more than the lease's 2 GPUs. Example: /gpu submit hparam-sweep gpus_per_trial=2"},
		{"path outside storage", "pytorch-ddp", templates.Params{"script": "/etc/passwd"}, nil,
			"script must be inside the team storage /projects/vision, not /etc/passwd. Example: /gpu submit pytorch-ddp script=train.py"},
		{"required parameter", "data-prep", templates.Params{"input": "raw"}, nil,
			"output is required. Example: /gpu submit data-prep input=raw output=datasets/images-512"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tp := get(tc.tmpl)
			in := templates.ExampleInput(tp, "", tc.params)
			if tc.edit != nil {
				tc.edit(&in)
			}
			_, err := tp.Render(in)
			if err == nil {
				t.Fatal("rendered")
			}
			if !isInvalid(err) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
			if err.Error() != tc.want {
				t.Errorf("error\n got: %s\nwant: %s", err, tc.want)
			}
		})
	}
}

func TestCPUOnly(t *testing.T) {
	tp, _ := catalog(t).Get("data-prep")
	if !tp.CPUOnly() {
		t.Fatal("data-prep asks for GPUs")
	}
	in := templates.ExampleInput(tp, "", exampleParams(t, tp))
	in.GPUs = 0
	out, err := tp.Render(in)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.SlurmScript, "--gres") || strings.Contains(out.KubernetesYAML, "nvidia.com/gpu") {
		t.Error("a CPU-only template asks for GPUs")
	}
}

// TestBadInputFromTheService: an Input the service filled wrongly is an error, not ErrInvalid.
func isInvalid(err error) bool { return templates.IsInvalid(err) }

func TestBadInputFromTheService(t *testing.T) {
	tp, _ := catalog(t).Get("pytorch-ddp")
	for name, edit := range map[string]func(*templates.Input){
		"no lease":         func(in *templates.Input) { in.Lease = "" },
		"lease with space": func(in *templates.Input) { in.Lease = "L 42" },
		"no duration":      func(in *templates.Input) { in.Duration = 0 },
		"bad partition":    func(in *templates.Input) { in.Slurm.Partition = "train\n#SBATCH --x" },
		"relative storage": func(in *templates.Input) { in.Storage.Path = "projects/vision" },
		"dotdot storage":   func(in *templates.Input) { in.Storage.Path = "/projects/../etc" },
		"bad selector":     func(in *templates.Input) { in.Kubernetes.NodeSelector = map[string]string{"a": "b c"} },
		"bad image":        func(in *templates.Input) { in.Images.Team = "x y" },
		"bad container":    func(in *templates.Input) { in.Slurm.Container = "docker" },
	} {
		in := templates.ExampleInput(tp, "", nil)
		edit(&in)
		_, err := tp.Render(in)
		if err == nil {
			t.Errorf("%s: rendered", name)
		} else if isInvalid(err) {
			t.Errorf("%s: %v wraps ErrInvalid, but it is the service's mistake", name, err)
		}
	}
}
