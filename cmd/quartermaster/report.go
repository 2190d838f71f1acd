package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/metrics"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/schedule"
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/reports/showback"
)

func init() {
	registerCommand("report", subcommand{
		summary: "a week's showback: report [--week 2026-W48] [--team T] [--format text|csv|json|png] [--out PATH]",
		usage:   "quartermaster report [--week 2026-W48] [--team T] [--format text|csv|json|png] [--out PATH] [--now 2026-11-30T15:00:00Z] [--policy FILE] [--db URL]",
		flags:   func() *flag.FlagSet { fs, _ := reportFlags(); return fs },
		run:     runReport,
		checks:  true, // it only reads, and writes the report
	})
}

// reportOptions are report's flags.
type reportOptions struct {
	f                             commonFlags
	week, team, format, out, asOf *string
}

func reportFlags() (*flag.FlagSet, *reportOptions) {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	o := &reportOptions{}
	o.f.registerPolicy(fs)
	o.f.registerDB(fs)
	o.week = fs.String("week", "", "the ISO week, like 2026-W48 (default: the last complete week)")
	o.team = fs.String("team", "", "only this team, by name or by its channel (#vision-gpu)")
	o.format = fs.String("format", "text", "text, csv, json or png")
	o.out = fs.String("out", "", "write to this file instead of standard output (png needs it on a terminal)")
	o.asOf = fs.String("now", "", "make the report as of this RFC3339 instant (default: now, or the last change the database records if that is later)")
	return fs, o
}

// reportFlagNeeds is what report's flag name, given without a value, needs, and an example that
// gives it one, of week and the format given (else text), with the policy --team's team is taken
// from when one was given; empty for a flag it does not know.
func reportFlagNeeds(f *commonFlags, name string, week showback.Week, format string) (needs, value string) {
	switch name {
	case "week":
		return "a value", week.String()
	case "format":
		if !contains(reportFormats, format) {
			format = "text"
		}
		return "a value", format
	case "team":
		// The policy's own team, from the policy the command names when it names one.
		team, how := "research", "a team, by name or by its channel"
		if pol, err := f.loadPolicy(); err == nil && len(pol.Teams) > 0 {
			team = pol.Teams[0].Name
			if ch := pol.Teams[0].Channel; ch != "" {
				how += " (as " + ch + ")"
			}
		}
		return how, team
	case "out":
		ext := map[string]string{"text": "txt", "": "txt"}[format]
		if ext == "" {
			ext = format
		}
		return "a file to write", fmt.Sprintf("showback-%s.%s", week, ext)
	case "db":
		return "a database URL", "sqlite:" + filepath.Join(dataDir(), "quartermaster.db")
	case "policy":
		return "a policy file", flagExamples["policy"]
	case "now":
		// A day after the week ends in every time zone: the week is complete as of it.
		return "an RFC3339 instant", week.End(time.UTC).Add(24 * time.Hour).Format(time.RFC3339)
	}
	return "", ""
}

// reportFormats are what `quartermaster report --format` writes.
var reportFormats = []string{"text", "csv", "json", "png"}

