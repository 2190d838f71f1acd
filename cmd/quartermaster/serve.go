package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/acme/quartermaster/bot"
	slackbot "github.com/acme/quartermaster/bot/slack"
	"github.com/acme/quartermaster/commands"
	"github.com/acme/quartermaster/internal/config"
	"github.com/acme/quartermaster/internal/httpserve"
	"github.com/acme/quartermaster/internal/ingest"
	"github.com/acme/quartermaster/internal/nfc"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/shellword"
	"github.com/acme/quartermaster/internal/store/chatstore"
)

func init() {
	registerCommand("serve", subcommand{
		summary: "the service: Slack (HTTP and Socket Mode), Discord (HTTP or gateway), node agent reports, /healthz, /readyz and /metrics, expiry, idle reclaim and approval timeouts",
		usage: "quartermaster serve --policy FILE [--db URL] [--http :8080] [--backend sim|slurm|kubernetes]\n" +
			"quartermaster serve --demo    (the embedded example organisation on the simulated cluster)",
		flags: func() *flag.FlagSet { fs, _ := serveFlags(); return fs },
		run:   runServe,
	})
}

// Service defaults.
const (
	defaultHTTPAddr = ":8080"
	// tickInterval is how often expiries, idle reclaim and approval timeouts are looked at.
	tickInterval = 30 * time.Second
	// shutdownGrace is how long a stopping service lets requests and Slack work in flight finish.
	shutdownGrace = 20 * time.Second
	// messageRefsKept is how long where a chat message was posted is remembered (for editing it
	// when its approval is decided, or a lease's grant and expiry warning when an extension of it
	// waits or is decided), at least: twice the policy's approval timeout when longer.
	messageRefsKept = 30 * 24 * time.Hour
	// commandKeysKept is how long the delivery keys of commands are kept: far longer than any
	// platform redelivers.
	commandKeysKept = 7 * 24 * time.Hour
	// pruneInterval is how often older message copies and wait records are forgotten.
	pruneInterval = 24 * time.Hour
	// flushInterval is how often what the wait predictor learned is written to the database.
	flushInterval = 15 * time.Second
)

// slackSettings configure the Slack app, from the environment.
type slackSettings struct {
	BotToken      string // SLACK_BOT_TOKEN
	SigningSecret string // SLACK_SIGNING_SECRET: the HTTP endpoints
	AppToken      string // SLACK_APP_TOKEN: Socket Mode
	APIURL        string // SLACK_API_URL: another Web API base (tests, proxies)
	// setAs is the variable each secret was set with (SLACK_BOT_TOKEN_FILE where a file holds
	// the bot token), for a refusal to name it as the operator set it.
	setAs map[string]string
}

// setting is the variable the secret name was set with: NAME_FILE where a file holds it.
func (s slackSettings) setting(name string) string {
	if v := s.setAs[name]; v != "" {
		return v
	}
	return name
}

// slackFromEnv reads the Slack settings; each secret may come from a file (SLACK_BOT_TOKEN_FILE, …).
func slackFromEnv() (slackSettings, error) {
	s := slackSettings{setAs: map[string]string{}}
	for _, name := range []string{"SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN"} {
		s.setAs[name] = config.SetAs(name, os.Getenv)
	}
	var err error
	if s.BotToken, err = config.Secret("SLACK_BOT_TOKEN"); err != nil {
		return s, err
	}
	if s.SigningSecret, err = config.Secret("SLACK_SIGNING_SECRET"); err != nil {
		return s, err
	}
	if s.AppToken, err = config.Secret("SLACK_APP_TOKEN"); err != nil {
		return s, err
	}
	// The two tokens look alike and sit side by side on the app's pages: one put in the other's
	// place would start a service whose every call Slack refuses. A token is never shown.
	if strings.HasPrefix(s.BotToken, "xapp-") {
		return s, fmt.Errorf("%s holds an app-level token (xapp-…); put the Bot User OAuth Token there instead, which begins with xoxb- (OAuth & Permissions), and the app-level token in SLACK_APP_TOKEN", secretHolder(s.setting("SLACK_BOT_TOKEN")))
	}
	if s.AppToken != "" && !strings.HasPrefix(s.AppToken, "xapp-") {
		return s, fmt.Errorf("%s is not an app-level token: those begin with xapp- (Basic Information → App-Level Tokens, with the connections:write scope); the bot token (xoxb-…) goes in SLACK_BOT_TOKEN", secretHolder(s.setting("SLACK_APP_TOKEN")))
	}
	s.APIURL = os.Getenv("SLACK_API_URL")
	if err := checkHTTPURL("SLACK_API_URL", s.APIURL, "https://slack.com/api/"); err != nil {
		return s, err
	}
	return s, nil
}

