package workload_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/workload"
)

// TestGrantOfATeamWithoutStorage: a team the policy gives no storage gets ROOT/TEAM, unless that
// lands on another team's storage, which is refused as the install's mistake.
func TestGrantOfATeamWithoutStorage(t *testing.T) {
	cat, p := setup(t)
	l := &qm.Lease{ID: 3, User: "finn@acme.example", Team: "robotics", Class: "interactive", GPUs: 1, Duration: time.Hour}
	w, err := workload.Render(cat, p, l, workload.Settings{StorageRoot: "/scratch/qm"})
	if err != nil || w.Paths.Storage != "/scratch/qm/robotics" || w.Paths.JobDir != "/scratch/qm/robotics/.quartermaster/L-3" {
		t.Fatalf("robotics: %+v %v", w, err)
	}
	if _, err := workload.Render(cat, p, l, workload.Settings{StorageRoot: "/projects"}); err != nil {
		t.Errorf("/projects/robotics is a directory of its own: %v", err)
	}
	p.Teams[1].Storage.Path = "/srv/robotics"
	for _, root := range []string{"/projects/vision/teams", "/srv"} {
		_, err := workload.Render(cat, p, l, workload.Settings{StorageRoot: root})
		if err == nil || templates.IsInvalid(err) || !strings.Contains(err.Error(), "overlaps team") {
			t.Errorf("root %s: %v", root, err)
		}
	}
}

// TestGrantPaths: path parameters come back as absolute paths inside the storage; a value that
// only starts like another team's directory is not that directory.
func TestGrantPaths(t *testing.T) {
	cat, p := setup(t)
	p.Teams[1].Storage.Path = "/projects/vis"
	l := &qm.Lease{ID: 4, User: "alice@acme.example", Team: "vision", Class: "interactive", GPUs: 1, Duration: time.Hour,
		Template: "jupyter-dataset", Params: map[string]string{"dataset": "/projects/vision/datasets/coco", "root": "nb"}}
	w, err := workload.Render(cat, p, l, workload.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if w.Paths.Params["dataset"] != "/projects/vision/datasets/coco" || w.Paths.Params["root"] != "/projects/vision/nb" ||
		len(w.Paths.Mounts) != 1 || w.Paths.Mounts[0] != "/projects/vision/datasets/coco" {
		t.Fatalf("paths: %+v", w.Paths)
	}
	l.Params["root"] = "/projects/vis/x"
	if _, err := workload.Render(cat, p, l, workload.Settings{}); !templates.IsInvalid(err) {
		t.Fatalf("another team's directory as root: %v", err)
	}
}
