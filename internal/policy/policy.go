// Package policy owns the published rules: the catalog of GPU classes, teams and their quotas, the
// exception rules (CEL), approvals, reports, the static directory and the simulated cluster. It loads
// and validates quartermaster.yaml and explains every error with its line.
package policy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Policy is a loaded, validated policy file.
type Policy struct {
	Organization string        `yaml:"organization" eg:"Acme AI"`
	Currency     string        `yaml:"currency" eg:"EUR"`
	Timezone     string        `yaml:"timezone" eg:"America/Chicago"`
	Classes      []*Class      `yaml:"classes" eg:"[{name: notebook, max_gpus: 1, max_duration: 8h}]"`
	DefaultQuota Quota         `yaml:"default_quota" eg:"{gpus: {notebook: 1}, gpu_hours_per_week: 24}"`
	Teams        []*Team       `yaml:"teams" eg:"[{name: vision, idp_groups: [ai-vision]}]"`
	Exceptions   []*Rule       `yaml:"exceptions" eg:"[{name: large-request, when: request.gpus > class.max_gpus}]"`
	Approvals    Approvals     `yaml:"approvals" eg:"{timeout: 24h, fallback_approvers: [platform-leads@acme.example]}"`
	Reports      Reports       `yaml:"reports" eg:"{showback: {schedule: \"MON 09:00\", channel: \"#gpu-showback\"}}"`
	Backend      string        `yaml:"backend" eg:"sim"`
	Directory    []*Identity   `yaml:"directory" eg:"[{user: alice@acme.example, groups: [ai-vision]}]"`
	Discord      Discord       `yaml:"discord" eg:"{channels: {\"#vision-gpu\": \"1180000000000000001\"}}"`
	Sim          SimCluster    `yaml:"sim" eg:"{nodes: [{name: l40s, count: 4, class: interactive, gpus: 4}]}"`
	Idle         IdleDetection `yaml:"idle" eg:"{utilization_below: 5}"`
	OIDC         SSO           `yaml:"oidc" eg:"{groups_claim: groups, recheck: 24h}"`

	// Location is Timezone, loaded.
	Location *time.Location `yaml:"-"`
	// Source names the file the policy came from.
	Source string `yaml:"-"`
	// Warnings are what policy check points out in a valid policy: entries that may not do what
	// their author expects.
	Warnings []Problem `yaml:"-"`
	// DiscordOnly are the warnings that hold where Discord runs without Slack: the teams'
	// channels discord.channels does not map, which Discord cannot post to.
	DiscordOnly []Problem `yaml:"-"`

	rules *ruleSet
	reach *reachCache
}

// Class is a catalog entry: a GPU SKU offered as a product.
type Class struct {
	Name            string            `yaml:"name" eg:"notebook"`
	Description     string            `yaml:"description" eg:"Shared L40S for notebooks"`
	SKU             string            `yaml:"sku" eg:"L40S"`
	GPUMemoryGiB    int               `yaml:"gpu_memory_gib" eg:"80"`
	PricePerGPUHour float64           `yaml:"price_per_gpu_hour" eg:"2.50"`
	Isolation       string            `yaml:"isolation" eg:"shared"`
	MaxGPUs         int               `yaml:"max_gpus" eg:"2"`
	MaxDuration     Duration          `yaml:"max_duration" eg:"8h"`
	IdleTimeout     Duration          `yaml:"idle_timeout" eg:"30m"`
	IdleGrace       Duration          `yaml:"idle_grace" eg:"10m"`
	ExpiryWarning   Duration          `yaml:"expiry_warning" eg:"15m"` // before a lease's end; 0: none
	CapacityShare   float64           `yaml:"capacity_share" eg:"0.15"`
	Slurm           SlurmMapping      `yaml:"slurm" eg:"{partition: train, gres: \"gpu:h100\"}"`
	Kubernetes      KubernetesMapping `yaml:"kubernetes" eg:"{resource: nvidia.com/gpu, node_selector: {gpu.acme/class: train}}"`
}

// DefaultExpiryWarning is a class's expiry_warning where the policy does not write one: how long
// before a lease's end its owner is told it ends, with a way to extend it.
const DefaultExpiryWarning = 15 * time.Minute

// Exclusive reports whether leases of the class get whole nodes' GPUs to themselves.
func (c *Class) Exclusive() bool { return c.Isolation == "exclusive" }

