package bot_test

import (
	"testing"

	"github.com/acme/quartermaster/bot"
)

// A list is mostly leases when at least half its sections, and one, are titled with a lease's id.
func TestMostlyLeases(t *testing.T) {
	lease, other := bot.Section{Title: "L-42"}, bot.Section{Title: "train"}
	for _, tc := range []struct {
		ss   []bot.Section
		want bool
	}{
		{nil, false},
		{[]bot.Section{other}, false},
		{[]bot.Section{lease}, true},
		{[]bot.Section{lease, other}, true},
		{[]bot.Section{lease, other, other, other}, false},
	} {
		if got := bot.MostlyLeases(tc.ss); got != tc.want {
			t.Errorf("%v: mostly leases %v, want %v", tc.ss, got, tc.want)
		}
	}
}
