package commands

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/workload"
	qmtemplates "github.com/acme/quartermaster/templates"
)

// kelpPolicy is a policy of its own, with names none of the other policies use: classes tidal
// and abyss, teams kelp-forest and reef, data classes brine and silt.
const kelpPolicy = `organization: Kelp Station
currency: NZD
timezone: Pacific/Auckland
classes:
  - name: tidal
    description: Shared L4 slices
    sku: L4
    gpu_memory_gib: 24
    price_per_gpu_hour: 0.60
    isolation: shared
    max_gpus: 4
    max_duration: 12h
    idle_timeout: 30m
    idle_grace: 10m
    slurm: {partition: tidal, gres: "gpu:l4"}
    kubernetes: {resource: nvidia.com/gpu, node_selector: {pool: tidal}}
  - name: abyss
    description: Whole H100 nodes
    sku: H100
    gpu_memory_gib: 80
    price_per_gpu_hour: 3.10
    isolation: exclusive
    max_gpus: 8
    max_duration: 2d
    idle_timeout: 1h
    idle_grace: 15m
    slurm: {partition: abyss, gres: "gpu:h100"}
    kubernetes: {resource: nvidia.com/gpu, node_selector: {pool: abyss}}
default_quota: {gpus: {tidal: 1, abyss: 0}, gpu_hours_per_week: 10}
teams:
  - name: kelp-forest
    idp_groups: [grp-kelp]
    budget_owners: [olin@kelp.example]
    quota: {gpus: {tidal: 4, abyss: 8}, gpu_hours_per_week: 500}
    data_classes: [brine, silt]
  - name: reef
    idp_groups: [grp-reef]
    budget_owners: [rua@kelp.example]
    quota: {gpus: {tidal: 4, abyss: 8}, gpu_hours_per_week: 500}
    data_classes: [brine]
exceptions:
  - name: over-quota
    when: usage.gpus_in_use + request.gpus > team.quota.gpus[class.name]
    why: Past the team's quota
approvals:
  timeout: 12h
  self_approval: false
  fallback_approvers: [ops@kelp.example]
backend: sim
directory:
  - {user: mara@kelp.example, groups: [grp-kelp, grp-reef]}
  - {user: olin@kelp.example, groups: [grp-kelp]}
  - {user: rua@kelp.example, groups: [grp-reef]}
  - {user: ops@kelp.example, groups: [ops]}
sim:
  nodes:
    - {name: l4, count: 2, class: tidal, gpus: 4}
    - {name: h100, count: 2, class: abyss, gpus: 8}
`

