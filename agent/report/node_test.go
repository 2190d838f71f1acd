package report_test

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/agent/report"
)

// Node names are taken up to 253 characters (a Kubernetes node name, a DNS subdomain), as Slurm
// and Kubernetes write them; anything else is refused saying why.
func TestNodeNames(t *testing.T) {
	long := strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 61)
	for _, ok := range []string{"gpu-01", "GPU_01", "dgx-a100-07.cluster.example.com", "ip-10-0-1-2.eu-west-1.compute.internal", long, "x"} {
		if p := report.NodeNameProblem(ok); p != "" {
			t.Errorf("%q (%d characters) refused: %s", ok, len(ok), p)
		}
	}
	for name, want := range map[string]string{
		"":          "empty",
		long + "e":  "254 characters long",
		"gpu 01":    `' '`,
		"-gpu01":    "starts with '-'",
		"gpu01;rm":  "';'",
		"gpü01":     "'ü'",
		".gpu":      "starts with '.'",
		"gpu/01":    "'/'",
		"gpu\n01":   `'\n'`,
		"a\x00b":    `'\x00'`,
		"gpu01\xff": `'�'`,
	} {
		if p := report.NodeNameProblem(name); !strings.Contains(p, want) {
			t.Errorf("%q: %q; want it to say %s", name, p, want)
		}
	}
}
