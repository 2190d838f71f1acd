package showback_test

import (
	"regexp"
	"testing"

	"github.com/acme/quartermaster/reports/showback"
)

// FuzzMeantWeek: whatever is typed, a week MeantWeek reads is one ParseWeek takes as it writes it
// (so the example that offers it works), and a week without its year is never after now.
func FuzzMeantWeek(f *testing.F) {
	for _, s := range []string{"W49", "w53", "week 1", "wk-52", "2026-49", "2026/53", "2027.1", "W0", "W99", "1969-1", " W 7 "} {
		f.Add(s, 2026, 50)
	}
	f.Add("W53", 2027, 2)
	f.Fuzz(func(t *testing.T, s string, year, num int) {
		now := showback.Week{Year: 1970 + abs(year)%8000, Num: 1 + abs(num)%52}
		w, ok := showback.MeantWeek(s, now)
		if !ok {
			return
		}
		if back, err := showback.ParseWeek(w.String(), showback.Week{}); err != nil || back != w {
			t.Fatalf("%q at %v means %v, which reads back as %v, %v", s, now, w, back, err)
		}
		if yearless := !fourDigits.MatchString(s); yearless && now.Before(w) {
			t.Fatalf("%q at %v means %v, after now", s, now, w)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -(n + 1)
	}
	return n
}

var fourDigits = regexp.MustCompile(`[0-9]{4}`)
