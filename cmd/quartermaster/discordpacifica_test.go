package main

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot/discord/gputable"

	discordbot "github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
	"github.com/acme/quartermaster/internal/oidc/oidctest"
)

// pacificaPolicy is a policy with none of the example's names, for Discord with single sign-on:
// a currency without a minor unit (XPF), a zone west of UTC without an abbreviation
// (Pacific/Tahiti), teams with hyphens, digits and a 40-letter name, budget owners named by a
// group, a contractor rule and a data-class rule.
const pacificaPolicy = `organization: Pacifica Research
currency: XPF
timezone: Pacific/Tahiti
classes:
  - name: lagon-l4
    description: Shared L4 slices for notebooks in the lagoon
    sku: L4
    gpu_memory_gib: 24
    price_per_gpu_hour: 95
    isolation: shared
    max_gpus: 1
    max_duration: 6h
    idle_timeout: 40m
    idle_grace: 10m
  - name: recif-h100x8
    description: Exclusive H100 nodes for the reef models
    sku: H100-SXM5
    gpu_memory_gib: 80
    price_per_gpu_hour: 412.5
    isolation: exclusive
    max_gpus: 8
    max_duration: 36h
    idle_timeout: 2h
    idle_grace: 20m
    expiry_warning: 20m
default_quota: {gpus: {lagon-l4: 1, recif-h100x8: 0}, gpu_hours_per_week: 12}
teams:
  - name: coral-reef-3d
    idp_groups: [grp-coral-3d]
    budget_owners: ["Pacifica Budget Holders"]
    channel: "#coral-3d-gpu"
    quota: {gpus: {lagon-l4: 2, recif-h100x8: 8}, gpu_hours_per_week: 400}
    data_classes: [open, embargoed]
  - name: team-42
    idp_groups: [grp-42]
    budget_owners: [vaite@pacifica.example]
    channel: "#t42"
    quota: {gpus: {lagon-l4: 1, recif-h100x8: 0}, gpu_hours_per_week: 30}
    data_classes: [open]
  - name: oceanographic-modelling-and-climate-2050
    idp_groups: [grp-ocean]
    budget_owners: ["Pacifica Budget Holders"]
    channel: "#ocean-models"
    quota: {gpus: {lagon-l4: 1, recif-h100x8: 16}, gpu_hours_per_week: 900}
    data_classes: [open]
exceptions:
  - name: large-request
    when: request.gpus > class.max_gpus
    why: More GPUs than the class allows without approval
  - name: sovereign-data
    when: "!(request.data_class in team.data_classes)"
    why: The team is not cleared for this data class
  - name: outside-staff
    when: "'ext-contractors' in user.groups"
    why: Outside staff need a budget holder's approval
  - name: over-quota
    when: usage.gpus_in_use + request.gpus > team.quota.gpus[class.name] || usage.gpu_hours_week + request.gpu_hours > team.quota.gpu_hours_per_week
    why: Beyond the team's quota
  - name: long-request
    when: request.duration > class.max_duration
    why: Longer than the class allows without approval
approvals:
  timeout: 12h
  self_approval: false
  fallback_approvers: [direction@pacifica.example]
  step_up: 5m
reports:
  showback: {schedule: "FRI 16:00", channel: "#gpu-facture", dm_budget_owners: true}
backend: sim
discord:
  channels:
    "#coral-3d-gpu": "300000000000000021"
    "#t42": "300000000000000022"
    "#ocean-models": "300000000000000023"
    "#gpu-facture": "300000000000000024"
oidc:
  groups_claim: groups
  recheck: 1m
  scopes: [openid, email, profile, groups]
  admins: [grp-it-ops]
sim:
  nodes:
    - {name: l4, count: 2, class: lagon-l4, gpus: 4}
    - {name: h100, count: 2, class: recif-h100x8, gpus: 8}
`

// Discord users of the Pacifica tests.
const (
	pcRangi = "930000000000000001" // coral-reef-3d
	pcMoana = "930000000000000002" // coral-reef-3d, a budget holder
	pcTeiki = "930000000000000003" // coral-reef-3d, a contractor
	pcVaite = "930000000000000004" // team-42, its budget owner
	pcTama  = "930000000000000005" // the long-named team
	pcDir   = "930000000000000006" // fallback approver, platform admin
)

// pacifica is the wired product on pacificaPolicy with single sign-on at an in-process provider
// and a fake Discord.
type pacifica struct {
	*robo
	users map[string]*oidctest.User
}