// serveOptions are what serve needs; tests set the listener and watch the hooks.
type serveOptions struct {
	app  appOptions
	addr string
	// addrSetting is how addr was given (--http or QM_HTTP_ADDR), for a refusal to name it.
	addrSetting startSetting
	slack       slackSettings

	discord discordSettings
	// listener, when set, is served instead of listening on addr.
	listener net.Listener
	// tick is the loop's period; zero means tickInterval.
	tick time.Duration
	// onReady is called with the address once the service answers; onTick after every tick;
	// onPrune after every pass forgetting old message copies, with how many it forgot.
	onReady func(addr string)
	onApp   func(a *App) // called with the wired app before the service answers (tests)
	onTick  func(err error)
	onPrune func(forgot int64, err error)
	// socket adjusts the Socket Mode client.
	socket []slackbot.SocketOption
	// grace bounds the graceful stop; zero means shutdownGrace.
	grace time.Duration
	// demo runs the embedded example policy; without it serve needs a policy file.
	demo bool
	// getenv reads single sign-on's settings (QM_OIDC_*, QM_PUBLIC_URL); nil is os.Getenv.
	getenv func(string) string
	// limits bound slow and large requests; zero fields take httpserve's defaults.
	limits httpserve.Limits
	// hup delivers SIGHUP: serve checks the policy file on disk and says what a restart would do.
	hup <-chan os.Signal
}

// serveFlags are serve's flags, bound to the options they set.
func serveFlags() (*flag.FlagSet, *serveOptions) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	o := &serveOptions{}
	o.app.flags.register(fs)
	addr := os.Getenv("QM_HTTP_ADDR")
	if addr == "" {
		addr = defaultHTTPAddr
	}
	fs.StringVar(&o.addr, "http", addr, "address to listen on for Slack, /healthz, /readyz and /metrics (env QM_HTTP_ADDR)")
	fs.BoolVar(&o.demo, "demo", false, "run the embedded example organisation on the simulated cluster instead of a policy file")
	return fs, o
}

// checkPolicyOnHUP answers a SIGHUP. serve reads its policy at start only, so it keeps serving
// on that one; it checks the file on disk and says whether a restart would start on it, naming
// each problem (with its line) of one that would not.
func checkPolicyOnHUP(o serveOptions, log *slog.Logger) {
	file := o.app.flags.policy
	if o.demo || file == "" {
		log.Warn("SIGHUP: serve runs the embedded example policy, which no signal changes, and keeps serving; to run a policy of your own, restart it with --policy FILE")
		return
	}
	if _, err := policy.LoadFile(file, nfc.Name); err != nil {
		log.Error("SIGHUP: serve reads its policy at start only and keeps serving on the one it started with; the policy file on disk is not valid, so a restart would fail: mend it, then check it with quartermaster policy check",
			"policy", file, "problems", err.Error())
		return
	}
	log.Warn("SIGHUP: serve reads its policy at start only and keeps serving on the one it started with; the policy file on disk is valid, and a restart applies it (systemctl restart quartermaster)",
		"policy", file)
}

// errNoPolicy is serve's refusal to start production on the example organisation.
const errNoPolicy = "no policy: set QM_POLICY=/etc/quartermaster/quartermaster.yaml or pass --policy FILE (quartermaster serve --demo runs the embedded example organisation on the simulated cluster)"

