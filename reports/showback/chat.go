package showback

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// topTeams is how many teams the post names as the week's largest.
const topTeams = 5

// Ref is what the chat messages of a week's showback are grouped by.
func Ref(week string) string { return "showback:" + week }

// Post is the week's channel post: the headline numbers, the top teams, the idle share and a line
// per team, with the chart and the CSV attached.
func (r *Report) Post(to string, chart []byte) bot.Reply {
	t := r.Total
	out := bot.Reply{To: to, Ref: Ref(r.Week),
		Text: fmt.Sprintf("%s: %s GPU-hours, %s, %s.", r.Title(), two(t.GPUHours), r.Money(t.Cost), idleOfIt(t.Figures))}
	util := "no telemetry"
	if t.MeanUtilization != nil {
		util = "mean utilization " + pctOf(t.MeanUtilization)
	}
	out.Sections = append(out.Sections, bot.Section{Title: "This week", Fields: []bot.Field{
		{Label: "GPU-hours", Value: two(t.GPUHours) + " (" + r.ChangeLine(t) + ")"},
		{Label: "Cost", Value: r.Money(t.Cost)},
		{Label: "Idle", Value: idleField(t.Figures)},
		{Label: "Reclaimed", Value: two(t.ReclaimedGPUHours) + " GPU-hours"},
		{Label: "Leases", Value: fmt.Sprintf("%d; %s", t.Leases, util)},
		{Label: "Approvals", Value: ApprovalsLine(t.Approvals)},
		{Label: "Human touches", Value: TouchesLine(t)},
		{Label: "Queue waits", Value: WaitLine(t.QueueWait)},
		{Label: "Well connected", Value: ConnectivityLine(t.Connectivity)},
	}})
	if top, tied := r.top(topTeams); len(top) > 0 {
		var lines []string
		for i, tm := range top {
			lines = append(lines, fmt.Sprintf("%d. %s — %s, %s GPU-hours, %s", i+1, tm.Name, r.Money(tm.Cost), two(tm.GPUHours), idleShareText(tm.Figures)))
		}
		if tied > 0 {
			lines = append(lines, fmt.Sprintf("and %s at %s", policy.Count(tied, "more team", "more teams"), r.Money(top[len(top)-1].Cost)))
		}
		out.Sections = append(out.Sections, bot.Section{Title: "Top teams by cost", Text: strings.Join(lines, "\n")})
	}
	var lines []string
	for _, tm := range r.Teams {
		lines = append(lines, r.TeamLine(tm))
	}
	if len(lines) > 0 {
		out.Sections = append(out.Sections, bot.Section{Title: "Every team", Text: strings.Join(lines, "\n")})
	}
	var notes []string
	for _, q := range r.QuotaIncreases {
		notes = append(notes, "Quota increase: "+r.increaseLine(q))
	}
	for _, tm := range r.Teams {
		if tm.FirstRequest != nil {
			notes = append(notes, "New team: "+r.firstLine(tm))
		}
	}
	if len(notes) > 0 {
		out.Sections = append(out.Sections, bot.Section{Title: "Also this week", Text: strings.Join(notes, "\n")})
	}
	out.Files = r.Files(chart)
	return out
}

// Files are the post's attachments: the chart (when there is one) and the CSV.
func (r *Report) Files(chart []byte) []bot.File {
	var fs []bot.File
	if len(chart) > 0 {
		fs = append(fs, bot.File{Name: r.FileName("png"), Title: "GPU-hours and idle GPU-hours per team, " + r.Week, Type: "image/png", Content: chart})
	}
	return append(fs, bot.File{Name: r.FileName("csv"), Title: "Showback " + r.Week + " per team and class", Type: "text/csv", Content: r.CSV()})
}

// FileName names a file of the report: showback-2026-W48.csv, showback-2026-W48-vision.png.
func (r *Report) FileName(ext string) string {
	n := "showback-" + r.Week
	if r.Scope.Team != "" {
		n += "-" + safeName(r.Scope.Team)
	}
	if r.Scope.User != "" {
		n += "-" + safeName(r.Scope.User)
	}
	return n + "." + ext
}