func newPacifica(t *testing.T) *pacifica {
	t.Helper()
	w := newSSOWorldWith(t, pacificaPolicy)
	e := &discordEnv{t: t, app: w.a, fake: discordtest.New(t), signer: discordtest.NewSigner()}
	e.settings = discordSettings{BotToken: discordtest.Token, PublicKey: e.signer.PublicKey(), AppID: discordtest.App, APIURL: e.fake.URL}
	e.start()
	return &pacifica{robo: &robo{ssoWorld: w, e: e}, users: map[string]*oidctest.User{
		pcRangi: oidctest.NewUser("sub-rangi", "rangi@pacifica.example", "grp-coral-3d"),
		pcMoana: oidctest.NewUser("sub-moana", "moana@pacifica.example", "grp-coral-3d", "Pacifica Budget Holders"),
		pcTeiki: oidctest.NewUser("sub-teiki", "teiki@outside.example", "grp-coral-3d", "ext-contractors"),
		pcVaite: oidctest.NewUser("sub-vaite", "vaite@pacifica.example", "grp-42"),
		pcTama:  oidctest.NewUser("sub-tama", "tama@pacifica.example", "grp-ocean"),
		pcDir:   oidctest.NewUser("sub-dir", "direction@pacifica.example", "grp-it-ops"),
	}}
}

// signIn signs the Discord users in, each as their identity at the provider.
func (p *pacifica) signIn(users ...string) {
	p.t.Helper()
	for _, u := range users {
		if r := p.login(u, p.users[u]); r.Status != 200 {
			p.t.Fatalf("signing in %s: %d %s", u, r.Status, r.Body)
		}
	}
}

// typedCommand reads a Discord command as a message writes it, "/gpu SUB name:value …", up to
// the end of its sentence, as the options someone typing it gives.
func typedCommand(t *testing.T, text, sub string) []discordtest.Opt {
	t.Helper()
	i := strings.Index(text, "/gpu "+sub+" ")
	if i < 0 {
		t.Fatalf("no /gpu %s in %q", sub, text)
	}
	line := text[i+len("/gpu "+sub+" "):]
	if j := strings.Index(line, ". "); j >= 0 {
		line = line[:j]
	}
	line = strings.TrimSuffix(strings.SplitN(line, "\n", 2)[0], ".")
	names := regexp.MustCompile(`(?:^| )([a-z]+):`).FindAllStringSubmatchIndex(line, -1)
	var opts []discordtest.Opt
	for k, n := range names {
		end := len(line)
		if k+1 < len(names) {
			end = names[k+1][0]
		}
		opts = append(opts, discordtest.Opt{Name: line[n[2]:n[3]], Value: line[n[1]:end]})
	}
	if len(opts) == 0 {
		t.Fatalf("/gpu %s in %q names no option", sub, text)
	}
	for k, o := range opts {
		if o.Name == "gpus" {
			var n int
			for _, r := range o.Value.(string) {
				n = n*10 + int(r-'0')
			}
			opts[k].Value = n
		}
	}
	return opts
}

// TestDiscordOverQuotaSuggestsAQuotaRequestThatWorks: a request beyond the team's quota names
// the quota request that would give room next time; on Discord it is written with its options,
// the reason included (reason:…, not Slack's "because …", which Discord's /gpu takes no words
// for), and typed back as written it asks the budget owners.
func TestDiscordOverQuotaSuggestsAQuotaRequestThatWorks(t *testing.T) {
	t.Parallel()
	p := newPacifica(t)
	p.signIn(pcVaite)
	m := p.cmd(pcVaite, "request", opt("gpus", 3), opt("class", "recif-h100x8"), opt("duration", "2h"))
	if !strings.Contains(m.Text(), "L-1 waits for approval") {
		t.Fatalf("over quota: %q", m.Text())
	}
	if strings.Contains(m.Text(), "because") {
		t.Errorf("the quota request it suggests is written with Slack's words: %q", m.Text())
	}
	again := p.cmd(pcVaite, "quota-request", typedCommand(t, m.Text(), "quota-request")...)
	if !strings.Contains(again.Text(), "L-2 asks for +3 recif-h100x8 GPUs for team team-42") {
		t.Errorf("the quota request, typed as suggested, was answered %q", again.Text())
	}
}

