package templates_test

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/templates"
)

// A script rendered for a preview, which names no installation, is the one the Slurm backend of
// the default installation (qm) submits: the same comment and the same workspace port. One
// rendered for another installation carries its comment.
func TestAPreviewIsTheDefaultInstallationsScript(t *testing.T) {
	tm, err := catalog(t).Get("jupyterlab")
	if err != nil {
		t.Fatal(err)
	}
	in := templates.ExampleInput(tm, "train", templates.Params{})
	in.Lease = "L-913"
	preview, err := tm.Render(in)
	if err != nil {
		t.Fatal(err)
	}
	in.Slurm.Instance = "qm"
	submitted, err := tm.Render(in)
	if err != nil {
		t.Fatal(err)
	}
	if preview.SlurmScript != submitted.SlurmScript || !strings.Contains(preview.SlurmScript, "#SBATCH --comment=qm:L-913\n") {
		t.Errorf("the preview differs from the script submitted:\n%s\n---\n%s", preview.SlurmScript, submitted.SlurmScript)
	}
	in.Slurm.Instance = "tern-staging"
	other, err := tm.Render(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(other.SlurmScript, "#SBATCH --comment=tern-staging:L-913\n") {
		t.Errorf("another installation's script:\n%s", other.SlurmScript)
	}
}
