package commands

import (
	"strings"
	"testing"
)

// The catalog's Free now says why fewer GPUs are free than the class has idle when the capacity
// share is what holds them back, in the words a queued request's reason uses, so that "4 of 8"
// with nothing running is not read as 4 GPUs taken; a class the share does not bind says nothing
// of it.
func TestCatalogSaysTheCapacityShareHoldsGPUsBack(t *testing.T) {
	h := newHarnessOn(t, otherPolicy)
	free := func() (dev, big string) {
		r := mustOK(t, h.say("rita@borealis.example", "/gpu catalog"))
		for _, s := range r.Sections {
			for _, f := range s.Fields {
				if f.Label != "Free now" {
					continue
				}
				switch {
				case strings.HasPrefix(s.Title, "dev"):
					dev = f.Value
				case strings.HasPrefix(s.Title, "bigiron"):
					big = f.Value
				}
			}
		}
		return dev, big
	}
	dev, big := free()
	if !strings.HasPrefix(dev, "4 of 8") || !strings.Contains(dev, "dev may hold 4 GPUs at once (its capacity share) and holds 0") {
		t.Errorf("dev, capped at 4 of the cluster's 20 GPUs, nothing running: Free now %q, want 4 of 8 and that its capacity share allows 4", dev)
	}
	if big != "12 of 12" {
		t.Errorf("bigiron, without a share: Free now %q, want 12 of 12 and nothing more", big)
	}
	mustOK(t, h.say("rita@borealis.example", "/gpu request 2 dev for 1h"))
	if dev, _ = free(); !strings.HasPrefix(dev, "2 of 8") || !strings.Contains(dev, "holds 2") {
		t.Errorf("dev with 2 GPUs leased: Free now %q, want 2 of 8 and that the share's 4 hold 2", dev)
	}
}
