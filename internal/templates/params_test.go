package templates_test

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/templates"
)

// TestParseParamsErrors: every kind of bad parameter is one sentence naming the problem, with a
// working example.
func TestParseParamsErrors(t *testing.T) {
	c := catalog(t)
	tests := []struct {
		tmpl string
		args []string
		want string
	}{
		{"pytorch-ddp", []string{"lr=0.1"},
			`Unknown parameter "lr"; nnodes, script and epochs are known. Example: /gpu submit pytorch-ddp nnodes=2 script=train.py`},
		{"pytorch-ddp", []string{"epoch=3"},
			`Unknown parameter "epoch" (did you mean epochs?); nnodes, script and epochs are known. Example: /gpu submit pytorch-ddp nnodes=2 script=train.py`},
		{"pytorch-ddp", []string{"epochs=ten"},
			`epochs must be a whole number, not "ten". Example: /gpu submit pytorch-ddp epochs=10`},
		{"pytorch-ddp", []string{"nnodes=40"},
			`nnodes=40 is out of range: it must be between 1 and 16. Example: /gpu submit pytorch-ddp nnodes=2`},
		{"pytorch-ddp", []string{"epochs=0"},
			`epochs=0 is out of range: it must be between 1 and 10000. Example: /gpu submit pytorch-ddp epochs=10`},
		{"pytorch-ddp", []string{"train.py"},
			`"train.py" is not key=value. Example: /gpu submit pytorch-ddp nnodes=2 script=train.py`},
		{"pytorch-ddp", []string{"=3"},
			`"=3" has no key before the =. Example: /gpu submit pytorch-ddp nnodes=2 script=train.py`},
		{"pytorch-ddp", []string{"epochs=3", "EPOCHS=4"},
			`Parameter "epochs" is given twice. Example: /gpu submit pytorch-ddp epochs=10`},
		{"pytorch-ddp", []string{"epochs="},
			`epochs needs a value. Example: /gpu submit pytorch-ddp epochs=10`},
		{"pytorch-ddp", []string{"script=../../etc/passwd"},
			`script must be a path inside the team storage without "..", not "../../etc/passwd". Example: /gpu submit pytorch-ddp script=train.py`},
		{"pytorch-ddp", []string{"script=$(reboot)"},
			`script must be a path inside the team storage made of letters, digits and . _ - + / (not starting with -), not "$(reboot)". Example: /gpu submit pytorch-ddp script=train.py`},
		{"pytorch-ddp", []string{"script=-c"},
			`script must be a path inside the team storage made of letters, digits and . _ - + / (not starting with -), not "-c". Example: /gpu submit pytorch-ddp script=train.py`},
		{"pytorch-fsdp", []string{"sharding=zero3"},
			`sharding must be full_shard, shard_grad_op, hybrid_shard or no_shard, not "zero3". Example: /gpu submit pytorch-fsdp sharding=hybrid_shard`},
		{"pytorch-fsdp", []string{"activation_checkpointing=maybe"},
			`activation_checkpointing must be true or false, not "maybe". Example: /gpu submit pytorch-fsdp activation_checkpointing=true`},
		{"checkpoint-training", []string{"checkpoint_lead=5 minutes"},
			`checkpoint_lead must be a duration like 30m or 1h30m, not "5 minutes". Example: /gpu submit checkpoint-training checkpoint_lead=10m`},
		{"checkpoint-training", []string{"checkpoint_lead=5m\nrm -rf /"},
			`checkpoint_lead must be a duration like 30m or 1h30m, on one line: a line break cannot be part of it. Example: /gpu submit checkpoint-training checkpoint_lead=10m`},
		{"pytorch-ddp", []string{"epochs=3\n4"},
			`epochs must be a whole number, on one line: a line break cannot be part of it. Example: /gpu submit pytorch-ddp epochs=10`},
		{"pytorch-fsdp", []string{"sharding=hybrid_shard\r\nx"},
			`sharding must be full_shard, shard_grad_op, hybrid_shard or no_shard, on one line: a line break cannot be part of it. Example: /gpu submit pytorch-fsdp sharding=hybrid_shard`},
		{"pytorch-fsdp", []string{"activation_checkpointing=tr\x00ue"},
			`activation_checkpointing must be true or false, on one line: a control character cannot be part of it. Example: /gpu submit pytorch-fsdp activation_checkpointing=true`},
		{"pytorch-ddp", []string{"script=train.py\nrm"},
			`script must be a path inside the team storage, on one line: a line break cannot be part of it. Example: /gpu submit pytorch-ddp script=train.py`},
		{"checkpoint-training", []string{"checkpoint_lead=5min"},
			`checkpoint_lead must be a duration like 30m or 1h30m, not "5min". Example: /gpu submit checkpoint-training checkpoint_lead=10m`},
		{"checkpoint-training", []string{"checkpoint_lead=2h"},
			`checkpoint_lead=2h is out of range: it must be between 1m and 1h. Example: /gpu submit checkpoint-training checkpoint_lead=10m`},
		{"vllm-server", []string{"model=a\tb"},
			`model must be like meta-llama/Meta-Llama-3-8B-Instruct (Hugging Face model id, or a path in the team storage), on one line: a tab cannot be part of it. Example: /gpu submit vllm-server model=meta-llama/Meta-Llama-3-8B-Instruct`},
		{"vllm-server", []string{"model=x;rm"},
			`model must be like meta-llama/Meta-Llama-3-8B-Instruct (Hugging Face model id, or a path in the team storage), not "x;rm": ";" cannot be part of it. Example: /gpu submit vllm-server model=meta-llama/Meta-Llama-3-8B-Instruct`},
		{"cuda-smoke", []string{"size=" + strings.Repeat("9", 600)},
			`size is too long (at most 512 characters). Example: /gpu submit cuda-smoke size=4096`},
		{"pytorch-ddp", []string{strings.Repeat("k", 3000) + "=1"},
			`Unknown parameter "` + strings.Repeat("k", 40) + `…"; nnodes, script and epochs are known. Example: /gpu submit pytorch-ddp nnodes=2 script=train.py`},
	}
	for _, tc := range tests {
		tp, err := c.Get(tc.tmpl)
		if err != nil {
			t.Fatal(err)
		}
		_, err = tp.ParseParams(tc.args)
		if err == nil {
			t.Errorf("%s %v: accepted", tc.tmpl, tc.args)
			continue
		}
		if !templates.IsInvalid(err) {
			t.Errorf("%s %v: %v does not wrap ErrInvalid", tc.tmpl, tc.args, err)
		}
		if err.Error() != tc.want {
			t.Errorf("%s %v:\n got: %s\nwant: %s", tc.tmpl, tc.args, err, tc.want)
		}
	}
}

