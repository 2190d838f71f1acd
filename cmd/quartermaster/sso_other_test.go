package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/oidc/oidctest"
	"github.com/acme/quartermaster/internal/qm"
)

// globexPolicy is a policy with other names than the example: teams whose groups and approvers
// are written with capitals, approvers named by group, another time zone.
const globexPolicy = `organization: Globex Research
currency: EUR
timezone: Asia/Tokyo
classes:
  - name: shared-a100
    description: Shared A100 for notebooks
    sku: A100-40GB
    gpu_memory_gib: 40
    price_per_gpu_hour: 1.10
    isolation: shared
    max_gpus: 1
    max_duration: 6h
    idle_timeout: 30m
    idle_grace: 10m
    capacity_share: 0.2
  - name: h200
    description: Exclusive H200 nodes
    sku: H200
    gpu_memory_gib: 141
    price_per_gpu_hour: 4.20
    isolation: exclusive
    max_gpus: 8
    max_duration: 48h
    idle_timeout: 2h
    idle_grace: 30m
default_quota: {gpus: {shared-a100: 1, h200: 0}, gpu_hours_per_week: 10}
teams:
  - name: robotics
    idp_groups: [Robotics-Lab]
    budget_owners: [Robotics-Leads]
    channel: "#robotics-gpu"
    quota: {gpus: {shared-a100: 2, h200: 8}, gpu_hours_per_week: 400}
    data_classes: [public]
  - name: nlp
    idp_groups: [nlp-research]
    budget_owners: [Kenji@Globex.example]
    quota: {gpus: {shared-a100: 2, h200: 8}, gpu_hours_per_week: 400}
    data_classes: [public]
exceptions:
  - name: large-request
    when: request.gpus > class.max_gpus
    why: More GPUs than the class allows without approval
  - name: long-request
    when: request.duration > class.max_duration
    why: Longer than the class allows without approval
approvals:
  timeout: 24h
  self_approval: false
  fallback_approvers: [GPU-Admins]
  step_up: 30m
oidc:
  groups_claim: groups
  scopes: [openid, email, profile, groups]
  recheck: 1m
  admins: [GPU-Admins]
backend: sim
sim:
  nodes:
    - {name: a100, count: 2, class: shared-a100, gpus: 4, nvlink_islands: 1}
    - {name: h200, count: 2, class: h200, gpus: 8, nvlink_islands: 1}
`

func (w *ssoWorld) globexPerson(name, email string, groups ...string) *person {
	return &person{idp: oidctest.NewUser("sub-"+name, email, groups...), acct: bot.Account{Platform: "slack", Workspace: "T0GLOBEX", User: "U0" + strings.ToUpper(name)}}
}

// TestAnUnlinkedApproversClickIsNotLost: a budget owner (here by group) who never signed in, or
// whose groups are no longer confirmed, and clicks Approve or Deny gets a login link that carries
// the decision, made as soon as the login completes, as for a login older than step_up.
func TestAnUnlinkedApproversClickIsNotLost(t *testing.T) {
	t.Parallel()
	w := newSSOWorldWith(t, globexPolicy)
	sora := w.globexPerson("sora", "sora@globex.example", "robotics-lab")
	riku := w.globexPerson("riku", "riku@globex.example", "robotics-lab", "ROBOTICS-LEADS")
	if pg := w.follow(sora, w.say(sora, "/gpu login")); pg.Status != http.StatusOK {
		t.Fatalf("sora's login: %d %s", pg.Status, pg.Body)
	}
	mustHave(t, "exception", w.say(sora, "/gpu request 2 h200 for 60h"), "L-1 waits for approval", "Robotics-Leads will decide")
	mustHave(t, "exception", w.say(sora, "/gpu request 2 h200 for 50h"), "L-2 waits for approval")

	answer := w.say(riku, "/gpu approve L-1")
	mustHave(t, "unlinked approval", answer, "does not know who you are", "nothing was decided yet", "/auth/login?t=", "L-1 is approved as soon as you have")
	if l := w.lease(1); l.State != qm.PendingApproval {
		t.Fatalf("L-1 was decided before the login: %s", l.State)
	}
	page := w.follow(riku, answer)
	if page.Status != http.StatusOK || !strings.Contains(page.Body, "Approved L-1") {
		t.Fatalf("the login page does not say L-1 was approved: %d %s", page.Status, page.Body)
	}
	if l := w.lease(1); l.State == qm.PendingApproval || l.DecidedBy != "riku@globex.example" {
		t.Fatalf("L-1 after the login: %s decided by %q", l.State, l.DecidedBy)
	}

	// Groups no longer confirmed (no re-check for more than two 1m periods): the denial waits
	// for the login too, reason and all.
	w.a.SimClk.Advance(3 * time.Minute)
	answer = w.say(riku, "/gpu deny L-2 use fewer hours")
	mustHave(t, "unconfirmed denial", answer, "could not be confirmed", "nothing was decided yet", "L-2 is denied as soon as you have")
	if page := w.follow(riku, answer); page.Status != http.StatusOK || !strings.Contains(page.Body, "L-2") {
		t.Fatalf("the login page: %d %s", page.Status, page.Body)
	}
	if l := w.lease(2); l.State != qm.Denied || l.DecidedBy != "riku@globex.example" || !strings.Contains(l.Reason, "use fewer hours") {
		t.Fatalf("L-2 after the login: %s decided by %q (%q)", l.State, l.DecidedBy, l.Reason)
	}
}
