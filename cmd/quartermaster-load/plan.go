package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/policy"
)

// kind is how a delivery reaches the service.
type kind int

const (
	slashCommand   kind = iota // a Slack slash command, answered through its response_url
	buttonClick                // a Slack button click (block_actions), answered through its response_url
	discordCommand             // a Discord /gpu interaction, answered in the acknowledgement or by editing the deferral
)

func (k kind) String() string {
	switch k {
	case slashCommand:
		return "slack command"
	case buttonClick:
		return "slack click"
	}
	return "discord command"
}

// step is one slot of the mix the load cycles through.
type step struct {
	kind kind
	// text is what the user types after /gpu (a Slack command), the command the button carries
	// (a click), or the subcommand (Discord).
	text string
	// request is set when the delivery asks for a lease: one interactive GPU for an hour or more
	// (text's "for 1h" is then the length that plan.text puts in).
	request bool
}

// mix is the cycle of deliveries every user sends in turn: mostly reads, as a chat bot sees, and
// three requests in thirty (a slash command, a click on a "Request it" button and a Discord
// command).
var mix = []step{
	{kind: slashCommand, text: "list"},
	{kind: slashCommand, text: "catalog"},
	{kind: slashCommand, text: "request 1 interactive for 1h", request: true},
	{kind: slashCommand, text: "estimate 1 interactive 2h"},
	{kind: slashCommand, text: "quota"},
	{kind: discordCommand, text: "list"},
	{kind: slashCommand, text: "list"},
	{kind: discordCommand, text: "quota"},
	{kind: slashCommand, text: "catalog"},
	{kind: slashCommand, text: "quota"},
	{kind: slashCommand, text: "list"},
	{kind: buttonClick, text: "/gpu request 1 interactive for 1h", request: true},
	{kind: slashCommand, text: "estimate 1 interactive 2h"},
	{kind: slashCommand, text: "quota"},
	{kind: discordCommand, text: "list"},
	{kind: slashCommand, text: "list"},
	{kind: slashCommand, text: "catalog"},
	{kind: discordCommand, text: "catalog"},
	{kind: slashCommand, text: "quota"},
	{kind: slashCommand, text: "list"},
	{kind: slashCommand, text: "list"},
	{kind: discordCommand, text: "quota"},
	{kind: slashCommand, text: "quota"},
	{kind: discordCommand, text: "request", request: true},
	{kind: slashCommand, text: "catalog"},
	{kind: slashCommand, text: "list"},
	{kind: slashCommand, text: "estimate 1 interactive 2h"},
	{kind: discordCommand, text: "list"},
	{kind: slashCommand, text: "quota"},
	{kind: slashCommand, text: "list"},
}

// plan is one run's organisation and its deliveries: users and teams named after the run, so a
// database can hold several runs without one's leases counting against another's quota.
type plan struct {
	run     string // a short random id
	teams   int
	users   int // in all; user u is in team u % teams
	quota   int // interactive GPUs each team may hold at once
	total   int // deliveries
	nodes   int // 8-GPU interactive nodes of the simulated cluster
	perTeam []int
}

const (
	defaultTeams  = 40
	usersPerTeam  = 6
	gpusPerNode   = 8
	discordAppID  = "300000000000000001"
	discordGuild  = "500000000000000001"
	discordChanID = "600000000000000001"
	loadChannel   = "CLOAD" // the Slack channel commands are typed and buttons clicked in
)

// newPlan sizes a run of total deliveries: each team's quota is two GPUs fewer than the requests
// it will send (at least one), so the quotas bind and a few requests wait for a budget owner. Few:
// the service posts an approval request to the team's channel, which Slack takes one message a
// second.
func newPlan(run string, teams, total int) plan {
	p := plan{run: run, teams: teams, users: teams * usersPerTeam, total: total, perTeam: make([]int, teams)}
	for i := range total {
		if mix[i%len(mix)].request {
			p.perTeam[p.team(p.user(i))]++
		}
	}
	least := total
	for _, n := range p.perTeam {
		if n > 0 {
			least = min(least, n)
		}
	}
	p.quota = max(1, least-2)
	p.nodes = (p.teams*p.quota+gpusPerNode-1)/gpusPerNode + 1
	return p
}

// user is who sends delivery i: each user sends a whole cycle of the mix, the users in turn.
func (p plan) user(i int) int { return (i / len(mix)) % p.users }

func (p plan) team(u int) int { return u % p.teams }

func (p plan) teamName(t int) string { return fmt.Sprintf("load-%s-t%02d", p.run, t) }

func (p plan) email(u int) string { return fmt.Sprintf("u%03d.%s@load.example", u, p.run) }

// owner is a team's budget owner, who decides its approvals and sends no load (so that every
// approval goes to its own team's owner, not to the fallback approvers).
func (p plan) owner(t int) string { return fmt.Sprintf("owner.t%02d.%s@load.example", t, p.run) }

func (p plan) slackID(u int) string { return fmt.Sprintf("U%s%03d", strings.ToUpper(p.run), u) }

