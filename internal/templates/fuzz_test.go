package templates_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acme/quartermaster/internal/templates"
)

// FuzzParams feeds arbitrary key=value text to every template: parsing never panics, a rejection
// is always an ErrInvalid sentence with an example, and whatever is accepted renders to a Slurm
// script and a manifest that still decodes strictly, so no value can break out of its place.
//
//	go test ./internal/templates -run '^$' -fuzz FuzzParams -fuzztime 30s
func FuzzParams(f *testing.F) {
	for _, seed := range []string{
		"nnodes=2 script=train.py",
		"epochs=ten",
		"lr=0.1",
		"script=../../etc/passwd",
		"model=meta-llama/Meta-Llama-3-8B sharding=hybrid_shard",
		"checkpoint_lead=5m max_requeues=2",
		"trials=7 gpus_per_trial=2",
		"dataset=datasets/coco root=notebooks",
		"greeting='; rm -rf / #",
		"model=\"a\nkind: Secret\"",
		"x=\x00\xff",
		"=",
		"nnodes=99999999999999999999",
		"checkpoint_lead=-5m",
		"keys=/projects/vision/keys",
	} {
		for i := range 4 {
			f.Add(uint8(i*5), seed)
		}
	}
	c := catalog(f)
	all := c.List()
	f.Fuzz(func(t *testing.T, pick uint8, line string) {
		tp := all[int(pick)%len(all)]
		for _, args := range [][]string{strings.Fields(line), {line}, strings.Split(line, "\n")} {
			params, err := tp.ParseParams(args)
			if err != nil {
				checkInvalid(t, tp, err)
				continue
			}
			out, err := tp.Render(templates.ExampleInput(tp, "", params))
			if err != nil {
				checkInvalid(t, tp, err)
				continue
			}
			if _, err := decodeStrict(out.KubernetesYAML); err != nil {
				t.Fatalf("%s %q: manifest does not decode: %v\n%s", tp.Name, args, err, out.KubernetesYAML)
			}
			// User values stay inside the workload block: the #SBATCH header is the same for any value.
			header := func(s string) string { h, _, _ := strings.Cut(s, "\n# Quartermaster lease"); return h }
			base, err := tp.Render(templates.ExampleInput(tp, "", nil))
			if err == nil && tp.Name != "checkpoint-training" && tp.Name != "hparam-sweep" && !tp.MultiNode {
				if header(out.SlurmScript) != header(base.SlurmScript) {
					t.Fatalf("%s %q changed the #SBATCH header:\n%s", tp.Name, args, header(out.SlurmScript))
				}
			}
		}
	})
}

func checkInvalid(t *testing.T, tp *templates.Template, err error) {
	t.Helper()
	msg := err.Error()
	if !templates.IsInvalid(err) {
		t.Fatalf("%s: error that is not ErrInvalid: %v", tp.Name, err)
	}
	if !strings.Contains(msg, ". Example: /gpu ") || strings.Contains(msg, "\n") || !utf8.ValidString(msg) {
		t.Fatalf("%s: not one sentence with an example: %q", tp.Name, msg)
	}
}