// TestDiscordHelpShowsEveryUsageAsTyped: with single sign-on, /gpu help on Discord shows every
// command, login, logout and unlink included, exactly as Discord takes it (unlink's
// "who:EMAIL…", written once), and /gpu help COMMAND does too.
func TestDiscordHelpShowsEveryUsageAsTyped(t *testing.T) {
	t.Parallel()
	p := newPacifica(t)
	p.signIn(pcRangi)
	help := p.cmd(pcRangi, "help").Text()
	for _, c := range gputable.Commands(p.a.Bot) {
		want := "`" + discordbot.UsageOf("gpu", c) + "` — "
		if !strings.Contains(help, want) {
			t.Errorf("/gpu help does not show %s: %q", want, help)
		}
		if one := p.cmd(pcRangi, "help", opt("command", c.Name)).Text(); !strings.Contains(one, "`"+discordbot.UsageOf("gpu", c)+"` — ") {
			t.Errorf("/gpu help command:%s does not show %s: %q", c.Name, want, one)
		}
	}
	if strings.Contains(help, "who:who:") {
		t.Errorf("/gpu help names an option twice: %q", help)
	}
}

// TestDiscordHelpNamesOtherHelpAsTyped: where a command's help points to another's help (/gpu
// help command:quota lists the quota request), it names it as /gpu help's command option takes
// it, one of its choices (quota-request), not the words Slack types (quota request), which
// Discord refuses; typed back, it shows that command's help.
func TestDiscordHelpNamesOtherHelpAsTyped(t *testing.T) {
	t.Parallel()
	p := newPacifica(t)
	p.signIn(pcTama)
	var choices []string
	cmds := gputable.Commands(p.a.Bot)
	for _, c := range cmds {
		if c.Name == "help" {
			choices = c.Options[0].Choices
		}
	}
	if len(choices) == 0 {
		t.Fatal("/gpu help's command option has no choices")
	}
	pointer := regexp.MustCompile("/gpu help command:([^ )`.,;\n]+(?: [a-z]+)?)")
	seen := 0
	for _, c := range cmds {
		text := p.cmd(pcTama, "help", opt("command", c.Name)).Text()
		for _, m := range pointer.FindAllStringSubmatch(text, -1) {
			seen++
			if !slices.Contains(choices, m[1]) {
				t.Errorf("/gpu help command:%s points to /gpu help command:%s, which is none of its choices %v: %q", c.Name, m[1], choices, text)
				continue
			}
			if got := p.cmd(pcTama, "help", opt("command", m[1])).Text(); !strings.Contains(got, "`/gpu "+m[1]) {
				t.Errorf("/gpu help command:%s, as /gpu help command:%s names it, answered %q", m[1], c.Name, got)
			}
		}
	}
	if seen == 0 {
		t.Error("no help points to another command's help")
	}
}

// TestDiscordHelpTopicsAsTyped: /gpu help with a topic that is no command answers, on Discord,
// with the topics as its command option takes them (quota-request), and the nearest one's
// example typed back shows that command's help.
func TestDiscordHelpTopicsAsTyped(t *testing.T) {
	t.Parallel()
	p := newPacifica(t)
	m := p.cmd(pcTama, "help", opt("command", "quota-requests"))
	if !strings.Contains(m.Text(), "Example: /gpu help command:quota-request") {
		t.Fatalf("/gpu help command:quota-requests: %q", m.Text())
	}
	if got := p.cmd(pcTama, "help", opt("command", "quota-request")).Text(); !strings.Contains(got, "`/gpu quota-request ") {
		t.Errorf("the nearest topic, typed back: %q", got)
	}
	m = p.cmd(pcTama, "help", opt("command", "frobnicate"))
	if !strings.Contains(m.Text(), "quota-request") || strings.Contains(m.Text(), "quota request") {
		t.Errorf("/gpu help command:frobnicate names the topics otherwise than Discord takes them: %q", m.Text())
	}
}

// TestDiscordExpiryWarningWhenGroupsAreNotConfirmed: with single sign-on, someone whose groups
// the provider has not confirmed for two re-check periods (a public client, or a provider that
// cannot be reached) gets the warning before their lease ends all the same; it says that their
// groups could not be confirmed and that /gpu login signs them in again, not that they are
// missing from a directory an admin should add them to, which single sign-on does not read.
func TestDiscordExpiryWarningWhenGroupsAreNotConfirmed(t *testing.T) {
	t.Parallel()
	p := newPacifica(t)
	p.signIn(pcRangi)
	if m := p.cmd(pcRangi, "request", opt("gpus", 1), opt("class", "lagon-l4"), opt("duration", "1h")); !strings.Contains(m.Text(), "L-1 is active") {
		t.Fatalf("request: %q", m.Text())
	}
	if err := p.a.Advance(context.Background(), 46*time.Minute); err != nil {
		t.Fatal(err)
	}
	p.e.wait()
	var warning string
	for _, m := range p.e.fake.PostsTo(discordtest.DMChannel(pcRangi)) {
		if strings.Contains(m.Text(), "L-1 ends at") {
			warning = m.Text()
		}
	}
	if warning == "" {
		t.Fatalf("no expiry warning: %+v", p.e.fake.PostsTo(discordtest.DMChannel(pcRangi)))
	}
	mustHave(t, "the expiry warning", warning, "could not be confirmed", "/gpu login")
	for _, wrong := range []string{"not in the directory", "ask a platform admin to add you"} {
		if strings.Contains(warning, wrong) {
			t.Errorf("the expiry warning says %q: %q", wrong, warning)
		}
	}
}