// safeName is s written as a file name: letters a to z and A to Z, digits, -, _ and . as they are,
// @ as _, an accented Latin letter as its letter (ü as u, policy.FoldAccents) and anything else as
// _. Where a letter was written otherwise, a short hash of s follows, so that people whose names
// differ only there (müller and muller, 山田 and 田中) get files of their own, and one's report
// never overwrites another's in the console's reports folder.
func safeName(s string) string {
	var b strings.Builder
	changed := false
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.':
			b.WriteRune(r)
		case r == '@':
			b.WriteByte('_')
		default:
			changed = true
			if f := policy.FoldAccents(string(r)); f != string(r) && strings.Trim(f, "abcdefghijklmnopqrstuvwxyz") == "" {
				b.WriteString(f)
			} else {
				b.WriteByte('_')
			}
		}
	}
	if changed {
		h := fnv.New32a()
		h.Write([]byte(s))
		fmt.Fprintf(&b, "-%08x", h.Sum32())
	}
	return b.String()
}

// top is the n teams that cost the most this week (those that used anything), and how many
// teams left out of them cost what the last of them cost, as the post writes it: a tie at the
// last place that the list cuts (by GPU-hours, then by name).
func (r *Report) top(n int) (top []*Team, tied int) {
	var ts []*Team
	for _, t := range r.Teams {
		if t.GPUHours > 0 {
			ts = append(ts, t)
		}
	}
	sort.SliceStable(ts, func(i, j int) bool {
		if ts[i].Cost != ts[j].Cost {
			return ts[i].Cost > ts[j].Cost
		}
		return ts[i].GPUHours > ts[j].GPUHours
	})
	top = ts[:min(n, len(ts))]
	if len(top) > 0 {
		last := r.Money(top[len(top)-1].Cost)
		for _, t := range ts[len(top):] {
			if r.Money(t.Cost) == last {
				tied++
			}
		}
	}
	return top, tied
}

// maxDMHeadline bounds the first line of a budget owner's DM: beyond it, the line sums the
// owner's teams instead of naming each.
const maxDMHeadline = 600

