package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/acme/quartermaster/bot"
	discordbot "github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/gputable"
	slackbot "github.com/acme/quartermaster/bot/slack"
	"github.com/acme/quartermaster/commands"
	"github.com/acme/quartermaster/internal/config"
	"github.com/acme/quartermaster/internal/oidc"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/shellword"
	"github.com/acme/quartermaster/internal/store/chatstore"
	"github.com/acme/quartermaster/reports/showback"
)

func init() {
	registerCommand("discord", subcommand{
		summary: "the Discord app: `discord register` installs the /gpu command",
		usage:   "quartermaster discord register [--guild ID] [--print] [--policy FILE]",
		flags: func() *flag.FlagSet {
			fs := flag.NewFlagSet("discord register", flag.ContinueOnError)
			var f commonFlags
			f.registerPolicy(fs)
			fs.String("guild", "", "install in this server (guild id) only, at once")
			fs.Bool("print", false, "print the command as JSON instead of installing it")
			return fs
		},
		run: runDiscord,
	})
}

// discordSettings configure the Discord app, from the environment.
type discordSettings struct {
	BotToken  string // DISCORD_BOT_TOKEN: REST calls, and the gateway when there is no public key
	PublicKey string // DISCORD_PUBLIC_KEY: the HTTP interactions endpoint
	AppID     string // DISCORD_APP_ID: registration
	APIURL    string // DISCORD_API_URL: another REST base (tests, Discord-compatible servers)
}

// discordFromEnv reads the Discord settings; the bot token may come from a file
// (DISCORD_BOT_TOKEN_FILE).
func discordFromEnv() (discordSettings, error) {
	token, err := config.Secret("DISCORD_BOT_TOKEN")
	if err != nil {
		return discordSettings{}, err
	}
	s := discordSettings{BotToken: token, PublicKey: os.Getenv("DISCORD_PUBLIC_KEY"),
		AppID: os.Getenv("DISCORD_APP_ID"), APIURL: os.Getenv("DISCORD_API_URL")}
	if s.AppID != "" && !isSnowflake(s.AppID) {
		return s, errUsage{fmt.Sprintf("DISCORD_APP_ID=%q is not a Discord id; it is the Application ID the Developer Portal shows (General Information), a number, e.g. DISCORD_APP_ID=1180000000000000000", s.AppID)}
	}
	return s, nil
}

// check refuses half a Discord configuration (the public key or application id without the bot
// token) and a public key that is not one. runServe asks before the database is opened, so that a
// refusal leaves nothing made.
func (s discordSettings) check() error {
	if s.BotToken == "" {
		if s.PublicKey != "" || s.AppID != "" {
			return errors.New("DISCORD_PUBLIC_KEY or DISCORD_APP_ID is set but DISCORD_BOT_TOKEN is not; set the bot token too, or unset them all to run without Discord; e.g. DISCORD_BOT_TOKEN_FILE=/etc/quartermaster/secrets/discord-bot-token")
		}
		return nil
	}
	if s.PublicKey != "" {
		if b, err := hex.DecodeString(strings.TrimSpace(s.PublicKey)); err != nil || len(b) != ed25519.PublicKeySize {
			return fmt.Errorf("DISCORD_PUBLIC_KEY is not a Discord public key: that is %d bytes in hex (%d hex digits), as the Developer Portal shows it (General Information → Public Key), e.g. DISCORD_PUBLIC_KEY=%s", ed25519.PublicKeySize, 2*ed25519.PublicKeySize, strings.Repeat("0f", ed25519.PublicKeySize))
		}
	}
	return nil
}

// isSnowflake says whether v has the form of a Discord id (a snowflake): a positive decimal
// number that fits in 64 bits, digits only.
func isSnowflake(v string) bool {
	if v == "" || strings.Trim(v, "0123456789") != "" {
		return false
	}
	n, err := strconv.ParseUint(v, 10, 64)
	return err == nil && n > 0
}

