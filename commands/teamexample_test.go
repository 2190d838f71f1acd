package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fernPolicy is a small policy of its own: two classes, two teams whose GPUs are in different
// classes, and ana in both (ferns first). Names, sizes and data classes are none of the
// example's.
const fernPolicy = `organization: Kestrel Works
currency: CHF
timezone: Asia/Tokyo
classes:
  - name: slim
    description: Shared L4 slices
    sku: L4
    gpu_memory_gib: 24
    price_per_gpu_hour: 0.40
    isolation: shared
    max_gpus: 2
    max_duration: 10h
    idle_timeout: 30m
    idle_grace: 10m
    slurm: {partition: slim, gres: "gpu:l4"}
    kubernetes: {resource: nvidia.com/gpu, node_selector: {pool: slim}}
  - name: wide
    description: Whole H100 nodes
    sku: H100
    gpu_memory_gib: 80
    price_per_gpu_hour: 3.10
    isolation: exclusive
    max_gpus: 8
    max_duration: 3d
    idle_timeout: 1h
    idle_grace: 15m
    slurm: {partition: wide, gres: "gpu:h100"}
    kubernetes: {resource: nvidia.com/gpu, node_selector: {pool: wide}}
default_quota: {gpus: {slim: 1, wide: 0}, gpu_hours_per_week: 10}
teams:
  - name: ferns
    idp_groups: [grp-ferns]
    budget_owners: [fay@kestrel.example]
    quota: {gpus: {slim: 2, wide: 0}, gpu_hours_per_week: 900}
    data_classes: [green]
  - name: moss
    idp_groups: [grp-moss]
    budget_owners: [max@kestrel.example]
    quota: {gpus: {slim: 0, wide: 3}, gpu_hours_per_week: 900}
    data_classes: [grey, blue]
exceptions:
  - name: past-quota
    when: usage.gpus_in_use + request.gpus > team.quota.gpus[class.name]
    why: Past the team's quota
approvals:
  timeout: 12h
  self_approval: false
  fallback_approvers: [ops@kestrel.example]
backend: sim
directory:
  - {user: ana@kestrel.example, groups: [grp-ferns, grp-moss], accounts: ["discord:100000000000000001"]}
  - {user: fay@kestrel.example, groups: [grp-ferns]}
  - {user: max@kestrel.example, groups: [grp-moss]}
  - {user: ops@kestrel.example, groups: [ops]}
sim:
  nodes:
    - {name: l4, count: 1, class: slim, gpus: 4}
    - {name: h100, count: 2, class: wide, gpus: 8}
`

