package slurm_test

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/slurm"
)

// An instance that cannot be told apart in a job's comment (INSTANCE:L-42) is refused at start in
// one sentence that names the variable it comes from and a value that works.
func TestAnInstanceWithAColonOrASpaceIsRefusedNamingTheVariable(t *testing.T) {
	for _, v := range []string{"prod:a", "gpu prod"} {
		_, err := slurm.New(slurm.Config{Policy: examplePolicy(t), Catalog: testCatalog(t), Instance: v})
		if err == nil {
			t.Fatalf("instance %q was taken", v)
		}
		msg := err.Error()
		for _, want := range []string{"QM_SLURM_INSTANCE=\"" + v + "\"", "QM_SLURM_INSTANCE=qm-prod"} {
			if !strings.Contains(msg, want) {
				t.Errorf("instance %q: %q does not say %q", v, msg, want)
			}
		}
	}
	if _, err := slurm.New(slurm.Config{Policy: examplePolicy(t), Catalog: testCatalog(t), Instance: "qm-prod"}); err != nil {
		t.Fatalf("the example instance is refused: %v", err)
	}
}
