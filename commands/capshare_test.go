package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// policyLine is the line of /gpu policy's Classes section that begins with class's name.
func policyLine(t *testing.T, h *harness, user, class string) string {
	t.Helper()
	r := mustOK(t, h.say(user, "/gpu policy"))
	for _, s := range r.Sections {
		if s.Title != "Classes" {
			continue
		}
		for _, l := range strings.Split(s.Text, "\n") {
			if strings.HasPrefix(l, class+":") {
				return l
			}
		}
	}
	t.Fatalf("/gpu policy has no line for class %s:\n%s", class, r.PlainText())
	return ""
}

// /gpu policy said of a class with a capacity_share that "shared classes hold at most N% of the
// cluster", with that class's own share. The cap binds the classes that have a share, not every
// shared class, and all of them together at the smallest share any declares: in a policy whose
// other shared class has no share, or whose classes declare different shares, the sentence named
// classes the cap does not bind, or a share it does not apply. It names the classes it binds and
// the share that holds.
func TestPolicyTextNamesTheClassesTheCapacityShareBinds(t *testing.T) {
	src, err := os.ReadFile(otherPolicy)
	if err != nil {
		t.Fatal(err)
	}
	write := func(old, new string) string {
		if !strings.Contains(string(src), old) {
			t.Fatalf("%s has no %q", otherPolicy, old)
		}
		f := filepath.Join(t.TempDir(), "p.yaml")
		if err := os.WriteFile(f, []byte(strings.Replace(string(src), old, new, 1)), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	// bigiron is shared too, without a share: the cap is dev's alone.
	h := newHarnessOn(t, write("    isolation: exclusive\n", "    isolation: shared\n"))
	if l := policyLine(t, h, "rita@borealis.example", "dev"); !strings.Contains(l, "dev holds at most 20% of the cluster's GPUs") || strings.Contains(l, "shared classes") {
		t.Errorf("the cap of dev, the only class with a share, reads: %s", l)
	}
	if l := policyLine(t, h, "rita@borealis.example", "bigiron"); strings.Contains(l, "% of the cluster") {
		t.Errorf("bigiron has no share, but reads: %s", l)
	}
	// bigiron declares 50%: dev and bigiron together hold at most 20%, the smaller share.
	h = newHarnessOn(t, write("    isolation: exclusive\n", "    isolation: shared\n    capacity_share: 0.5\n"))
	for _, c := range []string{"dev", "bigiron"} {
		if l := policyLine(t, h, "rita@borealis.example", c); !strings.Contains(l, "dev and bigiron together hold at most 20% of the cluster's GPUs") {
			t.Errorf("the cap on dev and bigiron, in the line of %s, reads: %s", c, l)
		}
	}
}