// TestDiscordRequestNamesWhoIsAskedWhenNoBudgetOwnerSignedIn: budget owners named by a group of
// which nobody has signed in yet cannot be told of a request, so the fallback approvers are
// asked instead; the requester's answer names them too, whom the request went to, not only a
// group nobody of which heard of it.
func TestDiscordRequestNamesWhoIsAskedWhenNoBudgetOwnerSignedIn(t *testing.T) {
	t.Parallel()
	p := newPacifica(t)
	p.signIn(pcTama, pcDir)
	m := p.cmd(pcTama, "request", opt("gpus", 2), opt("class", "recif-h100x8"), opt("duration", "40h"))
	if !strings.Contains(m.Text(), "L-1 waits for approval") {
		t.Fatalf("request: %q", m.Text())
	}
	p.e.wait()
	if dms := p.e.fake.PostsTo(discordtest.DMChannel(pcDir)); len(dms) != 1 || !strings.Contains(dms[0].Text(), "Approval needed") {
		t.Fatalf("the fallback approver's DMs: %+v", dms)
	}
	if !strings.Contains(m.Text(), "direction@pacifica.example") {
		t.Errorf("the answer does not name direction@pacifica.example, who was asked to decide: %q", m.Text())
	}
	q := p.cmd(pcTama, "quota-request", opt("gpus", 4), opt("class", "recif-h100x8"), opt("reason", "storm season"))
	if !strings.Contains(q.Text(), "direction@pacifica.example") {
		t.Errorf("the quota request's answer does not name direction@pacifica.example: %q", q.Text())
	}
}

// TestDiscordUnlinkOfATypedNameSaysHowDiscordNamesSomeone: a name typed after @ in /gpu unlink's
// who option, not picked from the list Discord offers, reaches Quartermaster as text; the
// refusal says how Discord names a person (picked from that list, or discord:USER_ID, or their
// email), not how Slack does, and its example works.
func TestDiscordUnlinkOfATypedNameSaysHowDiscordNamesSomeone(t *testing.T) {
	t.Parallel()
	p := newPacifica(t)
	p.signIn(pcDir, pcRangi)
	m := p.cmd(pcDir, "unlink", opt("who", "@rangi"))
	mustHave(t, "/gpu unlink who:@rangi", m.Text(), "Discord", "discord:USER_ID", "Copy User ID", "their email", "Example: /gpu unlink who:")
	for _, slack := range []string{"Slack", "slack:", "member ID"} {
		if strings.Contains(m.Text(), slack) {
			t.Errorf("/gpu unlink who:@rangi on Discord speaks of %s: %q", slack, m.Text())
		}
	}
	if got := p.cmd(pcDir, "unlink", opt("who", "discord:"+pcRangi)); !strings.Contains(got.Text(), "Unlinked 1 chat account") {
		t.Errorf("/gpu unlink who:discord:USER_ID, as the refusal says: %q", got.Text())
	}
}

