package commands

import (
	"fmt"
	"strings"
	"testing"
)

func optionText(line string) string {
	s, vs, ok := Options(line)
	if !ok {
		return "(none)"
	}
	parts := []string{s.Name}
	for _, v := range vs {
		parts = append(parts, v.Name+":"+v.Value)
	}
	return strings.Join(parts, " ")
}

// A typed command line reads as the options that run it, each value under its own option.
func TestOptionsOfATypedLine(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"/gpu request 1 dev for 4h", "request gpus:1 class:dev duration:4h"},
		{"/gpu request 2 train for 8h template jupyterlab team vision exclusive", "request gpus:2 class:train duration:8h template:jupyterlab team:vision exclusive:true"},
		{"/gpu request 1 dev for 2h template lab size=big mode=x data open", "request gpus:1 class:dev duration:2h template:lab params:size=big mode=x data:open"},
		{"/gpu extend L-42 2h", "extend lease:L-42 duration:2h"},
		{"/gpu deny L-7 use the dev class", "deny lease:L-7 reason:use the dev class"},
		{"/gpu quota request +2 bigiron for 1w because paper deadline", "quota-request gpus:2 class:bigiron duration:1w reason:paper deadline"},
		{"/gpu report this week", "report week:this week"},
		{"/gpu report 2026-W48 speech", "report week:2026-W48 team:speech"},
		{"/gpu submit finetune lr=0.1 class=dev for=2h", "submit template:finetune params:lr=0.1 class:dev duration:2h"},
		{"/gpu status L-3", "status lease:L-3"},
		{"/gpu list", "list"},
		{"/gpu templates vs code", "templates word:vs code"},
		// Not something Text writes back word for word, or not a command: no options.
		{"/gpu extend L-42 by 2h", "(none)"},
		{"/gpu status banana", "(none)"},
		{"/gpu frobnicate", "(none)"},
		{"hello", "(none)"},
	} {
		if got := optionText(tc.line); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.line, got, tc.want)
		}
	}
}

// Every example the table shows reads as options, on this policy's names.
func TestEveryExampleReadsAsOptions(t *testing.T) {
	for _, s := range Table() {
		for _, ex := range s.Examples {
			line := strings.NewReplacer("{class}", "dev", "{duration}", "4h", "{short}", "2h", "{template}", "jupyterlab", "{batch}", "finetune").Replace(ex)
			got, vs, ok := Options(line)
			if !ok || got != s {
				t.Errorf("example %q of %s does not read as its options", line, s.Name)
				continue
			}
			values := map[string]string{}
			for _, v := range vs {
				values[v.Name] = v.Value
			}
			if back := s.Text(values); back != line {
				t.Errorf("%s: options %s run %q, not %q", s.Name, fmt.Sprint(vs), back, line)
			}
		}
	}
}

func FuzzOptions(f *testing.F) {
	for _, s := range []string{"/gpu request 1 dev for 4h", "/gpu deny L-7 because", "/gpu submit x a=b class=", "/gpu quota request +0 x because y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		s, vs, ok := Options(line)
		if !ok {
			return
		}
		values := map[string]string{}
		for _, v := range vs {
			values[v.Name] = v.Value
		}
		if back, want := s.Text(values), strings.Join(strings.Fields(line), " "); !strings.EqualFold(back, want) {
			t.Fatalf("%q reads as options that run %q", line, back)
		}
	})
}
