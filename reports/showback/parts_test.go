package showback_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/schedule"
	"github.com/acme/quartermaster/reports/showback"
)

// fixedSource is a week's leases, without telemetry, predictions or sign-ins.
type fixedSource struct{ leases []*qm.Lease }

func (s fixedSource) AddUsage(context.Context, []qm.UsageRollup) error { return nil }
func (s fixedSource) Usage(context.Context, time.Time, time.Time) ([]qm.UsageRollup, error) {
	return nil, nil
}
func (s fixedSource) ReportLeases(context.Context, time.Time, time.Time) ([]*qm.Lease, error) {
	return s.leases, nil
}
func (s fixedSource) HistoryStart(context.Context) (time.Time, error) {
	return s.leases[0].CreatedAt, nil
}
func (s fixedSource) LeaseTeams(context.Context) ([]string, error) { return nil, nil }
func (s fixedSource) TeamFirsts(context.Context, []string, time.Time) ([]qm.TeamFirst, error) {
	return nil, nil
}
func (s fixedSource) WaitPredictions(context.Context, time.Time, time.Time) ([]qm.WaitPrediction, error) {
	return nil, nil
}
func (s fixedSource) AddWaitPredictions(context.Context, []qm.WaitPrediction) error { return nil }

// memLedger is one replica's ledger, in memory.
type memLedger struct{ delivered []string }

func (l *memLedger) ClaimWeek(context.Context, string, string, time.Time, time.Duration) (bool, error) {
	return true, nil
}
func (l *memLedger) WeekDeliveries(context.Context, string) ([]string, error) {
	return l.delivered, nil
}
func (l *memLedger) MarkDelivered(_ context.Context, _, _, key string, _ time.Time, _ time.Duration) error {
	l.delivered = append(l.delivered, key)
	return nil
}
func (l *memLedger) ReleaseWeek(context.Context, string, string) error           { return nil }
func (l *memLedger) FinishWeek(context.Context, string, string, time.Time) error { return nil }
func (l *memLedger) PostedWeek(context.Context, string) (time.Time, error)       { return time.Time{}, nil }
func (l *memLedger) LastPostedWeek(context.Context) (string, error)              { return "", nil }
func (c fixedClock) Now() time.Time                                              { return time.Time(c) }
func (r *recorded) Deliver(_ context.Context, m bot.Reply) error                 { *r = append(*r, m); return nil }

type (
	fixedClock time.Time
	recorded   []bot.Reply
)

// Discord takes at most 10 embeds of 6000 characters together in a message; Slack 50 blocks.
const (
	discordChars  = 6000
	discordEmbeds = 10
)

// chars counts what a chat platform shows of a message.
func chars(r bot.Reply) int {
	n := utf8.RuneCountInString(r.Text)
	for _, s := range r.Sections {
		n += utf8.RuneCountInString(s.Title) + utf8.RuneCountInString(s.Text)
		for _, f := range s.Fields {
			n += utf8.RuneCountInString(f.Label) + utf8.RuneCountInString(f.Value)
		}
	}
	return n
}

