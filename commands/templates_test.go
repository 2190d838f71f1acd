package commands

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/workload"
	qmtemplates "github.com/acme/quartermaster/templates"
)

func templateHarness(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t)
	cat, err := templates.Load(qmtemplates.FS)
	if err != nil {
		t.Fatal(err)
	}
	AddTemplates(h.bot, cat, workload.Settings{})
	return h
}

func TestTemplatesList(t *testing.T) {
	h := templateHarness(t)
	r := h.say("alice@acme.example", "/gpu templates")
	if r.Error || len(r.Sections) != 20 || !strings.HasPrefix(r.Text, "20 templates") {
		t.Fatalf("/gpu templates: %d sections, %q", len(r.Sections), r.Text)
	}
	r = h.say("alice@acme.example", "/gpu templates jupyter")
	if r.Error || len(r.Sections) == 0 || !strings.HasPrefix(r.Sections[0].Title, "jupyter") {
		t.Fatalf("/gpu templates jupyter: %+v", r)
	}
	for _, s := range r.Sections {
		if !strings.Contains(s.Text, "/gpu ") {
			t.Errorf("%s has no example: %q", s.Title, s.Text)
		}
	}
	// Anyone may browse, even someone the directory does not know.
	if r := h.say("stranger@elsewhere.example", "/gpu templates vllm"); r.Error {
		t.Errorf("a stranger browsing: %s", r.Text)
	}
	r = h.say("alice@acme.example", "/gpu templates zzzz")
	if !r.Error || !strings.Contains(r.Text, `No template matches "zzzz"`) || !strings.Contains(r.Text, "Example: /gpu templates") {
		t.Errorf("no match: %q", r.Text)
	}
}

func TestTemplateShow(t *testing.T) {
	h := templateHarness(t)
	r := h.say("lee@acme.example", "/gpu template pytorch-ddp")
	if r.Error || len(r.Sections) != 2 {
		t.Fatalf("/gpu template pytorch-ddp: %+v", r)
	}
	if !strings.Contains(r.Text, "Parameters:") || !strings.Contains(r.Text, "Example: /gpu submit pytorch-ddp") {
		t.Errorf("text %q", r.Text)
	}
	slurm, manifest := r.Sections[0], r.Sections[1]
	for _, w := range []string{"#!/bin/bash", "#SBATCH --partition=train", "#SBATCH --gres=gpu:h100:", "team language"} {
		if !strings.Contains(slurm.Text+slurm.Title, w) {
			t.Errorf("Slurm section lacks %q:\n%s", w, slurm.Text)
		}
	}
	if !strings.Contains(manifest.Text, "kind: Pod") && !strings.Contains(manifest.Text, "kind: Job") {
		t.Errorf("manifest has no Pod or Job:\n%s", manifest.Text)
	}
	for _, w := range []string{`namespace: "qm-language"`, `"nvidia.com/gpu"`, "activeDeadlineSeconds: 14400"} {
		if !strings.Contains(manifest.Text, w) {
			t.Errorf("manifest lacks %q:\n%s", w, manifest.Text)
		}
	}
	if r := h.say("stranger@elsewhere.example", "/gpu template jupyterlab"); r.Error || !strings.Contains(r.Sections[0].Text, "--partition=interactive") {
		t.Errorf("a stranger's look at jupyterlab: %+v", r)
	}
	r = h.say("alice@acme.example", "/gpu template pytorch-dpp")
	if !r.Error || !strings.Contains(r.Text, "did you mean pytorch-ddp") || !strings.Contains(r.Text, "Example: /gpu template pytorch-ddp") {
		t.Errorf("misspelt: %q", r.Text)
	}
}

