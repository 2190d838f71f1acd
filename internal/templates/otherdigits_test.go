package templates

import (
	"strings"
	"testing"
)

// kilnDefinition is a template of the test's own with a whole number and a duration without a
// lower bound.
const kilnDefinition = `name: kiln-sim
version: 1
title: Kiln simulation
description: Simulates a firing curve.
tags: [test]
kind: batch
example: stages=4 hold=20m
parameters:
  - name: stages
    type: int
    default: "3"
    max: "40"
    description: Firing stages.
  - name: hold
    type: duration
    default: 10m
    description: How long each stage holds.
run: |
  echo {{.P.stages}} {{seconds .P.hold}}
`

// A template's number or duration written with digits other than 0-9, or a negative duration,
// is refused for that, naming the value in 0-9 (or without its minus) and giving it as the
// example, which the template takes.
func TestATemplateValueInOtherDigitsOrNegativeSaysSo(t *testing.T) {
	c, err := Load(withDefinition(t, "kiln-sim.yaml", kilnDefinition))
	if err != nil {
		t.Fatal(err)
	}
	tp, _ := c.Get("kiln-sim")
	for _, tc := range []struct{ arg, want string }{
		{"stages=١٢", `stages=١٢ is written with digits other than 0-9; write the number with the digits 0-9: stages=12. Example: /gpu submit kiln-sim stages=12`},
		{"stages=２", `stages=２ is written with digits other than 0-9; write the number with the digits 0-9: stages=2. Example: /gpu submit kiln-sim stages=2`},
		{"stages=٩٩", `stages=٩٩ is written with digits other than 0-9; write the number with the digits 0-9, like stages=4. Example: /gpu submit kiln-sim stages=4`},
		{"hold=٣٠m", `hold=٣٠m is written with digits other than 0-9; write the duration with the digits 0-9: hold=30m. Example: /gpu submit kiln-sim hold=30m`},
		{"hold=-15m", `hold=-15m is negative, but a duration cannot be negative; write it like hold=15m. Example: /gpu submit kiln-sim hold=15m`},
	} {
		_, err := tp.ParseParams([]string{tc.arg})
		if err == nil {
			t.Errorf("%s is accepted", tc.arg)
			continue
		}
		if got := err.Error(); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.arg, got, tc.want)
		}
		_, ex, _ := strings.Cut(err.Error(), "Example: /gpu submit kiln-sim ")
		if _, err := tp.ParseParams(strings.Fields(ex)); err != nil {
			t.Errorf("the example of %s, %s, is refused: %v", tc.arg, ex, err)
		}
	}
}