// discordID is a user's Discord id: digits only, as Discord's are.
func (p plan) discordID(u int) string { return fmt.Sprintf("8%010d%03d", p.runNumber(), u) }

// runNumber is the run id as digits, for Discord's numeric ids.
func (p plan) runNumber() uint64 {
	var n uint64
	for _, c := range p.run {
		n = n*31 + uint64(c)
	}
	return n % 10_000_000_000
}

// interactionID is delivery i's Discord interaction id.
func (p plan) interactionID(i int) string { return fmt.Sprintf("7%010d%08d", p.runNumber(), i) }

// trigger is delivery i's Slack trigger id, which keys the lease a request makes.
func (p plan) trigger(i int) string { return fmt.Sprintf("load.%s.%d", p.run, i) }

// messageTS is the ts of the message whose button delivery i clicks: every click is on a
// message of its own (a button is done once per message).
func (p plan) messageTS(i int) string { return fmt.Sprintf("1764500000.%06d", i) }

// requestKey is the key the service stores on the lease delivery i asks for.
func (p plan) requestKey(i int) string {
	switch s := mix[i%len(mix)]; s.kind {
	case discordCommand:
		return "discord:" + p.interactionID(i)
	case buttonClick:
		return bot.ClickKey("slack", loadChannel+"/"+p.messageTS(i), p.slackID(p.user(i)), p.text(i))
	}
	return "slack:" + p.trigger(i)
}

// length is the length delivery i's request asks for: an hour and as many minutes as the user's
// requests before it (up to 419, then again from none), so that no request of a user asks for the
// same as another of theirs still waiting for approval, which the service would answer with the
// first rather than ask again. Nothing ends during a run either way.
func (p plan) length(i int) string {
	turn, at := i/len(mix)/p.users, i%len(mix)
	before := 0
	for _, s := range mix[:at] {
		if s.request {
			before++
		}
	}
	return policy.FormatDuration(time.Hour + time.Duration((turn*requestsPerTurn+before)%420)*time.Minute)
}

// requestsPerTurn is how many of the mix's deliveries are requests.
var requestsPerTurn = func() int {
	n := 0
	for _, s := range mix {
		if s.request {
			n++
		}
	}
	return n
}()

// text is what delivery i types after /gpu, or the command its button carries: the mix's, with a
// request's length put in.
func (p plan) text(i int) string {
	s := mix[i%len(mix)]
	if !s.request {
		return s.text
	}
	return strings.Replace(s.text, "for 1h", "for "+p.length(i), 1)
}

// expectedGrants is how many leases must be running at the end: every team gets its quota, or
// what it asked for when that is less, whatever order the requests were taken in (nothing ends
// during a run: the leases are for an hour).
func (p plan) expectedGrants(leasesPerTeam []int) int {
	n := 0
	for _, made := range leasesPerTeam {
		n += min(made, p.quota)
	}
	return n
}

// policy is the organisation the service runs for the load: one shared interactive class on the
// simulated cluster, the teams with their quota, and the over-quota rule alone, so that a request
// is either granted or waits for its team's budget owner.
func (p plan) policy() string {
	var b strings.Builder
	fmt.Fprintf(&b, `organization: Load %s
currency: USD
timezone: UTC
classes:
  - name: interactive
    description: Shared GPUs for notebooks
    sku: L40S
    gpu_memory_gib: 48
    price_per_gpu_hour: 0.90
    isolation: shared
    max_gpus: 1
    max_duration: 8h
    idle_timeout: 8h
    idle_grace: 1h
    slurm: {partition: interactive, gres: "gpu:l40s"}
default_quota: {gpus: {interactive: 0}, gpu_hours_per_week: 0}
teams:
`, p.run)
	for t := range p.teams {
		fmt.Fprintf(&b, "  - name: %s\n    idp_groups: [%s]\n    budget_owners: [%s]\n    channel: \"#%s\"\n    quota: {gpus: {interactive: %d}, gpu_hours_per_week: 1000000}\n    data_classes: [public, internal]\n",
			p.teamName(t), p.teamName(t), p.owner(t), p.teamName(t), p.quota)
	}
	b.WriteString(`exceptions:
  - name: over-quota
    when: usage.gpus_in_use + request.gpus > team.quota.gpus[class.name]
    why: The request goes beyond the team's quota
approvals:
  timeout: 24h
  self_approval: false
  fallback_approvers: [platform.` + p.run + `@load.example]
backend: sim
directory:
`)
	for u := range p.users {
		fmt.Fprintf(&b, "  - {user: %s, groups: [%s], accounts: [\"discord:%s\"]}\n", p.email(u), p.teamName(p.team(u)), p.discordID(u))
	}
	for t := range p.teams {
		fmt.Fprintf(&b, "  - {user: %s, groups: [%s]}\n", p.owner(t), p.teamName(t))
	}
	fmt.Fprintf(&b, "  - {user: platform.%s@load.example, groups: [platform]}\n", p.run)
	fmt.Fprintf(&b, "sim:\n  nodes:\n    - {name: l40s, count: %d, class: interactive, gpus: %d, nvlink_islands: %d}\n", p.nodes, gpusPerNode, gpusPerNode)
	return b.String()
}
