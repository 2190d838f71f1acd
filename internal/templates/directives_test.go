package templates

import (
	"strings"
	"testing"
)

// A template's slurm.directives may add sbatch options, but not one the service writes itself
// from the lease: the job name (which squeue shows and the lease's output file carries), its
// comment, partition, account, GPUs, time limit, shape, output file or placement. sbatch would
// take the template's over the service's without a word, so the catalog refuses such a template
// when it loads, naming the file, the line and the option, and an option it may add. sbatch takes
// an unambiguous abbreviation of a long option, and several options on one #SBATCH line, so those
// are refused too. An #SBATCH line in a body is refused as well: sbatch reads #SBATCH lines only
// before the script's first command, so one there would be ignored without a word.
func TestDirectiveServiceSetsRefused(t *testing.T) {
	const def = `name: named
version: 1
title: Named
description: Names its job.
tags: [test]
kind: batch
example: steps=3
parameters:
  - name: steps
    type: int
    default: "3"
    description: Steps.
BODY`
	refused := []struct{ name, body, line, option string }{
		{"the job name", "slurm:\n  directives: [\"--job-name=mine\"]\nrun: |\n  echo hi\n", "named.yaml:14: slurm.directives.0", "--job-name"},
		{"the job name with a space", "slurm:\n  directives:\n    - --requeue\n    - --job-name mine\nrun: |\n  echo hi\n", "named.yaml:16: slurm.directives.1", "--job-name"},
		{"an abbreviation", "slurm:\n  directives: [\"--job-n=mine\"]\nrun: |\n  echo hi\n", "named.yaml:14: slurm.directives.0", "--job-n"},
		{"a second option on the line", "slurm:\n  directives: [\"--requeue --job-name=mine\"]\nrun: |\n  echo hi\n", "named.yaml:14: slurm.directives.0", "--job-name"},
		{"the time limit", "slurm:\n  directives: [\"--time={{.P.steps}}\"]\nrun: |\n  echo hi\n", "named.yaml:14: slurm.directives.0", "--time"},
		{"the partition", "slurm:\n  directives: [\"--partition=debug\"]\nrun: |\n  echo hi\n", "named.yaml:14: slurm.directives.0", "--partition"},
		{"more GPUs", "slurm:\n  directives: [\"--gpus-per-node=8\"]\nrun: |\n  echo hi\n", "named.yaml:14: slurm.directives.0", "--gpus-per-node"},
		{"the nodes by file, a short option after the first", "slurm:\n  directives: [\"--requeue -F hosts.txt\"]\nrun: |\n  echo hi\n", "named.yaml:14: slurm.directives.0", "-F (--nodefile)"},
		{"the comment", "slurm:\n  directives: [\"--comment=mine\"]\nrun: |\n  echo hi\n", "named.yaml:14: slurm.directives.0", "--comment"},
		{"an #SBATCH line in the slurm setup", "slurm:\n  setup: |\n    trap 'echo bye' USR1\n    #SBATCH --job-name=mine\nrun: |\n  echo hi\n", "named.yaml:16: slurm.setup", "#SBATCH"},
		{"an #SBATCH line in run", "run: |\n  #SBATCH --requeue\n  echo hi\n", "named.yaml:14: run", "#SBATCH"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(withDefinition(t, "named.yaml", strings.Replace(def, "BODY", tc.body, 1)))
			if err == nil {
				t.Fatalf("a template setting %s loaded:\n%s", tc.option, tc.body)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, tc.line) || !strings.Contains(msg, tc.option) || !strings.Contains(msg, "slurm.directives") {
				t.Errorf("error\n got: %v\nwant: %s… naming %s and slurm.directives", err, tc.line, tc.option)
			}
			if strings.Count(strings.TrimSuffix(msg, "."), ". ") > 1 {
				t.Errorf("error is more than a sentence or two: %v", err)
			}
		})
	}
	accepted := []string{
		"slurm:\n  directives: [\"--requeue\", \"--open-mode=append\", \"--signal=B:USR1@{{.P.steps}}\", \"--mail-type=END\", \"--time-min=10\", \"--mem-bind=local\"]\nrun: |\n  echo hi\n",
		"run: |\n  # SBATCH is not a directive here; this comment is fine\n  echo hi\n",
	}
	for _, body := range accepted {
		if _, err := Load(withDefinition(t, "named.yaml", strings.Replace(def, "BODY", body, 1))); err != nil {
			t.Errorf("refused a template whose directives the service does not set:\n%s\n%v", body, err)
		}
	}
}