// OwnerDM is a budget owner's message: their teams' lines, each with the change from the week before.
func (r *Report) OwnerDM(owner string, teams []string) bot.Reply {
	out := bot.Reply{To: owner, Ref: Ref(r.Week) + ":dm"}
	var heads []string
	for _, name := range teams {
		t := r.team(name)
		if t == nil {
			continue
		}
		if t.GPUHours > 0 {
			heads = append(heads, fmt.Sprintf("team %s used %s GPU-hours (%s), %s", t.Name, two(t.GPUHours), r.Money(t.Cost), idleShareText(t.Figures)))
		} else {
			heads = append(heads, fmt.Sprintf("team %s used no GPUs", t.Name))
		}
		var lines []string
		idle := 0 // classes the team neither used nor has a quota of
		for _, row := range r.Rows {
			if row.Team != t.Name {
				continue
			}
			if row.GPUHours == 0 && row.Leases == 0 && row.PeakGPUs == 0 && row.QuotaGPUs == 0 {
				idle++
				continue
			}
			peak := fmt.Sprintf("at most %d of %s at once", row.PeakGPUs, qm.GPUCount(row.QuotaGPUs, ""))
			switch most := r.quotaAtMost(row); {
			case most > row.QuotaGPUs && row.QuotaGPUs == 0:
				peak = fmt.Sprintf("at most %s at once (%d with the quota increase)", qm.GPUCount(row.PeakGPUs, ""), most)
			case most > row.QuotaGPUs:
				peak += fmt.Sprintf(" (%d with the quota increase)", most)
			case row.QuotaGPUs == 0:
				peak = fmt.Sprintf("at most %s at once (no quota of the class)", qm.GPUCount(row.PeakGPUs, ""))
			}
			lines = append(lines, fmt.Sprintf("%s: %s GPU-hours, %s, %s, reclaimed %s, %s, %s",
				row.Class, two(row.GPUHours), r.Money(row.Cost), idleHoursText(row.Figures, false), two(row.ReclaimedGPUHours), leasesCount(row.Leases), peak))
		}
		switch {
		case idle > 0 && len(lines) > 0:
			lines = append(lines, fmt.Sprintf("no GPU-hours and no quota in %s", policy.Count(idle, "other class", "other classes")))
		case idle > 0:
			lines = append(lines, "no GPU-hours and no quota in any class")
		}
		quota := "no weekly GPU-hour quota"
		if t.GPUHoursQuotaShare != nil {
			quota = fmt.Sprintf("%s of %s GPU-hours (%s)", two(t.GPUHours), two(t.GPUHoursQuota), pct(t.GPUHoursQuotaShare))
		}
		fields := []bot.Field{
			{Label: "Change", Value: r.ChangeLine(t.Summary)},
			{Label: "Weekly quota", Value: quota},
			{Label: "Approvals", Value: ApprovalsLine(t.Approvals)},
			{Label: "Queue waits", Value: WaitLine(t.QueueWait)},
		}
		if t.FirstRequest != nil {
			// A new team's owner reads its time to first GPU here too.
			fields = append(fields, bot.Field{Label: "New team", Value: r.firstLine(t)})
		}
		out.Sections = append(out.Sections, bot.Section{Title: "Team " + t.Name, Text: strings.Join(lines, "\n"), Fields: fields})
	}
	out.Text = fmt.Sprintf("Your GPU showback for %s (%s): %s.", r.Week, r.Span(), strings.Join(heads, "; "))
	if utf8.RuneCountInString(out.Text) > maxDMHeadline {
		// Too many teams to name each in the headline: their sum, each team's line below.
		var sum Figures
		for _, name := range teams {
			if t := r.team(name); t != nil {
				sum.add(t.Figures)
			}
		}
		out.Text = fmt.Sprintf("Your GPU showback for %s (%s): your %d teams used %s GPU-hours (%s), %s; each team below.",
			r.Week, r.Span(), len(heads), two(sum.GPUHours), r.Money(sum.Cost), idleShareText(sum))
		if sum.nothingHeld() {
			// A share of nothing idle is no share ("n/a"): none of the teams held a GPU.
			out.Text = fmt.Sprintf("Your GPU showback for %s (%s): your %d teams: %s; each team below.", r.Week, r.Span(), len(heads), noneIdle)
		}
	}
	if len(heads) == 0 {
		out.Text = fmt.Sprintf("Your GPU showback for %s (%s): your teams are not in it.", r.Week, r.Span())
	}
	out.Actions = []bot.Action{{Label: "Whole report", Command: "/gpu report " + r.Week}}
	return out
}

func (r *Report) team(name string) *Team {
	for _, t := range r.Teams {
		if policy.SameName(t.Name, name) {
			return t
		}
	}
	return nil
}

// Answer is the report as a chat reply to whoever asked (/gpu report), with the CSV attached.
func (r *Report) Answer(chart []byte) bot.Reply {
	out := bot.Reply{Text: r.Title() + ": " + r.Headline()}
	if r.Scope.User != "" && r.Total.GPUHours == 0 && r.Total.Requests == 0 {
		out.Text = r.Title() + ": you used no GPUs."
	}
	f := []bot.Field{
		{Label: "Change", Value: r.ChangeLine(r.Total)},
		{Label: "Approvals", Value: ApprovalsLine(r.Total.Approvals)},
		{Label: "Queue waits", Value: WaitLine(r.Total.QueueWait)},
	}
	if r.Scope.User == "" {
		f = append(f, bot.Field{Label: "Human touches", Value: TouchesLine(r.Total)})
	}
	out.Sections = append(out.Sections, bot.Section{Title: "Total", Fields: f})
	for _, t := range r.Teams {
		var lines []string
		for _, row := range r.Rows {
			if row.Team == t.Name && (row.GPUHours > 0 || row.Leases > 0) {
				lines = append(lines, fmt.Sprintf("%s: %s GPU-hours, %s, %s, reclaimed %s, %s",
					row.Class, two(row.GPUHours), r.Money(row.Cost), idleHoursText(row.Figures, false), two(row.ReclaimedGPUHours), leasesCount(row.Leases)))
			}
		}
		text := r.TeamLine(t)
		if len(lines) > 0 {
			text += "\n" + strings.Join(lines, "\n")
		}
		if t.FirstRequest != nil {
			text += "\nNew team: " + r.firstLine(t)
		}
		out.Sections = append(out.Sections, bot.Section{Text: text})
	}
	out.Files = r.Files(chart)
	return out
}

