package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/commands"
	"github.com/acme/quartermaster/docs"
	"github.com/acme/quartermaster/internal/config"
	"github.com/acme/quartermaster/internal/ingest"
	"github.com/acme/quartermaster/internal/metrics"
	"github.com/acme/quartermaster/internal/nfc"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/shellword"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/waits"
	"github.com/acme/quartermaster/reports/showback"
)

// commonFlags are the flags every subcommand takes.
type commonFlags struct {
	policy  string
	db      string
	backend string
	// dbFrom names where db came from once resolveSecrets has run: --db, QM_DATABASE_URL or
	// QM_DATABASE_URL_FILE.
	dbFrom string
}

func (c *commonFlags) register(fs *flag.FlagSet) {
	c.registerPolicy(fs)
	c.registerDB(fs)
	fs.StringVar(&c.backend, "backend", os.Getenv("QM_BACKEND"), "sim, slurm or kubernetes (env QM_BACKEND; default: the policy's backend)")
}

// registerPolicy adds --policy alone, for commands that read the policy but run no backend.
func (c *commonFlags) registerPolicy(fs *flag.FlagSet) {
	fs.StringVar(&c.policy, "policy", os.Getenv("QM_POLICY"), "policy file (env QM_POLICY; serve and discord register need one; without one, console, report and templates render use the embedded example, and report refuses a database written under another policy)")
}

// registerDB adds --db alone, for commands that touch only the database.
func (c *commonFlags) registerDB(fs *flag.FlagSet) {
	fs.StringVar(&c.db, "db", "", "database URL: postgres://… or sqlite:PATH (env QM_DATABASE_URL or QM_DATABASE_URL_FILE; default: sqlite:data/quartermaster.db, the directory from QM_DATA_DIR)")
}

// resolveSecrets fills what the flags left empty from secrets in the environment (or their files),
// so that a bad secret file is reported before anything starts.
func (c *commonFlags) resolveSecrets() error {
	if c.dbFrom != "" {
		return nil
	}
	c.dbFrom = "--db"
	if c.db == "" {
		v, err := config.Secret("QM_DATABASE_URL")
		if err != nil {
			return err
		}
		c.db, c.dbFrom = v, "QM_DATABASE_URL"
		if os.Getenv("QM_DATABASE_URL_FILE") != "" {
			c.dbFrom = "QM_DATABASE_URL_FILE"
		}
	}
	return checkDBURL(c.dbFrom, c.db)
}

// checkDBURL refuses a database URL of a kind the store does not use, naming where it came from
// (the flag, the variable, or the variable's file). The URL itself is not shown, since it may
// carry a password; a bare path, which carries none, is shown as the SQLite URL it was meant to be.
func checkDBURL(from, v string) error {
	if v == "" || strings.HasPrefix(v, "postgres://") || strings.HasPrefix(v, "postgresql://") || strings.HasPrefix(v, "sqlite:") {
		return nil
	}
	example := func(u string) string {
		switch from {
		case "--db":
			return "--db " + u
		case "QM_DATABASE_URL_FILE":
			return "a file holding " + u
		}
		return from + "=" + u
	}
	const forms = "write postgres://USER:PASSWORD@HOST:5432/DB?sslmode=require or sqlite:PATH"
	if scheme, _, ok := strings.Cut(v, "://"); ok {
		return errUsage{fmt.Sprintf("%s names a %q database, which quartermaster does not use; %s, e.g. %s", from, scheme, forms, example("sqlite:data/quartermaster.db"))}
	}
	if from == "--db" && !strings.ContainsAny(v, " =@") { // a path, not a keyword DSN with a password
		return errFlagValue{fmt.Sprintf("--db %q is not a database URL; %s", v, forms), "db", "sqlite:" + v}
	}
	return errUsage{fmt.Sprintf("%s is not a database URL; %s, e.g. %s", from, forms, example("sqlite:data/quartermaster.db"))}
}

func (c *commonFlags) loadPolicy() (*policy.Policy, error) {
	load := func() (*policy.Policy, error) { return policy.LoadFile(c.policy, nfc.Name) }
	if c.policy == "" {
		load = func() (*policy.Policy, error) {
			return policy.Load(docs.ExamplePolicy, docs.ExamplePolicyName, nfc.Name)
		}
	}
	p, err := load()
	if err != nil {
		return nil, err
	}
	return withCatalogWarnings(p), nil
}

// dataDir is where the embedded default keeps its SQLite file.
func dataDir() string {
	if d := os.Getenv("QM_DATA_DIR"); d != "" {
		return d
	}
	return "data"
}