func runReport(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs, ro := reportFlags()
	fs.SetOutput(io.Discard)
	f := &ro.f
	week, team, format, out, asOf := ro.week, ro.team, ro.format, ro.out, ro.asOf
	// Until the policy is read, an example names the last complete week in UTC as of --now (or
	// now): a week that has begun in every time zone.
	lastWeek := func() showback.Week {
		now := time.Now()
		if t, err := time.Parse(time.RFC3339, *asOf); err == nil {
			now = t
		}
		return showback.WeekOf(now, time.UTC).Prev()
	}
	if err := fs.Parse(args); err != nil {
		// The flag mistaken, or the one meant, is put right in the command as typed.
		name := ""
		if m := goFlagError.FindStringSubmatch(err.Error()); m != nil {
			name = strings.TrimLeft(m[2], "-")
			if fs.Lookup(name) == nil {
				var names []string
				fs.VisitAll(func(fl *flag.Flag) { names = append(names, fl.Name) })
				name = nearFlag(name, names)
			}
		}
		w, werr := showback.ParseWeek(*week, showback.Week{})
		if werr != nil { // none given yet, or not a week
			w = lastWeek()
			if dw, ok := databaseWeek(ctx, *f, *asOf); ok {
				w = dw
			}
		}
		needs, value := reportFlagNeeds(f, name, w, *format)
		if m := goFlagError.FindStringSubmatch(err.Error()); m != nil && strings.HasPrefix(m[1], "flag needs") && needs != "" {
			return refusal(fmt.Sprintf("--%s needs %s", name, needs), "report", onceEach(fs, withFlag(fs, args, name, value)))
		}
		return flagMistakeIn(fs, "quartermaster report", []string{"quartermaster", "report"}, args, map[string]string{name: value}, err)
	}
	example := func(w string) string {
		return fmt.Sprintf("quartermaster report --week %s --format %s", w, *format)
	}
	if fs.NArg() > 0 {
		fixed := withoutWords(fs, args, fs.Args())
		if pw, err := showback.ParseWeek(fs.Arg(0), showback.Week{}); err == nil && *week == "" {
			fixed = append(fixed, "--week", pw.String()) // the week meant, as a flag
		}
		return refusal(fmt.Sprintf("report takes only flags, but got %q", fs.Arg(0)), "report", fixed)
	}
	if !contains(reportFormats, *format) {
		return refusal(fmt.Sprintf("--format %q is not one of %s", *format, strings.Join(reportFormats, ", ")), "report", withFlag(fs, args, "format", "csv"))
	}
	if f, ok := stdout.(*os.File); ok && *format == "png" && *out == "" && isTerminal(f) {
		return refusal("a PNG is not for a terminal; name a file", "report", append(slices.Clone(args), "--out", "showback.png"))
	}
	var clock qm.Clock = realClock{}
	if *asOf != "" {
		t, err := time.Parse(time.RFC3339, *asOf)
		if err != nil {
			return refusal(fmt.Sprintf("--now %q is not an RFC3339 instant", *asOf), "report", withFlag(fs, args, "now", "2026-11-30T15:00:00Z"))
		}
		clock = fixedClock(t)
	}
	if checking(ctx) {
		// A week that is no week, whatever the database: put right as the database's week.
		if _, named := showback.NamedWeek(*week, lastWeek()); *week != "" && !named {
			if _, err := showback.ParseWeek(*week, showback.Week{}); err != nil {
				w := lastWeek()
				if dw, ok := databaseWeek(ctx, *f, *asOf); ok {
					w = dw
				}
				return refusal(fmt.Sprintf("--week %q is not an ISO week", *week), "report", withFlag(fs, args, "week", w.String()))
			}
		}
	}
	pol, err := f.loadPolicy()
	if err != nil && checking(ctx) {
		return nil // a policy file that is not here (where a service keeps it) is not the line's to put right
	} else if err != nil {
		return err
	}
	// A report only reads: a SQLite file that is not there is a wrong path, not an empty history.
	if err := f.resolveSecrets(); err != nil {
		return err
	}
	url := f.db
	def := "sqlite:" + filepath.Join(dataDir(), "quartermaster.db")
	if url == "" {
		url = def
	}
	if file := store.SQLiteFile(url); file != "" {
		if _, err := os.Stat(file); errors.Is(err, iofs.ErrNotExist) && checking(ctx) {
			return nil // where the database is, is not the command line's to put right
		} else if errors.Is(err, iofs.ErrNotExist) {
			// --week that is no week (2026-W00, -1) is put right too: refused next, else.
			_, named := showback.NamedWeek(*week, lastWeek())
			if _, werr := showback.ParseWeek(*week, showback.Week{}); *week != "" && werr != nil && !named {
				args = withFlag(fs, args, "week", lastWeek().String())
			}
			if url == def && f.db == "" {
				return refusal(fmt.Sprintf("there is no database %s here; run the report where the console or serve keeps its database (QM_DATA_DIR), or name it with --db or QM_DATABASE_URL", file),
					"report", append([]string{"--db", "sqlite:/var/lib/quartermaster/quartermaster.db"}, args...))
			}
			// The default database where it is there, else where an installed service keeps it:
			// never another file that is not there.
			other := def
			if _, err := os.Stat(store.SQLiteFile(def)); err != nil {
				other = "sqlite:/var/lib/quartermaster/quartermaster.db"
			}
			fixed := withFlag(fs, args, "db", other)
			if f.dbFrom != "--db" {
				fixed = append([]string{"--db", other}, args...)
			}
			return refusal(fmt.Sprintf("there is no database %s; name the one the service uses with --db or QM_DATABASE_URL", file), "report", fixed)
		}
	}
	st, err := store.Open(ctx, url, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	if *asOf == "" {
		if clock, err = historyClock(ctx, st); err != nil {
			return err
		}
	}
	svc := &showback.Service{Policy: pol, Source: st, Clock: clock}
	// teamRight is fixed with --team put right: the team meant, with its accents put right, else
	// the one --team is a misspelling of, else the first; fixed as it is where the team is one.
	teamRight := func(fixed []string) []string {
		if meant, _ := svc.Policy.TeamMeant(*team); meant != "" {
			return withFlag(fs, fixed, "team", meant)
		}
		if ts, _ := svc.TeamNames(ctx); len(ts) > 0 {
			meant := policy.Closest(strings.ToLower(*team), ts)
			if meant == "" {
				meant = ts[0]
			}
			return withFlag(fs, fixed, "team", meant)
		}
		return fixed
	}
	// weekWrong refuses the week (err) with the example's week put right, and the team too where
	// it is none, which the sentence then says as well: one example puts every mistake right.
	weekWrong := func(err error, meant ...showback.Week) error {
		what := qm.ErrorMessage(err)
		exSvc, exArgs := svc, args
		if *asOf != "" && svc.ExampleWeek(ctx).Start(pol.Location).After(clock.Now()) {
			// --now is before the first lease: the weeks before it have no history, and its week
			// had not begun then. The example reports as of the history's clock instead.
			if hc, err := historyClock(ctx, st); err == nil {
				what = strings.TrimSuffix(what, ".") + fmt.Sprintf("; --now %s is before the first lease, so no week can be reported as of then", *asOf)
				exSvc = &showback.Service{Policy: pol, Source: st, Clock: hc}
				exArgs = withoutPlaces(args, flagPlaces(fs, args, "now"))
			}
		}
		eg := exSvc.ExampleWeek(ctx)
		if len(meant) > 0 {
			eg = meant[0] // the week the refused one was meant as, which has a report
		}
		fixed := withFlag(fs, exArgs, "week", eg.String())
		if len(flagPlaces(fs, exArgs, "week")) == 0 {
			// The default week refused: the example names the one to report instead.
			fixed = append(fixed, "--week", exSvc.ExampleWeek(ctx).String())
		}
		if *team != "" {
			if _, terr := svc.ResolveTeam(ctx, *team); qm.ErrorCode(terr) == qm.ENOTFOUND {
				why := strings.TrimSuffix(qm.ErrorMessage(terr), ".")
				what = strings.TrimSuffix(what, ".") + "; and " + strings.ToLower(why[:1]) + why[1:]
				fixed = teamRight(fixed)
			}
		}
		return refusal(what, "report", fixed)
	}
	w := svc.LastComplete()
	if *week != "" && policy.OtherDigits(*week) {
		// 2026-W٤٩: a week written with digits other than 0-9, refused for its digits as /gpu
		// report refuses it; the week meant is the example where it has a report, else a week
		// that has one.
		if text, clear := policy.ASCIIDigits(*week); clear {
			if mw, err := svc.ParseWeek(ctx, text); err == nil && svc.CheckWeek(ctx, mw) == nil {
				return weekWrong(qm.Errorf(qm.EINVALID, "%s is written with digits other than 0-9; write the week with the digits 0-9: %s.", policy.Quoted(*week, 40), mw), mw)
			}
		}
		return weekWrong(qm.Errorf(qm.EINVALID, "%s is written with digits other than 0-9; write the week with the digits 0-9, like %s.", policy.Quoted(*week, 40), svc.ExampleWeek(ctx)))
	}
	if *week != "" {
		if w, err = svc.ParseWeek(ctx, *week); err != nil {
			return weekWrong(err)
		}
	}
	if *out != "" {
		ext := map[string]string{"text": "txt"}[*format]
		if ext == "" {
			ext = *format
		}
		name := fmt.Sprintf("showback-%s.%s", w, ext)
		if fi, err := os.Stat(*out); err == nil && fi.IsDir() {
			return refusal(fmt.Sprintf("--out %s is a directory; name a file in it", *out), "report", withFlag(fs, args, "out", filepath.Join(*out, name)))
		}
		if d := filepath.Dir(*out); !isDirectory(d) {
			return refusal(fmt.Sprintf("--out %s cannot be written: the directory %s does not exist", *out, d), "report", withFlag(fs, args, "out", name))
		}
	}
	r, err := svc.Report(ctx, w, showback.Filter{Team: *team})
	if err != nil {
		if qm.ErrorCode(err) == qm.ENOTFOUND {
			// Only the team is wrong: the example keeps the week asked for, which was read.
			return refusal(qm.ErrorMessage(err), "report", teamRight(onceEach(fs, args)))
		}
		if qm.ErrorCode(err) != qm.EINTERNAL {
			return weekWrong(err)
		}
		return err
	}
	if f.policy == "" {
		if err := exampleFits(ctx, svc, r, example(w.String())); err != nil {
			return err
		}
	}
	if checking(ctx) {
		return nil // what it would refuse is refused: it writes nothing
	}
	var body []byte
	switch *format {
	case "text":
		body = []byte(r.Text())
	case "csv":
		body = r.CSV()
	case "json":
		var b strings.Builder
		if err := r.WriteJSON(&b); err != nil {
			return err
		}
		body = []byte(b.String())
	case "png":
		if body, err = r.PNG(); err != nil {
			return err
		}
	}
	if *out == "" {
		_, err := stdout.Write(body)
		return err
	}
	return writeFileAtomic(*out, body)
}

// historyClock is the clock a report goes by without --now: now, or, where the database's history
// runs past it (a console whose simulated clock was moved on past today), its last recorded moment,
// as the console's clock goes on from it: the history's weeks have begun, and the last complete
// week is the one before its last.
func historyClock(ctx context.Context, st *store.DB) (qm.Clock, error) {
	last, err := st.HistoryEnd(ctx)
	if err != nil {
		return nil, err
	}
	if now := time.Now(); last.After(now) {
		return fixedClock(last), nil
	}
	return realClock{}, nil
}

// databaseWeek is the week a refusal of report's flags offers where the database they name (as
// far as they were read; else QM_DATABASE_URL, else the default file) is a SQLite file that is
// there and can be read: the one the report would offer (showback.Service.ExampleWeek), as of
// --now or the history's clock. ok is false where it cannot be read.
func databaseWeek(ctx context.Context, f commonFlags, asOf string) (w showback.Week, ok bool) {
	pol, err := f.loadPolicy()
	if err != nil || f.resolveSecrets() != nil {
		return w, false
	}
	url := cmp.Or(f.db, "sqlite:"+filepath.Join(dataDir(), "quartermaster.db"))
	if file := store.SQLiteFile(url); file == "" || !isFile(file) {
		return w, false // a server is not waited on to word a refusal
	}
	st, err := store.Open(ctx, url, nil)
	if err != nil {
		return w, false
	}
	defer st.Close()
	var clock qm.Clock
	if t, err := time.Parse(time.RFC3339, asOf); err == nil {
		clock = fixedClock(t)
	} else if clock, err = historyClock(ctx, st); err != nil {
		return w, false
	}
	return (&showback.Service{Policy: pol, Source: st, Clock: clock}).ExampleWeek(ctx), true
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// exampleFits refuses report r, made with the embedded example policy since none was named, when
// the database was written under another policy: none of the teams that had leases is one the
// example lists, or the week's leases are of classes its catalog does not have. The report would
// otherwise be told in the example's organization, currency and time zone, with its quotas.
func exampleFits(ctx context.Context, svc *showback.Service, r *showback.Report, example string) error {
	pol := svc.Policy
	var teams, classes []string
	leased, err := svc.Source.LeaseTeams(ctx)
	if err != nil {
		return err
	}
	for _, t := range leased {
		if _, ok := pol.Team(t); ok {
			teams = nil
			break
		}
		teams = append(teams, t)
	}
	for _, row := range r.Rows {
		if _, ok := pol.Class(row.Class); !ok && !slices.Contains(classes, row.Class) {
			classes = append(classes, row.Class)
		}
	}
	if len(teams) == 0 && len(classes) == 0 {
		return nil
	}
	var lacks []string
	for _, l := range []struct {
		names         []string
		noun, plurals string
	}{{teams, "team", "teams"}, {classes, "class", "classes"}} {
		if len(l.names) == 1 {
			lacks = append(lacks, l.noun+" "+l.names[0])
		} else if len(l.names) > 1 {
			lacks = append(lacks, l.plurals+" "+policy.SomeNames(l.names, 3, "or"))
		}
	}
	return errUsage{fmt.Sprintf("no policy was named (--policy or QM_POLICY), and the embedded example (%s, %s, %s) is not the one this database was written under: it has no %s; name the service's policy; e.g. %s --policy /etc/quartermaster/quartermaster.yaml",
		pol.Organization, pol.Currency, pol.Location, strings.Join(lacks, " and no "), example)}
}

func isDirectory(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// writeFileAtomic writes a file whole or not at all.
func writeFileAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// fixedClock is a clock standing at one instant.
type fixedClock time.Time

func (c fixedClock) Now() time.Time { return time.Time(c) }

// reports is the app's showback service.
func (a *App) reports() *showback.Service {
	return &showback.Service{Policy: a.Policy, Source: reportSource{a}, Clock: a.Clock}
}

// reportSource reads the store for the showback, after writing what is still held in memory
// (the simulated cluster's usage up to now, the wait predictions), so a report sees all of it.
type reportSource struct{ a *App }

func (s reportSource) sync(ctx context.Context) {
	if s.a.Meter != nil {
		if err := s.a.Meter.Record(ctx, s.a.Clock.Now()); err != nil {
			s.a.Logger.Warn("recording the simulated usage failed", "err", err)
		}
	}
	if err := s.a.Predictions.Flush(ctx); err != nil {
		s.a.Logger.Warn("keeping the wait predictions failed", "err", err)
	}
}

func (s reportSource) AddUsage(ctx context.Context, rs []qm.UsageRollup) error {
	return s.a.Store.AddUsage(ctx, rs)
}

func (s reportSource) Usage(ctx context.Context, from, to time.Time) ([]qm.UsageRollup, error) {
	s.sync(ctx)
	return s.a.Store.Usage(ctx, from, to)
}

func (s reportSource) ReportLeases(ctx context.Context, from, to time.Time) ([]*qm.Lease, error) {
	return s.a.Store.ReportLeases(ctx, from, to)
}

func (s reportSource) HistoryStart(ctx context.Context) (time.Time, error) {
	return s.a.Store.HistoryStart(ctx)
}

func (s reportSource) LeaseTeams(ctx context.Context) ([]string, error) {
	return s.a.Store.LeaseTeams(ctx)
}

func (s reportSource) TeamFirsts(ctx context.Context, teams []string, since time.Time) ([]qm.TeamFirst, error) {
	return s.a.Store.TeamFirsts(ctx, teams, since)
}

func (s reportSource) WaitPredictions(ctx context.Context, from, to time.Time) ([]qm.WaitPrediction, error) {
	s.sync(ctx)
	return s.a.Store.WaitPredictions(ctx, from, to)
}

func (s reportSource) AddWaitPredictions(ctx context.Context, ps []qm.WaitPrediction) error {
	return s.a.Store.AddWaitPredictions(ctx, ps)
}

// publisher posts the weekly showback through d; nil when the policy schedules none.
func (a *App) publisher(d bot.Deliverer, owner string) (*showback.Publisher, error) {
	spec := a.Policy.Reports.Showback.Schedule
	if spec == "" {
		return nil, nil
	}
	w, err := schedule.ParseWeekly(spec, a.Policy.Location)
	if err != nil {
		return nil, err
	}
	return &showback.Publisher{Reports: a.reports(), Ledger: a.Store, Deliver: d, Schedule: w, Owner: owner,
		Logger: a.Logger.With("component", "showback"), People: a.Service.People}, nil
}

// replicaName names this process in the showback's ledger.
func replicaName(kind string) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s:%s:%d", kind, host, os.Getpid())
}

// startShowback schedules the weekly showback on the service's real clock, shared with the other
// replicas through the database; it returns how to stop it. Without a chat to post to (neither
// Slack nor Discord on: d is nil) it says so and schedules nothing.
func startShowback(a *App, d bot.Deliverer, log *slog.Logger) (stop func(), err error) {
	if a.Policy.Reports.Showback.Schedule == "" {
		log.Info("the weekly showback is off: the policy has no reports.showback.schedule")
		return func() {}, nil
	}
	if d == nil {
		log.Info("the weekly showback is not posted: no chat adapter is on (neither SLACK_BOT_TOKEN nor DISCORD_BOT_TOKEN is set); quartermaster report renders any week on demand")
		return func() {}, nil
	}
	pub, err := a.publisher(d, replicaName("serve"))
	if err != nil {
		return nil, err
	}
	// /metrics tells what the showback did: its messages sent and failed, the weeks due and not
	// posted in full, and the end of the latest week posted.
	pub.Delivered = a.Metrics.ShowbackMessage
	a.Metrics.Showback(showback.MessageKinds, func(ctx context.Context) (metrics.ShowbackState, error) {
		st, err := pub.Status(ctx)
		return metrics.ShowbackState{PostedThrough: st.PostedThrough, Unposted: st.Unposted}, err
	})
	s, err := schedule.New(schedule.Options{Location: a.Policy.Location, Locker: a.Store, Logger: log})
	if err != nil {
		return nil, err
	}
	if err := pub.Plan(s, 0); err != nil {
		return nil, err
	}
	s.Start()
	log.Info("the weekly showback is scheduled", "at", pub.Schedule.String(), "channel", a.Policy.Reports.Showback.Channel,
		"dm_budget_owners", a.Policy.Reports.Showback.DMBudgetOwners)
	return func() {
		if err := s.Stop(); err != nil {
			log.Warn("stopping the showback schedule", "err", err)
		}
	}, nil
}

// predictionLog keeps, for each lease, the first wait the service predicted for it (what its
// requester was told), for the showback to compare with the wait that followed. Predictions are
// held in memory and written by Flush with the rest of what the wait predictor learned.
type predictionLog struct {
	qm.WaitPredictor
	store qm.ReportStore

	mu      sync.Mutex
	seen    map[qm.LeaseID]bool
	pending []qm.WaitPrediction
}

// maxPendingPredictions bounds what waits for Flush.
const maxPendingPredictions = 4096

func newPredictionLog(p qm.WaitPredictor, st qm.ReportStore) *predictionLog {
	return &predictionLog{WaitPredictor: p, store: st, seen: map[qm.LeaseID]bool{}}
}

func (p *predictionLog) Predict(now time.Time, req qm.WaitRequest, ahead []*qm.Lease, capacity int) qm.WaitEstimate {
	est := p.WaitPredictor.Predict(now, req, ahead, capacity)
	if req.Lease == 0 || est.Unknown || req.Unshown {
		return est // only what a requester was told is kept
	}
	p90 := est.P90
	if est.MayNotStart {
		p90 = est.Horizon
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.seen[req.Lease] && len(p.pending) < maxPendingPredictions {
		p.seen[req.Lease] = true
		p.pending = append(p.pending, qm.WaitPrediction{Lease: req.Lease, Median: est.Median, P90: p90, At: now})
	}
	return est
}

func (p *predictionLog) Started(l *qm.Lease, queuedAt time.Time) {
	p.WaitPredictor.Started(l, queuedAt)
	p.forget(l.ID)
}

func (p *predictionLog) Left(l *qm.Lease, queuedAt time.Time) {
	p.WaitPredictor.Left(l, queuedAt)
	p.forget(l.ID)
}

func (p *predictionLog) forget(id qm.LeaseID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.seen, id)
}

// Flush writes the predictions made since the last Flush; those it could not write are kept.
func (p *predictionLog) Flush(ctx context.Context) error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	todo := p.pending
	p.pending = nil
	p.mu.Unlock()
	if err := p.store.AddWaitPredictions(ctx, todo); err != nil {
		p.mu.Lock()
		p.pending = append(todo, p.pending...)
		p.mu.Unlock()
		return fmt.Errorf("keeping the wait predictions: %w", err)
	}
	return nil
}

// flush writes what the wait predictor learned and the predictions it made.
func (a *App) flush(ctx context.Context) error {
	return errors.Join(a.Waits.Flush(ctx), a.Predictions.Flush(ctx))
}