// One chat message of the showback holds at most partChars characters and partSections sections:
// what the smallest chat platform takes in one message (Discord: 10 embeds of 6000 characters
// together), with room to spare for markup. A longer post or DM goes out in parts.
const (
	partChars    = 3500
	partSections = 8
)

func sectionChars(s bot.Section) int {
	n := utf8.RuneCountInString(s.Title) + utf8.RuneCountInString(s.Text)
	for _, f := range s.Fields {
		n += utf8.RuneCountInString(f.Label) + utf8.RuneCountInString(f.Value)
	}
	return n
}

// cutSection cuts a section whose text is longer than n characters into several, between lines,
// the later ones titled as continued.
func cutSection(s bot.Section, n int) []bot.Section {
	if utf8.RuneCountInString(s.Text) <= n {
		return []bot.Section{s}
	}
	var out []bot.Section
	cur := bot.Section{Title: s.Title}
	for _, line := range strings.Split(s.Text, "\n") {
		if cur.Text != "" && utf8.RuneCountInString(cur.Text)+1+utf8.RuneCountInString(line) > n {
			out = append(out, cur)
			cur = bot.Section{Title: s.Title + " (continued)"}
		}
		if cur.Text != "" {
			cur.Text += "\n"
		}
		cur.Text += line
	}
	cur.Fields = s.Fields
	return append(out, cur)
}

// Parts splits a message too long for one chat message into parts that each fit one: the first
// keeps the text and the files, each later one begins with more (what it continues), the last
// keeps the buttons, and each says which part it is. A message that fits is returned as it is.
func Parts(r bot.Reply, more string) []bot.Reply {
	if utf8.RuneCountInString(r.Text)+sectionsChars(r.Sections) <= partChars && len(r.Sections) <= partSections {
		return []bot.Reply{r}
	}
	var secs []bot.Section
	for _, s := range r.Sections {
		secs = append(secs, cutSection(s, partChars/2)...)
	}
	first := r
	first.Sections, first.Actions = nil, nil
	parts := []bot.Reply{first}
	size := utf8.RuneCountInString(r.Text)
	for _, s := range secs {
		cur := &parts[len(parts)-1]
		if n := sectionChars(s); len(cur.Sections) > 0 && (size+n > partChars || len(cur.Sections) >= partSections) {
			parts = append(parts, bot.Reply{To: r.To, Ref: r.Ref, Text: more})
			cur, size = &parts[len(parts)-1], utf8.RuneCountInString(more)
		}
		cur.Sections = append(cur.Sections, s)
		size += sectionChars(s)
	}
	parts[len(parts)-1].Actions = r.Actions
	if len(parts) > 1 {
		for i := range parts {
			parts[i].Text += fmt.Sprintf(" Part %d of %d.", i+1, len(parts))
		}
	}
	return parts
}

func sectionsChars(ss []bot.Section) int {
	n := 0
	for _, s := range ss {
		n += sectionChars(s)
	}
	return n
}

// idleOfIt is the post's "12.5% of it idle", noneIdle where no GPU was held, or idleNotMeasured.
func idleOfIt(f Figures) string {
	if f.IdleMeasured() && f.nothingHeld() {
		return noneIdle // a share of nothing held is none ("n/a")
	}
	if !f.IdleMeasured() {
		return idleNotMeasured
	}
	return pct(f.IdleShare()) + " of it idle"
}

// idleField is the post's Idle field: "1.50 GPU-hours, 12.5% of GPU-hours", noneIdle where no GPU
// was held, or that telemetry saw none of the GPU-hours.
func idleField(f Figures) string {
	if f.IdleMeasured() && f.nothingHeld() {
		return noneIdle
	}
	if !f.IdleMeasured() {
		return "not measured: no telemetry from the leases' nodes"
	}
	return fmt.Sprintf("%s GPU-hours, %s of GPU-hours", two(f.Idle()), pct(f.IdleShare()))
}