// dbURL is the database the flags and the environment name; without one, the SQLite file in
// QM_DATA_DIR, whose directory it makes.
func (c *commonFlags) dbURL() (string, error) {
	if err := c.resolveSecrets(); err != nil {
		return "", err
	}
	if c.db != "" {
		return c.db, nil
	}
	dir := dataDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		why := err
		var pe *fs.PathError
		if errors.As(err, &pe) {
			why = pe.Err
		}
		return "", fmt.Errorf("QM_DATA_DIR=%q, where the SQLite file is kept without --db or QM_DATABASE_URL, cannot be made a directory (%v); set it to one the service may write, e.g. QM_DATA_DIR=/var/lib/quartermaster/data, or name the database with QM_DATABASE_URL", dir, why)
	}
	return "sqlite:" + filepath.Join(dir, "quartermaster.db"), nil
}

// existingDBURL is dbURL for commands that only read or undo (migrate status, migrate down): it
// makes nothing, and refuses a SQLite file that does not exist yet, saying how to create it.
func (c *commonFlags) existingDBURL() (string, error) {
	if err := c.resolveSecrets(); err != nil {
		return "", err
	}
	url := c.db
	if url == "" {
		url = "sqlite:" + filepath.Join(dataDir(), "quartermaster.db")
	}
	file := store.SQLiteFile(url)
	if file == "" {
		return url, nil
	}
	if _, err := os.Stat(file); !errors.Is(err, fs.ErrNotExist) {
		return url, nil
	}
	create := "quartermaster migrate up"
	if c.db != "" && c.dbFrom == "--db" {
		create += " --db " + shellword.Quote(url)
	}
	// migrate up makes the default file's data directory, not the directory of a file named: a
	// file whose directory is missing needs it made first.
	if dir := filepath.Dir(file); c.db != "" && !isDirectory(dir) {
		create = "mkdir -p " + shellword.Quote(dir) + " && " + create
	}
	return "", fmt.Errorf("the database of %s does not exist yet (there is no file %s); name the database the service uses, or create one with %s (serve also does at start)", c.dbSetting(url), file, create)
}

// App is the wired product: policy, store, backend, lease service and bot. Tests reuse it.
type App struct {
	Policy  *policy.Policy
	Store   *store.DB
	Clock   qm.Clock
	SimClk  *sim.Clock   // set when the clock is simulated
	Sim     *sim.Cluster // set on the sim backend
	Service *qm.Service
	Waits   *waits.Predictor // the service's wait predictor; Flush keeps what it learned
	// Predictions keeps the wait predicted for each lease, for the showback.
	Predictions *predictionLog
	// Meter writes the simulated cluster's usage rollups (sim backend).
	Meter *sim.Meter
	// Showback posts the weekly report when the simulated clock passes its time (console).
	Showback *showback.Publisher
	Bot      *commands.Bot
	// Handler is Bot as the chat adapters see it: each command timed, counted and logged.
	Handler bot.Handler
	// Metrics are the service's numbers; nil records nothing (the console, the tools).
	Metrics *metrics.Metrics
	// BackendName is the scheduler backend in use: sim, slurm or kubernetes.
	BackendName string
	Logger      *slog.Logger
	// Sender receives notices; set it before the app does anything (NewApp points it at a no-op).
	Sender bot.Sender
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now().UTC() }

// appOptions choose the clock and backend.
type appOptions struct {
	flags    commonFlags
	simClock bool      // a simulated clock on the sim backend (console)
	start    time.Time // the simulated clock's start; zero: now
	logger   *slog.Logger
	metrics  *metrics.Metrics // counts what the service does; nil: nothing is counted
}

