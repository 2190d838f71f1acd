package policy

import (
	"os"
	"strings"
	"testing"
)

// idle.utilization_below: an absent key is 5 %; a 0 written in the file is kept, so that no GPU
// counts as idle by its utilization, rather than quietly becoming 5.
func TestIdleUtilizationBelow(t *testing.T) {
	src, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	base := string(src)
	if strings.Contains(base, "utilization_below") {
		t.Fatal("the example policy sets utilization_below; this test adds its own")
	}
	for _, tc := range []struct {
		add  string
		want float64
	}{
		{"", 5},
		{"idle: {utilization_below: 0}\n", 0},
		{"idle: {utilization_below: 12.5}\n", 12.5},
	} {
		p, err := Load([]byte(base+tc.add), "p.yaml")
		if err != nil {
			t.Fatalf("%q: %v", tc.add, err)
		}
		if got := p.Idle.UtilizationBelow; got != tc.want {
			t.Errorf("%q: utilization_below %v, want %v", tc.add, got, tc.want)
		}
	}
}
