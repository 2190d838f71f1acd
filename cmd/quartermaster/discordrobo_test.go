package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot/discord/discordtest"
	"github.com/acme/quartermaster/internal/oidc/oidctest"
	"github.com/oauth2-proxy/mockoidc"
)

// roboPolicy is a policy with other names than the example, for Discord with single sign-on at
// a Keycloak-like provider: teams decided by realm roles with spaces, capitals and full paths,
// budget owners named by a group, another guild and other channels.
const roboPolicy = `organization: Globex Robotics
currency: EUR
timezone: Europe/Berlin
classes:
  - name: bench-a100
    description: Shared A100 slices for quick experiments and debugging sessions on the bench
    sku: A100
    price_per_gpu_hour: 1.20
    max_gpus: 2
    max_duration: 6h
    idle_timeout: 1h
    idle_grace: 15m
  - name: fleet-h200
    description: Whole H200 nodes
    sku: H200
    price_per_gpu_hour: 4.10
    isolation: exclusive
    max_gpus: 8
    max_duration: 48h
default_quota: {gpus: {bench-a100: 1, fleet-h200: 0}, gpu_hours_per_week: 10}
teams:
  - name: perception
    idp_groups: ["Robot Perception"]
    budget_owners: ["Perception Leads"]
    channel: "#Perception-Compute"
    quota: {gpus: {bench-a100: 2, fleet-h200: 8}, gpu_hours_per_week: 200}
  - name: planning
    idp_groups: ["/eng/planning"]
    budget_owners: [pat@globex.example]
    channel: "#planning-gpus"
    quota: {gpus: {bench-a100: 1, fleet-h200: 0}, gpu_hours_per_week: 50}
exceptions:
  - name: over-quota
    when: usage.gpus_in_use + request.gpus > team.quota.gpus[class.name]
    why: Beyond the team's quota
approvals:
  timeout: 24h
  self_approval: false
  fallback_approvers: [ops@globex.example]
  step_up: 5m
reports:
  showback: {schedule: "TUE 10:00", channel: "#compute-bills"}
backend: sim
discord:
  channels:
    "#perception-compute": "300000000000000011"
    "#planning-gpus": "300000000000000012"
    "#compute-bills": "300000000000000013"
oidc:
  groups_claim: realm_access.roles
  recheck: 1m
  scopes: [openid, email, profile, groups]
  admins: ["/ops/Platform Admins"]
sim:
  nodes:
    - {name: a100, count: 2, class: bench-a100, gpus: 4}
    - {name: h200, count: 1, class: fleet-h200, gpus: 8}
`

const (
	gGuild = "900000000000000001"
	gChan  = "900000000000000002"
	gRin   = "910000000000000001"
	gKai   = "910000000000000002"
	gOps   = "910000000000000003"
	gNed   = "910000000000000004"
	gPia   = "910000000000000005"
)

// keycloakish gives the groups as Keycloak gives realm roles (realm_access.roles), and no
// email_verified.
func keycloakish(c map[string]any) *mockoidc.Keypair {
	if g, ok := c["groups"]; ok {
		c["realm_access"] = map[string]any{"roles": g}
		delete(c, "groups")
	}
	delete(c, "email_verified")
	return nil
}

type robo struct {
	*ssoWorld
	e *discordEnv
}

func newRobo(t *testing.T) *robo {
	w := newSSOWorldWith(t, roboPolicy)
	w.idp.SetTamper(keycloakish)
	w.idp.SetUserinfo(func(c map[string]any) { keycloakish(c) })
	e := &discordEnv{t: t, app: w.a, fake: discordtest.New(t), signer: discordtest.NewSigner()}
	e.settings = discordSettings{BotToken: discordtest.Token, PublicKey: e.signer.PublicKey(), AppID: discordtest.App, APIURL: e.fake.URL}
	e.start()
	return &robo{ssoWorld: w, e: e}
}

func (g *robo) cmd(user, sub string, opts ...discordtest.Opt) discordtest.Message {
	return g.e.do(discordtest.Command(discordtest.Who{User: user, Channel: gChan, Guild: gGuild}, "gpu", sub, opts...))
}

func (g *robo) login(user string, u *oidctest.User) oidctest.Response {
	g.t.Helper()
	m := g.cmd(user, "login")
	link := loginURL.FindString(m.Text())
	if link == "" {
		g.t.Fatalf("login: %q", m.Text())
	}
	g.idp.SignIn(u)
	return oidctest.NewBrowser(g.t).Follow(link)
}