// NewApp opens everything the options name.
func NewApp(ctx context.Context, o appOptions) (*App, error) {
	pol, err := o.flags.loadPolicy()
	if err != nil {
		return nil, err
	}
	// Every setting is checked before the database is opened and migrated: a bad one is refused
	// with nothing done.
	if err := checkAppSettings(); err != nil {
		return nil, err
	}
	url, err := o.flags.dbURL()
	if err != nil {
		return nil, err
	}
	logger := o.logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	for _, w := range pol.Warnings {
		logger.Warn("policy: "+w.Msg, "policy", pol.Source, "line", w.Line)
	}
	st, err := o.flags.open(ctx, url, logger)
	if err != nil {
		return nil, err
	}
	if d, err := positiveDuration("QM_DATABASE_WAIT", os.Getenv("QM_DATABASE_WAIT"), "2s"); err != nil {
		_ = st.Close()
		return nil, err
	} else if d > 0 {
		st.SetBeginWait(d)
	}
	a := &App{Policy: pol, Store: st, Logger: logger, Metrics: o.metrics}
	o.metrics.SetClasses(classNames(pol))
	backend := o.flags.backend
	if backend == "" {
		backend = pol.Backend
	}
	if o.simClock && backend == "sim" {
		// The simulated clock goes on from where the database's history stops (where a console's
		// clock last stood included); it never goes back.
		last, err := st.HistoryEnd(ctx)
		if err != nil {
			_ = st.Close()
			return nil, err
		}
		start := o.start
		switch {
		case !start.IsZero() && start.Before(last):
			_ = st.Close()
			// Written at the offset the --clock was typed with, so a local time reads back local.
			at := last.In(start.Location()).Format(time.RFC3339)
			return nil, errFlagValue{fmt.Sprintf("--clock %s is before the last change the database records (%s), and the simulated clock cannot go back",
				start.Format(time.RFC3339), at), "clock", at}
		case start.IsZero():
			start = time.Now().UTC().Truncate(time.Minute)
			if start.Before(last) {
				start = last
			}
		}
		a.SimClk = sim.NewClock(start)
		a.Clock = a.SimClk
	} else {
		a.Clock = realClock{}
	}
	a.BackendName = backend
	if backend == "sim" {
		// A policy of another backend run on the simulated cluster describes no simulated nodes.
		if msg := pol.SimulateUnlistedNodes(); msg != "" {
			logger.Warn("policy: "+msg, "policy", pol.Source)
		}
	}
	// Topology: placement fills in the NVLink islands and NUMA nodes of each node from what its
	// node agent reports (the reconcile pass reads it).
	svc := &qm.Service{Policy: pol, Store: o.metrics.Store(st), Clock: a.Clock, Directory: pol, Logger: logger, Topology: st}
	if d, err := positiveDuration("QM_SUBMIT_GRACE", os.Getenv("QM_SUBMIT_GRACE"), "2m"); err != nil {
		_ = st.Close()
		return nil, err
	} else if d > 0 {
		svc.SubmitGrace = d
	}
	svc.Submitter = submitterName()
	switch backend {
	case "sim":
		a.Sim = sim.New(pol, a.Clock)
		svc.Backend, svc.Telemetry = o.metrics.Backend(backend, a.Sim), a.Sim
		a.Meter = &sim.Meter{Cluster: a.Sim, Usage: st, Leases: func(ctx context.Context, since time.Time) ([]*qm.Lease, error) {
			return svc.List(ctx, qm.LeaseFilter{EndedAfter: since})
		}}
		// A console meters from where the last console's clock stood, which it metered up to: the
		// time the clock moved on while none ran is recorded as :advance would record it.
		from := a.Clock.Now()
		if a.SimClk != nil {
			noted, err := st.SimClock(ctx)
			if err != nil {
				_ = st.Close()
				return nil, err
			}
			if !noted.IsZero() && noted.Before(from) {
				from = noted
			}
		}
		a.Meter.Start(from)
		// The workspaces an earlier console or serve started on this database still run on the
		// simulated cluster, at the utilization :util last set for each.
		if err := resumeSim(ctx, a.Sim, svc, st); err != nil {
			_ = st.Close()
			return nil, err
		}
	default:
		mk, ok := backends[backend]
		if !ok {
			_ = st.Close()
			return nil, fmt.Errorf("backend %q is not available; use sim, or one of: %s", backend, strings.Join(backendNames(), ", "))
		}
		b, err := mk(ctx, a)
		if err != nil {
			_ = st.Close()
			return nil, err
		}
		svc.Backend = o.metrics.Backend(backend, b)
		// A real scheduler's GPUs are watched by the node agents, whose reports serve takes into
		// the database: every process on it (serve, a replica, a console) judges idleness from
		// them, so that none takes a watched lease for one without telemetry.
		svc.Telemetry = ingest.Telemetry{Store: st, Logger: logger}
	}
	a.Waits = waits.New()
	a.Waits.SetHistory(st)
	n, err := a.Waits.Load(ctx, a.Clock.Now().Add(-waitHistoryKept))
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	if n > 0 {
		logger.Info("the wait predictor read back its history", "outcomes", n)
	}
	a.Predictions = newPredictionLog(a.Waits, st)
	svc.Waits = o.metrics.Waits(a.Predictions)
	a.Service = svc
	o.metrics.SetState(a.metricsState)
	if err := svc.WarmWaits(ctx); err != nil {
		_ = st.Close()
		return nil, err
	}
	a.Bot = &commands.Bot{Svc: svc, Logger: logger}
	commands.AddReport(a.Bot, a.reports())
	a.Handler = observeCommands(a.Bot, o.metrics, logger)
	if err := addTemplateVerbs(a); err != nil {
		_ = st.Close()
		return nil, err
	}
	a.Sender = bot.SenderFunc(func(context.Context, bot.Reply) error { return nil })
	svc.Notifier = &commands.Notices{Bot: a.Bot, Sender: bot.SenderFunc(func(ctx context.Context, r bot.Reply) error { return a.Sender.Send(ctx, r) })}
	a.Bot.Edits = bot.SenderFunc(func(ctx context.Context, r bot.Reply) error { return a.Sender.Send(ctx, r) })
	a.Bot.Copies, a.Bot.Retired, a.Bot.Queued = st.MessageRefRecipients, st.RetireMessageRefs, st.QueuedRecipients
	a.Bot.Posted = st.MessageRefPosted
	return a, nil
}

