package policy

import "testing"

// TestAClassNamedInOtherCaseIsTheClass: a quota or a group of simulated nodes that writes a
// class with capitals (Interactive) passes policy check, as names compare upper and lower case
// aside; so it gives the team its GPUs of that class, and the class its nodes, rather than a
// quota of 0 and nodes no lease of the class is placed on.
func TestAClassNamedInOtherCaseIsTheClass(t *testing.T) {
	p, err := Load([]byte(exampleWith(t,
		"default_quota: {gpus: {interactive: 1,", "default_quota: {gpus: {Interactive: 1,",
		"quota: {gpus: {interactive: 4, train: 16}", "quota: {gpus: {INTERACTIVE: 4, Train: 16}",
		"class: train, gpus: 8", "class: Train, gpus: 8")), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if q := p.QuotaFor("vision"); q.GPUs["interactive"] != 4 || q.GPUs["train"] != 16 {
		t.Errorf("team vision's quota reads as %v, want 4 interactive and 16 train GPUs", q.GPUs)
	}
	if q := p.QuotaFor("robotics"); q.GPUs["interactive"] != 1 {
		t.Errorf("the default quota reads as %v, want 1 interactive GPU", q.GPUs)
	}
	if c := p.Capacity(); c["train"] != 16 {
		t.Errorf("the simulated cluster holds %v, want 16 train GPUs", c)
	}
	if r, _ := p.RuleInputFor("vision", "train"); r.Quota.GPUs["train"] != 16 {
		t.Errorf("rules see team vision's quota as %v, want 16 train GPUs", r.Quota.GPUs)
	}

	// A quota that names one class twice, in two ways, is refused at its line: which would hold?
	pairs := []string{"quota: {gpus: {interactive: 4, train: 16}", "quota: {gpus: {interactive: 4, Interactive: 2, train: 16}"}
	pe := refused(t, pairs...)
	wantProblem(t, pe, lineOf(t, exampleWith(t, pairs...), "Interactive: 2"), "team vision: quota gpus names class interactive twice (interactive and Interactive); keep one, e.g. gpus: {interactive: 4}")
}
