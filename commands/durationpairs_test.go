package commands

import (
	"testing"
	"time"
)

// A duration written as numbers and unit words ("2 hours 30 minutes", "1h 30 min") is one
// duration, in every command that takes one, as "1h 30m" is; a second number and unit that is
// not a smaller unit than the one before is still a second duration.
func TestADurationInNumbersAndUnitWordsIsOneDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"/gpu request 1 l4 for 2 hours 30 minutes":             150 * time.Minute,
		"/gpu request 1 l4 for 1 hour 30 min team x":           90 * time.Minute,
		"/gpu request 1 l4 1 hour 30 minutes":                  90 * time.Minute,
		"/gpu request for 1 h 30 m 2 l4":                       90 * time.Minute,
		"/gpu request 1 l4 for 1h 30 min":                      90 * time.Minute,
		"/gpu estimate 1 l4 2 hours 30 minutes":                150 * time.Minute,
		"/gpu extend L-1 1 hour 30 min":                        90 * time.Minute,
		"/gpu extend L-1 1 day 2 hours 30 minutes":             26*time.Hour + 30*time.Minute,
		"/gpu quota request +1 l4 for 1 week 3 days because x": 10 * 24 * time.Hour,
		"/gpu submit cuda-smoke for=1h":                        time.Hour,
		"/gpu submit cuda-smoke for=2 hours 30 minutes size=2": 150 * time.Minute,
		"/gpu submit cuda-smoke for=1h 30m":                    90 * time.Minute,
		"/gpu submit cuda-smoke for=4 h class=l4":              4 * time.Hour,
	} {
		c, err := Parse(in)
		if err != nil {
			t.Errorf("%q is refused: %v", in, err)
			continue
		}
		if c.Duration != want {
			t.Errorf("%q reads as %s, want %s", in, c.Duration, want)
		}
	}
	if c, err := Parse("/gpu request for 2 hours 2 l4"); err != nil || c.GPUs != 2 || c.Class != "l4" || c.Duration != 2*time.Hour {
		t.Errorf("/gpu request for 2 hours 2 l4 = %+v, %v", c, err)
	}
	for _, in := range []string{"/gpu request 1 l4 for 2 hours 3 hours", "/gpu request 1 l4 for 30 min 2 hours", "/gpu extend L-1 1 hour 2 hours",
		"/gpu estimate 1 l4 1 hour 1 hour"} {
		if c, err := Parse(in); err == nil {
			t.Errorf("%q = %+v, want it refused", in, c)
		}
	}
}

// Where a class is named like a unit, a number and that word after the duration are GPUs of that
// class, as they were: the class wins.
func TestANumberAndAClassNamedLikeAUnitAfterADurationAreGPUs(t *testing.T) {
	c, err := ParseFor("/gpu request for 2h 1 m", []string{"l4", "m"})
	if err != nil || c.GPUs != 1 || c.Class != "m" || c.Duration != 2*time.Hour {
		t.Errorf("/gpu request for 2h 1 m with a class m = %+v, %v; want 1 × m for 2h", c, err)
	}
}
