package templates

import (
	"strings"
	"testing"
)

// A string parameter reaches a script only quoted: a template that writes one into its shell or an
// #SBATCH line unquoted (where a researcher's value could end the word and run a command or add
// an sbatch option) is refused when the catalog loads, naming the file, the line and the fix.
// A value whose pattern admits only characters that are one shell word anyway may go unquoted.
func TestUnquotedStringParameterRefused(t *testing.T) {
	const def = `name: note
version: 1
title: Note
description: Writes a note.
tags: [test]
kind: batch
example: note=hi
parameters:
  - name: note
    type: string
    default: hello
    description: Free text.
  - name: rate
    type: string
    default: "2e-4"
    pattern: "[0-9]+(\\.[0-9]+)?([eE]-?[0-9]+)?"
    description: A learning rate.
  - name: loose
    type: string
    default: "x"
    pattern: "[a-z ]+"
    description: Words.
  - name: steps
    type: int
    default: "3"
    description: Steps.
RUN`
	refused := []struct{ name, run, line string }{
		{"in run", "run: |\n  echo start\n  echo {{.P.note}}\n", "note.yaml:29: run: parameter note"},
		{"in setup", "setup: |\n  export NOTE=\"{{.P.note}}\"\nrun: |\n  echo hi\n", "note.yaml:28: setup: parameter note"},
		{"in a directive", "slurm:\n  directives: [\"--mail-user=x{{.P.note}}\"]\nrun: |\n  echo hi\n", "note.yaml:28: slurm.directives.0: parameter note"},
		{"in the slurm setup", "slurm:\n  setup: |\n    echo {{.P.note}}\nrun: |\n  echo hi\n", "note.yaml:29: slurm.setup: parameter note"},
		{"in the kubernetes setup", "kubernetes:\n  setup: |\n    echo {{.P.note}}\nrun: |\n  echo hi\n", "note.yaml:29: kubernetes.setup: parameter note"},
		{"through json, whose double quotes let $(...) run", "run: |\n  echo {{json .P.note}}\n", "note.yaml:28: run: parameter note"},
		{"through printf", "run: |\n  echo {{printf \"%s!\" .P.note}}\n", "note.yaml:28: run: parameter note"},
		{"through a pipe", "run: |\n  echo {{.P.note | printf \"%s\"}}\n", "note.yaml:28: run: parameter note"},
		{"through a variable", "run: |\n  {{$n := .P.note}}\n  echo {{$n}}\n", "note.yaml:29: run: parameter note"},
		{"through with", "run: |\n  {{with .P.note}}echo {{.}}{{end}}\n", "note.yaml:28: run: parameter note"},
		{"from the root", "run: |\n  echo {{$.P.note}}\n", "note.yaml:28: run: parameter note"},
		{"the whole map", "run: |\n  echo {{.P}}\n", "note.yaml:28: run: parameter"},
		{"a pattern that admits spaces", "run: |\n  echo {{.P.loose}}\n", "note.yaml:28: run: parameter loose"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(withDefinition(t, "note.yaml", strings.Replace(def, "RUN", tc.run, 1)))
			if err == nil {
				t.Fatalf("a template printing a string parameter unquoted loaded:\n%s", tc.run)
			}
			if !strings.HasPrefix(err.Error(), tc.line) || !strings.Contains(err.Error(), "shq") {
				t.Errorf("error\n got: %v\nwant: %s… naming shq", err, tc.line)
			}
		})
	}
	accepted := []string{
		"run: |\n  echo {{shq .P.note}} {{.P.rate}} {{.P.steps}}\n",
		"run: |\n  echo {{.P.note | shq}} {{shq .P.loose}}\n",
		"run: |\n  {{$n := .P.note}}\n  echo {{shq $n}}\n",
		"run: |\n  {{with .P.note}}echo {{shq .}}{{end}}\n  {{if eq .P.note \"x\"}}echo x{{end}}\n",
		"slurm:\n  directives: [\"--mail-user={{shq .P.note}}\"]\nrun: |\n  echo hi\n",
	}
	for _, run := range accepted {
		if _, err := Load(withDefinition(t, "note.yaml", strings.Replace(def, "RUN", run, 1))); err != nil {
			t.Errorf("refused a template that quotes its strings:\n%s\n%v", run, err)
		}
	}
}