// fernsOn is the bot with templates on fernPolicy.
func fernsOn(t *testing.T) *harness {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kestrel.yaml")
	if err := os.WriteFile(path, []byte(fernPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	return templatesOn(t, path)
}

// typedBack types an example back as who: it must be accepted, granted at once unless approval
// says so, in which case wantApproval must say it was expected.
func typedBack(t *testing.T, h *harness, who, ask, example string, wantApproval bool) {
	t.Helper()
	r := h.say(who, example)
	if r.Error {
		t.Errorf("the example of %s, %s, is refused: %s", ask, example, r.Text)
		return
	}
	waits := strings.Contains(r.Text, "approval") || strings.Contains(r.Text, "will decide")
	if waits != wantApproval {
		t.Errorf("the example of %s, %s, was answered %q; want it sent for approval: %v", ask, example, r.Text, wantApproval)
	}
	if strings.Contains(r.Text, "L-") {
		h.say(who, "/gpu release "+leaseIn(t, r.Text).String())
	}
}

// A request that names team T and is refused gets an example on a class T has GPUs in, not one
// of the asker's first team: typed back, it is granted.
func TestARefusedRequestForATeamSuggestsThatTeamsClass(t *testing.T) {
	h := fernsOn(t)
	const ana = "ana@kestrel.example" // ferns first (GPUs of slim), then moss (GPUs of wide)
	for ask, want := range map[string]string{
		"/gpu request 1 bogus-class for 2h team moss": "/gpu request 1 wide for 2h team moss",
		`/gpu request 1 for 2h team moss data "x y"`:  "/gpu request 1 wide for 2h team moss data grey",
		"/gpu request 1 bogus-class for 2h":           "/gpu request 1 slim for 2h",
	} {
		r := h.say(ana, ask)
		if !r.Error {
			t.Errorf("%s was not refused: %s", ask, r.Text)
			continue
		}
		if got := exampleIn(t, r); got != want {
			t.Errorf("%s:\n got example %q (%s)\nwant %q", ask, got, r.Text, want)
			continue
		}
		typedBack(t, h, ana, ask, want, false)
	}
}

// A request refused for its size gets an example that is granted at once: its GPUs within what
// the team's quota leaves, not only within the class's max_gpus and the cluster; where the quota
// leaves none, the quota request that would let it through.
func TestARequestRefusedForSizeSuggestsWhatIsGrantedAtOnce(t *testing.T) {
	h := fernsOn(t)
	const ana = "ana@kestrel.example"
	for ask, want := range map[string]string{
		"/gpu request 40 wide for 5h team moss": "/gpu request 3 wide for 5h team moss",
		"/gpu request 0 wide for 5h team moss":  "/gpu request 1 wide for 5h team moss",
		"/gpu request 9 slim for 5h":            "/gpu request 2 slim for 5h",
	} {
		r := h.say(ana, ask)
		if !r.Error {
			t.Errorf("%s was not refused: %s", ask, r.Text)
			continue
		}
		if got := exampleIn(t, r); got != want {
			t.Errorf("%s:\n got example %q (%s)\nwant %q", ask, got, r.Text, want)
			continue
		}
		typedBack(t, h, ana, ask, want, false)
	}
	// With 2 of moss's 3 GPUs of wide held, 1 is left.
	held := h.say(ana, "/gpu request 2 wide for 5h team moss")
	if held.Error {
		t.Fatalf("holding 2 GPUs of wide: %s", held.Text)
	}
	const ask = "/gpu request 40 wide for 5h team moss"
	if got := exampleIn(t, h.say(ana, ask)); got != "/gpu request 1 wide for 5h team moss" {
		t.Errorf("%s with 2 of 3 held: example %q, want 1 wide", ask, got)
	} else {
		typedBack(t, h, ana, ask, got, false)
	}
	// With all 3 held, none is left: the example is the quota request, which goes to moss's
	// budget owner.
	more := h.say(ana, "/gpu request 1 wide for 5h team moss")
	if more.Error {
		t.Fatalf("holding the third GPU of wide: %s", more.Text)
	}
	got := exampleIn(t, h.say(ana, ask))
	if !strings.HasPrefix(got, "/gpu quota request +") || !strings.Contains(got, " wide ") || !strings.Contains(got, "team moss") {
		t.Fatalf("%s with all 3 held: example %q, want moss's quota request for wide", ask, got)
	}
	typedBack(t, h, ana, ask, got, true)
}

// A template request refused for a parameter keeps the user's form, /gpu request … template …,
// with the length, team and data class typed and the parameters that were right, and typed back
// it is granted.
func TestARefusedTemplateRequestKeepsTheRequestForm(t *testing.T) {
	h := fernsOn(t)
	const ana = "ana@kestrel.example"
	for ask, want := range map[string]string{
		"/gpu request 1 slim for 3h template jupyterlab bogus=1":                                     "/gpu request 1 slim for 3h template jupyterlab root=notebooks",
		"/gpu request 2 wide for 7h template hf-lora dataset=sets/mine epochs=0 team moss data blue": "/gpu request 2 wide for 7h template hf-lora dataset=sets/mine epochs=3 team moss data blue",
		// A template that uses no GPU: the number typed is what was wrong, and stays out.
		"/gpu request 2 for 3h template data-prep script=prep.py input=in/a output=out/b": "/gpu request for 3h template data-prep script=prep.py input=in/a output=out/b",
	} {
		r := h.say(ana, ask)
		if !r.Error {
			t.Errorf("%s was not refused: %s", ask, r.Text)
			continue
		}
		if got := exampleIn(t, r); got != want {
			t.Errorf("%s:\n got example %q (%s)\nwant %q", ask, got, r.Text, want)
			continue
		}
		typedBack(t, h, ana, ask, want, false)
	}
}
