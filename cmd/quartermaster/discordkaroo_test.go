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

// karooPolicy is a policy with none of the example's names, for Discord with single sign-on at
// an Entra-like provider: the groups are read from a roles claim, a team is placed by a group
// object id, budget owners are named by an app role with dots, a currency in rands, a zone east
// of UTC, a one-letter team and a class with an underscore.
const karooPolicy = `organization: Karoo Labs
currency: ZAR
timezone: Africa/Johannesburg
classes:
  - name: kudu_rtx6000
    description: Shared RTX 6000 Ada slices for notebooks
    sku: RTX6000
    gpu_memory_gib: 48
    price_per_gpu_hour: 17.5
    isolation: shared
    max_gpus: 1
    max_duration: 5h
    idle_timeout: 45m
    idle_grace: 10m
  - name: big5-h200
    description: Whole H200 nodes
    sku: H200
    gpu_memory_gib: 141
    price_per_gpu_hour: 82.40
    isolation: exclusive
    max_gpus: 4
    max_duration: 30h
    idle_timeout: 2h
    idle_grace: 20m
default_quota: {gpus: {kudu_rtx6000: 1, big5-h200: 0}, gpu_hours_per_week: 8}
teams:
  - name: x
    idp_groups: ["6f1c2a9e-1b7d-4c55-9d1e-0a2b3c4d5e6f"]
    budget_owners: ["Karoo.Budget.Owners"]
    channel: "#x-gpu"
    quota: {gpus: {kudu_rtx6000: 2, big5-h200: 4}, gpu_hours_per_week: 300}
    data_classes: [open, popia]
  - name: dune_sea-01
    idp_groups: ["Dune Sea 01"]
    budget_owners: [thabo@karoo.example]
    channel: "#dune"
    quota: {gpus: {kudu_rtx6000: 1, big5-h200: 0}, gpu_hours_per_week: 40}
exceptions:
  - name: large-request
    when: request.gpus > class.max_gpus
    why: More GPUs than the class allows without approval
  - name: over-quota
    when: usage.gpus_in_use + request.gpus > team.quota.gpus[class.name]
    why: Beyond the team's quota
  - name: long-request
    when: request.duration > class.max_duration
approvals:
  timeout: 10h
  self_approval: false
  fallback_approvers: [ops@karoo.example]
  step_up: 5m
reports:
  showback: {schedule: "WED 08:30", channel: "#karoo-bills"}
backend: sim
discord:
  channels:
    "#x-gpu": "400000000000000021"
    "#dune": "400000000000000022"
    "#karoo-bills": "400000000000000023"
oidc:
  groups_claim: roles
  recheck: 1m
  scopes: [openid, email, profile, groups]
  admins: ["Karoo.Platform.Admins"]
sim:
  nodes:
    - {name: kudu, count: 2, class: kudu_rtx6000, gpus: 4}
    - {name: h200, count: 1, class: big5-h200, gpus: 8}
`

const (
	kNaledi = "940000000000000001" // x
	kSipho  = "940000000000000002" // x, budget owner
	kThabo  = "940000000000000003" // dune, owner
	kOps    = "940000000000000004" // fallback, admin
)

// entraish gives the groups as Entra ID gives app roles: a roles claim.
func entraish(c map[string]any) *mockoidc.Keypair {
	if g, ok := c["groups"]; ok {
		c["roles"] = g
		delete(c, "groups")
	}
	return nil
}

// newKaroo is the wired product on karooPolicy with single sign-on at an in-process provider
// that gives the groups as Entra ID gives app roles (a roles claim) and a fake Discord.
func newKaroo(t *testing.T) *pacifica {
	t.Helper()
	w := newSSOWorldWith(t, karooPolicy)
	w.idp.SetTamper(entraish)
	w.idp.SetUserinfo(func(c map[string]any) { entraish(c) })
	e := &discordEnv{t: t, app: w.a, fake: discordtest.New(t), signer: discordtest.NewSigner()}
	e.settings = discordSettings{BotToken: discordtest.Token, PublicKey: e.signer.PublicKey(), AppID: discordtest.App, APIURL: e.fake.URL}
	e.start()
	return &pacifica{robo: &robo{ssoWorld: w, e: e}, users: map[string]*oidctest.User{
		kNaledi: oidctest.NewUser("sub-naledi", "naledi@karoo.example", "6f1c2a9e-1b7d-4c55-9d1e-0a2b3c4d5e6f"),
		kSipho:  oidctest.NewUser("sub-sipho", "sipho@karoo.example", "6f1c2a9e-1b7d-4c55-9d1e-0a2b3c4d5e6f", "Karoo.Budget.Owners"),
		kThabo:  oidctest.NewUser("sub-thabo", "thabo@karoo.example", "Dune Sea 01"),
		kOps:    oidctest.NewUser("sub-ops", "ops@karoo.example", "Karoo.Platform.Admins"),
	}}
}