func TestParseParamsAccepts(t *testing.T) {
	c := catalog(t)
	ddp, _ := c.Get("pytorch-ddp")
	got, err := ddp.ParseParams([]string{"nnodes=2", " Script=src/train.py ", "", "epochs=3"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got["nnodes"] != "2" || got["script"] != "src/train.py" || got["epochs"] != "3" {
		t.Errorf("got %v", got)
	}
	fsdp, _ := c.Get("pytorch-fsdp")
	for _, v := range []string{"yes", "no", "TRUE", "0", "on"} {
		if _, err := fsdp.ParseParams([]string{"activation_checkpointing=" + v}); err != nil {
			t.Errorf("bool %q: %v", v, err)
		}
	}
	if _, err := fsdp.ParseParams([]string{"sharding=HYBRID_SHARD"}); err != nil {
		t.Errorf("enum is case-insensitive: %v", err)
	}
	jl, _ := c.Get("jupyterlab")
	if p, err := jl.ParseParams(nil); err != nil || len(p) != 0 {
		t.Errorf("no parameters: %v %v", p, err)
	}
}

func TestEveryExampleWorks(t *testing.T) {
	for _, tp := range catalog(t).List() {
		ex := tp.Example()
		prefix := "/gpu submit " + tp.Name
		if tp.Kind == templates.KindInteractive {
			prefix = "/gpu submit " + tp.Name
		}
		if !strings.HasPrefix(ex, prefix) {
			t.Errorf("%s: example %q", tp.Name, ex)
		}
		out, err := tp.Render(templates.ExampleInput(tp, "", exampleParams(t, tp)))
		if err != nil {
			t.Errorf("%s: example %q: %v", tp.Name, ex, err)
		} else if out.SlurmScript == "" || out.KubernetesYAML == "" {
			t.Errorf("%s: empty rendering", tp.Name)
		}
	}
}

func TestCatalog(t *testing.T) {
	c := catalog(t)
	all := c.List()
	if len(all) < 20 {
		t.Errorf("%d templates, want at least 20", len(all))
	}
	want := []string{
		"jupyterlab", "vscode-server", "ssh-shell", "pytorch-ddp", "pytorch-fsdp", "deepspeed", "jax",
		"tensorflow", "hf-lora", "vllm-server", "triton-server", "ray-cluster", "nccl-allreduce",
		"cuda-smoke", "rapids-notebook", "checkpoint-training", "data-prep", "batch-inference",
		"hparam-sweep", "jupyter-dataset",
	}
	for _, n := range want {
		if _, err := c.Get(n); err != nil {
			t.Error(err)
		}
	}
	for i := 1; i < len(all); i++ {
		if all[i-1].Name >= all[i].Name {
			t.Errorf("List is not sorted: %s before %s", all[i-1].Name, all[i].Name)
		}
	}
	var interactive, cpu, multi int
	for _, tp := range all {
		if tp.Kind == templates.KindInteractive {
			interactive++
			if tp.Connect == nil {
				t.Errorf("%s: interactive without connect details", tp.Name)
			}
		}
		if tp.CPUOnly() {
			cpu++
		}
		if tp.MultiNode {
			multi++
		}
		if tp.Version < 1 || tp.Title == "" || tp.Description == "" || len(tp.Tags) == 0 {
			t.Errorf("%s: incomplete definition", tp.Name)
		}
	}
	if interactive == 0 || cpu == 0 || multi == 0 {
		t.Errorf("interactive %d, CPU-only %d, multi-node %d: want some of each", interactive, cpu, multi)
	}

	if got := c.Search("jupyter"); len(got) < 3 || got[0].Name != "jupyter-dataset" {
		t.Errorf("Search(jupyter) = %v", names(got))
	}
	if got := c.Search("LLM"); len(got) == 0 {
		t.Error("Search(LLM) found nothing")
	}
	if got := c.Search(""); len(got) != len(all) {
		t.Errorf("Search(\"\") = %d templates", len(got))
	}
	if got := c.Search("no-such-thing"); len(got) != 0 {
		t.Errorf("Search(no-such-thing) = %v", names(got))
	}

	for name, want := range map[string]string{
		"pytorch-dp": `There is no template "pytorch-dp"; did you mean pytorch-ddp? Example: /gpu template pytorch-ddp`,
		"notebook":   `There is no template "notebook"; /gpu templates notebook lists 3 that match. Example: /gpu template`,
		"zzz":        `There is no template "zzz"; /gpu templates lists all`,
	} {
		_, err := c.Get(name)
		if err == nil || !templates.IsInvalid(err) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Get(%q) = %v, want %q…", name, err, want)
		}
	}
	if tp, err := c.Get(" PyTorch-DDP "); err != nil || tp.Name != "pytorch-ddp" {
		t.Errorf("Get is not forgiving about case and spaces: %v", err)
	}
}

func names(ts []*templates.Template) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

// A value is read as it was checked, without the white space around it: a line break before a
// model name (model=" \n0", as the fuzzer found) is no part of the value, and a refusal that keeps
// the value gives a one-line example.
func TestAValueIsKeptWithoutTheWhiteSpaceAroundIt(t *testing.T) {
	tp, err := catalog(t).Get("batch-inference")
	if err != nil {
		t.Fatal(err)
	}
	ps, err := tp.ParseParams([]string{"model= \n0", "input=datasets/val\t", "output=predictions/val"})
	if err != nil {
		t.Fatal(err)
	}
	if ps["model"] != "0" || ps["input"] != "datasets/val" {
		t.Errorf("params %q; want the values without the white space around them", ps)
	}
}