func runServe(ctx context.Context, args []string, _ io.Reader, _, stderr io.Writer) error {
	fs, o := serveFlags()
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		// The example gives serve a policy where none is named, as its refusal of none does.
		var needs map[string]string
		if len(flagPlaces(fs, args, "demo")) == 0 && policyIn(args) == "" && os.Getenv("QM_POLICY") == "" {
			needs = map[string]string{"": "--policy " + flagExamples["policy"]}
		}
		return flagMistakeIn(fs, "quartermaster serve", []string{"quartermaster", "serve"}, args, needs, err)
	}
	if fs.NArg() > 0 {
		// The example is one serve takes: with a policy where none is named, without the one
		// named where --demo is given (named by --policy; QM_POLICY= is refused below).
		fixed := withoutWords(fs, args, fs.Args())
		switch {
		case o.demo && o.app.flags.policy != "":
			fixed = withoutPlaces(fixed, flagPlaces(fs, fixed, "policy"))
		case !o.demo && o.app.flags.policy == "":
			fixed = append(fixed, "--policy", flagExamples["policy"])
		}
		return refusal(fmt.Sprintf("serve takes no more words, but got %q", fs.Args()[0]), "serve", fixed)
	}
	switch {
	case o.demo && o.app.flags.policy != "":
		fixed := withoutPlaces(args, flagPlaces(fs, args, "policy"))
		if len(fixed) == len(args) { // named by QM_POLICY
			fixed = append([]string{"quartermaster", "serve"}, onceEach(fs, fixed)...)
			return errUsage{fmt.Sprintf("--demo runs the embedded example policy, but a policy is also named (%s); drop one of them, e.g. QM_POLICY= %s", o.app.flags.policy, shellword.Join(fixed))}
		}
		return refusal(fmt.Sprintf("--demo runs the embedded example policy, but a policy is also named (%s); drop one of them", o.app.flags.policy), "serve", onceEach(fs, fixed))
	case !o.demo && o.app.flags.policy == "":
		return refusal(errNoPolicy, "serve", append(onceEach(fs, args), "--policy", flagExamples["policy"]))
	}
	log, err := config.Logger(stderr)
	if err != nil {
		return errUsage{err.Error()}
	}
	o.app.logger = log
	if o.slack, err = slackFromEnv(); err != nil {
		return err
	}
	if o.discord, err = discordFromEnv(); err != nil {
		return err
	}
	// Half a chat configuration is refused now, before the database is opened and migrated.
	if err := o.slack.check(); err != nil {
		return err
	}
	if err := o.discord.check(); err != nil {
		return err
	}
	if err := o.app.flags.resolveSecrets(); err != nil {
		return err
	}
	if o.tick, err = positiveDuration("QM_TICK_INTERVAL", os.Getenv("QM_TICK_INTERVAL"), "30s"); err != nil {
		return err
	}
	// The settings NewApp and single sign-on read later are checked now, before the database is
	// opened and migrated, so that a bad one is the only thing serve says.
	if err := checkAppSettings(); err != nil {
		return err
	}
	o.addrSetting = settingOf(fs, []string{"quartermaster", "serve"}, args, "http", "QM_HTTP_ADDR")
	if err := checkListenAddr(o.addrSetting, o.addr); err != nil {
		return err
	}
	if err := checkBackend(settingOf(fs, []string{"quartermaster", "serve"}, args, "backend", "QM_BACKEND"), o.app.flags.backend); err != nil {
		return err
	}
	if err := checkBackendMappings(settingOf(fs, []string{"quartermaster", "serve"}, args, "backend", "QM_BACKEND"), o.app.flags); err != nil {
		return err
	}
	if err := checkBackendHost(settingOf(fs, []string{"quartermaster", "serve"}, args, "backend", "QM_BACKEND"), o.app.flags); err != nil {
		return err
	}
	getenv := o.getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if _, _, err := ssoSettings(getenv, nil); err != nil {
		return err
	}
	// SIGHUP, which would otherwise end the process at once, asks serve to check its policy file.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	o.hup = hup
	return serve(ctx, *o)
}

