package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// policy check warns of a rule comparing request.template with a name the template catalog does
// not have, at the rule's line, with the template meant: such a rule never matches, so the job it
// was written to stop starts without approval. The policy stays valid.
func TestPolicyCheckWarnsOfARuleOnATemplateTheCatalogLacks(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../../commands/testdata/tokyo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rule := "  - name: serving\n    when: request.template == 'vllm' && request.gpus > 1\n    why: Inference servers hold GPUs for long\n"
	s := strings.Replace(string(src), "  - name: whole-node\n", rule+"  - name: whole-node\n", 1)
	file := filepath.Join(t.TempDir(), "tokyo.yaml")
	if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	line := strings.Count(s[:strings.Index(s, "    when: request.template")], "\n") + 1
	stdout, stderr, code := runCLI("policy", "check", file)
	want := "warning: " + file + ":" + strconv.Itoa(line) + `: exception rule "serving": request.template is compared with 'vllm', which is no template of the catalog, so it never matches one; did you mean 'vllm-server'?`
	if code != 0 || !strings.Contains(stdout, want) {
		t.Errorf("policy check: exit %d\n%s%s\nwant the line %q", code, stdout, stderr, want)
	}
}