// SlurmMapping says how a class maps to Slurm.
type SlurmMapping struct {
	Partition string `yaml:"partition" eg:"train"`
	GRES      string `yaml:"gres" eg:"\"gpu:h100\""`
}

// KubernetesMapping says how a class maps to Kubernetes.
type KubernetesMapping struct {
	Resource     string            `yaml:"resource" eg:"nvidia.com/gpu"`
	NodeSelector map[string]string `yaml:"node_selector" eg:"{gpu.acme/class: train}" each:"train"`
	// Tolerations let the class's pods onto nodes the cluster taints for it (dedicated=gpu:
	// NoSchedule): the taint named after the GPU resource is tolerated without one.
	Tolerations []Toleration `yaml:"tolerations" eg:"[{key: dedicated, value: gpu, effect: NoSchedule}]"`
}

// Toleration is a Kubernetes toleration as a pod spec writes it; an empty operator is Equal, an
// empty effect every effect.
type Toleration struct {
	Key      string `yaml:"key" eg:"dedicated"`
	Operator string `yaml:"operator" eg:"Equal"`
	Value    string `yaml:"value" eg:"gpu"`
	Effect   string `yaml:"effect" eg:"NoSchedule"`
}

// Quota is a team's allowance: concurrent GPUs per class and GPU-hours per week.
type Quota struct {
	GPUs            map[string]int `yaml:"gpus" eg:"{notebook: 2}" each:"2"`
	GPUHoursPerWeek float64        `yaml:"gpu_hours_per_week" eg:"100"`
}

// Team owns a quota, budget owners and a channel.
type Team struct {
	Name         string   `yaml:"name" eg:"vision"`
	IDPGroups    []string `yaml:"idp_groups" eg:"[ai-vision]"`
	BudgetOwners []string `yaml:"budget_owners" eg:"[dana@acme.example]"`
	Channel      string   `yaml:"channel" eg:"\"#vision-gpu\""`
	Quota        *Quota   `yaml:"quota" eg:"{gpus: {notebook: 2}, gpu_hours_per_week: 100}"`
	DataClasses  []string `yaml:"data_classes" eg:"[public, internal]"`
	Storage      Storage  `yaml:"storage" eg:"{path: /projects/vision, quota_gib: 1024}"`
}

// Storage is a team's storage grant, mounted into every workspace.
type Storage struct {
	Path     string `yaml:"path" eg:"/projects/vision"`
	QuotaGiB int    `yaml:"quota_gib" eg:"1024"`
	PVC      string `yaml:"pvc" eg:"vision-data"`
}

// Approvals configures how exceptions are decided.
type Approvals struct {
	Timeout           Duration `yaml:"timeout" eg:"24h"`
	SelfApproval      bool     `yaml:"self_approval" eg:"false"`
	FallbackApprovers []string `yaml:"fallback_approvers" eg:"[platform-leads@acme.example]"`
	StepUp            Duration `yaml:"step_up" eg:"12h"`
}

// Reports configures scheduled reports.
type Reports struct {
	Showback Showback `yaml:"showback" eg:"{schedule: \"MON 09:00\", channel: \"#gpu-showback\"}"`
}

// Showback is the weekly report's schedule and audience.
type Showback struct {
	Schedule        string `yaml:"schedule" eg:"\"MON 09:00\""`
	Channel         string `yaml:"channel" eg:"\"#gpu-showback\""`
	DMBudgetOwners  bool   `yaml:"dm_budget_owners" eg:"true"`
	PlatformChannel string `yaml:"platform_channel" eg:"\"#gpu-platform\""`
}

// SSO configures single sign-on, where it is on (the provider and the client come from the
// environment: QM_OIDC_ISSUER, QM_OIDC_CLIENT_ID, QM_OIDC_CLIENT_SECRET, QM_PUBLIC_URL).
type SSO struct {
	// GroupsClaim names the ID token (or userinfo) claim that lists a person's groups.
	GroupsClaim string `yaml:"groups_claim" eg:"groups"`
	// Scopes are asked of the provider; openid is always among them.
	Scopes []string `yaml:"scopes" eg:"[openid, email, profile]"`
	// Recheck is how often a linked account's groups are read again from the provider.
	Recheck Duration `yaml:"recheck" eg:"24h"`
	// Admins are the users or groups who may unlink other people's chat accounts; empty: the
	// fallback approvers.
	Admins []string `yaml:"admins" eg:"[platform]"`
}

