package qm

import (
	"slices"
	"testing"

	"github.com/acme/quartermaster/internal/policy"
)

// A request's history says who the policy named to decide it ("a, b or c"); read back, it is
// those names, whether the line was written as English lists them or, before, as "a or b or c",
// so that someone named then is not sent the request again as new after an upgrade.
func TestApproversNamedInAHistoryLineReadBackInEitherForm(t *testing.T) {
	who := []string{"ines@tern.example", "tern-leads", "omar@tern.example"}
	p := &policy.Policy{Teams: []*policy.Team{{Name: "tern", BudgetOwners: who}}}
	s := &Service{Policy: p}
	for _, also := range []bool{false, true} {
		line := s.newApproversReason("tern", who, also)
		if got := newApproversNamed(line, "tern"); !slices.Equal(got, who) {
			t.Errorf("%q reads back as %q; want %q", line, got, who)
		}
	}
	if line := s.newApproversReason("tern", who, false); line != "the policy now names ines@tern.example, tern-leads or omar@tern.example to decide the requests of team tern" {
		t.Errorf("the line reads %q; want the names as English lists them", line)
	}
	for _, line := range []string{
		"the policy now names ines@tern.example or tern-leads or omar@tern.example to decide the requests of team tern",
		"nobody signed in is left in ines@tern.example or tern-leads or omar@tern.example, who decide the requests of team tern" + unreachedTail,
		unreachedReason("tern", who, true),
		unreachedReason("tern", who, false),
	} {
		if got := newApproversNamed(line, "tern"); !slices.Equal(got, who) {
			t.Errorf("%q reads back as %q; want %q", line, got, who)
		}
	}
}