// TestDiscordLeftTeamWithdrawsPendingRequests: someone taken out of a team's group at the
// provider can start no new leases for it after the re-check, so their requests that still wait
// for a budget owner are withdrawn: the budget owners' copies say so and lose their buttons, a
// click on one decides nothing, and the notice says which requests were withdrawn and which
// leases run on. Their running lease is left alone.
func TestDiscordLeftTeamWithdrawsPendingRequests(t *testing.T) {
	t.Parallel()
	g := newRobo(t)
	rin := oidctest.NewUser("sub-rin", "rin@globex.example", "Robot Perception")
	kai := oidctest.NewUser("sub-kai", "kai@globex.example", "Robot Perception", "Perception Leads")
	g.login(gRin, rin)
	g.login(gKai, kai)
	if m := g.cmd(gRin, "request", opt("gpus", 2), opt("class", "bench-a100"), opt("duration", "2h")); !strings.Contains(m.Text(), "L-1 is active") {
		t.Fatalf("rin's first request: %q", m.Text())
	}
	if m := g.cmd(gRin, "request", opt("gpus", 1), opt("class", "bench-a100"), opt("duration", "2h")); !strings.Contains(m.Text(), "L-2 waits for approval") {
		t.Fatalf("rin's second request: %q", m.Text())
	}
	g.e.wait()
	dms := g.e.fake.PostsTo(discordtest.DMChannel(gKai))
	if len(dms) != 1 {
		t.Fatalf("kai's DMs: %+v", dms)
	}

	rin.SetGroups("default-roles-globex")
	if err := g.a.Advance(context.Background(), 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	if rep := g.recheck(); rep.Changed != 1 {
		t.Fatalf("re-check: %+v", rep)
	}
	g.e.wait()

	if l := g.e.lease("L-1"); l.State != "active" {
		t.Errorf("rin's running lease is %s", l.State)
	}
	if l := g.e.lease("L-2"); l.State != "cancelled" {
		t.Errorf("rin's request waiting for approval is %s after she left the team", l.State)
	}
	var told string
	for _, p := range g.e.fake.PostsTo(discordtest.DMChannel(gRin)) {
		told += p.Text()
	}
	mustHave(t, "rin's notice", told, "no longer in team perception", "L-1 (active", "runs to its end", "L-2", "withdrawn")
	if strings.Contains(told, "L-2 (pending_approval") {
		t.Errorf("rin's notice counts L-2 among the leases that run on: %q", told)
	}
	edited := false
	for _, ed := range g.e.fake.Edits() {
		if ed.ID == dms[0].ID && strings.Contains(ed.Text(), "L-2 was withdrawn") && len(ed.Buttons) == 0 {
			edited = true
		}
	}
	if !edited {
		t.Errorf("kai's approval message was not edited to say L-2 was withdrawn: %+v", g.e.fake.Edits())
	}
	m := g.e.click(gKai, dms[0], "Approve L-2")
	if l := g.e.lease("L-2"); l.State != "cancelled" || !strings.Contains(m.Text(), "withdrawn") {
		t.Errorf("kai's click on the old copy: %q; L-2 is %s", m.Text(), l.State)
	}
}

// TestDiscordNoticeToSomeoneWhoTakesNoDMs: a DM that Discord refuses because its recipient
// turned off DMs from server members (error 50007) is not delivered, and not tried again and
// again for a day: each refusal counts towards Discord's limit on invalid requests. What it said
// is in /gpu list.
func TestDiscordNoticeToSomeoneWhoTakesNoDMs(t *testing.T) {
	t.Parallel()
	g := newRobo(t)
	rin := oidctest.NewUser("sub-rin", "rin@globex.example", "Robot Perception")
	kai := oidctest.NewUser("sub-kai", "kai@globex.example", "Robot Perception", "Perception Leads")
	g.login(gRin, rin)
	g.login(gKai, kai)
	g.e.fake.BlockDMs(gRin)
	g.cmd(gRin, "request", opt("gpus", 2), opt("class", "bench-a100"), opt("duration", "2h"))
	g.cmd(gRin, "request", opt("gpus", 1), opt("class", "bench-a100"), opt("duration", "2h"))
	if m := g.cmd(gKai, "approve", opt("lease", "L-2")); !strings.Contains(m.Text(), "Approved L-2") {
		t.Fatalf("kai's approval: %q", m.Text())
	}
	g.e.wait()
	refused := g.e.fake.Refused(discordtest.DMChannel(gRin))
	if refused == 0 {
		t.Fatal("no DM to rin was tried")
	}
	for range 3 {
		if err := g.a.Advance(context.Background(), 11*time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := g.a.Service.DeliverNotices(context.Background()); err != nil {
			t.Fatal(err)
		}
		g.e.wait()
	}
	if n := g.e.fake.Refused(discordtest.DMChannel(gRin)); n != refused {
		t.Errorf("the DMs Discord refused were tried again: %d refusals, then %d", refused, n)
	}
}

// TestDiscordAskerWhoTakesNoDMsIsToldSo: someone whose DMs Discord refused (they turned off DMs
// from server members) is told, in the answer to their next request, that they will not hear
// back by DM and where to look instead; once a DM to them goes out again, the note goes.
func TestDiscordAskerWhoTakesNoDMsIsToldSo(t *testing.T) {
	t.Parallel()
	g := newRobo(t)
	rin := oidctest.NewUser("sub-rin", "rin@globex.example", "Robot Perception")
	kai := oidctest.NewUser("sub-kai", "kai@globex.example", "Robot Perception", "Perception Leads")
	g.login(gRin, rin)
	g.login(gKai, kai)
	g.e.fake.BlockDMs(gRin)
	first := g.cmd(gRin, "request", opt("gpus", 2), opt("class", "bench-a100"), opt("duration", "2h"))
	if strings.Contains(first.Text(), "DM") {
		t.Errorf("told of DMs before any was refused: %q", first.Text())
	}
	g.cmd(gRin, "request", opt("gpus", 1), opt("class", "bench-a100"), opt("duration", "2h"))
	g.cmd(gKai, "approve", opt("lease", "L-2"))
	g.e.wait()
	if g.e.fake.Refused(discordtest.DMChannel(gRin)) == 0 {
		t.Fatal("no DM to rin was refused")
	}
	m := g.cmd(gRin, "request", opt("gpus", 1), opt("class", "fleet-h200"), opt("duration", "1h"))
	mustHave(t, "rin's next request", m.Text(), "L-3", "Discord refused", "not hear back by DM", "/gpu list")
}
