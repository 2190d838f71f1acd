package policy

import "strings"

// timezoneMeant is the place of the time zone database that typed, a timezone no place is named,
// was meant for: the name in another case or with spaces (america/st johns), its place alone
// (St_Johns, St. John's, Reykjavik, or Europe/Reykjavik for Atlantic/Reykjavik), or a name a
// letter or two off one (America/St_John); "" where none is, or more than one is as near.
func timezoneMeant(typed string) string {
	key := func(s string) string { // the letters and digits of s, in lower case
		var b strings.Builder
		for _, r := range strings.ToLower(s) {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '/' {
				b.WriteRune(r)
			}
		}
		return b.String()
	}
	place := func(s string) string { return s[strings.LastIndex(s, "/")+1:] }
	t := key(strings.TrimSpace(typed))
	if t == "" {
		return ""
	}
	names := strings.Fields(tzNames)
	// The whole name, then the place alone, then a name or place a letter or two off.
	for _, match := range []func(n string) (int, bool){
		func(n string) (int, bool) { return 0, key(n) == t },
		func(n string) (int, bool) { return 0, place(key(n)) == place(t) },
		func(n string) (int, bool) {
			d := min(EditDistance(key(n), t), EditDistance(place(key(n)), place(t)))
			return d, d <= 2 && len(place(t)) > 4
		},
	} {
		best, bestD, ties := "", 99, 0
		for _, n := range names {
			d, ok := match(n)
			switch {
			case !ok || d > bestD:
			case d == bestD:
				ties++
			default:
				best, bestD, ties = n, d, 0
			}
		}
		if best != "" {
			if ties > 0 {
				return ""
			}
			return best
		}
	}
	return ""
}
