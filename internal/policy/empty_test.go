package policy

import (
	"strings"
	"testing"
)

// TestEmptyListEntriesAreRefusedWithoutPanic: an empty entry ("-" with nothing after it, ~, null or
// "") in any list of the policy is refused with a sentence naming the entry and its line; the
// loader never panics on one, whichever list holds it.
func TestEmptyListEntriesAreRefusedWithoutPanic(t *testing.T) {
	base := `organization: X
classes:
  - {name: gpu, max_gpus: 1, max_duration: 1h}
teams:
  - {name: vision, idp_groups: [ai-vision], budget_owners: [dana@x.example], data_classes: [public]}
exceptions:
  - {name: big, when: "request.gpus > 4"}
approvals: {fallback_approvers: [lead@x.example]}
directory:
  - {user: a@x.example, groups: [ai-vision]}
oidc: {scopes: [openid, email], admins: [lead@x.example]}
sim:
  nodes:
    - {name: n, count: 1, class: gpu, gpus: 1}
`
	if _, err := Load([]byte(base), "p.yaml"); err != nil {
		t.Fatalf("the base policy does not load: %v", err)
	}
	cases := []struct {
		name, from, to, want string
	}{
		{"the issue's file", "", "organization: X\nclasses:\n  -\nsim:\n nodes:\n - {}\n", "class 1 is empty"},
		{"a class", "classes:\n", "classes:\n  -\n", "class 1 is empty"},
		{"a class written null", "classes:\n", "classes:\n  - null\n", "class 1 is empty"},
		{"a sim node group", "    - {name: n,", "    - ~\n    - {name: n,", "sim node group 1 is empty"},
		{"a team", "teams:\n", "teams:\n  -\n", "team 1 is empty"},
		{"an exception rule", "exceptions:\n", "exceptions:\n  -\n", "exception rule 1 is empty"},
		{"a directory entry", "directory:\n", "directory:\n  -\n", "directory entry 1 is empty"},
		{"an IdP group of a team", "idp_groups: [ai-vision]", "idp_groups: [ai-vision, ~]", "team vision: idp_groups entry 2 is empty"},
		{"a budget owner", "budget_owners: [dana@x.example]", `budget_owners: ["", dana@x.example]`, "team vision: budget_owners entry 1 is empty"},
		{"a data class", "data_classes: [public]", "data_classes: [public, null]", "team vision: data_classes entry 2 is empty"},
		{"a fallback approver", "fallback_approvers: [lead@x.example]", "fallback_approvers: [lead@x.example, ' ']", "approvals: fallback_approvers entry 2 is empty"},
		{"a group of a directory entry", "groups: [ai-vision]}", "groups: [~]}", "directory entry a@x.example: groups entry 1 is empty"},
		{"an SSO admin", "admins: [lead@x.example]", "admins: [~]", "oidc: admins entry 1 is empty"},
		{"an alias to nothing", "classes:\n", "nothing: &none ~\nclasses:\n  - *none\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := c.to
			if c.from != "" {
				if !strings.Contains(base, c.from) {
					t.Fatalf("the base lacks %q", c.from)
				}
				src = strings.Replace(base, c.from, c.to, 1)
			}
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("the loader panicked: %v", r)
					}
				}()
				_, err = Load([]byte(src), "p.yaml")
			}()
			if err == nil {
				t.Fatalf("a policy with an empty entry loaded:\n%s", src)
			}
			if c.want != "" && !strings.Contains(err.Error(), c.want) {
				t.Fatalf("the refusal does not say %q:\n%v", c.want, err)
			}
		})
	}
}
