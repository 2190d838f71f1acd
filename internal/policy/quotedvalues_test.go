package policy

import (
	"strings"
	"testing"
)

// A rule that compares a duration, a number or true/false with a value written in quotes (a text)
// is refused, as CEL compares no text with them, with the comparison written as CEL reads it: the
// duration in duration(), the number and true/false without quotes. A duration compared with a
// bare number is told to write a duration.
func TestARuleComparingWithAQuotedValueIsToldHowToWriteIt(t *testing.T) {
	head := "organization: Sakura Bio Lab\ncurrency: JPY\ntimezone: Asia/Tokyo\nclasses:\n" +
		"  - {name: jupyter, max_gpus: 1, max_duration: 6h}\n  - {name: a100-big, max_gpus: 4, max_duration: 48h, isolation: exclusive}\n" +
		"sim: {nodes: [{name: a100, count: 2, class: a100-big, gpus: 4}, {name: l4, count: 1, class: jupyter, gpus: 4}]}\n" +
		"exceptions:\n  - name: lab-rule\n    when: "
	for when, want := range map[string]string{
		`request.duration > '12h'`:                               `found no matching overload for '_>_' applied to '(duration, string)'; write the duration as duration('12h')`,
		`'2d' < request.duration`:                                `write the duration as duration('48h')`,
		`class.max_duration >= '1h30m'`:                          `write the duration as duration('1h30m')`,
		`request.reservation == 'yes'`:                           `found no matching overload for '_==_' applied to '(bool, string)'; true and false are written without quotes: request.reservation is true or false`,
		`request.gpus > '4'`:                                     `found no matching overload for '_>_' applied to '(int, string)'; a number is written without quotes: write 4`,
		`request.gpu_hours >= '12.5'`:                            `a number is written without quotes: write 12.5`,
		`request.duration > 12`:                                  `found no matching overload for '_>_' applied to '(duration, int)'; a duration compares with a duration, e.g. request.duration > duration('12h')`,
		`request.data_class == 'phi' && request.duration > '8h'`: `write the duration as duration('8h')`,
	} {
		wantRuleRefused(t, head, when, want)
	}
}

// A duration in days that CEL cannot read is refused with the same duration in hours and
// minutes, its minutes kept: duration('1d30m') is duration('24h30m').
func TestARuleDurationInDaysKeepsItsMinutes(t *testing.T) {
	head := "organization: Sakura Bio Lab\nclasses:\n  - {name: jupyter, max_gpus: 1, max_duration: 6h}\n" +
		"sim: {nodes: [{name: l4, count: 1, class: jupyter, gpus: 4}]}\nexceptions:\n  - name: lab-rule\n    when: "
	for when, want := range map[string]string{
		`request.duration > duration('1d30m')`: `write duration('24h30m')`,
		`request.duration > duration('2d10m')`: `write duration('48h10m')`,
		`request.duration > duration('1w')`:    `write duration('168h')`,
		`request.duration > '1d30m'`:           `write the duration as duration('24h30m')`,
	} {
		wantRuleRefused(t, head, when, want)
	}
}

// A text field compared with a number is refused without a hint about quotes: nothing in it is
// quoted.
func TestATextFieldComparedWithANumberGetsNoQuoteHint(t *testing.T) {
	head := "organization: Sakura Bio Lab\nclasses:\n  - {name: jupyter, max_gpus: 1, max_duration: 6h}\n" +
		"sim: {nodes: [{name: l4, count: 1, class: jupyter, gpus: 4}]}\nexceptions:\n  - name: lab-rule\n    when: "
	_, err := Load([]byte(head+"\"request.template == 5 || request.data_class == 'phi'\"\n"), "p.yaml")
	if err == nil || !strings.Contains(err.Error(), "applied to '(string, int)'") || strings.Contains(err.Error(), "quotes") {
		t.Errorf("request.template == 5: %v; want it refused, with no word of quotes", err)
	}
}