// tick moves the clock on by d, re-checks the groups at the provider and waits for what that set
// off.
func (p *pacifica) tick(d time.Duration) {
	p.t.Helper()
	if err := p.a.Advance(context.Background(), d); err != nil {
		p.t.Fatal(err)
	}
	p.recheck()
	p.e.wait()
}

// TestDiscordBlankRequiredOptionIsMissing: a required text option whose value shows nothing (only
// zero-width or direction characters, which Discord lets through as text) is refused as the
// option missing, naming it as Discord takes it, not in Slack's words ("a reason after
// because"), and the example works typed back.
func TestDiscordBlankRequiredOptionIsMissing(t *testing.T) {
	t.Parallel()
	p := newKaroo(t)
	p.signIn(kNaledi)
	m := p.cmd(kNaledi, "quota-request", opt("gpus", 2), opt("class", "big5-h200"), opt("reason", "\u200b\u2060 \u200e\u202e"))
	mustHave(t, "a blank reason", m.Text(), "needs the option reason", "Example: /gpu quota-request ")
	if strings.Contains(m.Text(), "because") {
		t.Errorf("a blank reason on Discord is refused in Slack's words: %q", m.Text())
	}
	if !strings.Contains(m.Text(), "Example: ") {
		return
	}
	again := p.cmd(kNaledi, "quota-request", typedCommand(t, m.Text()[strings.Index(m.Text(), "Example: "):], "quota-request")...)
	if !strings.Contains(again.Text(), "L-1 asks for +") {
		t.Errorf("the example, typed back: %q", again.Text())
	}
}

// TestDiscordLastBudgetOwnerLeavesTheGroup: budget owners named by a group, of which one person
// has signed in; they get the approval message of a request, then leave the group at the
// provider before deciding. Nobody signed in is left in the group, so their copy says the
// fallback approvers decide now (not the empty group alone), and the fallback approvers are sent
// the approval message, with why, and may decide it with its buttons; that is done once.
func TestDiscordLastBudgetOwnerLeavesTheGroup(t *testing.T) {
	t.Parallel()
	p := newKaroo(t)
	p.signIn(kNaledi, kSipho, kOps)
	if m := p.cmd(kNaledi, "request", opt("gpus", 2), opt("class", "big5-h200"), opt("duration", "40h")); !strings.Contains(m.Text(), "L-1 waits for approval") {
		t.Fatalf("request: %q", m.Text())
	}
	p.e.wait()
	dms := p.e.fake.PostsTo(discordtest.DMChannel(kSipho))
	if len(dms) != 1 || len(p.e.fake.PostsTo(discordtest.DMChannel(kOps))) != 0 {
		t.Fatalf("the approval messages: to sipho %+v, to ops %+v", dms, p.e.fake.PostsTo(discordtest.DMChannel(kOps)))
	}

	p.users[kSipho].SetGroups("6f1c2a9e-1b7d-4c55-9d1e-0a2b3c4d5e6f")
	p.tick(70 * time.Second)
	p.tick(70 * time.Second) // a second re-check hands nothing over again

	var edited string
	for _, ed := range p.e.fake.Edits() {
		if ed.ID == dms[0].ID {
			edited = ed.Text()
		}
	}
	mustHave(t, "sipho's copy", edited, "L-1 is no longer yours to decide", "ops@karoo.example")
	toOps := p.e.fake.PostsTo(discordtest.DMChannel(kOps))
	if len(toOps) != 1 {
		t.Fatalf("the fallback approver was sent %d approval messages: %+v", len(toOps), toOps)
	}
	mustHave(t, "the fallback approver's approval message", toOps[0].Text(), "Approval needed", "L-1", "Karoo.Budget.Owners")
	p.signIn(kOps)
	if m := p.e.click(kOps, toOps[0], "Approve L-1"); !strings.Contains(m.Text(), "Approved L-1") {
		t.Errorf("the fallback approver's click: %q", m.Text())
	}
}