// backends are the scheduler backends other than sim, by name.
var backends = map[string]func(ctx context.Context, a *App) (qm.Backend, error){}

func backendNames() []string {
	var n []string
	for k := range backends {
		n = append(n, k)
	}
	return n
}

// waitHistoryKept is how far back the wait predictor's history is read at start and kept.
const waitHistoryKept = 30 * 24 * time.Hour

// Close keeps what the wait predictor learned and releases the app's resources.
func (a *App) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return errors.Join(a.flush(ctx), a.Store.Close())
}

// Advance moves the simulated clock forward by d, stopping at every instant something falls due:
// expiries, idle reclaim, approval timeouts, and the weekly showback.
func (a *App) Advance(ctx context.Context, d time.Duration) error {
	if a.SimClk == nil {
		return fmt.Errorf("the clock is not simulated")
	}
	target := a.SimClk.Now().Add(d)
	for i := 0; i < 100000; i++ {
		next, err := a.Service.NextDue(ctx)
		if err != nil {
			return err
		}
		if a.Showback != nil {
			if r := a.Showback.Schedule.Next(a.SimClk.Now()); next.IsZero() || r.Before(next) {
				next = r
			}
		}
		if next.IsZero() || next.After(target) {
			break
		}
		if err := a.step(ctx, next); err != nil {
			return err
		}
	}
	return a.step(ctx, target)
}

// step moves the simulated clock to t: the simulated usage up to t is recorded, the database
// notes where the clock stands (a console started again goes on from there), what fell due is
// done, and a weekly showback whose time came is posted, as is one left unposted whose claim ran
// out by a catch-up time the clock passed.
func (a *App) step(ctx context.Context, t time.Time) error {
	prev := a.SimClk.Now()
	if a.Meter != nil {
		if err := a.Meter.Record(ctx, t); err != nil {
			return err
		}
	}
	a.SimClk.Set(t)
	if err := a.Store.NoteClock(ctx, t); err != nil {
		return err
	}
	if err := a.Service.Tick(ctx); err != nil {
		return err
	}
	if a.Showback != nil && (a.Showback.Schedule.Last(t).After(prev) || catchUpPassed(prev, t)) {
		return a.Showback.RunDue(ctx)
	}
	return nil
}

// catchUpPassed reports whether the clock, moving from prev to t, passed one of the times at which
// serve's catch-up runs (every showback.DefaultCatchUpEvery), so that the console, too, finishes a
// week whose posting a console that died left claimed once that claim runs out.
func catchUpPassed(prev, t time.Time) bool {
	return t.Truncate(showback.DefaultCatchUpEvery).After(prev)
}

// SetUtilization sets a lease's simulated GPU utilization.
func (a *App) SetUtilization(ctx context.Context, lease string, pct float64) error {
	if a.Sim == nil {
		return qm.Errorf(qm.EINVALID, "utilization can only be set on the sim backend.")
	}
	id, err := qm.ParseLeaseID(lease)
	if err != nil {
		return err
	}
	l, err := a.Service.Get(ctx, id)
	if err != nil {
		return err
	}
	if !l.State.Running() {
		return qm.Errorf(qm.EINVALID, "%s is %s, so it has no GPUs to measure.", id, l.State)
	}
	// Kept, so that a console started again on this database goes on with it.
	if err := a.Store.SetSimUtilization(ctx, store.SimUtilization(a.Sim.SetUtilization(l, pct))); err != nil {
		return err
	}
	return a.Service.Tick(ctx)
}

// resumeSim hands the simulated cluster the leases the database says are running and the
// utilization last set for them, and has it number its CPU-only jobs after the database's.
func resumeSim(ctx context.Context, c *sim.Cluster, svc *qm.Service, st *store.DB) error {
	running, err := svc.List(ctx, qm.LeaseFilter{Kind: qm.KindWorkspace, States: []qm.State{qm.Provisioning, qm.Active, qm.IdleWarned}})
	if err != nil {
		return err
	}
	kept, err := st.SimUtilizations(ctx)
	if err != nil {
		return err
	}
	settings := make([]sim.Setting, 0, len(kept))
	for _, k := range kept {
		settings = append(settings, sim.Setting(k))
	}
	c.Resume(running, settings)
	refs, err := st.SimCPUJobRefs(ctx)
	if err != nil {
		return err
	}
	c.NumberCPUJobsAfter(refs)
	return nil
}