// serve runs the service until ctx ends (SIGTERM, SIGINT), then stops gracefully: it stops
// taking requests, lets those in flight and the Slack work they started finish, and closes the
// database.
func serve(ctx context.Context, o serveOptions) error {
	log := o.app.logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
		o.app.logger = log
	}
	o.app.simClock = false
	if o.app.metrics == nil {
		o.app.metrics = newMetrics()
	}
	// The port is taken before the database is opened and migrated, so that one another process
	// holds is the only thing serve says.
	ln := o.listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", o.addr); err != nil {
			return listenError(o.addrSetting, o.addr, err)
		}
	}
	defer ln.Close()
	// The bot tokens are checked before the database is opened and migrated, so that one Slack or
	// Discord refuses is the only thing serve says.
	installed, err := checkSlackToken(ctx, o.slack, log)
	if err != nil {
		return err
	}
	if err := checkDiscordToken(ctx, o.discord, log); err != nil {
		return err
	}
	a, err := NewApp(ctx, o.app)
	if err != nil {
		return err
	}
	defer a.Close()
	warnIfSchedulerDown(ctx, a, log)
	warnOfUnlistedWaiting(ctx, a, log)
	// Notices are durable in serve: written with the change that causes them, sent from the
	// database, and taken up by any replica after a crash.
	a.Service.Outbox = a.Store
	a.Service.SenderName = senderName()
	// A command is answered once its change is committed; its notices follow on their own.
	a.Service.DeliverInBackground = true
	a.Metrics.Notices(a.Service.NoticesSent, a.Service.NoticeRepeats)
	// Into the outbox, sent once the chat adapters are up.
	handOverUnlistedWaiting(ctx, a, log)
	if o.onApp != nil {
		o.onApp(a)
	}

	mux := http.NewServeMux()
	health := newHealth(a)
	health.register(mux)
	agents := newIngest(a, log) // the node agents' reports, and the idle path's telemetry from them
	agents.Register(mux)
	a.Metrics.AgentReports(agents.Counts)
	a.Metrics.AgentInventory(agentInventoryMismatch(a))

	adapter, err := newSlackApp(a, o.slack, log)
	if err != nil {
		return err
	}
	if adapter != nil {
		if installed != nil {
			adapter.Know(*installed)
		}
		a.Sender = adapter
		if o.slack.SigningSecret != "" {
			adapter.Register(mux)
		}
		log.Info("Slack is on", "http_endpoints", o.slack.SigningSecret != "", "socket_mode", o.slack.AppToken != "")
	} else {
		log.Info("Slack is off: SLACK_BOT_TOKEN is not set")
	}

	getenv := o.getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	sso, err := setupSSO(a, getenv, mux, log)
	if err != nil {
		return err
	}
	discord, err := serveDiscord(ctx, a, o.discord, mux, log)
	if err != nil {
		return err
	}
	defer func() { _ = discord.stop(context.Background()) }()

	// A node's report too large for every request is refused and counted as one too large for a
	// report.
	limits := o.limits
	limits.AnswersTooLarge = ingest.IsReport
	srv := httpserve.Server(mux, limits)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	// The loops stop before the database closes.
	stopLifecycle := startLoops(a, loopOptions{tick: o.tick, onTick: o.onTick, onPrune: o.onPrune}, log)
	loops, stopSocket := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	if sso != nil {
		wg.Go(func() { ssoLoop(loops, sso, log) })
	}
	stopLoops := func() {
		stopSocket()
		stopLifecycle()
	}
	wg.Go(func() { agents.Run(loops) })
	wg.Go(func() { retireFormerApprovers(loops, a, log) })
	if adapter != nil {
		wg.Go(func() { recoverLoop(loops, a, slackbot.Platform, adapter, log) })
	}
	if adapter != nil && o.slack.AppToken != "" {
		wg.Go(func() {
			if err := adapter.RunSocketMode(loops, o.socket...); err != nil {
				log.Error("socket mode stopped", "err", err)
			}
		})
	}

	var deliver bot.Deliverer
	if adapter != nil {
		deliver = adapter
	}
	stopShowback, err := startShowback(a, discord.deliverer(a, deliver), log)
	if err != nil {
		stopLoops()
		wg.Wait()
		return err
	}
	defer stopShowback()

	health.started.Store(true)
	log.Info("serving", "addr", ln.Addr().String(), "policy", a.Policy.Source, "organization", a.Policy.Organization,
		"backend", a.BackendName, "database", a.Store.Dialect(), "version", buildVersion())
	if o.onReady != nil {
		o.onReady(ln.Addr().String())
	}

	var checking atomic.Bool
wait:
	for {
		select {
		case <-ctx.Done():
			break wait
		case err := <-served:
			stopLoops()
			wg.Wait()
			return fmt.Errorf("http server: %w", err)
		case <-o.hup:
			if checking.CompareAndSwap(false, true) {
				go func() {
					defer checking.Store(false)
					checkPolicyOnHUP(o, log)
				}()
			}
		}
	}
	wait := o.grace
	if wait <= 0 {
		wait = shutdownGrace
	}
	// Why it stops, and how long work in flight gets: systemd's TimeoutStopSec (Kubernetes'
	// terminationGracePeriodSeconds) must be longer, or the process is killed before it is done.
	why := "the context ended"
	var by stoppedBy
	if errors.As(context.Cause(ctx), &by) {
		why = stopSignalName(by.sig)
	}
	log.Info("stopping: /readyz answers no more, and requests, chat work and notices in flight get the grace to finish",
		"signal", why, "grace", wait.String())
	health.started.Store(false)
	grace, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := srv.Shutdown(grace); err != nil {
		log.Warn("requests still open at shutdown", "err", err)
	}
	if adapter != nil {
		if err := adapter.Close(grace); err != nil {
			log.Warn("Slack work still in flight at shutdown", "err", err)
		}
	}
	if err := discord.stop(grace); err != nil {
		log.Warn("Discord work still in flight at shutdown", "err", err)
	}
	// Notices still going out in the background are left to the next sender loop (of this
	// replica after a restart, or of another) once the grace is over.
	if err := a.Service.WaitNotices(grace); err != nil {
		log.Warn("notices still being delivered at shutdown are left to the outbox", "err", err)
	}
	// The loops finish what they are doing; one stuck on a database that does not answer is left
	// behind once the grace is over, so that SIGTERM always ends the process in time.
	stopped := make(chan struct{})
	go func() {
		stopLoops()
		wg.Wait()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-grace.Done():
		log.Warn("work still running at the end of the shutdown grace is abandoned", "grace", wait.String())
		return nil
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
}