// SSO defaults.
const (
	DefaultGroupsClaim = "groups"
	DefaultRecheck     = 24 * time.Hour
)

// DefaultScopes are the scopes asked of the provider when the policy names none.
var DefaultScopes = []string{"openid", "email", "profile"}

// Identity is a static directory entry: a user and their IdP groups.
type Identity struct {
	User   string   `yaml:"user" eg:"alice@acme.example"`
	Groups []string `yaml:"groups" eg:"[ai-vision]"`
	// Accounts are the person's chat accounts where the platform does not say who they are,
	// written PLATFORM:ID (e.g. "discord:80351110224678912", a Discord user id).
	Accounts []string `yaml:"accounts" eg:"[\"discord:80351110224678912\"]"`
}

// Discord says where Discord messages go: the Discord channel id of each channel the policy
// names (a team's channel, the showback channel), e.g. {"#vision-gpu": "1180000000000000001"}.
type Discord struct {
	Channels map[string]string `yaml:"channels" eg:"{\"#vision-gpu\": \"1180000000000000001\"}" each:"\"1180000000000000001\""`
}

// SimCluster describes the simulated cluster of the sim backend.
type SimCluster struct {
	Nodes []*SimNodeGroup `yaml:"nodes" eg:"[{name: l40s, count: 4, class: interactive, gpus: 4}]"`
}

// SimNodeGroup is Count nodes named NAME-01.. of one class.
type SimNodeGroup struct {
	Name          string `yaml:"name" eg:"l40s"`
	Count         int    `yaml:"count" eg:"4"`
	Class         string `yaml:"class" eg:"interactive"`
	GPUs          int    `yaml:"gpus" eg:"8"`
	NVLinkIslands int    `yaml:"nvlink_islands" eg:"1"`
}

// IdleDetection says what counts as an idle GPU.
type IdleDetection struct {
	UtilizationBelow float64 `yaml:"utilization_below" eg:"5"`
}

// Class returns the named class.
func (p *Policy) Class(name string) (*Class, bool) {
	for _, c := range p.Classes {
		if SameName(c.Name, name) {
			return c, true
		}
	}
	return nil, false
}

// ClassNames lists the catalog's class names in file order.
func (p *Policy) ClassNames() []string {
	out := make([]string, len(p.Classes))
	for i, c := range p.Classes {
		out[i] = c.Name
	}
	return out
}

// TeamNames lists the teams' names in file order.
func (p *Policy) TeamNames() []string {
	out := make([]string, len(p.Teams))
	for i, t := range p.Teams {
		out[i] = t.Name
	}
	return out
}

// Team returns the named team.
func (p *Policy) Team(name string) (*Team, bool) {
	for _, t := range p.Teams {
		if SameName(t.Name, name) {
			return t, true
		}
	}
	return nil, false
}

// QuotaFor is the team's quota, or the default quota for a team with none; every class has an entry.
func (p *Policy) QuotaFor(team string) Quota {
	q := p.DefaultQuota
	if t, ok := p.Team(team); ok && t.Quota != nil {
		q = *t.Quota
	}
	out := Quota{GPUs: map[string]int{}, GPUHoursPerWeek: q.GPUHoursPerWeek}
	for _, c := range p.Classes {
		out.GPUs[c.Name] = q.GPUs[c.Name]
	}
	return out
}

// Identity returns the directory entry of a user.
func (p *Policy) Identity(user string) (*Identity, bool) {
	for _, id := range p.Directory {
		if SameName(id.User, user) {
			return id, true
		}
	}
	return nil, false
}

// UserByAccount is the directory's user with a chat account ("discord:80351110224678912").
func (p *Policy) UserByAccount(account string) (string, bool) {
	for _, id := range p.Directory {
		for _, a := range id.Accounts {
			if SameName(a, account) {
				return id.User, true
			}
		}
	}
	return "", false
}

// Account is a user's account on a chat platform ("discord"): the id after "discord:".
func (p *Policy) Account(user, platform string) (string, bool) {
	id, ok := p.Identity(user)
	if !ok {
		return "", false
	}
	for _, a := range id.Accounts {
		if pl, v, ok := strings.Cut(a, ":"); ok && SameName(pl, platform) {
			return v, true
		}
	}
	return "", false
}

