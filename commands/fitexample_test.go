package commands

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/workload"
	qmtemplates "github.com/acme/quartermaster/templates"
)

// heronPolicy is a small policy of its own: one class of slices, two teams with different
// quotas (otters: 2 GPUs at once and 6 GPU-hours a week; ravens: 3 at once and plenty of
// hours), and una in both, otters first. Names, currency and time zone are none of the example's.
const heronPolicy = `organization: Heron Mill
currency: ZAR
timezone: Africa/Johannesburg
classes:
  - name: pico
    description: Small A10 slices
    sku: A10
    gpu_memory_gib: 24
    price_per_gpu_hour: 0.55
    isolation: shared
    max_gpus: 4
    max_duration: 12h
    idle_timeout: 30m
    idle_grace: 10m
    slurm: {partition: pico, gres: "gpu:a10"}
    kubernetes: {resource: nvidia.com/gpu, node_selector: {pool: pico}}
default_quota: {gpus: {pico: 1}, gpu_hours_per_week: 10}
teams:
  - name: otters
    idp_groups: [grp-otters]
    budget_owners: [olga@heron.example]
    quota: {gpus: {pico: 2}, gpu_hours_per_week: 6}
    data_classes: [tan]
  - name: ravens
    idp_groups: [grp-ravens]
    budget_owners: [rolf@heron.example]
    quota: {gpus: {pico: 3}, gpu_hours_per_week: 500}
    data_classes: [ink, tan]
exceptions:
  - name: over-quota
    when: usage.gpus_in_use + request.gpus > team.quota.gpus[class.name]
    why: Past the team's quota
approvals:
  timeout: 12h
  self_approval: false
  fallback_approvers: [ops@heron.example]
backend: sim
directory:
  - {user: una@heron.example, groups: [grp-otters, grp-ravens]}
  - {user: olga@heron.example, groups: [grp-otters]}
  - {user: rolf@heron.example, groups: [grp-ravens]}
  - {user: ops@heron.example, groups: [ops]}
sim:
  nodes:
    - {name: a10, count: 1, class: pico, gpus: 4}
`

// noteTemplate is a template of the test's own whose parameter takes free text, spaces and all.
const noteTemplate = `name: note-job
version: 1
title: Note job
description: Prints a note on each GPU.
tags: [test]
kind: batch
resources: {gpus: 1, max_gpus: 4, cpus_per_gpu: 1, memory_gib_per_gpu: 1, shm_gib: 1}
example: msg=hi
parameters:
  - name: msg
    type: string
    default: hi
    description: The note printed.
  - name: times
    type: int
    default: "1"
    min: "1"
    max: "9"
    description: How often it is printed.
run: |
  for i in $(seq {{.P.times}}); do echo {{shq .P.msg}}; done
`

