package slurm_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/slurm"
	"github.com/acme/quartermaster/internal/store/storetest"
	"github.com/acme/quartermaster/internal/workload"
)

// tree lists every path under dir, for seeing that nothing was made there.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err == nil {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// TestStorageOnlyOwnTeam runs on the real test cluster. A job of team vision runs with vision's
// storage as its working directory and in its environment, and the directory its parameter names
// mounted from inside it. Every way of pointing it at team language's storage is refused before
// anything is submitted or created: ".." and absolute paths in path parameters, a symlink inside
// vision's storage, language's path in a free-text parameter, a job directory or team storage
// that is a symlink into language's, a template whose script names language's storage, and an
// #SBATCH path outside the team's storage.
func TestStorageOnlyOwnTeam(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	team, _ := e.svc.Policy.Team("vision")
	vision := team.Storage.Path
	other, _ := e.svc.Policy.Team("language")
	language := other.Storage.Path
	if err := os.MkdirAll(filepath.Join(vision, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(language, "secret"), []byte("language's"), 0o600); err != nil {
		t.Fatal(err)
	}

	out := e.request("alice@acme.example", 1, "train", time.Hour, "probe", map[string]string{"dataset": "in", "note": "hello"})
	l := e.waitLease(out.Lease.ID, qm.Active)
	jobDir := filepath.Join(vision, ".quartermaster", l.ID.String())
	if kv := e.slurmCmd("scontrol", "show", "job", "-o", l.Ref); !strings.Contains(kv, "WorkDir="+jobDir+" ") {
		t.Errorf("job %s does not work in %s: %s", l.Ref, jobDir, kv)
	}
	var probe []string
	e.eventually("probe.txt", func() bool {
		b, err := os.ReadFile(filepath.Join(jobDir, "probe.txt"))
		probe = strings.Split(strings.TrimSpace(string(b)), "\n")
		return err == nil
	})
	if want := []string{vision, vision, filepath.Join(vision, "in"), "hello"}; strings.Join(probe, "|") != strings.Join(want, "|") {
		t.Errorf("the job saw PWD, QM_DATA, QM_IN, note = %q, want %q", probe, want)
	}
	if _, err := e.svc.Release(ctx, "alice@acme.example", l.ID); err != nil {
		t.Fatal(err)
	}
	languageBefore := tree(t, language)

	// Each refusal happens in Start, before sbatch: the lease's id never reaches a job.
	id := qm.LeaseID(9000)
	refused := func(b *slurm.Backend, what, tmpl string, params map[string]string, want string) {
		t.Helper()
		id++
		lease := &qm.Lease{ID: id, User: "alice@acme.example", Team: "vision", Class: "train", GPUs: 1, Duration: time.Hour, Template: tmpl, Params: params}
		_, err := b.Start(ctx, lease)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", what, err, want)
		}
		if n := e.jobsOf(id); n != 0 {
			t.Errorf("%s: %d jobs were submitted", what, n)
		}
	}
	refused(e.backend, "dot-dot", "probe", map[string]string{"dataset": "../language"}, `without ".."`)
	refused(e.backend, "absolute path", "probe", map[string]string{"dataset": language + "/secret"}, "must be inside the team storage")
	if err := os.Symlink(language, filepath.Join(vision, "shared")); err != nil {
		t.Fatal(err)
	}
	refused(e.backend, "symlink", "probe", map[string]string{"dataset": "shared"}, "dataset=shared leads outside team vision's storage")
	refused(e.backend, "symlink below", "probe", map[string]string{"dataset": "shared/deeper"}, "leads outside team vision's storage")
	refused(e.backend, "free text", "probe", map[string]string{"note": language + "/secret"}, "points into team language's storage")
	refused(e.backend, "free text with ..", "probe", map[string]string{"note": "in/../../language"}, `climbs out of a directory with ".."`)

	// vision's job directories lead into language's storage.
	qmDir := filepath.Join(vision, ".quartermaster")
	if err := os.Rename(qmDir, qmDir+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(language, qmDir); err != nil {
		t.Fatal(err)
	}
	refused(e.backend, "job directory symlink", "probe", nil, "the job directory")
	_ = os.Remove(qmDir)

	// vision's storage itself is a symlink to language's.
	link := filepath.Join(filepath.Dir(vision), "vision-link")
	if err := os.Symlink(language, link); err != nil {
		t.Fatal(err)
	}
	team.Storage.Path = link
	refused(e.backend, "storage symlink", "probe", nil, "which is team language's")
	team.Storage.Path = vision

	// Templates that reach elsewhere themselves.
	odd, err := slurm.New(slurm.Config{Policy: e.svc.Policy, Instance: e.inst, Env: []string{"SLURM_CONF=" + e.conf}, Logger: storetest.Logger(t),
		Workload: workload.Settings{DefaultTemplate: "sleeper"}, Catalog: catalogWith(t, map[string]string{
			"snoop.yaml": strings.Replace(testTemplates["nap.yaml"], "name: nap", "name: snoop", 1) + "  cat " + language + "/secret\n",
			"escape.yaml": strings.Replace(testTemplates["nap.yaml"], "name: nap", "name: escape", 1) +
				"slurm:\n  directives: [\"--error=/tmp/qm-escape-%j.err\"]\n",
		})})
	if err != nil {
		t.Fatal(err)
	}
	refused(odd, "template naming language's storage", "snoop", nil, "names team language's storage")
	refused(odd, "#SBATCH path outside", "escape", nil, "#SBATCH path /tmp/qm-escape-%j.err outside team vision's storage")

	if after := tree(t, language); after != languageBefore {
		t.Errorf("language's storage changed:\nbefore\n%s\nafter\n%s", languageBefore, after)
	}
}