// TestDiscordUnlinkedClickOnADecidedRequest: someone Quartermaster does not know yet who presses
// Approve on a team channel's copy of a request that no longer waits (decided already), or types
// /gpu approve for a request there is none of, is told at once that no such request waits (what
// anyone may read: not who decided), not handed a sign-in link that promises the approval; on a
// request that waits, the link says it approves only if the request is theirs to decide.
func TestDiscordUnlinkedClickOnADecidedRequest(t *testing.T) {
	t.Parallel()
	p := newPacifica(t)
	p.signIn(pcTeiki, pcMoana)
	p.cmd(pcTeiki, "request", opt("gpus", 1), opt("class", "lagon-l4"), opt("duration", "1h"))
	p.e.wait()
	posts := p.e.fake.PostsTo("300000000000000021") // #coral-3d-gpu
	if len(posts) != 1 {
		t.Fatalf("the team channel's posts: %+v", posts)
	}
	waits := p.e.click(pcRangi, posts[0], "Approve L-1")
	if !loginURL.MatchString(waits.Text()) || !strings.Contains(waits.Text(), "if it is yours to decide") {
		t.Errorf("an unlinked click on a request that waits: %q", waits.Text())
	}
	if m := p.e.click(pcMoana, p.e.fake.PostsTo(discordtest.DMChannel(pcMoana))[0], "Approve L-1"); !strings.Contains(m.Text(), "Approved L-1") {
		t.Fatalf("moana's approval: %q", m.Text())
	}
	late := p.e.click(pcRangi, posts[0], "Approve L-1")
	if loginURL.MatchString(late.Text()) || !strings.Contains(late.Text(), "no request L-1 waiting") {
		t.Errorf("an unlinked click on a request decided already: %q", late.Text())
	}
	none := p.cmd(pcRangi, "approve", opt("lease", "L-9"))
	if loginURL.MatchString(none.Text()) || !strings.Contains(none.Text(), "no request L-9") {
		t.Errorf("an unlinked /gpu approve of a request there is none of: %q", none.Text())
	}
}

// TestDiscordUnconfirmedClickOnADecidedRequest: someone whose groups are no longer confirmed
// who presses Approve on a request decided already is told no such request waits, with no
// sign-in link that could only end in a refusal.
func TestDiscordUnconfirmedClickOnADecidedRequest(t *testing.T) {
	t.Parallel()
	p := newPacifica(t)
	p.signIn(pcTeiki, pcMoana, pcRangi)
	p.cmd(pcTeiki, "request", opt("gpus", 1), opt("class", "lagon-l4"), opt("duration", "1h"))
	p.e.wait()
	posts := p.e.fake.PostsTo("300000000000000021")
	if m := p.e.click(pcMoana, p.e.fake.PostsTo(discordtest.DMChannel(pcMoana))[0], "Approve L-1"); !strings.Contains(m.Text(), "Approved L-1") {
		t.Fatalf("moana's approval: %q", m.Text())
	}
	if err := p.a.Advance(context.Background(), 3*time.Minute); err != nil { // past two re-check periods
		t.Fatal(err)
	}
	late := p.e.click(pcRangi, posts[0], "Approve L-1")
	if loginURL.MatchString(late.Text()) || !strings.Contains(late.Text(), "no request L-1 waiting") {
		t.Errorf("a click with groups unconfirmed on a request decided already: %q", late.Text())
	}
}

// TestDiscordUnlinkedDenyOnADecidedRequestGetsNoForm: someone not signed in who presses Deny on
// a request decided already is told at once that no such request waits, and is not asked for a
// reason first, which could only end in that refusal.
func TestDiscordUnlinkedDenyOnADecidedRequestGetsNoForm(t *testing.T) {
	t.Parallel()
	p := newPacifica(t)
	p.signIn(pcTeiki, pcMoana)
	p.cmd(pcTeiki, "request", opt("gpus", 1), opt("class", "lagon-l4"), opt("duration", "1h"))
	p.e.wait()
	posts := p.e.fake.PostsTo("300000000000000021")
	if m := p.e.click(pcMoana, p.e.fake.PostsTo(discordtest.DMChannel(pcMoana))[0], "Approve L-1"); !strings.Contains(m.Text(), "Approved L-1") {
		t.Fatalf("moana's approval: %q", m.Text())
	}
	m := p.e.click(pcRangi, posts[0], "Deny L-1")
	if m.Type == 9 || !strings.Contains(m.Text(), "no request L-1 waiting") {
		t.Errorf("an unlinked Deny on a request decided already: type %d, %q", m.Type, m.Text())
	}
}

// TestDiscordReportOfAnotherTeamIsASentence: /gpu report of a team the asker does not own is
// refused with a sentence that starts as one, and its example, typed back, shows the asker's
// own use.
func TestDiscordReportOfAnotherTeamIsASentence(t *testing.T) {
	t.Parallel()
	p := newPacifica(t)
	p.signIn(pcRangi)
	m := p.cmd(pcRangi, "report", opt("team", "team-42"), opt("week", "this week"))
	text := strings.TrimSpace(m.Text())
	if !strings.HasPrefix(text, "Only platform admins and the budget owner of team team-42 (vaite@pacifica.example) see its showback") {
		t.Errorf("/gpu report team:team-42 by someone outside it: %q", text)
	}
	again := p.cmd(pcRangi, "report", typedCommand(t, text, "report")...)
	if strings.Contains(again.Text(), "see its showback") {
		t.Errorf("its example, typed back: %q", again.Text())
	}
}