// TestDiscordRevokedSignInIsToldOnDiscord: a sign-in the provider revokes is unlinked at the
// re-check, and the person is told so by DM on the Discord account that was linked, with the
// leases that run on, though Quartermaster no longer knows that account as theirs.
func TestDiscordRevokedSignInIsToldOnDiscord(t *testing.T) {
	t.Parallel()
	p := newKaroo(t)
	p.signIn(kNaledi, kSipho)
	if m := p.cmd(kNaledi, "request", opt("gpus", 1), opt("class", "kudu_rtx6000"), opt("duration", "2h")); !strings.Contains(m.Text(), "L-1 is active") {
		t.Fatalf("request: %q", m.Text())
	}
	if err := p.a.Advance(context.Background(), 70*time.Second); err != nil {
		t.Fatal(err)
	}
	p.signIn(kSipho)
	p.idp.QueueError(&mockoidc.ServerError{Code: 400, Error: "invalid_grant", Description: "Session revoked"})
	if rep := p.recheck(); rep.Revoked != 1 {
		t.Fatalf("re-check: %+v", rep)
	}
	p.e.wait()
	var told string
	for _, m := range p.e.fake.PostsTo(discordtest.DMChannel(kNaledi)) {
		told += m.Text() + "\n"
	}
	mustHave(t, "naledi's DMs", told, "Your sign-in from Discord was revoked", "/gpu login", "Your sign-in was revoked at the identity provider", "L-1 (active")
	if m := p.cmd(kNaledi, "list"); !loginURL.MatchString(m.Text()) {
		t.Errorf("the revoked account is still known: %q", m.Text())
	}
}

// TestDiscordUnlinkOfARoleOrChannel: /gpu unlink who: given a Discord role or channel mention, or
// a word that names nobody, is refused in Discord's words (what it names, how Discord names a
// person), with no Slack account format, and the example typed back unlinks.
func TestDiscordUnlinkOfARoleOrChannel(t *testing.T) {
	t.Parallel()
	p := newKaroo(t)
	p.signIn(kOps, kNaledi)
	for who, says := range map[string]string{"<@&940000000000000077>": "a Discord role", "<#400000000000000021>": "a Discord channel", "naledi": "discord:USER_ID"} {
		m := p.cmd(kOps, "unlink", opt("who", who))
		mustHave(t, "/gpu unlink who:"+who, m.Text(), says, "Example: /gpu unlink who:")
		if strings.Contains(m.Text(), "slack:") {
			t.Errorf("/gpu unlink who:%s on Discord names a Slack account: %q", who, m.Text())
		}
	}
	if m := p.cmd(kOps, "unlink", opt("who", "naledi@karoo.example")); !strings.Contains(m.Text(), "Unlinked 1 chat account") {
		t.Errorf("/gpu unlink who:EMAIL: %q", m.Text())
	}
}

// TestDiscordBudgetOwnerOutOfTheGroupAtASignIn: a budget owner taken out of the approvers' group
// at the provider who signs in again before any re-check (to approve with a fresh sign-in, say)
// is found out of it by that sign-in, as a re-check would find them: their copy of the request
// loses its buttons and names who decides now, and, as they were the last of the group signed
// in, the fallback approvers are sent it.
func TestDiscordBudgetOwnerOutOfTheGroupAtASignIn(t *testing.T) {
	t.Parallel()
	p := newKaroo(t)
	p.signIn(kNaledi, kSipho, kOps)
	if m := p.cmd(kNaledi, "request", opt("gpus", 2), opt("class", "big5-h200"), opt("duration", "40h")); !strings.Contains(m.Text(), "L-1 waits for approval") {
		t.Fatalf("request: %q", m.Text())
	}
	p.e.wait()
	dms := p.e.fake.PostsTo(discordtest.DMChannel(kSipho))
	if len(dms) != 1 {
		t.Fatalf("sipho's DMs: %+v", dms)
	}
	p.users[kSipho].SetGroups("6f1c2a9e-1b7d-4c55-9d1e-0a2b3c4d5e6f")
	p.signIn(kSipho)
	p.e.wait()
	edited := false
	for _, ed := range p.e.fake.Edits() {
		if ed.ID == dms[0].ID && strings.Contains(ed.Text(), "L-1 is no longer yours to decide") && len(ed.Buttons) == 0 {
			edited = true
		}
	}
	if !edited {
		t.Errorf("sipho's copy was not edited at his sign-in: %+v", p.e.fake.Edits())
	}
	if toOps := p.e.fake.PostsTo(discordtest.DMChannel(kOps)); len(toOps) != 1 || !strings.Contains(toOps[0].Text(), "Approval needed") {
		t.Errorf("the fallback approver's DMs: %+v", toOps)
	}
}

