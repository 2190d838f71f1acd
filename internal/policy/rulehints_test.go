package policy

import (
	"strings"
	"testing"
)

// himalRuleHead is a policy of a lab in Kathmandu whose one exception rule is written last.
const himalRuleHead = "organization: Himal Compute\ncurrency: CHF\ntimezone: Asia/Kathmandu\nclasses:\n" +
	"  - {name: sketch, max_gpus: 1, max_duration: 3h, price_per_gpu_hour: 0.35}\n" +
	"  - {name: forge, max_gpus: 4, max_duration: 36h, price_per_gpu_hour: 6.25, isolation: exclusive}\n" +
	"sim: {nodes: [{name: t4, count: 2, class: sketch, gpus: 4}, {name: b2, count: 2, class: forge, gpus: 4}]}\n" +
	"exceptions:\n  - name: lab-rule\n    when: "

// A rule doing arithmetic on a number and a whole number (request.gpu_hours * 2) is refused with
// how it is written so that CEL reads it (2.0, or double() of a field), and the rule written so
// is accepted.
func TestArithmeticMixingNumbersIsToldHowToWriteIt(t *testing.T) {
	for when, c := range map[string]struct{ want, fixed string }{
		`request.gpu_hours * 2 > 10`:                               {"write 2.0 for 2", `request.gpu_hours * 2.0 > 10`},
		`3 + usage.gpu_hours_week > team.quota.gpu_hours_per_week`: {"write 3.0 for 3", `3.0 + usage.gpu_hours_week > team.quota.gpu_hours_per_week`},
		`usage.gpus_in_use * class.price_per_gpu_hour > 50.0`:      {"write double(usage.gpus_in_use)", `double(usage.gpus_in_use) * class.price_per_gpu_hour > 50.0`},
		`request.gpu_hours + request.gpus > 10.0`:                  {"write double(request.gpus)", `request.gpu_hours + double(request.gpus) > 10.0`},
	} {
		wantRuleRefused(t, himalRuleHead, when, c.want)
		if _, err := Load([]byte(himalRuleHead+"'"+strings.ReplaceAll(c.fixed, "'", "''")+"'\n"), "p.yaml"); err != nil {
			t.Errorf("%s, written as told (%s): %v", when, c.fixed, err)
		}
	}
}

// A rule naming a variable rules do not see (now, a clock; time; requests for request) is
// refused naming those they see, the one meant where it is a slip of it, and that they see no
// clock, without CEL's words about containers.
func TestARuleNamingAVariableRulesDoNotSeeNamesThoseTheySee(t *testing.T) {
	for when, want := range map[string]string{
		`now.getDayOfWeek() == 6`:   "undeclared reference to 'now'; rules see request, user, team, usage and class, and no clock, so no rule can look at the time or the day of a request; e.g. request.duration > duration('12h')",
		`requests.gpus > 2`:         "undeclared reference to 'requests'; rules see request, user, team, usage and class; did you mean request.gpus?",
		`timestamp.getHours() > 18`: "rules see request, user, team, usage and class, and no clock",
	} {
		wantRuleRefused(t, himalRuleHead, when, want)
		_, err := Load([]byte(himalRuleHead+"'"+strings.ReplaceAll(when, "'", "''")+"'\n"), "p.yaml")
		if err != nil && strings.Contains(err.Error(), "container") {
			t.Errorf("%s: %v; want no word of CEL's containers", when, err)
		}
	}
}