// kelpOn is the bot on kelpPolicy with a catalog of its own: the embedded templates jupyterlab
// and cuda-smoke, named lagoon-lab and depth-probe.
func kelpOn(t *testing.T) *harness {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kelp.yaml")
	if err := os.WriteFile(path, []byte(kelpPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarnessOn(t, path)
	files := fstest.MapFS{}
	err := fs.WalkDir(qmtemplates.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(qmtemplates.FS, p)
		switch p {
		case "jupyterlab.yaml":
			files["lagoon-lab.yaml"] = &fstest.MapFile{Data: []byte(strings.Replace(string(b), "name: jupyterlab\n", "name: lagoon-lab\n", 1))}
		case "cuda-smoke.yaml":
			files["depth-probe.yaml"] = &fstest.MapFile{Data: []byte(strings.Replace(string(b), "name: cuda-smoke\n", "name: depth-probe\n", 1))}
		default:
			if strings.HasPrefix(p, "layouts/") {
				files[p] = &fstest.MapFile{Data: b}
			}
		}
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

// refusedAs says ask (a /gpu command without its /gpu) as who, which must be refused with one
// sentence holding says and the example /gpu example, which must then not be refused.
func refusedAs(t *testing.T, h *harness, who, ask, says, example string) {
	t.Helper()
	got := h.say(who, "/gpu "+ask)
	msg, _, _ := strings.Cut(got.Text, " Example: ")
	if !got.Error || !strings.Contains(msg, says) || strings.Contains(msg, ". ") || exampleOf(t, got.Text) != example {
		t.Errorf("/gpu %s answered %q; want one sentence with %q and the example /gpu %s", ask, got.Text, says, example)
		return
	}
	if again := h.say(who, "/gpu "+example); again.Error {
		t.Errorf("/gpu %s: its example /gpu %s answered %q", ask, example, again.Text)
	}
}

// A template's name where a team goes (@lagoon-lab, as a mention, or after team) is said to be a
// template, not a user group, a person or a team; the example names it where a request names its
// template (template NAME), everything else typed kept, or, where the command takes no template
// there, is the command without it.
func TestATemplateWhereATeamGoesIsSaidToBeATemplate(t *testing.T) {
	h := kelpOn(t)
	for _, tc := range []struct{ ask, says, example string }{
		{"request 1 tidal 4h @lagoon-lab", `"@lagoon-lab" is a template, not a team;`, "request 1 tidal for 4h template lagoon-lab"},
		{"request 2 tidal for 3h team @lagoon-lab data silt", `"@lagoon-lab" is a template, not a team;`, "request 2 tidal for 3h template lagoon-lab data silt"},
		{"request 1 tidal 2h team depth-probe exclusive", `"depth-probe" is a template, not a team;`, "request 1 tidal for 2h template depth-probe exclusive"},
		{"request 1 tidal 4h lagoon-lab", `"lagoon-lab" is a template;`, "request 1 tidal for 4h template lagoon-lab"},
		{"request 1 tidal 2h team=@depth-probe", `"@depth-probe" is a template, not a team;`, "request 1 tidal for 2h template depth-probe"},
		{"submit depth-probe size=128 team=@lagoon-lab", `"@lagoon-lab" is a template, not a team;`, "submit depth-probe size=128"},
		{"quota @lagoon-lab", `"@lagoon-lab" is a template, not a team;`, "quota"},
	} {
		refusedAs(t, h, "mara@kelp.example", tc.ask, tc.says, tc.example)
		if got := h.say("mara@kelp.example", "/gpu "+tc.ask); strings.Contains(got.Text, "user group") {
			t.Errorf("/gpu %s answered %q; a template is no user group", tc.ask, got.Text)
		}
	}
}

// A request that names its team, data class, length, class or GPUs as /gpu submit does (team=reef)
// is told how a request writes it, with the request so written as the example; before, team=reef
// was refused as a template parameter, or as no parameter of the template the request names.
func TestASubmitWordInARequestIsWrittenAsARequestWritesIt(t *testing.T) {
	h := kelpOn(t)
	for _, tc := range []struct{ ask, says, example string }{
		{"request 1 tidal for 2h team=reef", `"team=reef" is how /gpu submit names a team; a request writes team reef.`, "request 1 tidal for 2h team reef"},
		{"request 1 tidal for 2h template depth-probe size=128 data=silt", `"data=silt" is how /gpu submit names a data class; a request writes data silt.`, "request 1 tidal for 2h template depth-probe size=128 data silt"},
		{"request 1 tidal for=3h", `"for=3h" is how /gpu submit names how long; a request writes for 3h.`, "request 1 tidal for 3h"},
		{"request 2 class=abyss for 1h", `"class=abyss" is how /gpu submit names a class;`, "request 2 abyss for 1h"},
		{"request gpus=2 tidal for 1h", `"gpus=2" is how /gpu submit names the number of GPUs;`, "request 2 tidal for 1h"},
		{"request 1 tidal for 2h template=depth-probe size=128", `"template=depth-probe" is not how a request names its template; a request writes template depth-probe.`, "request 1 tidal for 2h template depth-probe size=128"},
		{"request 1 tidal for 2h size=128 template=depth-probe", `"template=depth-probe" is not how a request names its template;`, "request 1 tidal for 2h template depth-probe size=128"},
	} {
		refusedAs(t, h, "mara@kelp.example", tc.ask, tc.says, tc.example)
	}
}
