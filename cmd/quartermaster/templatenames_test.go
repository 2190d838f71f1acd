package main

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/templates"
	qmtemplates "github.com/acme/quartermaster/templates"
)

// templates show or render of a name near no template lists the catalog's templates in the
// sentence, rather than offering its first one as if it were the one meant, and its example (a
// template of the list, with the flags typed, and the parameters render needs) works.
func TestATemplateNameNearNoneListsTheTemplates(t *testing.T) {
	t.Parallel() // TestMain unsets QM_POLICY and the other settings of a shell
	cat, err := templates.Load(qmtemplates.FS)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"templates", "show", "zzzz"},
		{"templates", "show", "qqqqqqqq", "--policy", "../../commands/testdata/tokyo.yaml"},
		{"templates", "render", "zzzz", "--backend", "slurm"},
	} {
		code, _, stderr := runQM(args...)
		msg := strings.TrimSpace(stderr)
		sentence, eg, ok := strings.Cut(msg, "e.g. ")
		if code != 2 || !ok || strings.Contains(msg, "\n") || !strings.Contains(sentence, `no template "`+args[2]+`"`) {
			t.Errorf("%v: exit %d, %q; want one sentence naming %q, then e.g.", args, code, msg, args[2])
			continue
		}
		for _, tpl := range cat.List() {
			if !strings.Contains(sentence, tpl.Name) {
				t.Errorf("%v: %q does not name the template %s", args, sentence, tpl.Name)
			}
		}
		words := strings.Fields(eg)
		if len(words) < 4 || words[2] != args[1] || !strings.HasPrefix(strings.Join(words[4:], " "), strings.Join(args[3:], " ")) {
			t.Errorf("%v: the example %q is not the command as typed with a template's name", args, eg)
			continue
		}
		if code, _, stderr := runQM(words[1:]...); code != 0 {
			t.Errorf("the example %q: exit %d, %s", eg, code, stderr)
		}
	}
}