// Groups resolves a user through the static directory; with it the policy serves as the
// service's directory where there is no SSO.
func (p *Policy) Groups(_ context.Context, user string) ([]string, bool) {
	id, ok := p.Identity(user)
	if !ok {
		return nil, false
	}
	return id.Groups, true
}

// Members lists the people of the static directory in a group.
func (p *Policy) Members(group string) []string {
	var out []string
	for _, id := range p.Directory {
		for _, g := range id.Groups {
			if SameName(g, group) {
				out = append(out, id.User)
				break
			}
		}
	}
	return out
}

// GroupName is a group as the identity provider sent it, as the policy names it. Providers that
// send full group paths (Keycloak's "Full group path") write the top-level group team-a as
// /team-a: that is the group team-a, unless the policy names /team-a itself. A nested path
// (/parent/team-a) and any other group are as sent: a policy names a subgroup by its full path.
func (p *Policy) GroupName(g string) string {
	name, top := strings.CutPrefix(g, "/")
	if !top || name == "" || strings.Contains(name, "/") || p.namesGroup(g) {
		return g
	}
	return name
}

// GroupNames is GroupName of each group, in order.
func (p *Policy) GroupNames(groups []string) []string {
	out := make([]string, len(groups))
	for i, g := range groups {
		out[i] = p.GroupName(g)
	}
	return out
}

// namesGroup reports whether the policy names g where it names groups: a team's idp_groups or
// budget owners, the fallback approvers, oidc.admins, the directory, or as a quoted string in an
// exception rule ('/team-a' in user.groups; rules see groups in lower case).
func (p *Policy) namesGroup(g string) bool {
	if intersects(p.Approvals.FallbackApprovers, []string{g}) || intersects(p.OIDC.Admins, []string{g}) {
		return true
	}
	for _, t := range p.Teams {
		if t != nil && (intersects(t.IDPGroups, []string{g}) || intersects(t.BudgetOwners, []string{g})) {
			return true
		}
	}
	for _, id := range p.Directory {
		if id != nil && intersects(id.Groups, []string{g}) {
			return true
		}
	}
	lg := NameKey(g)
	for _, r := range p.Exceptions {
		if r != nil && (strings.Contains(r.When, "'"+lg+"'") || strings.Contains(r.When, `"`+lg+`"`)) {
			return true
		}
	}
	return false
}

// TeamsOf lists the teams whose IdP groups the given groups include (as GroupName reads them),
// in file order.
func (p *Policy) TeamsOf(groups []string) []*Team {
	groups = p.GroupNames(groups)
	var out []*Team
	for _, t := range p.Teams {
		if intersects(t.IDPGroups, groups) {
			out = append(out, t)
		}
	}
	return out
}

// Approvers are the people who may decide an exception of the team: its budget owners, or the
// fallback approvers when it has none.
func (p *Policy) Approvers(team string) []string {
	if t, ok := p.Team(team); ok && len(t.BudgetOwners) > 0 {
		return append([]string(nil), t.BudgetOwners...)
	}
	return append([]string(nil), p.Approvals.FallbackApprovers...)
}

// IsApprover reports whether user may decide exceptions of team.
func (p *Policy) IsApprover(user, team string) bool {
	for _, a := range p.Approvers(team) {
		if SameName(a, user) {
			return true
		}
	}
	for _, a := range p.Approvals.FallbackApprovers {
		if SameName(a, user) {
			return true
		}
	}
	return false
}

// MayApprove reports whether someone, known by name and groups, may decide exceptions of team:
// an approver entry (a budget owner of the team, or a fallback approver) may name the person or
// one of their groups.
func (p *Policy) MayApprove(user string, groups []string, team string) bool {
	if p.IsApprover(user, team) {
		return true
	}
	groups = p.GroupNames(groups)
	return intersects(p.Approvers(team), groups) || intersects(p.Approvals.FallbackApprovers, groups)
}

// IsSSOAdmin reports whether someone, known by name and groups, may unlink other people's chat
// accounts: oidc.admins, or where it names nobody the fallback approvers (the platform leads).
func (p *Policy) IsSSOAdmin(user string, groups []string) bool {
	admins := p.OIDC.Admins
	if len(admins) == 0 {
		admins = p.Approvals.FallbackApprovers
	}
	return Contains(admins, user) || intersects(admins, p.GroupNames(groups))
}