// tickLoop does what falls due (expiry, idle reclaim, approval timeouts) now and every tick.
func tickLoop(ctx context.Context, svc *qm.Service, every time.Duration, onTick func(error), log *slog.Logger) {
	if every <= 0 {
		every = tickInterval
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		err := svc.Tick(ctx)
		if err != nil && ctx.Err() == nil {
			log.Error("tick failed", "err", err)
		}
		if onTick != nil {
			onTick(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// flushLoop writes what the wait predictor learned to the database every flushInterval (and
// App.Close once more at the end), so that a restart does not lose it.
func flushLoop(ctx context.Context, a *App, log *slog.Logger) {
	t := time.NewTicker(flushInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := a.flush(ctx); err != nil && ctx.Err() == nil {
			log.Warn("keeping the wait history failed; will retry", "err", err)
		}
	}
}

// retireFormerApprovers edits, once at start, the copies of approval messages of requests that
// still wait held by people who may no longer decide them: the policy may have changed since
// they were sent (or the directory, for a policy that lists it), so that their buttons would only
// be refused. Each copy says who decides now, without buttons.
func retireFormerApprovers(ctx context.Context, a *App, log *slog.Logger) {
	if n := a.Bot.RetireFormerApprovers(ctx); n > 0 {
		log.Info("edited the approval messages held by people who no longer decide them", "copies", n)
	}
}

// pruneLoop forgets, at start and once a day, where chat messages were posted longer ago than any
// approval can still be waiting for a decision (nothing will edit them again), and the wait
// predictor's records older than it reads back at start.
func pruneLoop(ctx context.Context, a *App, onPrune func(int64, error), log *slog.Logger) {
	keep := max(messageRefsKept, 2*a.Policy.Approvals.Timeout.Duration)
	t := time.NewTicker(pruneInterval)
	defer t.Stop()
	for {
		n, err := a.Store.PruneMessageRefs(ctx, a.Clock.Now().Add(-keep))
		if _, werr := a.Store.PruneWaitRecords(ctx, a.Clock.Now().Add(-waitHistoryKept)); werr != nil && err == nil {
			err = werr
		}
		if _, kerr := a.Store.PruneCommandKeys(ctx, a.Clock.Now().Add(-commandKeysKept)); kerr != nil && err == nil {
			err = kerr
		}
		if _, oerr := a.Store.PruneOutbox(ctx, a.Clock.Now().Add(-commandKeysKept)); oerr != nil && err == nil {
			err = oerr
		}
		switch {
		case err != nil && ctx.Err() == nil:
			log.Error("forgetting old message copies failed", "err", err)
		case n > 0:
			log.Info("forgot where old messages were posted", "copies", n, "older_than", keep.String())
		}
		if onPrune != nil {
			onPrune(n, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// newSlackApp makes the Slack adapter the settings ask for; nil when Slack is off.
func newSlackApp(a *App, s slackSettings, log *slog.Logger) (*slackbot.Adapter, error) {
	if err := s.check(); err != nil || s.BotToken == "" {
		return nil, err
	}
	return slackbot.New(slackConfig(a, s, log))
}

// check refuses half a Slack configuration: a bot token without a way to hear from Slack, or
// the signing secret or app-level token without the bot token. runServe asks before the database
// is opened, so that a refusal leaves nothing made.
func (s slackSettings) check() error {
	if s.BotToken == "" {
		var set []string
		if s.SigningSecret != "" {
			set = append(set, s.setting("SLACK_SIGNING_SECRET"))
		}
		if s.AppToken != "" {
			set = append(set, s.setting("SLACK_APP_TOKEN"))
		}
		if len(set) > 0 {
			names, are := strings.Join(set, " and "), "are"
			if len(set) == 1 {
				are = "is"
			}
			return fmt.Errorf("%s %s set but SLACK_BOT_TOKEN is not; set the bot token (xoxb-…) too, or unset %s to run without Slack; e.g. SLACK_BOT_TOKEN_FILE=/etc/quartermaster/secrets/slack-bot-token", names, are, names)
		}
		return nil
	}
	if s.SigningSecret == "" && s.AppToken == "" {
		return fmt.Errorf("%s is set but neither SLACK_SIGNING_SECRET (HTTP endpoints) nor SLACK_APP_TOKEN (Socket Mode) is; set one of them, e.g. SLACK_SIGNING_SECRET_FILE=/etc/quartermaster/secrets/slack-signing-secret", s.setting("SLACK_BOT_TOKEN"))
	}
	return nil
}

// secretHolder is what holds a secret set with the variable name: the file NAME_FILE names, or
// NAME itself.
func secretHolder(name string) string {
	if strings.HasSuffix(name, config.FileSuffix) {
		return "the file " + name + " names"
	}
	return name
}

// slackConfig is the Slack adapter's configuration for the settings s. The request form offers
// each person, as it opens, the teams a request may charge them to and the policy's data classes
// (their teams' first), by the rule Discord suggests them with (commands.TeamsCharged).
func slackConfig(a *App, s slackSettings, log *slog.Logger) slackbot.Config {
	return slackbot.Config{
		BotToken:        s.BotToken,
		SigningSecret:   s.SigningSecret,
		AppToken:        s.AppToken,
		APIURL:          s.APIURL,
		Handler:         a.Handler,
		Refs:            chatstore.Refs{DB: a.Store, Platform: slackbot.Platform},
		Inbox:           chatstore.Inbox{DB: a.Store, Owner: senderName(), Platform: slackbot.Platform},
		OnAck:           func(transport, kind string, took time.Duration) { a.Metrics.Ack("slack", transport, kind, took) },
		Choices:         slackChoices(a),
		FormClass:       a.Bot.DefaultClass,
		FormTeams:       a.Bot.FormTeams,
		FormDataClasses: a.Bot.FormDataClasses,
		Verbs:           verbs(),
		SignIn:          func() bool { return a.Bot.SSO != nil },
		LinkedUser: func(ctx context.Context, person string) (string, bool, error) {
			return linkedUser(ctx, a, slackbot.Platform, person)
		},
		Logger: log,
	}
}

// verbs are the first words of the /gpu commands: a message written to the Slack app that
// begins with one runs as that command.
func verbs() []string {
	var v []string
	for _, s := range commands.Table() {
		if !slices.Contains(v, s.Words[0]) {
			v = append(v, s.Words[0])
		}
	}
	return v
}

// slackCheckTimeout bounds serve's question to Slack about the bot token at start.
const slackCheckTimeout = 10 * time.Second

// checkSlackToken asks Slack, at start, whom the bot token stands for, and, with Socket Mode, for
// a connection with the app-level token. A token Slack refuses stops serve with a sentence saying
// what to set (every command would fail otherwise, its users told only to try again, or Socket
// Mode would stop at once); scopes the bot token lacks are logged, each with what does not work
// without it. A Slack that cannot be reached just now holds nothing up. It needs only the
// settings, so serve asks before it opens the database; what Slack said of the bot token is
// returned for the adapter (nil when Slack is off, was not asked, or could not be reached).
func checkSlackToken(ctx context.Context, s slackSettings, log *slog.Logger) (*slackbot.Installation, error) {
	if s.check() != nil || s.BotToken == "" {
		return nil, nil // Slack is off, or half set up: newSlackApp refuses that
	}
	ctx, cancel := context.WithTimeout(ctx, slackCheckTimeout)
	defer cancel()
	cfg := slackbot.Config{BotToken: s.BotToken, AppToken: s.AppToken, APIURL: s.APIURL}
	in, err := slackbot.CheckToken(ctx, cfg)
	var refused *slackbot.TokenRefusedError
	switch {
	case errors.As(err, &refused):
		return nil, err
	case err != nil:
		log.Warn("cannot ask Slack about the bot token just now; starting all the same", "err", err)
		return nil, nil
	}
	log.Info("Slack knows the bot token", "workspace", in.Team, "workspace_id", in.TeamID, "bot_user", in.BotUser)
	if err := slackbot.CheckAppToken(ctx, cfg); errors.As(err, &refused) {
		return nil, err
	} else if err != nil {
		log.Warn("cannot ask Slack about the app-level token just now; starting all the same", "err", err)
	}
	if missing := in.Missing(); len(missing) > 0 {
		var names, what []string
		for _, s := range missing {
			names = append(names, s.Name)
			what = append(what, s.Name+" ("+s.Without+")")
		}
		log.Error("the bot token lacks scopes that manifest.yaml asks for, so these do not work: "+strings.Join(what, "; ")+
			". Add them under OAuth & Permissions (or paste manifest.yaml into the app's manifest again) and reinstall the app to the workspace",
			"missing_scopes", strings.Join(names, ","))
	}
	return &in, nil
}

// slackChoices fill the request modal's menus that are the same for everyone from the policy: the
// classes and the lengths. The teams and data classes are each person's, read as the form opens
// (slackConfig's FormTeams and FormDataClasses). A data class the team is not cleared for is an
// exception, not an error: the menu offers every data class of the policy.
func slackChoices(a *App) slackbot.Choices {
	var ch slackbot.Choices
	for _, c := range a.Policy.Classes {
		price := policy.Price(a.Policy.Currency, c.PricePerGPUHour)
		d := 2 * time.Hour // a new form's length on the class: 2h, or less where the class allows less
		if m := c.MaxDuration.Duration; m > 0 && m < d {
			d = m
		}
		ch.Classes = append(ch.Classes, slackbot.Choice{Value: c.Name, Label: classLabel(c.Name, c.SKU, price+"/GPU-h"),
			Duration: policy.FormatDuration(d)})
	}
	if len(ch.Classes) > 0 {
		ch.DefaultDuration = ch.Classes[0].Duration
	}
	ch.Durations = formDurations(a.Policy)
	return ch
}

// maxOptionText is the most characters Slack shows of a menu option.
const maxOptionText = 75

// classLabel is a class as the request form's menu offers it, "train — H100-SXM5, $3.50/GPU-h",
// within Slack's 75 characters: a long SKU is shortened so the name and the price stay whole.
func classLabel(name, sku, price string) string {
	label := fmt.Sprintf("%s — %s, %s", name, sku, price)
	over := utf8.RuneCountInString(label) - maxOptionText
	if over <= 0 {
		return label
	}
	if r := []rune(sku); len(r) > over+1 {
		return fmt.Sprintf("%s — %s…, %s", name, string(r[:len(r)-over-1]), price)
	}
	return fmt.Sprintf("%s — %s", name, price)
}

// formDurations are the lengths the request form offers: the usual ones (slackbot.DefaultDurations),
// each class's max_duration, and a week, two and thirty days where a class allows that long,
// shortest first; none past the longest a lease may last.
func formDurations(p *policy.Policy) []string {
	var ds []time.Duration
	add := func(d time.Duration) {
		if d > 0 && d <= policy.MaxLease && !slices.Contains(ds, d) {
			ds = append(ds, d)
		}
	}
	for _, s := range slackbot.DefaultDurations {
		if d, err := policy.ParseDuration(s); err == nil {
			add(d)
		}
	}
	var longest time.Duration
	for _, c := range p.Classes {
		add(c.MaxDuration.Duration)
		longest = max(longest, c.MaxDuration.Duration)
	}
	for _, d := range []time.Duration{7 * 24 * time.Hour, 14 * 24 * time.Hour, policy.MaxLease} {
		if d <= longest {
			add(d)
		}
	}
	slices.Sort(ds)
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = policy.FormatDuration(d)
	}
	return out
}

// recoverInterval is how often serve looks for commands that a stopped process acknowledged and
// never ran.
const recoverInterval = 30 * time.Second

// recoverer is a chat adapter that runs the commands a stopped process acknowledged and never
// answered (slackbot.Adapter, discordbot.Adapter).
type recoverer interface {
	Recover(ctx context.Context) (int, error)
}

// recoverLoop runs, at start and every recoverInterval, the commands of platform's adapter that
// a stopped process (this one before a restart, or another replica) acknowledged and never
// finished. At start it first releases the claims of processes on this host that no longer run,
// so that what a killed predecessor acknowledged runs at once instead of after its claim lapses.
func recoverLoop(ctx context.Context, a *App, platform string, adapter recoverer, log *slog.Logger) {
	releaseStoppedInbox(ctx, a, platform, log)
	t := time.NewTicker(recoverInterval)
	defer t.Stop()
	for {
		if n, err := adapter.Recover(ctx); err != nil && ctx.Err() == nil {
			log.Error("recover acknowledged commands", "platform", platform, "err", err)
		} else if n > 0 {
			log.Info("recovered commands acknowledged before a stop", "platform", platform, "commands", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// releaseStoppedInbox releases platform's inbox claims of the processes on this host that no
// longer run (this process's own claims stay: it may have acknowledged commands already).
func releaseStoppedInbox(ctx context.Context, a *App, platform string, log *slog.Logger) {
	owners, err := a.Store.DeliveryClaimers(ctx, platform, time.Now())
	if err != nil {
		log.Warn("reading the inbox's claims", "platform", platform, "err", err)
		return
	}
	stopped := stoppedOnThisHost(owners, senderName())
	n, err := a.Store.ReleaseDeliveryClaims(ctx, platform, stopped)
	if err != nil {
		log.Warn("releasing the inbox claims of stopped processes", "platform", platform, "err", err)
		return
	}
	if n > 0 {
		log.Info("took back the commands that stopped processes on this host acknowledged", "platform", platform, "processes", strings.Join(stopped, ","), "commands", n)
	}
}

// senderName names this process in the outbox's claims: host and process id.
func senderName() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d", host, os.Getpid())
}

// warnOfUnlistedWaiting logs, at start, each request waiting for approval whose team the policy
// does not list (renamed or removed while it waited): who decides it now, the fallback approvers,
// or that nobody can and it is denied when it times out.
func warnOfUnlistedWaiting(ctx context.Context, a *App, log *slog.Logger) {
	ls, err := a.Service.UnlistedWaiting(ctx)
	if err != nil {
		log.Warn("the requests waiting for approval could not be read at start", "err", err)
		return
	}
	for _, l := range ls {
		who := a.Service.Deciders(l.Team, l.User)
		if len(who) == 0 {
			log.Error(fmt.Sprintf("%s waits for approval, but it is a request of team %s, which the policy does not list, and approvals.fallback_approvers names nobody else, so nobody can decide it; it is denied when it times out unless the team is put back or fallback approvers are added", l.ID, l.Team),
				"lease", l.ID.String(), "team", l.Team, "user", l.User)
			continue
		}
		log.Warn(fmt.Sprintf("%s waits for approval, but it is a request of team %s, which the policy does not list (renamed or removed), so its budget owners are not known: the fallback approvers decide it (%s)", l.ID, l.Team, strings.Join(who, ", ")),
			"lease", l.ID.String(), "team", l.Team, "user", l.User)
	}
}

// handOverUnlistedWaiting sends, once at start, the approval message of each request waiting for
// approval whose team the policy no longer lists to the fallback approvers, who decide it now; a
// request handed over at an earlier start is not sent again.
func handOverUnlistedWaiting(ctx context.Context, a *App, log *slog.Logger) {
	ls, err := a.Service.HandOverUnlistedWaiting(ctx)
	if err != nil && ctx.Err() == nil {
		log.Warn("the requests of teams the policy no longer lists could not be sent to the fallback approvers; the next start tries again", "err", err)
	}
	for _, l := range ls {
		log.Warn(fmt.Sprintf("sent %s, a request of team %s, which the policy no longer lists, to the fallback approvers, who decide it (%s)", l.ID, l.Team, strings.Join(a.Service.Deciders(l.Team, l.User), ", ")),
			"lease", l.ID.String(), "team", l.Team)
	}
}

// warnIfSchedulerDown logs once at start when the scheduler does not answer its readiness check.
// serve starts anyway: the scheduler may come back, and /readyz says not ready until it does.
func warnIfSchedulerDown(ctx context.Context, a *App, log *slog.Logger) {
	p, ok := a.Service.Backend.(pinger)
	if !ok || a.BackendName == "sim" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 2*readyCheckTimeout)
	defer cancel()
	err := p.Ping(ctx)
	if err == nil {
		return
	}
	who := "the " + a.BackendName + " scheduler"
	switch a.BackendName {
	case "slurm":
		who = "Slurm's controller"
	case "kubernetes":
		who = "the Kubernetes API server"
	}
	log.Warn(who+" does not answer; serving anyway, but no lease starts and /readyz says not ready until it does",
		"backend", a.BackendName, "err", oneLine(err.Error()))
}

// stopSignalName is a signal as an operator sends it (SIGTERM, SIGINT).
func stopSignalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return sig.String()
}
