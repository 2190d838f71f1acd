package policy

import (
	"strconv"
	"strings"
	"testing"
)

// A rule comparing request.template with a name written with capitals never matches, since
// template names are in lower case: policy check warns at the rule's line with the name to write,
// as it does for team.name. One comparing it with a name that is no template of the catalog never
// matches either: given the catalog, the warning names the template meant, or those there are.
// No template (”) is a value request.template has, and is left alone.
func TestARuleComparingRequestTemplateWithANameNoTemplateHasIsWarnedAbout(t *testing.T) {
	src := `organization: Sakura Bio Lab
currency: JPY
timezone: Asia/Tokyo
classes:
  - {name: jupyter, sku: L4, max_gpus: 1, max_duration: 6h}
  - {name: a100-big, sku: A100-80G, max_gpus: 4, max_duration: 48h, isolation: exclusive}
teams:
  - {name: vision-lab, idp_groups: [lab-vision], budget_owners: [yuki@sakura.example]}
sim: {nodes: [{name: a100, count: 2, class: a100-big, gpus: 4}, {name: l4, count: 1, class: jupyter, gpus: 4}]}
exceptions:
  - {name: smoke, when: "request.template == 'CUDA-Smoke' && request.gpus > 1"}
  - {name: ddp, when: "request.template in ['jupyterlab', 'pytorch-dp'] && request.gpus > 2"}
  - {name: vllm, when: "request.template != 'vllm' && request.duration > class.max_duration"}
  - {name: triton, when: "request.template == 'triton' && request.gpus > 1"}
  - {name: fine, when: "request.template in ['', 'cuda-smoke'] && request.gpus > 3"}
approvals: {fallback_approvers: [ops@sakura.example]}
`
	p, err := Load([]byte(src), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	at := func(name string) string { return "line " + strconv.Itoa(lineOf(t, src, "name: "+name+",")) }
	var all []string
	for _, w := range p.Warnings {
		if strings.HasPrefix(w.Msg, "exception rule") {
			all = append(all, w.String())
		}
	}
	want := []string{at("smoke") + `: exception rule "smoke": template names are in lower case, so 'CUDA-Smoke' never matches one; write 'cuda-smoke'`}
	if strings.Join(all, "\n") != strings.Join(want, "\n") {
		t.Errorf("got warnings:\n%s\nwant:\n%s", strings.Join(all, "\n"), strings.Join(want, "\n"))
	}

	all = nil
	for _, w := range p.TemplateWarnings([]string{"cuda-smoke", "jupyterlab", "pytorch-ddp", "ray-cluster", "tensorflow", "triton-server"}) {
		all = append(all, w.String())
	}
	want = []string{
		at("ddp") + `: exception rule "ddp": request.template is compared with 'pytorch-dp', which is no template of the catalog, so it never matches one; did you mean 'pytorch-ddp'?`,
		at("vllm") + `: exception rule "vllm": request.template is compared with 'vllm', which is no template of the catalog, so it never matches one; the templates are cuda-smoke, jupyterlab, pytorch-ddp and 3 more`,
		at("triton") + `: exception rule "triton": request.template is compared with 'triton', which is no template of the catalog, so it never matches one; did you mean 'triton-server'?`,
	}
	if strings.Join(all, "\n") != strings.Join(want, "\n") {
		t.Errorf("got catalog warnings:\n%s\nwant:\n%s", strings.Join(all, "\n"), strings.Join(want, "\n"))
	}
}