// Capacity is the simulated cluster's GPU count per class.
func (p *Policy) Capacity() map[string]int {
	out := map[string]int{}
	for _, g := range p.Sim.Nodes {
		out[g.Class] += g.Count * g.GPUs
	}
	return out
}

// TotalCapacity is the simulated cluster's GPU count.
func (p *Policy) TotalCapacity() int {
	n := 0
	for _, v := range p.Capacity() {
		n += v
	}
	return n
}

// SharedClasses are the classes whose leases together are bound by a capacity share.
func (p *Policy) SharedClasses() []string {
	var out []string
	for _, c := range p.Classes {
		if c.CapacityShare > 0 {
			out = append(out, c.Name)
		}
	}
	sort.Strings(out)
	return out
}

// CapacityShare is the share of cluster capacity that the shared classes may hold together: the
// smallest share any of them declares.
func (p *Policy) CapacityShare() float64 {
	s := 0.0
	for _, c := range p.Classes {
		if c.CapacityShare > 0 && (s == 0 || c.CapacityShare < s) {
			s = c.CapacityShare
		}
	}
	return s
}

// Intersects reports whether a and b share a name (see SameName).
func Intersects(a, b []string) bool { return intersects(a, b) }

func intersects(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if SameName(x, y) {
				return true
			}
		}
	}
	return false
}

// Contains reports whether list holds s, ignoring the case of A to Z (see SameName).
func Contains(list []string, s string) bool { return intersects(list, []string{s}) }

// Duration is a time.Duration written as in the policy file: 30m, 8h, 2d, 1w.
type Duration struct{ time.Duration }

// UnmarshalText parses a policy duration.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := ParseDuration(string(b))
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// MarshalText writes a duration the way the policy file does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(FormatDuration(d.Duration)), nil }

// ErrDurationTooLong is a duration longer than LongestDuration.
var ErrDurationTooLong = errors.New("too long")

// LongestDuration is the longest duration ParseDuration reads: ten years (of 365 days).
const LongestDuration = 10 * 365 * 24 * time.Hour

// MaxLease is the longest any lease (or request for one) may last, approved or not; a class's
// max_duration beyond it draws a warning.
const MaxLease = 30 * 24 * time.Hour

// MaxGPUs is the most GPUs any request may ask for; larger numbers are typos, not exceptions.
const MaxGPUs = 4096

// UnitOrderError is a duration that names a unit twice (1h1h) or a smaller unit before a larger
// one (30m1h): what it adds up to may not be what was meant, so it is refused, with Meant, the
// sum, written the way that works.
type UnitOrderError struct {
	Text     string        // the duration as written
	Unit     string        // the unit named twice, or the larger one named after a smaller (hours)
	Smaller  string        // for a unit out of order, the smaller unit named before it (minutes)
	Meant    time.Duration // what it adds up to
	Repeated bool
}

func (e *UnitOrderError) Error() string {
	if e.Repeated {
		return fmt.Sprintf("%q names %s twice; write each unit once, largest first, like %s", e.Text, e.Unit, FormatDuration(e.Meant))
	}
	return fmt.Sprintf("%q writes %s before %s; write the largest unit first, each once, like %s", e.Text, e.Smaller, e.Unit, FormatDuration(e.Meant))
}

// unitNames are the units of a duration as a sentence names them.
var unitNames = map[time.Duration]string{time.Second: "seconds", time.Minute: "minutes", time.Hour: "hours", 24 * time.Hour: "days", 7 * 24 * time.Hour: "weeks"}

