package qm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// TestKeycloakBuiltInRolesMakeNoTeam: with Keycloak's realm roles as the groups, everyone has
// the realm's built-in roles (default-roles-REALM, offline_access, uma_authorization), in any
// order. Someone in no listed team gets a team named after their first role that is not one of
// those; with only those, they belong to no team, instead of everyone outside the policy's
// teams sharing one team's default quota.
func TestKeycloakBuiltInRolesMakeNoTeam(t *testing.T) {
	p, err := policy.LoadFile("../../commands/testdata/orbit.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p.Directory = append(p.Directory,
		&policy.Identity{User: "lou@orbit.example", Groups: []string{"offline_access", "default-roles-orbit", "uma_authorization", "marine-lab"}},
		&policy.Identity{User: "ana@orbit.example", Groups: []string{"default-roles-orbit", "offline_access", "uma_authorization"}},
		&policy.Identity{User: "ben@orbit.example", Groups: []string{"Default-Roles-Orbit"}},
		&policy.Identity{User: "kay@orbit.example", Groups: []string{"uma_authorization", "g-robotics"}})
	svc := newService(t, p, storetest.Open(t, storetest.SQLite(t)))
	ctx := context.Background()
	for user, want := range map[string]string{"lou@orbit.example": "marine-lab", "ana@orbit.example": "", "ben@orbit.example": "", "kay@orbit.example": "robotics"} {
		id, err := svc.Resolve(ctx, user)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(id.Teams, ","); got != want {
			t.Errorf("%s (groups %v) is in team %q; want %q", user, id.Groups, got, want)
		}
	}
	if _, err := svc.Request(ctx, qm.LeaseRequest{User: "ana@orbit.example", Class: "duo", Duration: time.Hour}); qm.ErrorCode(err) != qm.EFORBIDDEN || !strings.Contains(err.Error(), "belongs to no team") {
		t.Fatalf("ana's request: %v", err)
	}
}
