package policy

import (
	"strings"
	"testing"
	"time"
)

// TestExpiryWarningDefaultsAndZero: a class without expiry_warning warns 15m before a lease's
// end, one that writes it warns then, and 0 (or 0m) sends no warning.
func TestExpiryWarningDefaultsAndZero(t *testing.T) {
	src := strings.Replace(strings.Replace(orbitPolicy, "%s", "30m", 1),
		"    idle_grace: 5m\n", "    idle_grace: 5m\n    expiry_warning: %s\n", 1)
	for _, tc := range []struct {
		value string
		want  time.Duration
	}{{"20m", 20 * time.Minute}, {"1h30m", 90 * time.Minute}, {"0", 0}, {"0m", 0}} {
		p, err := Load([]byte(strings.Replace(src, "%s", tc.value, 1)), "orbit.yaml")
		if err != nil {
			t.Fatalf("expiry_warning: %s: %v", tc.value, err)
		}
		nb, _ := p.Class("notebook")
		bulk, _ := p.Class("bulk")
		if nb.ExpiryWarning.Duration != tc.want {
			t.Errorf("expiry_warning: %s reads %v, want %v", tc.value, nb.ExpiryWarning.Duration, tc.want)
		}
		if bulk.ExpiryWarning.Duration != 15*time.Minute {
			t.Errorf("a class that writes no expiry_warning warns %v before the end, want 15m", bulk.ExpiryWarning.Duration)
		}
	}
	_, err := Load([]byte(strings.Replace(src, "%s", "soon", 1)), "orbit.yaml")
	if err == nil || !strings.Contains(err.Error(), "orbit.yaml:9:") || !strings.Contains(err.Error(), `"soon" is not a duration`) {
		t.Errorf("expiry_warning: soon: %v", err)
	}
}