// TestDiscordSignedOutOwnerStillHearsOfTheirLease: someone who signs out of Discord keeps their
// running lease, and so its notices: the warning before it ends, and that it expired, reach the
// Discord account they signed in from, as Slack reaches its people by email. A Discord account a
// platform admin unlinked hears nothing more of the person's leases.
func TestDiscordSignedOutOwnerStillHearsOfTheirLease(t *testing.T) {
	t.Parallel()
	p := newKaroo(t)
	p.signIn(kNaledi, kThabo, kOps)
	for _, u := range []string{kNaledi, kThabo} {
		if m := p.cmd(u, "request", opt("gpus", 1), opt("class", "kudu_rtx6000"), opt("duration", "1h")); !strings.Contains(m.Text(), "is active") {
			t.Fatalf("request: %q", m.Text())
		}
	}
	if m := p.cmd(kNaledi, "logout"); !strings.Contains(m.Text(), "Signed out") {
		t.Fatalf("logout: %q", m.Text())
	}
	if m := p.cmd(kOps, "unlink", opt("who", "thabo@karoo.example")); !strings.Contains(m.Text(), "Unlinked 1") {
		t.Fatalf("unlink: %q", m.Text())
	}
	if err := p.a.Advance(context.Background(), 61*time.Minute); err != nil {
		t.Fatal(err)
	}
	p.e.wait()
	var told string
	for _, m := range p.e.fake.PostsTo(discordtest.DMChannel(kNaledi)) {
		told += m.Text() + "\n"
	}
	mustHave(t, "naledi's DMs after she signed out", told, "L-1 ends at", "L-1 expired")
	if dms := p.e.fake.PostsTo(discordtest.DMChannel(kThabo)); len(dms) != 0 {
		t.Errorf("the Discord account an admin unlinked was told of L-2: %+v", dms)
	}
}

// TestApprovalsNameARuleWithoutAWhyOnce: a request sent to its approvers by a rule the policy
// gives no why is listed in /gpu approvals by the rule's name alone, as the approval message
// names it, not with its name given again as its why ("rule long-request: Rule long-request").
func TestApprovalsNameARuleWithoutAWhyOnce(t *testing.T) {
	t.Parallel()
	p := newKaroo(t)
	p.signIn(kNaledi, kSipho)
	if m := p.cmd(kNaledi, "request", opt("gpus", 2), opt("class", "big5-h200"), opt("duration", "40h")); !strings.Contains(m.Text(), "L-1 waits for approval") {
		t.Fatalf("request: %q", m.Text())
	}
	m := p.cmd(kSipho, "approvals")
	mustHave(t, "/gpu approvals", m.Text(), "L-1", "rule long-request")
	if strings.Contains(m.Text(), "Rule long-request") {
		t.Errorf("/gpu approvals names the rule twice: %q", m.Text())
	}
}

// TestDiscordLastBudgetOwnerSignsOut: the only member of the approvers' group signed in signs
// out (or a platform admin unlinks them) while a request waits for them: nobody of the team's
// approvers can be told of it any more, so the fallback approvers are sent it, once.
func TestDiscordLastBudgetOwnerSignsOut(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"logout", "unlink"} {
		t.Run(how, func(t *testing.T) {
			p := newKaroo(t)
			p.signIn(kNaledi, kSipho, kOps)
			if m := p.cmd(kNaledi, "request", opt("gpus", 2), opt("class", "big5-h200"), opt("duration", "40h")); !strings.Contains(m.Text(), "L-1 waits for approval") {
				t.Fatalf("request: %q", m.Text())
			}
			p.e.wait()
			if len(p.e.fake.PostsTo(discordtest.DMChannel(kOps))) != 0 {
				t.Fatal("the fallback approver was asked while a budget owner was signed in")
			}
			switch how {
			case "logout":
				p.cmd(kSipho, "logout")
			case "unlink":
				p.cmd(kOps, "unlink", opt("who", "sipho@karoo.example"))
			}
			p.e.wait()
			p.cmd(kSipho, "logout") // nothing more to sign out of: nothing more is sent
			p.e.wait()
			toOps := p.e.fake.PostsTo(discordtest.DMChannel(kOps))
			if len(toOps) != 1 || !strings.Contains(toOps[0].Text(), "Approval needed") {
				t.Fatalf("the fallback approver's DMs: %+v", toOps)
			}
			p.signIn(kOps)
			if m := p.e.click(kOps, toOps[0], "Approve L-1"); !strings.Contains(m.Text(), "Approved L-1") {
				t.Errorf("the fallback approver's click: %q", m.Text())
			}
		})
	}
}
