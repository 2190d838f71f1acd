package commands

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
)

// Where the catalog's free count holds back GPUs that leases of a class taking GPUs of any type
// may not hold (the scheduler picked their type), the Free now line says how many may be free
// after all, and why; otherwise it is the count alone.
func TestFreeNowSaysHowManyMayBeFreeAfterAll(t *testing.T) {
	b := &Bot{}
	got := b.freeText(qm.ClassStatus{Capacity: 12, Free: 2, FreeUpTo: 5})
	for _, want := range []string{"2 of 12", "up to 5", "any type"} {
		if !strings.Contains(got, want) {
			t.Errorf("with 2 of 12 free, up to 5, the catalog says %q; want it to say %q", got, want)
		}
	}
	if got := b.freeText(qm.ClassStatus{Capacity: 12, Free: 2}); got != "2 of 12" {
		t.Errorf("with 2 of 12 free, the catalog says %q; want \"2 of 12\"", got)
	}
}