// heronOn is the bot on heronPolicy with the catalog and note-job.
func heronOn(t *testing.T) *harness {
	t.Helper()
	path := filepath.Join(t.TempDir(), "heron.yaml")
	if err := os.WriteFile(path, []byte(heronPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarnessOn(t, path)
	files := fstest.MapFS{"note-job.yaml": {Data: []byte(noteTemplate)}}
	err := fs.WalkDir(qmtemplates.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(qmtemplates.FS, p)
		files[p] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := templates.Load(files)
	if err != nil {
		t.Fatal(err)
	}
	AddTemplates(h.bot, cat, workload.Settings{})
	return h
}

// refusedWith says ask as who, which must be refused with example want; typed back, want must
// be granted at once.
func refusedWith(t *testing.T, h *harness, who, ask, want string) {
	t.Helper()
	r := h.say(who, ask)
	if !r.Error {
		t.Errorf("%s was not refused: %s", ask, r.Text)
		return
	}
	if got := exampleIn(t, r); got != want {
		t.Errorf("%s:\n got example %q (%s)\nwant %q", ask, got, r.Text, want)
		return
	}
	typedBack(t, h, who, ask, want, false)
}

// A job or template request refused for a parameter the template does not have keeps, in its
// example, the user's other parameters, class, GPUs, team, length and data class: only the
// unknown parameter goes (the template's example fills in the parameters not given).
func TestAnUnknownTemplateParameterKeepsTheRest(t *testing.T) {
	h := heronOn(t)
	const una = "una@heron.example"
	for ask, want := range map[string]string{
		"/gpu submit cuda-smoke class=pico gpus=2 for=2h size=1024 sise=9 data tan":            "/gpu submit cuda-smoke class=pico gpus=2 for=2h size=1024 data tan",
		"/gpu submit note-job class=pico gpus=3 team=ravens for=4h times=3 bogus=1":            "/gpu submit note-job class=pico gpus=3 team=ravens for=4h msg=hi times=3",
		"/gpu request 3 pico for 4h template cuda-smoke size=1024 sise=9 team ravens data ink": "/gpu request 3 pico for 4h template cuda-smoke size=1024 team ravens data ink",
		// A value put right: a required parameter the user left out comes from the template's example.
		"/gpu submit hf-lora class=pico gpus=1 for=2h lora_rank=0 epochs=2": "/gpu submit hf-lora class=pico gpus=1 for=2h dataset=datasets/support-chats lora_rank=16 epochs=2",
	} {
		refusedWith(t, h, una, ask, want)
	}
}

// A refusal about size gets an example within what the team the request is charged to may
// hold at once and has left of its week's GPU-hours, for estimates and template requests and
// jobs as for plain requests: fewer GPUs where those at once are passed, a shorter length
// where the week's hours are.
func TestASizeRefusalsExampleFitsTheQuotaAndTheWeek(t *testing.T) {
	h := heronOn(t)
	const una = "una@heron.example" // otters first: 2 at once, 6 GPU-hours a week
	for ask, want := range map[string]string{
		// otters, the team charged where none is named
		"/gpu request 9 pico for 5h":                      "/gpu request 2 pico for 3h",
		`/gpu request 1 pico for 9h data "a b"`:           "/gpu request 1 pico for 6h data tan",
		"/gpu submit cuda-smoke class=pico gpus=9 for=2h": "/gpu submit cuda-smoke class=pico gpus=2 for=2h",
		"/gpu request 9 pico for 5h template cuda-smoke":  "/gpu request 2 pico for 3h template cuda-smoke",
		"/gpu submit cuda-smoke class=pico gpus=9 for=5h": "/gpu submit cuda-smoke class=pico gpus=2 for=3h",
		"/gpu request 9 pico for 2h template note-job":    "/gpu request 2 pico for 2h template note-job",
		// ravens, named
		"/gpu request 9 pico for 5h team ravens":                      "/gpu request 3 pico for 5h team ravens",
		"/gpu submit cuda-smoke class=pico gpus=9 team=ravens for=5h": "/gpu submit cuda-smoke class=pico gpus=3 team=ravens for=5h",
		"/gpu request 9 pico for 5h template cuda-smoke team ravens":  "/gpu request 3 pico for 5h template cuda-smoke team ravens",
	} {
		refusedWith(t, h, una, ask, want)
	}
	// An estimate's example is what a request would be granted at once (otters: the asker's team).
	r := h.say(una, "/gpu estimate 9 pico 5h")
	if got := exampleIn(t, r); got != "/gpu estimate 2 pico 3h" {
		t.Errorf("/gpu estimate 9 pico 5h: example %q (%s), want /gpu estimate 2 pico 3h", got, r.Text)
	} else if again := h.say(una, got); again.Error {
		t.Errorf("the example %s is refused: %s", got, again.Text)
	}
}

// A template parameter's value with spaces, quoted as typed, stays in the request form of a
// refused template request's example, quoted as the parser reads it, and typed back it is
// granted with that value.
func TestAQuotedParameterKeepsTheRequestForm(t *testing.T) {
	h := heronOn(t)
	const una = "una@heron.example"
	for ask, want := range map[string]string{
		`/gpu request 1 pico for 2h template note-job msg="hello world" times=0`: `/gpu request 1 pico for 2h template note-job msg="hello world" times=1`,
		// Cut down to what ravens may hold at once.
		`/gpu request 9 pico for 2h template note-job msg="good night" team ravens data ink`: `/gpu request 3 pico for 2h template note-job msg="good night" team ravens data ink`,
	} {
		refusedWith(t, h, una, ask, want)
	}
	r := mustOK(t, h.say(una, `/gpu request 1 pico for 2h template note-job msg="hello world"`))
	if got := h.lease(leaseIn(t, r.Text)).Params["msg"]; got != "hello world" {
		t.Errorf(`msg="hello world" typed is %q in the lease`, got)
	}
}