func TestSubmit(t *testing.T) {
	h := templateHarness(t)
	ctx := context.Background()
	r := h.say("alice@acme.example", "/gpu submit cuda-smoke size=4096 for=2h")
	if r.Error || !strings.Contains(r.Text, "runs under lease L-1") || !strings.Contains(r.Text, "is active") {
		t.Fatalf("submit: %q", r.Text)
	}
	l, err := h.svc.Get(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if l.Template != "cuda-smoke" || !maps.Equal(l.Params, map[string]string{"size": "4096"}) || l.Class != "interactive" || l.GPUs != 1 || l.Duration.Hours() != 2 {
		t.Errorf("lease %+v", l)
	}
	// A template of 8 GPUs lands on the class that gives 8 without approval; class= and gpus= choose.
	r = h.say("alice@acme.example", "/gpu submit pytorch-ddp script=train.py")
	if l, _ := h.svc.Get(ctx, 2); r.Error || l.Class != "train" || l.GPUs != 8 {
		t.Errorf("pytorch-ddp: %q, lease %+v", r.Text, l)
	}
	r = h.say("alice@acme.example", "/gpu submit hparam-sweep class=train gpus=4 team=vision")
	if l, _ := h.svc.Get(ctx, 3); r.Error || l.Class != "train" || l.GPUs != 4 || len(l.Params) != 0 {
		t.Errorf("hparam-sweep: %q, lease %+v", r.Text, l)
	}
	// One that a rule sends for approval will run once approved, and says so.
	r = h.say("alice@acme.example", "/gpu submit cuda-smoke class=interactive gpus=2")
	if l, _ := h.svc.Get(ctx, 4); r.Error || l.State != qm.PendingApproval || !strings.Contains(r.Text, "will run under lease L-4") || !strings.Contains(r.Text, "waits for approval") {
		t.Errorf("cuda-smoke over the class's limit: %q, lease %+v", r.Text, l)
	}
}

// TestSubmitBadInput: every mistake is one sentence and a working example, and makes no lease.
func TestSubmitBadInput(t *testing.T) {
	h := templateHarness(t)
	for in, want := range map[string]string{
		"/gpu submit cuda-smok":                               "did you mean cuda-smoke",
		"/gpu submit cuda-smoke sise=4096":                    `Unknown parameter "sise" (did you mean size?)`,
		"/gpu submit cuda-smoke size=big":                     "size must be a whole number",
		"/gpu submit cuda-smoke size=1":                       "size=1 is out of range",
		"/gpu submit cuda-smoke 4096":                         `"4096" is not key=value`,
		"/gpu submit cuda-smoke class=gold":                   `There is no class "gold"`,
		"/gpu submit cuda-smoke gpus=0":                       "gpus=0 is not a number of GPUs",
		"/gpu submit cuda-smoke team=language":                "not a member of team language",
		"/gpu submit cuda-smoke for=45d":                      "between 1 minute and 30 days",
		"/gpu submit pytorch-ddp script=t.py nnodes=3 gpus=8": "do not split evenly over 3 nodes",
		"/gpu submit hparam-sweep gpus_per_trial=4 gpus=2":    "more than the lease's 2 GPUs",
	} {
		r := h.say("alice@acme.example", in)
		if !r.Error || !strings.Contains(r.Text, want) {
			t.Errorf("%q: %q; want an error saying %q", in, r.Text, want)
			continue
		}
		msg, ex, ok := strings.Cut(r.Text, " Example: ")
		if !ok || strings.Count(msg, ". ") > 0 || !strings.HasPrefix(ex, "/gpu ") {
			t.Errorf("%q: %q is not one sentence and an example", in, r.Text)
			continue
		}
		// The example works.
		if strings.HasPrefix(ex, "/gpu submit ") && !strings.Contains(ex, "…") {
			if r2 := h.say("alice@acme.example", ex); r2.Error {
				t.Errorf("%q: its example %q is refused: %s", in, ex, r2.Text)
			}
		}
	}
	// Only the working examples made leases.
	all, err := h.svc.List(context.Background(), qm.LeaseFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range all {
		if l.Template == "" {
			t.Errorf("lease %s without a template", l.ID)
		}
	}
}