// runDiscord is `quartermaster discord`.
func runDiscord(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "register" {
		// --print installs nothing; it needs the policy, as typed or else where it is installed.
		var needs []string
		if !slices.Contains(args, "--print") && !slices.Contains(args, "-print") {
			needs = append(needs, "--print")
		}
		if policyIn(args) == "" && os.Getenv("QM_POLICY") == "" {
			needs = append(needs, "--policy", flagExamples["policy"])
		}
		if len(args) == 0 || strings.HasPrefix(args[0], "-") {
			return needsVerb("discord", true, []string{"register"}, "register", args, needs)
		}
		example := []string{"register", "--print"}
		if p := policyIn(args); p != "" {
			example = append(example, "--policy", p)
		} else if os.Getenv("QM_POLICY") == "" {
			example = append(example, "--policy", flagExamples["policy"])
		}
		return notAVerb("discord", args[0], []string{"register"}, args, example)
	}
	fs := flag.NewFlagSet("discord register", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var flags commonFlags
	flags.registerPolicy(fs)
	guild := fs.String("guild", "", "install in this server (guild id) only, at once")
	printOnly := fs.Bool("print", false, "print the command as JSON instead of installing it")
	if err := fs.Parse(args[1:]); err != nil {
		return flagMistakeIn(fs, "quartermaster discord register", []string{"quartermaster", "discord", "register"}, args[1:], map[string]string{
			"policy": "docs/quartermaster.example.yaml --print", "guild": "1180000000000000001 --policy docs/quartermaster.example.yaml",
			"print": "--policy docs/quartermaster.example.yaml"}, err)
	}
	if fs.NArg() > 0 {
		return strayWords(fs, "discord register", fs.Args()[:1], args)
	}
	// What installing needs is checked first, so that a wrong id is named before anything else;
	// a server id is checked for --print too, which would otherwise print as if it were one.
	if *guild != "" && !isSnowflake(*guild) {
		return refusal(fmt.Sprintf("--guild %q is not a Discord server id; it is a positive number (Discord's Developer Mode, then Copy Server ID on the server)", *guild),
			"discord", append([]string{"register"}, withFlag(fs, args[1:], "guild", "1180000000000000001")...))
	}
	var s discordSettings
	if !*printOnly {
		var err error
		if s, err = discordFromEnv(); err != nil {
			return err
		}
		if s.BotToken == "" || s.AppID == "" {
			return errUsage{"discord register needs DISCORD_BOT_TOKEN and DISCORD_APP_ID (the Developer Portal shows both); e.g. DISCORD_APP_ID=1180000000000000000 DISCORD_BOT_TOKEN=… " +
				shellword.Join(append([]string{"quartermaster", "discord", "register"}, onceEach(fs, args[1:])...))}
		}
	}
	// The class options' choices are the policy's classes, and Discord takes no other value:
	// registered from the embedded example, /gpu would offer the example's classes and none of
	// this installation's.
	if flags.policy == "" {
		// The example is the command typed, with the policy added: --print stays a print (it
		// needs no token), and a server that was named stays that server.
		example := "quartermaster discord register"
		switch {
		case *guild != "" && isSnowflake(*guild):
			example += " --guild " + *guild
		case !*printOnly:
			example += " --guild 1180000000000000001"
		}
		if *printOnly {
			example += " --print"
		}
		return errUsage{"discord register needs the policy serve runs with (--policy FILE or QM_POLICY), since its classes become the choices of /gpu's class options; e.g. QM_POLICY=" + flagExamples["policy"] + " " + example}
	}
	pol, err := flags.loadPolicy()
	if err != nil {
		return err
	}
	// The commands serve offers, without opening the database: the same optional commands are
	// added as NewApp adds them (TestDiscordRegister checks the two agree).
	b := &commands.Bot{Svc: &qm.Service{Policy: pol}}
	cat, err := templateCatalog()
	if err != nil {
		return err
	}
	ws, err := workloadSettings()
	if err != nil {
		return err
	}
	commands.AddTemplates(b, cat, ws)
	commands.AddReport(b, &showback.Service{Policy: pol})
	sso := false
	if _, on, err := ssoSettings(os.Getenv, pol); err != nil {
		return err
	} else if on {
		b.SSO = offeredOnly{} // /gpu login, logout and unlink are offered
		sso = true
	}
	cmds := gputable.Commands(b)
	if *printOnly {
		ac := discordbot.ApplicationCommand(discordbot.DefaultName, cmds)
		if err := discordbot.Validate(ac); err != nil {
			return err
		}
		body, err := discordbot.Payload(ac)
		if err != nil {
			return err
		}
		var out bytes.Buffer
		if err := json.Indent(&out, body, "", "  "); err != nil {
			return err
		}
		out.WriteByte('\n')
		_, err = stdout.Write(out.Bytes())
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	got, err := discordbot.Register(ctx, discordbot.Config{BotToken: s.BotToken, AppID: s.AppID, APIURL: s.APIURL, Commands: cmds}, *guild)
	if err != nil {
		return err
	}
	where := "everywhere the app is installed (Discord may take up to an hour to show it)"
	if *guild != "" {
		where = "in server " + *guild
	}
	var names []string
	for _, c := range cmds {
		names = append(names, c.Name)
	}
	fmt.Fprintf(stdout, "Registered /%s (id %s) %s, with %d subcommands: %s\n", got.Name, got.ID, where, len(cmds), strings.Join(names, ", "))
	if !sso {
		// Where serve signs people in, Discord would then offer no way to sign out or unlink.
		fmt.Fprintf(stdout, "Single sign-on is off here (%s is not set), so /%s login, logout and unlink are not installed; if serve runs with single sign-on, run register again with its %s, %s and %s.\n",
			oidc.EnvIssuer, got.Name, oidc.EnvIssuer, oidc.EnvClientID, oidc.EnvPublicURL)
	}
	return nil
}

// offeredOnly stands in for single sign-on where only the commands it offers are wanted (to
// register them); it is never asked anything.
type offeredOnly struct{}

func (offeredOnly) Link(context.Context, qm.Account) (*qm.AccountLink, bool, error) {
	return nil, false, errors.New("single sign-on is not running here")
}

func (offeredOnly) LoginURL(context.Context, qm.Account, string, string) (string, time.Time, error) {
	return "", time.Time{}, errors.New("single sign-on is not running here")
}

func (offeredOnly) Logout(context.Context, qm.Account) (bool, error) {
	return false, errors.New("single sign-on is not running here")
}

func (offeredOnly) Unlink(context.Context, string) (int64, error) {
	return 0, errors.New("single sign-on is not running here")
}

// policyPeople knows Discord users through the policy's directory: discord:USER_ID accounts.
type policyPeople struct{ p *policy.Policy }

func (pp policyPeople) Person(_ context.Context, userID string) (string, bool, error) {
	u, ok := pp.p.UserByAccount(discordbot.Account(userID))
	return qm.CanonicalUser(u), ok, nil
}

func (pp policyPeople) UserID(_ context.Context, person string) (string, bool, error) {
	id, ok := pp.p.Account(person, "discord")
	return id, ok, nil
}

// ssoPeople knows Discord users by the accounts they linked with /gpu login, when single
// sign-on is on.
type ssoPeople struct{ a *App }

func (sp ssoPeople) Person(ctx context.Context, userID string) (string, bool, error) {
	if sp.a.Bot.SSO == nil {
		return "", false, nil
	}
	l, err := sp.a.Store.AccountLink(ctx, qm.Account{Platform: discordbot.Platform, User: userID})
	switch {
	case errors.Is(err, qm.ErrNotFound):
		return "", false, nil
	case err != nil:
		return "", false, err
	}
	return qm.CanonicalUser(l.Email), true, nil
}

func (sp ssoPeople) UserID(ctx context.Context, person string) (string, bool, error) {
	id, ok, err := linkedUser(ctx, sp.a, discordbot.Platform, person)
	if err != nil || ok || sp.a.Bot.SSO == nil {
		return id, ok, err
	}
	// Signed out, or revoked at the identity provider: their notices (of the leases that run
	// on) still reach the Discord account they signed in from, which Discord gives no email to
	// look them up by. Who asks is only ever read from a link.
	acct, ok, err := sp.a.Store.ChatAccount(ctx, qm.CanonicalUser(person), discordbot.Platform)
	return acct.User, ok, err
}

// linkedUser is the user id on platform of the chat account person's sign-in linked, when single
// sign-on is on and they linked one there.
func linkedUser(ctx context.Context, a *App, platform, person string) (string, bool, error) {
	if a.Bot.SSO == nil {
		return "", false, nil
	}
	links, err := a.Store.AccountLinksByEmail(ctx, qm.CanonicalUser(person))
	if err != nil {
		return "", false, err
	}
	for _, l := range links {
		if l.Account.Platform == platform {
			return l.Account.User, true, nil
		}
	}
	return "", false, nil
}

// discordPeople is who Discord users are: the accounts linked by signing in first (a person's
// own login outranks the static directory; for their DMs, the account they last signed in from,
// linked or not), then the directory's discord: accounts.
func discordPeople(a *App) discordbot.People {
	return discordbot.Chain{ssoPeople{a}, policyPeople{a.Policy}}
}

// discordCompleter suggests lease ids and template names as they are typed, and teams and data
// classes as gputable.Complete does. A lease option
// suggests the leases its command takes from the person (commands.Param.Leases, after "lease:"
// in kind): for /gpu status their leases of the last day and what waits for their decision; for
// /gpu approve and deny what waits for their decision alone; for /gpu release and cancel their
// own that have not ended; for /gpu extend and keep their own whose workspace runs.
func discordCompleter(a *App) discordbot.Completer {
	policyNames := gputable.Complete(a.Bot)
	return func(ctx context.Context, person, full, typed string) []discordbot.Choice {
		// What is typed matches as it does for every option: accents, capitals and spaces
		// around it do not count.
		var out []discordbot.Choice
		kind, which, _ := strings.Cut(full, ":")
		switch kind {
		case "lease":
			var mine, waiting []*qm.Lease
			if which != commands.LeasesToDecide {
				var err error
				mine, err = a.Service.List(ctx, qm.LeaseFilter{Kind: qm.AnyKind, User: person, EndedAfter: a.Clock.Now().Add(-24 * time.Hour)})
				if err != nil {
					a.Logger.Warn("cannot suggest leases", "person", person, "err", err)
				}
			}
			if which == commands.LeasesAny || which == commands.LeasesToDecide {
				waiting, _ = a.Service.Pending(ctx, person)
			}
			sort.SliceStable(mine, func(i, j int) bool { return mine[i].State.Live() && !mine[j].State.Live() })
			seen := map[qm.LeaseID]bool{}
			for _, l := range append(waiting, mine...) {
				id := l.ID.String()
				if seen[l.ID] || !discordbot.Suggests(typed, id) {
					continue
				}
				if which == commands.LeasesOwn && l.State.Ended() || which == commands.LeasesRunning && (!l.State.Running() || l.Kind != qm.KindWorkspace) {
					continue
				}
				seen[l.ID] = true
				name := fmt.Sprintf("%s — %s, %d × %s", id, l.State, l.GPUs, l.Class)
				if !qm.SameUser(l.User, person) {
					name += " for " + l.User
				}
				out = append(out, discordbot.Choice{Name: name, Value: id})
			}
		case "template":
			if a.Bot.Templates == nil {
				return nil
			}
			for _, tp := range a.Bot.Templates.Catalog.List() {
				if discordbot.Suggests(typed, tp.Name, tp.Title) {
					out = append(out, discordbot.Choice{Name: tp.Name + " — " + tp.Title, Value: tp.Name})
				}
			}
		default:
			return policyNames(ctx, person, full, typed)
		}
		return out
	}
}

// discordDMExample is the request offered to someone who writes the app a DM that is no command,
// one that works for them: one GPU of the class "/gpu request" naming none would give them now
// (the first in which their team has quota and room, as Slack's request form starts on), for as
// long as the command table's example asks (4h, or less where the class allows less). False
// when that class cannot be told (someone not signed in, in no team, no room anywhere): the
// request command's own example is offered then.
func discordDMExample(a *App) func(ctx context.Context, req bot.Request) (string, bool) {
	return func(ctx context.Context, req bot.Request) (string, bool) {
		name, ok := a.Bot.DefaultClass(ctx, req)
		if !ok {
			return "", false
		}
		c, ok := a.Policy.Class(name)
		if !ok {
			return "", false
		}
		d := qm.DefaultDuration
		if m := c.MaxDuration.Duration; m > 0 && m < d {
			d = m
		}
		return fmt.Sprintf("/gpu request 1 %s for %s", c.Name, policy.FormatDuration(d)), true
	}
}

// newDiscordApp makes the Discord adapter the settings ask for; nil when Discord is off.
func newDiscordApp(a *App, s discordSettings, log *slog.Logger) (*discordbot.Adapter, error) {
	if err := s.check(); err != nil || s.BotToken == "" {
		return nil, err
	}
	return discordbot.New(discordConfig(a, s, log))
}

// discordConfig is the Discord adapter's configuration for a and the settings s.
func discordConfig(a *App, s discordSettings, log *slog.Logger) discordbot.Config {
	return discordbot.Config{
		BotToken:  s.BotToken,
		PublicKey: s.PublicKey,
		AppID:     s.AppID,
		APIURL:    s.APIURL,
		Commands:  gputable.Commands(a.Bot),
		Verbs:     gputable.Verbs(),
		OptionsOf: gputable.Options(a.Bot),
		Handler:   a.Bot,
		People:    discordPeople(a),
		Channels:  a.Policy.Discord.Channels,
		Complete:  discordCompleter(a),
		DMExample: discordDMExample(a),
		Refs:      chatstore.Refs{DB: a.Store, Platform: discordbot.Platform},
		Inbox:     chatstore.Inbox{DB: a.Store, Owner: senderName(), Platform: discordbot.Platform},
		Logger:    log,
	}
}

// senders hands every notice to each platform; each sends what it can reach. A notice counts as
// delivered when one platform delivered it, so the outbox does not send it again (and again to
// the platforms that took it) because another platform failed or does not know the recipient;
// when none delivered it, their failures are the error and the outbox tries again later. A
// recipient no platform reaches is nobody's failure.
type senders []bot.Sender

func (s senders) Send(ctx context.Context, r bot.Reply) error {
	return s.each(func(x bot.Sender) error { return x.Send(ctx, r) })
}

// Deliver is Send for scheduled posts (the weekly showback), through each platform's Deliver, by
// the same rule: one message recorded as delivered is never sent again.
func (s senders) Deliver(ctx context.Context, r bot.Reply) error {
	return s.each(func(x bot.Sender) error {
		if d, ok := x.(bot.Deliverer); ok {
			return d.Deliver(ctx, r)
		}
		return x.Send(ctx, r)
	})
}

func (s senders) each(send func(bot.Sender) error) error {
	_, err := s.reach(send)
	return err
}

// reach is each, and says whether a platform delivered the message: none did, and none failed,
// when no platform knows the recipient.
func (s senders) reach(send func(bot.Sender) error) (bool, error) {
	var errs []error
	delivered := false
	for _, x := range s {
		switch err := send(x); {
		case err == nil:
			delivered = true
		case errors.Is(err, discordbot.ErrNotHere):
		default:
			errs = append(errs, err)
		}
	}
	if delivered {
		return true, nil
	}
	return false, errors.Join(errs...)
}

// deliver is Deliver, and says whether a platform delivered the message.
func (s senders) deliver(ctx context.Context, r bot.Reply) (bool, error) {
	return s.reach(func(x bot.Sender) error {
		if d, ok := x.(bot.Deliverer); ok {
			return d.Deliver(ctx, r)
		}
		return x.Send(ctx, r)
	})
}

// channelOrAdmins is the scheduled posts' deliverer with Discord on: a post to a channel that no
// platform can post to (a team's channel missing from discord.channels, with Discord alone) goes
// to the platform admins (the fallback approvers) by DM instead, saying which channel it was
// for, rather than counting as delivered to nobody; the log says once which channel to add.
// Notices need no such turn: the only ones addressed to a team's channel, of an exception, go
// to its deciders by DM too.
type channelOrAdmins struct {
	senders
	app    *App
	logged sync.Map
}

func (c *channelOrAdmins) Deliver(ctx context.Context, r bot.Reply) error {
	delivered, err := c.senders.deliver(ctx, r)
	if delivered || err != nil || !strings.HasPrefix(r.To, "#") {
		return err
	}
	var admins []string
	for _, a := range c.app.Policy.Approvals.FallbackApprovers {
		if c.app.Service != nil {
			admins = append(admins, c.app.Service.People(a)...)
		} else if strings.Contains(a, "@") {
			admins = append(admins, a)
		}
	}
	if _, seen := c.logged.LoadOrStore(policy.NameKey(r.To), true); !seen {
		c.app.Logger.Warn(fmt.Sprintf("no chat platform can post to %s: Discord has no channel id for it; add it to the policy's discord.channels (\"%s\": \"CHANNEL_ID\"); meanwhile what is posted there goes to the fallback approvers by DM", r.To, r.To),
			"channel", r.To, "fallback_approvers", strings.Join(admins, ", "))
	}
	var errs []error
	for _, a := range admins {
		to := r
		to.To = a
		to.Text = fmt.Sprintf("For %s, which Discord cannot post to (it has no id in the policy's discord.channels):\n%s", r.To, r.Text)
		if _, err := c.senders.deliver(ctx, to); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// discordService is Discord within serve.
type discordService struct {
	adapter *discordbot.Adapter // nil when Discord is off
	stop    func(context.Context) error
}

// deliverer is what the weekly showback posts through: Discord beside d (Slack's, or nil); a
// post to a channel neither can post to goes to a's platform admins (channelOrAdmins).
func (d *discordService) deliverer(a *App, prev bot.Deliverer) bot.Deliverer {
	switch {
	case d.adapter == nil:
		return prev
	case prev == nil:
		return &channelOrAdmins{senders: senders{d.adapter}, app: a}
	}
	ps, ok := prev.(bot.Sender)
	if !ok {
		ps = bot.SenderFunc(prev.Deliver)
	}
	return &channelOrAdmins{senders: senders{ps, d.adapter}, app: a}
}

// discordCheckTimeout bounds serve's question to Discord about the bot token at start.
const discordCheckTimeout = 10 * time.Second

// checkDiscordToken asks Discord, at start, whom the bot token stands for, as checkSlackToken
// asks Slack: a token Discord refuses stops serve with a sentence saying what to set (the gateway
// would otherwise retry for ever and every REST call fail); a Discord that cannot be reached just
// now holds nothing up. It needs only the settings, so serve asks before it opens the database;
// with Discord off, or half a configuration (refused by serveDiscord), there is nothing to ask.
func checkDiscordToken(ctx context.Context, s discordSettings, log *slog.Logger) error {
	if s.check() != nil || s.BotToken == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, discordCheckTimeout)
	defer cancel()
	u, err := discordbot.CheckToken(ctx, discordbot.Config{BotToken: s.BotToken, APIURL: s.APIURL, Logger: log})
	var refused *discordbot.TokenRefusedError
	switch {
	case errors.As(err, &refused):
		return err
	case err != nil:
		log.Warn("cannot ask Discord about the bot token just now; starting all the same", "err", err)
		return nil
	}
	log.Info("Discord knows the bot token", "bot_user", u.Name, "bot_user_id", u.ID)
	return nil
}

// serveDiscord starts Discord within serve (its bot token checked before, by checkDiscordToken): the interactions endpoint on mux when there is a
// public key, and the gateway (interactions without a public key, DMs to the app always);
// notices go to Discord beside Slack when it is on. stop lets Discord's work in flight finish (until ctx ends) and disconnects; it is safe to call more than
// once, and does nothing when Discord is off.
func serveDiscord(ctx context.Context, a *App, s discordSettings, mux *http.ServeMux, log *slog.Logger) (*discordService, error) {
	adapter, err := newDiscordApp(a, s, log)
	if err != nil || adapter == nil {
		if err == nil {
			log.Info("Discord is off: DISCORD_BOT_TOKEN is not set")
		}
		return &discordService{stop: func(context.Context) error { return nil }}, err
	}
	if slack, ok := a.Sender.(*slackbot.Adapter); ok {
		a.Sender = senders{slack, adapter}
	} else {
		a.Sender = senders{adapter}
	}
	gateway, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	// Deferred commands that a stopped process never answered; the loop stops before the adapter.
	recovering, stopRecovering := context.WithCancel(context.Background())
	wg.Go(func() { recoverLoop(recovering, a, discordbot.Platform, adapter, log) })
	if s.PublicKey != "" {
		adapter.Register(mux)
		// Discord delivers the DMs people send the app only over the gateway: it is opened in
		// this mode too, for them (interactions still come to the endpoint).
		log.Info("Discord is on", "mode", "HTTP interactions", "endpoint", discordbot.Path, "direct messages", "gateway")
	} else {
		log.Info("Discord is on", "mode", "gateway")
	}
	wg.Go(func() {
		if err := adapter.RunGateway(gateway); err != nil {
			log.Error("the Discord gateway stopped", "err", err)
		}
	})
	var once sync.Once
	var result error
	return &discordService{adapter: adapter, stop: func(ctx context.Context) error {
		once.Do(func() {
			stopRecovering()
			result = adapter.Close(ctx)
			cancel()
			wg.Wait()
		})
		return result
	}}, nil
}