// ParseDuration reads durations such as 45m, 4h, 1h30m, 2d, 1w, 90 (minutes are not assumed: a
// bare number is refused). Each unit is named once, largest first: 1h1h and 30m1h are refused
// (*UnitOrderError).
func ParseDuration(s string) (time.Duration, error) {
	s = strings.Join(strings.Fields(strings.ToLower(s)), "")
	if s == "" {
		return 0, fmt.Errorf("empty duration")
	}
	var total, last time.Duration
	var order *UnitOrderError
	rest := s
	for rest != "" {
		i := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.') {
			i++
		}
		if i == 0 {
			return 0, fmt.Errorf("%q is not a duration", s)
		}
		num := rest[:i]
		rest = rest[i:]
		j := 0
		for j < len(rest) && rest[j] >= 'a' && rest[j] <= 'z' {
			j++
		}
		unit := rest[:j]
		rest = rest[j:]
		var u time.Duration
		switch unit {
		case "s", "sec", "secs", "second", "seconds":
			u = time.Second
		case "m", "min", "mins", "minute", "minutes":
			u = time.Minute
		case "h", "hr", "hrs", "hour", "hours":
			u = time.Hour
		case "d", "day", "days":
			u = 24 * time.Hour
		case "w", "wk", "week", "weeks":
			u = 7 * 24 * time.Hour
		default:
			return 0, fmt.Errorf("%q is not a duration", s)
		}
		// The whole number, not what a scan takes of it: 1.2.3h is no duration.
		f, err := strconv.ParseFloat(num, 64)
		if errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("%q is %w", s, ErrDurationTooLong)
		}
		if err != nil || f < 0 {
			return 0, fmt.Errorf("%q is not a duration", s)
		}
		// Compare in floating point before converting, so a huge number cannot wrap around.
		const longest = LongestDuration
		part := f * float64(u)
		if part > float64(longest) || total+time.Duration(part) > longest {
			return 0, fmt.Errorf("%q is %w", s, ErrDurationTooLong)
		}
		total += time.Duration(part)
		if order == nil && last != 0 && u >= last {
			order = &UnitOrderError{Text: s, Unit: unitNames[u], Smaller: unitNames[last], Repeated: u == last}
		}
		last = u
	}
	if order != nil {
		order.Meant = total
		return 0, order
	}
	return total, nil
}

// FormatDuration writes a duration compactly: 45m, 2h, 1h30m, 3d.
func FormatDuration(d time.Duration) string {
	if d <= 0 {
		return "0m"
	}
	d = d.Round(time.Minute)
	if d == 0 {
		return "<1m"
	}
	days := d / (24 * time.Hour)
	d -= days * 24 * time.Hour
	h := d / time.Hour
	d -= h * time.Hour
	m := d / time.Minute
	var b strings.Builder
	if days > 0 {
		fmt.Fprintf(&b, "%dd", days)
	}
	if h > 0 {
		fmt.Fprintf(&b, "%dh", h)
	}
	if m > 0 {
		fmt.Fprintf(&b, "%dm", m)
	}
	return b.String()
}

// Count is n with the noun that fits it: "1 class", "2 classes", "0 classes". Every reply writes
// a count this way, never "class(es)"; qm.GPUCount is it for GPUs.
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Agree is the word that agrees with a count of n: one for 1, many for any other count ("size is
// known", "nnodes and script are known").
func Agree(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Quoted is text someone typed as a reply quotes it back: in plain double quotes and as it was
// typed, with nothing escaped; characters that would not show (control and format characters
// such as a right-to-left override) are left out, other white space is a space, bytes that are
// no UTF-8 are shown as �, and past n characters it is cut short with an ellipsis.
func Quoted(s string, n int) string {
	var b strings.Builder
	count := 0
	for _, r := range strings.ToValidUTF8(s, "\ufffd") {
		switch {
		case unicode.IsControl(r) && !unicode.IsSpace(r), unicode.Is(unicode.Cf, r):
			continue
		case unicode.IsSpace(r):
			r = ' '
		}
		if count == n {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
		count++
	}
	return `"` + b.String() + `"`
}

// fewNames is how many names a refusal lists.
const fewNames = 3

// FewNames names a few of names for a refusal of what someone typed (typed), the one closest to
// it first, joined by word ("and", "or"), and says how many more there are: "a, b, c and 117
// more" ("a and b" when that is all).
// A refusal stays one short sentence however many classes or teams a policy has.
func FewNames(typed string, names []string, word string) string {
	if near := Closest(NameKey(typed), names); near != "" {
		names = append([]string{near}, slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == near })...)
	}
	return SomeNames(names, fewNames, word)
}

// SomeNames lists at most n of names as JoinList does, joined by word ("and", "or"), and says how
// many more there are: "a, b, c and 117 more", "a, b, c or 117 more" ("a, b or c" when that is
// all). One more than n is named too: "and 1 more" would hide a name in as many words as it takes.
func SomeNames(names []string, n int, word string) string {
	if len(names) <= n+1 {
		return JoinList(names, word)
	}
	return fmt.Sprintf("%s %s %d more", strings.Join(names[:n], ", "), word, len(names)-n)
}

// JoinList writes items as a reader lists them, joined by word ("and", "or"): "a", "a or b",
// "a, b or c".
func JoinList(items []string, word string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " " + word + " " + items[len(items)-1]
}
