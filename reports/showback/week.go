package showback

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// Week is an ISO 8601 week: it starts on Monday at 00:00 in the policy's time zone and lasts until
// the next Monday at 00:00 there, so a week with a daylight saving change has 167 or 169 hours
// (167.5 or 168.5 where the clocks move by half an hour).
type Week struct {
	Year int
	Num  int
}

// String writes the week as 2026-W48.
func (w Week) String() string { return fmt.Sprintf("%04d-W%02d", w.Year, w.Num) }

// WeekOf is the ISO week that holds t in loc.
func WeekOf(t time.Time, loc *time.Location) Week {
	y, n := t.In(loc).ISOWeek()
	return Week{y, n}
}

// weeksIn is how many ISO weeks a year has: 53 when 28 December falls in week 53, else 52.
func weeksIn(year int) int {
	_, n := time.Date(year, time.December, 28, 12, 0, 0, 0, time.UTC).ISOWeek()
	return n
}

// Start is the week's first instant: Monday 00:00 in loc, the first of two where the clocks fall
// back over it, and the jump where they skip from Sunday 24:00 to Monday 01:00 (so the week before
// ends where this one starts, and no hour is in two weeks or in none).
func (w Week) Start(loc *time.Location) time.Time {
	// 4 January is always in week 1; its Monday starts week 1.
	jan4 := time.Date(w.Year, time.January, 4, 12, 0, 0, 0, time.UTC)
	back := (int(jan4.Weekday()) + 6) % 7
	return policy.LocalTime(w.Year, time.January, 4-back+7*(w.Num-1), 0, 0, loc)
}

// End is the first instant after the week: the next Monday 00:00 in loc.
func (w Week) End(loc *time.Location) time.Time { return w.Next().Start(loc) }

// Next is the week after w.
func (w Week) Next() Week {
	if w.Num < weeksIn(w.Year) {
		return Week{w.Year, w.Num + 1}
	}
	return Week{w.Year + 1, 1}
}

// Prev is the week before w.
func (w Week) Prev() Week {
	if w.Num > 1 {
		return Week{w.Year, w.Num - 1}
	}
	return Week{w.Year - 1, weeksIn(w.Year - 1)}
}

// Before reports whether w comes before o.
func (w Week) Before(o Week) bool {
	return w.Year < o.Year || w.Year == o.Year && w.Num < o.Num
}

// maxWeekText bounds what ParseWeek quotes back.
const maxWeekText = 40

// ParseWeek reads an ISO week written as 2026-W48 (or 2026W48, 2026-w48). Anything else, or a week
// its year does not have (2026-W54), is refused with a sentence and an example; example is the week
// to offer, e.g. the last complete one.
func ParseWeek(s string, example Week) (Week, error) { return parseWeek(s, example, "") }

// parseWeek is ParseWeek with more ways to write a week (", this week or last week") offered in
// its refusal.
func parseWeek(s string, example Week, more string) (Week, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	bad := func(why string) error {
		return qm.Errorf(qm.EINVALID, "%s %s; write a week as YEAR-Wnn, such as %s%s.", policy.Quoted(strings.TrimSpace(s), maxWeekText), why, example, more)
	}
	y, n, ok := strings.Cut(t, "W")
	y = strings.TrimSuffix(y, "-")
	if !ok || len(y) != 4 || len(n) < 1 || len(n) > 2 || !digits(y) || !digits(n) {
		return Week{}, bad("is not an ISO week")
	}
	year, _ := strconv.Atoi(y)
	num, _ := strconv.Atoi(n)
	if year < 1970 || year > 9998 {
		return Week{}, bad("is not an ISO week")
	}
	if num < 1 || num > weeksIn(year) {
		return Week{}, bad(fmt.Sprintf("is not a week: %d has weeks 1 to %d", year, weeksIn(year)))
	}
	return Week{year, num}, nil
}

func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// weekOtherWay is a week written without its year (W49, week 49, wk49) or without its W
// (2026-49, 2026/49).
var weekOtherWay = regexp.MustCompile(`^(?i)(?:w|wk|week)\s*-?\s*([0-9]{1,2})$|^([0-9]{4})\s*[-/.]\s*([0-9]{1,2})$`)

// MeantWeek is the week s, which ParseWeek refuses, was written to mean: a week without its year is
// of this year (the year of now, the week it is), or of the year before where this year has not
// reached it; one without its W is of the year it names. False where s is no such week.
func MeantWeek(s string, now Week) (Week, bool) {
	m := weekOtherWay.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return Week{}, false
	}
	if m[1] != "" {
		num, _ := strconv.Atoi(m[1])
		w := Week{Year: now.Year, Num: num}
		if now.Before(w) {
			w.Year--
		}
		return w, num >= 1 && num <= weeksIn(w.Year)
	}
	year, _ := strconv.Atoi(m[2])
	num, _ := strconv.Atoi(m[3])
	return Week{Year: year, Num: num}, year >= 1970 && year <= 9998 && num >= 1 && num <= weeksIn(year)
}
