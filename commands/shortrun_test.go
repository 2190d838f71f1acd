package commands

import (
	"strings"
	"testing"
	"time"
)

// A lease that ran less than a minute before it was released says it ran "<1m" of its
// duration, as its cost says it ran, not "0m", which reads as if it never ran.
func TestALeaseThatRanSecondsSaysUnderAMinute(t *testing.T) {
	h := newHarnessOn(t, otherPolicy)
	id := leaseIn(t, mustOK(t, h.say("rita@borealis.example", "/gpu request 1 dev for 1h")).Text).String()
	h.advance(20 * time.Second)
	mustOK(t, h.say("rita@borealis.example", "/gpu release "+id))
	for _, typed := range []string{"/gpu status " + id, "/gpu list"} {
		r := mustOK(t, h.say("rita@borealis.example", typed))
		ran := ""
		for _, s := range r.Sections {
			for _, f := range s.Fields {
				if f.Label == "Ran" {
					ran = f.Value
				}
			}
		}
		if ran != "<1m of 1h" {
			t.Errorf("%s shows Ran %q, want \"<1m of 1h\"", typed, ran)
		}
	}
}

// A lease released after seconds is told it used under 0.01 GPU-hours, beside what it was
// billed, not 0.00 GPU-hours beside a cost.
func TestALeaseThatRanSecondsUsedUnderAHundredthOfAGPUHour(t *testing.T) {
	h := newHarnessOn(t, otherPolicy)
	id := leaseIn(t, mustOK(t, h.say("rita@borealis.example", "/gpu request 1 dev for 1h")).Text).String()
	h.advance(10 * time.Second)
	r := mustOK(t, h.say("rita@borealis.example", "/gpu release "+id))
	if strings.Contains(r.Text, "0.00 GPU-hours") || !strings.Contains(r.Text, "It used under 0.01 GPU-hours, ") {
		t.Errorf("released after 10 s: %q; want it to say it used under 0.01 GPU-hours", r.Text)
	}
}