// With dozens of teams, the channel post and the DM of a budget owner of all of them are too
// long for one Discord message: each goes out in parts that each fit one, the first with the
// chart and the CSV, and together they carry every team's line; a later run sends no part twice.
func TestALongShowbackGoesOutInPartsThatEachFitAChatMessage(t *testing.T) {
	var b strings.Builder
	b.WriteString("organization: Forschung GmbH\ncurrency: EUR\ntimezone: Europe/Berlin\nbackend: slurm\nclasses:\n")
	for _, c := range []string{"interactive", "train", "inference"} {
		fmt.Fprintf(&b, "  - {name: %s, price_per_gpu_hour: 2.5, max_gpus: 8, max_duration: 72h, slurm: {partition: p}}\n", c)
	}
	b.WriteString("default_quota: {gpus: {interactive: 1}, gpu_hours_per_week: 24}\nteams:\n")
	name := func(i int) string { return fmt.Sprintf("computer-vision-research-%02d", i) }
	const teams = 60
	var names []string
	for i := range teams {
		names = append(names, name(i))
		fmt.Fprintf(&b, "  - {name: %s, idp_groups: [g%d], budget_owners: [chief@forschung.example], quota: {gpus: {interactive: 4, train: 16}, gpu_hours_per_week: 600}}\n", name(i), i)
	}
	b.WriteString("reports:\n  showback: {schedule: \"MON 08:00\", channel: \"#gpu-showback\", dm_budget_owners: true}\n")
	p, err := policy.Load([]byte(b.String()), "forschung.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w, _ := showback.ParseWeek("2026-W10", showback.Week{})
	from := w.Start(p.Location)
	var leases []*qm.Lease
	for i := range teams {
		st := from.Add(time.Duration(i) * time.Hour)
		leases = append(leases, &qm.Lease{ID: qm.LeaseID(i + 1), User: "u@forschung.example", Team: name(i), Class: "train", GPUs: 2, State: qm.Expired,
			CreatedAt: st, StartedAt: st, ExpiresAt: st.Add(5 * time.Hour), EndedAt: st.Add(5 * time.Hour)})
	}
	sched, err := schedule.ParseWeekly("MON 08:00", p.Location)
	if err != nil {
		t.Fatal(err)
	}
	var got recorded
	ledger := &memLedger{}
	pub := &showback.Publisher{Reports: &showback.Service{Policy: p, Source: fixedSource{leases}, Clock: fixedClock(from.Add(8 * 24 * time.Hour))},
		Ledger: ledger, Deliver: &got, Schedule: sched, Owner: "r1"}
	if posted, err := pub.Publish(context.Background(), w); err != nil || !posted {
		t.Fatalf("Publish = %v, %v", posted, err)
	}
	byTo := map[string][]bot.Reply{}
	for _, m := range got {
		byTo[m.To] = append(byTo[m.To], m)
		if n := chars(m); n > discordChars-200 || len(m.Sections)+1 > discordEmbeds {
			t.Errorf("a message to %s has %d characters and %d sections: too long for one Discord message", m.To, n, len(m.Sections))
		}
	}
	post, dm := byTo["#gpu-showback"], byTo["chief@forschung.example"]
	if len(post) < 2 || len(dm) < 2 || len(byTo) != 2 {
		t.Fatalf("%d part(s) of the post and %d of the DM (to %d recipients); want several of each", len(post), len(dm), len(byTo))
	}
	for i, m := range post {
		if want := fmt.Sprintf("Part %d of %d.", i+1, len(post)); !strings.Contains(m.Text, want) {
			t.Errorf("part %d of the post does not say %q: %s", i+1, want, m.Text)
		}
		if (i == 0) != (len(m.Files) == 2) {
			t.Errorf("part %d of the post has %d files; the chart and the CSV go with the first part only", i+1, len(m.Files))
		}
	}
	all := func(ms []bot.Reply) string {
		var b strings.Builder
		for _, m := range ms {
			b.WriteString(m.PlainText() + "\n")
		}
		return b.String()
	}
	for _, n := range names {
		if !strings.Contains(all(post), n+": 10.00 GPU-hours of 600.00") {
			t.Errorf("the post's parts lack %s's line", n)
		}
		if !strings.Contains(all(dm), "Team "+n) {
			t.Errorf("the DM's parts lack team %s", n)
		}
	}
	if !strings.HasPrefix(dm[0].Text, "Your GPU showback for 2026-W10") {
		t.Errorf("the DM begins %q", dm[0].Text)
	}
	if len(dm[len(dm)-1].Actions) != 1 {
		t.Errorf("the DM's last part has actions %v, want the whole report's button", dm[len(dm)-1].Actions)
	}
	// A second run (the week left unposted) sends nothing already sent.
	sent := len(got)
	if _, err := pub.Publish(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	if len(got) != sent {
		t.Errorf("a second run sent %d more message(s)", len(got)-sent)
	}
}

// A budget owner of 60 teams in a catalog of 40 classes gets, for each team, a line for each class
// it used or has a quota of, and one line for the rest, instead of 40 lines a team, most of them
// zeros, that took their DM to over a hundred messages.
func TestOwnerDMOfManyTeamsAndClassesNamesOnlyClassesInUseOrQuota(t *testing.T) {
	p, err := policy.LoadFile("../../commands/testdata/big.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w, _ := showback.ParseWeek("2026-W48", showback.Week{})
	from := w.Start(p.Location).Add(10 * time.Hour)
	var leases []*qm.Lease
	var teams []string
	for i, tm := range p.Teams {
		teams = append(teams, tm.Name)
		leases = append(leases, &qm.Lease{ID: qm.LeaseID(i + 1), User: "u@x.example", Team: tm.Name, Class: p.Classes[0].Name, GPUs: 2, State: qm.Expired,
			CreatedAt: from, StartedAt: from, ExpiresAt: from.Add(4 * time.Hour), EndedAt: from.Add(4 * time.Hour)})
	}
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: from.Add(7 * 24 * time.Hour), Leases: leases})
	dm := r.OwnerDM("boss@x.example", teams)
	if len(dm.Sections) != 60 {
		t.Fatalf("%d sections, want one a team", len(dm.Sections))
	}
	first := dm.Sections[0].Text
	lines := strings.Split(first, "\n")
	// t01 used c01 and has a quota of c01, c02, c03 and c05.
	want := []string{p.Classes[0].Name + ": 8.00 GPU-hours", p.Classes[1].Name + ": 0.00 GPU-hours", p.Classes[2].Name + ": 0.00 GPU-hours",
		p.Classes[4].Name + ": 0.00 GPU-hours", "no GPU-hours and no quota in 36 other classes"}
	if len(lines) != len(want) {
		t.Fatalf("team %s's lines:\n%s\nwant %d", p.Teams[0].Name, first, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d is %q, want it to start %q", i+1, lines[i], w)
		}
	}
	if n := len(showback.Parts(dm, "continued.")); n > 20 {
		t.Errorf("the DM takes %d messages", n)
	}
}
