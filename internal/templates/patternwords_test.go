package templates

import (
	"strings"
	"testing"
)

// tideDefinition is a template of the test's own with two patterned parameters: station says in
// words what its pattern admits, buoy does not.
const tideDefinition = `name: tide-fit
version: 1
title: Tide fit
description: Fits a tide model to one station's gauge readings.
tags: [test]
kind: batch
example: station=KW-042 buoy=b7
parameters:
  - name: station
    type: string
    default: KW-001
    pattern: "[A-Z]{2}-[0-9]{3}"
    pattern_description: a station code, two capital letters, a dash and three digits (like KW-042).
    description: The gauge station.
  - name: buoy
    type: string
    default: b1
    pattern: "b[0-9]+"
    description: The buoy whose readings calibrate the fit.
run: |
  echo {{shq .P.station}} {{shq .P.buoy}}
`

// A value refused for not matching a parameter's pattern is refused in words, never with the
// pattern itself: the definition's pattern_description where it gives one, else the parameter's
// example value and description, naming a character the pattern never takes; the example works.
func TestAPatternRefusalSaysInWordsWhatIsExpected(t *testing.T) {
	c, err := Load(withDefinition(t, "tide-fit.yaml", tideDefinition))
	if err != nil {
		t.Fatal(err)
	}
	tp, _ := c.Get("tide-fit")
	for _, tc := range []struct{ arg, want string }{
		{"station=kw42",
			`station must be a station code, two capital letters, a dash and three digits (like KW-042), not "kw42": "k" cannot be part of it. Example: /gpu submit tide-fit station=KW-042`},
		{"buoy=b;7",
			`buoy must be like b7 (The buoy whose readings calibrate the fit), not "b;7": ";" cannot be part of it. Example: /gpu submit tide-fit buoy=b7`},
		{"buoy=7b",
			`buoy must be like b7 (The buoy whose readings calibrate the fit), not "7b". Example: /gpu submit tide-fit buoy=b7`},
		{"buoy=b 7",
			`buoy must be like b7 (The buoy whose readings calibrate the fit), not "b 7": a space cannot be part of it. Example: /gpu submit tide-fit buoy=b7`},
	} {
		_, err := tp.ParseParams([]string{tc.arg})
		if err == nil {
			t.Errorf("%s is accepted", tc.arg)
			continue
		}
		if got := err.Error(); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.arg, got, tc.want)
		}
		if strings.Contains(err.Error(), "[0-9]") || strings.Contains(err.Error(), "{3}") {
			t.Errorf("%s: the refusal shows the pattern: %s", tc.arg, err)
		}
		_, ex, _ := strings.Cut(err.Error(), "Example: /gpu submit tide-fit ")
		if _, err := tp.ParseParams(strings.Fields(ex)); err != nil {
			t.Errorf("the example of %s, %s, is refused: %v", tc.arg, ex, err)
		}
	}
}

// pattern_description is checked when the catalog loads: only with a pattern, words on one
// line, and short enough for a sentence.
func TestPatternDescriptionIsChecked(t *testing.T) {
	for name, tc := range map[string]struct{ from, to, want string }{
		"without a pattern": {`    pattern: "b[0-9]+"` + "\n", "    pattern_description: a buoy like b7\n",
			"tide-fit.yaml:18: pattern_description describes a pattern: give the pattern too"},
		"too long": {"pattern_description: a station code,", "pattern_description: " + strings.Repeat("very ", 30) + "a station code,",
			"tide-fit.yaml:13: pattern_description is at most 120 characters"},
	} {
		_, err := Load(withDefinition(t, "tide-fit.yaml", strings.Replace(tideDefinition, tc.from, tc.to, 1)))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %s…", name, err, tc.want)
		}
	}
}
