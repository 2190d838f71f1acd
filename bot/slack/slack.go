// Package slack is Quartermaster's Slack app: the /gpu slash command, buttons, the request modal
// and the App Home tab, over HTTP (signed requests) or Socket Mode. It turns Slack deliveries into
// bot.Requests for one bot.Handler and renders every bot.Reply as Block Kit; it is the only
// package that imports slack-go.
//
// Every delivery is acknowledged at once (Slack waits three seconds at most); the work goes on in
// a goroutine and answers through the delivery's response_url or chat.postMessage. Messages to
// channels are paced to about one per second per channel and retried after HTTP 429, so a burst
// of notices is neither lost nor doubled. Approval messages are remembered by their Ref (in the
// database, through RefStore) and edited in place when the decision comes.
package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/bot/internal/httpbody"
	"github.com/acme/quartermaster/bot/internal/inflight"
	"github.com/acme/quartermaster/internal/policy"
)

// Defaults.
const (
	// DefaultCommand is the slash command the manifest installs.
	DefaultCommand = "/gpu"
	// DefaultWorkTimeout bounds the work one delivery starts (a command, a modal, a Home tab).
	DefaultWorkTimeout = 2 * time.Minute
	// maxBody bounds a request body; Slack's are a few kilobytes.
	maxBody = 1 << 20
)

// DefaultMaxWork is how many commands the handler runs at once; the rest wait their turn. The
// handler's work is CPU and database; more of it at once than the CPUs can run only lengthens the
// run queue in front of the acknowledgements, which must stay fast. Calls to Slack's API are not
// counted: they mostly wait on the network; nor is a command's wait on the scheduler (a submission
// or a cancellation, see bot.WaitOutside), so a slow scheduler does not hold up other commands.
var DefaultMaxWork = max(4, 2*runtime.GOMAXPROCS(0))

// Config configures the adapter.
type Config struct {
	// BotToken (xoxb-…) calls the Web API.
	BotToken string
	// SigningSecret verifies HTTP deliveries. Without it the HTTP endpoints refuse everything.
	SigningSecret string
	// AppToken (xapp-…) enables Socket Mode.
	AppToken string
	// APIURL points slack-go at another Web API base (tests, proxies); empty: Slack's.
	APIURL string
	// Handler answers /gpu commands.
	Handler bot.Handler
	// Refs remembers posted messages by Ref; nil keeps them in memory only.
	Refs bot.RefStore
	// Choices fill the request modal's menus.
	Choices Choices
	// FormClass, when set, is the class a person's new request form starts on: the one that
	// "/gpu request" naming no class would give them (the first in which their team has quota
	// and room). ok false, or nil: the first of Choices.Classes.
	FormClass func(ctx context.Context, req bot.Request) (class string, ok bool)
	// FormTeams, when set, are the teams a person's request form offers, read each time the form
	// is opened or changed: those a request may charge them to, the first (mine > 0: one of
	// their own) chosen, as a request naming none is charged to it. None: the team is free text.
	// Nil: Choices.Teams, none chosen.
	FormTeams func(ctx context.Context, req bot.Request) (teams []string, mine int)
	// FormDataClasses, when set, are the data classes a person's request form offers, read as
	// FormTeams: the policy's, the first mine their teams'. None: free text. Nil: Choices.DataClasses.
	FormDataClasses func(ctx context.Context, req bot.Request) (classes []string, mine int)
	// SignIn says whether single sign-on is on: then a Slack user whose profile shows no email
	// still reaches the handler, which knows people by their chat account (/gpu login links it).
	// Nil: off, and such a user is told why nothing can be done.
	SignIn func() bool
	// LinkedUser is the Slack user id a person's sign-in linked to them, tried before looking the
	// person up by email, so that notices reach someone whose Slack profile shows no email; nil,
	// or not found: by email only.
	LinkedUser func(ctx context.Context, person string) (id string, ok bool, err error)
	// Verbs are the first words of the /gpu commands (request, list, …): a message someone writes
	// to the app in its Messages tab that begins with one, with or without "/gpu" or "gpu" before
	// it, runs as that command; any other is answered with how to ask. Nil: every such message is.
	Verbs []string
	// Logger; nil discards.
	Logger *slog.Logger
	// ChannelInterval is the pause between posts to one channel; zero means DefaultChannelInterval.
	ChannelInterval time.Duration
	// WorkTimeout bounds the work of one delivery; zero means DefaultWorkTimeout.
	WorkTimeout time.Duration
	// HTTPClient calls the Web API; nil uses a client with a 30 s timeout.
	HTTPClient *http.Client
	// MaxWork bounds how many commands the handler runs at once; zero means DefaultMaxWork.
	MaxWork int
	// Inbox, when set, keeps every command from its acknowledgement until its work is done, so
	// that Recover can run what a stopped process left undone; nil: none is kept.
	Inbox bot.Inbox
	// InboxClaim is how long a process keeps a command it took to itself before another may
	// recover it; zero means WorkTimeout plus a minute.
	InboxClaim time.Duration
	// ReplayWithin is how old a recovered command may be and still run; zero means
	// DefaultReplayWithin.
	ReplayWithin time.Duration
	// OnAck, when set, is told how long each delivery waited for its acknowledgement: transport
	// is http or socket, kind is command, interaction or event.
	OnAck func(transport, kind string, took time.Duration)
}

// Adapter is the Slack app. It implements bot.Sender for notices and serves Slack's HTTP
// deliveries; RunSocketMode serves the same deliveries over a WebSocket.
type Adapter struct {
	// versions numbers the block ids of edits and republished views (see versioned).
	versions atomic.Int64
	// botUserID is the bot user's id, once CheckToken has asked Slack.
	botUserID atomic.Value
	// bot is the bot user's name, once CheckToken has asked Slack.
	bot   atomic.Value
	cfg   Config
	api   *slack.Client
	log   *slog.Logger
	track *inflight.Tracker
	out   *outbox
	users *users
	seen  *inflight.Seen
	refs  bot.RefStore

	base   context.Context
	cancel context.CancelFunc
	work   chan struct{} // a token per command the handler is running

	inbox *inflight.Keeper // nil without Config.Inbox

	homeMu sync.Mutex
	homes  map[string]*sync.Mutex // Slack users who opened the Home tab, each with a publish lock

	formSeq atomic.Int64          // numbers the changes to request forms, in the order they arrive
	formsMu sync.Mutex            // guards forms
	forms   map[string]*formState // request forms with a change whose estimate is still to land, by view id
}

var _ bot.Sender = (*Adapter)(nil)

// New makes the adapter; it calls nothing until a delivery or a notice arrives.
func New(cfg Config) (*Adapter, error) {
	if cfg.BotToken == "" {
		return nil, errors.New("slack: a bot token (SLACK_BOT_TOKEN) is required")
	}
	if cfg.Handler == nil {
		return nil, errors.New("slack: no handler")
	}
	if cfg.ChannelInterval <= 0 {
		cfg.ChannelInterval = DefaultChannelInterval
	}
	if cfg.WorkTimeout <= 0 {
		cfg.WorkTimeout = DefaultWorkTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Refs == nil {
		cfg.Refs = &bot.MemoryRefs{}
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.MaxWork <= 0 {
		cfg.MaxWork = DefaultMaxWork
	}
	a := &Adapter{cfg: cfg, log: cfg.Logger.With("adapter", "slack"), track: inflight.NewTracker(), seen: inflight.NewSeen(), refs: cfg.Refs,
		homes: map[string]*sync.Mutex{}, forms: map[string]*formState{}, work: make(chan struct{}, cfg.MaxWork)}
	a.api = slack.New(cfg.BotToken, a.clientOptions()...)
	a.out = newOutbox(cfg.ChannelInterval, a.track)
	a.users = newUsers(a.api, a.out)
	a.base, a.cancel = context.WithCancel(context.Background())
	if cfg.Inbox != nil {
		a.inbox = inflight.NewKeeper(a.base, cfg.Inbox, a.claim(), a.log)
	}
	return a, nil
}

func (a *Adapter) clientOptions() []slack.Option {
	opts := []slack.Option{slack.OptionHTTPClient(a.cfg.HTTPClient)}
	if a.cfg.APIURL != "" {
		u := a.cfg.APIURL
		if !strings.HasSuffix(u, "/") {
			u += "/"
		}
		opts = append(opts, slack.OptionAPIURL(u))
	}
	return opts
}

// Wait blocks until every delivery's work and every queued message is done, or ctx ends.
func (a *Adapter) Wait(ctx context.Context) error { return a.track.Wait(ctx) }

// Close lets the work in flight finish (until ctx ends), then stops whatever is left.
// Closing twice is harmless.
func (a *Adapter) Close(ctx context.Context) error {
	err := a.Wait(ctx)
	a.cancel()
	return err
}

// goWork runs f after the delivery was acknowledged, tracked and bounded in time.
func (a *Adapter) goWork(f func(ctx context.Context)) {
	a.track.Go(a.base, a.cfg.WorkTimeout, a.log, "slack work", f)
}

// handle runs the handler, at most MaxWork at once.
func (a *Adapter) handle(ctx context.Context, req bot.Request) []bot.Reply {
	return inflight.Handle(ctx, a.work, a.cfg.Handler, req)
}

// Handler serves /slack/commands, /slack/interactions and /slack/events.
func (a *Adapter) Handler() http.Handler {
	mux := http.NewServeMux()
	a.Register(mux)
	return mux
}

// Register adds the Slack endpoints to mux.
func (a *Adapter) Register(mux *http.ServeMux) {
	for _, k := range []deliveryKind{kindCommand, kindInteraction, kindEvent} {
		mux.HandleFunc("POST "+k.endpoint(), a.serveAt(k))
	}
}

// deliveryKind is what Slack delivers: a slash command, an interaction (a click, a form, a menu's
// typeahead) or an Events API event, each to the URL the app's settings give it.
type deliveryKind string

const (
	kindCommand     deliveryKind = "command"
	kindInteraction deliveryKind = "interaction"
	kindEvent       deliveryKind = "event"
)

// endpoint is the path manifest.yaml gives deliveries of kind k.
func (k deliveryKind) endpoint() string {
	switch k {
	case kindInteraction:
		return "/slack/interactions"
	case kindEvent:
		return "/slack/events"
	}
	return "/slack/commands"
}

// setting is where the app's settings name the URL of deliveries of kind k.
func (k deliveryKind) setting() string {
	switch k {
	case kindInteraction:
		return "the Request URL under Interactivity & Shortcuts (and its Options Load URL)"
	case kindEvent:
		return "the Request URL under Event Subscriptions"
	}
	return "the /gpu command's Request URL under Slash Commands"
}

// kindOf tells a delivery's kind by its body: an event is JSON, an interaction a form with a
// payload, a slash command (or Slack's certificate check) any other form.
func kindOf(body []byte) deliveryKind {
	if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '{' {
		return kindEvent
	}
	if form, err := url.ParseQuery(string(body)); err == nil && form.Has("payload") {
		return kindInteraction
	}
	return kindCommand
}

// serveAt serves the endpoint of deliveries of kind want. A delivery of another kind (an app whose
// URLs were set by hand, with interactivity pointed at the commands URL as one-endpoint apps do)
// is handled as what it is, and the log says which URL to set, rather than being misread.
func (a *Adapter) serveAt(want deliveryKind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		body, ok := a.verified(w, r)
		if !ok {
			return
		}
		kind := kindOf(body)
		if kind != want {
			a.log.Warn(fmt.Sprintf("a Slack %s arrived at %s; it is handled all the same, but set %s in the app's settings to https://HOST%s, as manifest.yaml does",
				kind, want.endpoint(), kind.setting(), kind.endpoint()), "path", r.URL.Path)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		switch kind {
		case kindInteraction:
			a.serveInteraction(w, r, body, start)
		case kindEvent:
			a.serveEvent(w, r, body, start)
		default:
			a.serveCommand(w, r, start)
		}
	}
}

// verified reads the body and checks Slack's v0 signature over "v0:timestamp:body" and that the
// timestamp is within five minutes. Anything else gets 401 and no further look.
func (a *Adapter) verified(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		httpbody.Refuse(w, err)
		return nil, false
	}
	sv, err := slack.NewSecretsVerifier(r.Header, a.cfg.SigningSecret)
	if err == nil {
		_, _ = sv.Write(body)
		err = sv.Ensure()
	}
	if err != nil {
		a.log.Warn("refused an unverified Slack request", "path", r.URL.Path, "remote", r.RemoteAddr, "err", err, "check", unverifiedHint(r.Header, err))
		http.Error(w, "invalid Slack signature", http.StatusUnauthorized)
		return nil, false
	}
	return body, true
}

// unverifiedHint is what an admin checks when every request is refused as this one was: a wrong
// signing secret, a clock far from Slack's, or a proxy that drops Slack's headers. A single
// refusal may also be a forgery or a replay, which it should be.
func unverifiedHint(h http.Header, err error) string {
	switch {
	case errors.Is(err, slack.ErrInvalidSignature):
		return "if every request is refused so, SLACK_SIGNING_SECRET is not the app's Signing Secret (Basic Information → App Credentials; not the Client Secret or the Verification Token beside it)"
	case errors.Is(err, slack.ErrExpiredTimestamp):
		off := "far"
		if ts, perr := strconv.ParseInt(h.Get("X-Slack-Request-Timestamp"), 10, 64); perr == nil {
			off = time.Since(time.Unix(ts, 0)).Abs().Round(time.Second).String()
		}
		return "its timestamp is " + off + " from this host's clock, more than the 5m Slack's requests may be; a replay, or, if every request is refused so, this host's clock is wrong (set it with NTP)"
	case errors.Is(err, slack.ErrMissingHeaders):
		return "it has no X-Slack-Signature or X-Slack-Request-Timestamp header; not from Slack, or, if every request is refused so, a proxy in front of the service drops them"
	}
	return "the signature is malformed; not from Slack"
}

// acked reports an acknowledgement's latency to OnAck.
func (a *Adapter) acked(transport, kind string, since time.Time) {
	if a.cfg.OnAck != nil {
		a.cfg.OnAck(transport, kind, time.Since(since))
	}
}

func retried(r *http.Request) bool { return r.Header.Get("X-Slack-Retry-Num") != "" }

// writeAck answers a delivery: an empty 200, or the JSON payload Slack expects (modal errors,
// the URL verification challenge).
func writeAck(w http.ResponseWriter, payload any) {
	if payload == nil {
		w.WriteHeader(http.StatusOK)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(payload)
}

func (a *Adapter) serveCommand(w http.ResponseWriter, r *http.Request, start time.Time) {
	// The body is a form (kindOf), whatever Content-Type a proxy left on it; the signature vouches
	// for the body alone.
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	cmd, err := slack.SlashCommandParse(r)
	if err != nil {
		http.Error(w, "malformed slash command", http.StatusBadRequest)
		return
	}
	writeAck(w, a.onCommand(cmd, retried(r)))
	a.acked("http", "command", start)
}

func (a *Adapter) serveInteraction(w http.ResponseWriter, r *http.Request, body []byte, start time.Time) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		http.Error(w, "malformed interaction", http.StatusBadRequest)
		return
	}
	var cb slack.InteractionCallback
	if err := json.Unmarshal([]byte(form.Get("payload")), &cb); err != nil {
		http.Error(w, "malformed interaction payload", http.StatusBadRequest)
		return
	}
	writeAck(w, a.onInteraction(cb, retried(r)))
	a.acked("http", "interaction", start)
}

func (a *Adapter) serveEvent(w http.ResponseWriter, r *http.Request, body []byte, start time.Time) {
	ev, err := slackevents.ParseEvent(json.RawMessage(body), slackevents.OptionNoVerifyToken())
	if err != nil {
		// An event type slack-go does not know: acknowledge it, so Slack does not retry it.
		a.log.Debug("unparsed Slack event", "err", err)
		w.WriteHeader(http.StatusOK)
		return
	}
	if ev.Type == slackevents.URLVerification {
		if v, ok := ev.Data.(*slackevents.EventsAPIURLVerificationEvent); ok {
			writeAck(w, map[string]string{"challenge": v.Challenge})
			return
		}
	}
	writeAck(w, a.onEvent(ev, retried(r)))
	a.acked("http", "event", start)
}

// origin is where a command came from, so its answer goes back there.
type origin struct {
	user        string // Slack user id
	team        string // Slack workspace (team) id, when known
	channel     string // Slack channel id, when known
	responseURL string // the delivery's response_url; empty: answer by DM
	// typed is the command as the person typed it, whose marks (*, _, ~) an answer shows as
	// theirs; empty for a click.
	typed string
	// click is the key of the button pressed (bot.ClickKey): the command is done once for every
	// press of that button of that message by that person. Empty for anything but a button.
	click string
}

// onCommand acknowledges a slash command and starts its work. The trigger id keys the command:
// a redelivery of the same command is dropped here, and the lease service refuses a second
// lease for the same key should one get through (another replica, a restart).
func (a *Adapter) onCommand(cmd slack.SlashCommand, retry bool) any {
	if cmd.UserID == "" {
		// Nobody typed it: Slack's check of the URL's certificate (ssl_check=1) wants a 200 only.
		a.log.Debug("acknowledged a slash command delivery without a user (ssl_check)")
		return nil
	}
	key := deliveryKey(cmd.TriggerID, cmd.ResponseURL)
	if !a.seen.First(key) {
		a.log.Info("dropped a repeated slash command", "key", key, "retry", retry)
		return nil
	}
	text := strings.TrimSpace(typed(cmd.Text))
	o := origin{user: cmd.UserID, team: cmd.TeamID, channel: cmd.ChannelID, responseURL: cmd.ResponseURL}
	if strings.TrimFunc(text, unshown) == "" {
		// Nothing but what does not show (a zero-width space, a direction mark): "/gpu" alone, as
		// the command reads it.
		received := time.Now()
		a.goWork(func(ctx context.Context) { a.openRequestModal(ctx, cmd.TriggerID, received, o) })
		return nil
	}
	a.runKept(o, "/gpu "+text, key)
	return nil
}

// unshown reports whether r shows nothing of its own: white space, a format character (a
// zero-width space or joiner, a direction mark, a byte order mark) or a control character.
func unshown(r rune) bool {
	return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) || unicode.IsControl(r)
}

// deliveryKey names a command or a click for de-duplication: its trigger id, which Slack makes
// anew for every invocation, or failing that its response_url. Empty when it has neither.
func deliveryKey(trigger, responseURL string) string {
	switch {
	case trigger != "":
		return "slack:" + trigger
	case responseURL != "":
		return "slack:url:" + responseURL
	}
	return ""
}

// onInteraction acknowledges a click or a modal and starts its work.
func (a *Adapter) onInteraction(cb slack.InteractionCallback, retry bool) any {
	switch cb.Type {
	case slack.InteractionTypeBlockSuggestion:
		return a.suggest(cb)
	case slack.InteractionTypeBlockActions:
		key := deliveryKey(cb.TriggerID, cb.ResponseURL)
		if !a.seen.First(key) {
			a.log.Info("dropped a repeated click", "key", key, "retry", retry)
			return nil
		}
		o := origin{user: cb.User.ID, team: cb.Team.ID, channel: cb.Channel.ID, responseURL: cb.ResponseURL}
		if o.channel == "" {
			o.channel = cb.Container.ChannelID
		}
		for _, act := range cb.ActionCallback.BlockActions {
			switch {
			case strings.HasPrefix(act.ActionID, formPrefix):
				seq := a.formChanged(cb.View.ID)
				a.goWork(func(ctx context.Context) { a.updateRequestModal(ctx, cb, seq) })
				return nil // one update covers every field that changed
			case act.ActionID == actionOpenRequest:
				received := time.Now()
				a.goWork(func(ctx context.Context) { a.openRequestModal(ctx, cb.TriggerID, received, o) })
			case strings.HasPrefix(act.ActionID, actionCommandPrefix):
				cmd := strings.TrimSpace(act.Value)
				if !strings.HasPrefix(cmd, "/gpu") {
					continue
				}
				if lease, ok := bareDeny(cmd); ok {
					received := time.Now()
					a.goWork(func(ctx context.Context) { a.openDenyModal(ctx, cb.TriggerID, received, lease, o) })
					continue
				}
				c := o
				c.click = bot.ClickKey("slack", clickedMessage(cb), cb.User.ID, cmd)
				a.runKept(c, cmd, key)
			}
		}
		return nil
	case slack.InteractionTypeViewSubmission:
		return a.onSubmit(cb)
	}
	return nil
}

// clickedMessage names the message whose button was pressed: its channel and ts (an ephemeral
// answer has them too), or, on the Home tab, the view as it was published (every publish has a
// new hash). Empty when the payload says neither.
func clickedMessage(cb slack.InteractionCallback) string {
	ch, ts := cb.Container.ChannelID, cb.Container.MessageTs
	if ch == "" {
		ch = cb.Channel.ID
	}
	if ts == "" {
		ts = cb.Message.Timestamp
	}
	switch {
	case ts != "":
		return ch + "/" + ts
	case cb.View.ID != "" && cb.View.Hash != "":
		return "view/" + cb.View.ID + "/" + cb.View.Hash
	}
	return ""
}

// botUsers are the app's bot users an event was delivered for (its authorizations).
func botUsers(cb *slackevents.EventsAPICallbackEvent) []string {
	var out []string
	for _, au := range cb.Authorizations {
		if au.IsBot && au.UserID != "" {
			out = append(out, au.UserID)
		}
	}
	return out
}

// onEvent acknowledges an Events API event and starts its work; an event id seen before is dropped.
func (a *Adapter) onEvent(ev slackevents.EventsAPIEvent, retry bool) any {
	cb, ok := ev.Data.(*slackevents.EventsAPICallbackEvent)
	if !ok {
		return nil
	}
	if cb.EventID != "" && !a.seen.First("slack:event:"+cb.EventID) {
		a.log.Info("dropped a repeated event", "event", cb.EventID, "retry", retry)
		return nil
	}
	switch e := ev.InnerEvent.Data.(type) {
	case *slackevents.AppHomeOpenedEvent:
		if e.Tab != "home" {
			return nil
		}
		a.goWork(func(ctx context.Context) { a.publishHome(ctx, e.User, true) })
	case *slackevents.MessageEvent:
		a.onDM(cb.TeamID, botUsers(cb), e)
	}
	return nil
}

// run answers one command as the Slack user who gave it: the first reply goes back where the
// command came from, replies addressed to others go out as notices.
func (a *Adapter) run(ctx context.Context, o origin, text, key string) {
	email, refusal := a.who(ctx, o.user)
	if refusal != "" && !a.byAccount(ctx, o.user) {
		if !bot.Open(a.cfg.Handler, text) {
			a.answer(ctx, o, "", bot.Reply{Error: true, Ephemeral: true, Text: refusal + " Example: /gpu help"})
			return
		}
		// Help and the like are for anyone: run as no one in particular.
		email = ""
	}
	a.users.rememberTeam(o.user, o.team)
	req := bot.Request{User: email, Text: text, Channel: o.channel, Key: key, Account: a.account(o.user)}
	if o.click != "" {
		req.Key, req.Click = o.click, true
	}
	replies := a.handle(ctx, req)
	if o.click == "" {
		o.typed = text
	}
	for _, r := range replies {
		if r.To == "" || policy.SameName(r.To, email) {
			a.answer(ctx, o, email, r)
			continue
		}
		_ = a.Send(ctx, r)
	}
	a.publishHome(ctx, o.user, false)
}

// byAccount reports whether Slack user id, whose profile shows no email, is handed to the handler
// all the same, to be known by the chat account single sign-on linked.
func (a *Adapter) byAccount(ctx context.Context, user string) bool {
	if a.cfg.SignIn == nil || !a.cfg.SignIn() {
		return false
	}
	_, err := a.users.email(ctx, user)
	var ne errNoEmail
	return errors.As(err, &ne)
}

// who is the identity of Slack user id, or, when there is none, the one sentence that tells the
// user why (their profile shows no email; Slack did not say who they are), for every surface.
func (a *Adapter) who(ctx context.Context, user string) (email, refusal string) {
	email, err := a.users.email(ctx, user)
	if err == nil {
		return email, ""
	}
	var ne errNoEmail
	if errors.As(err, &ne) {
		return "", err.Error()
	}
	a.log.Error("cannot resolve a Slack user", "user", user, "err", err)
	if code, ok := installProblem(err); ok {
		return "", fmt.Sprintf("Quartermaster's Slack app, as it is installed, may not ask Slack who you are (Slack says %s), so trying again will not help; tell whoever runs Quartermaster.", code)
	}
	return "", "Slack did not tell Quartermaster who you are just now; please try again in a minute."
}

// installProblem reports whether err is Slack refusing a call because of how the app is
// installed (a token it no longer takes, a scope it lacks), which no retry mends, with Slack's code.
func installProblem(err error) (string, bool) {
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) {
		return "", false
	}
	switch {
	case slices.Contains(tokenRefusals, se.Err), se.Err == "missing_scope", se.Err == "no_permission":
		return se.Err, true
	}
	return "", false
}

// answer delivers a reply to whoever asked: through the response_url (visible only to them), or
// by DM when there is none (the Home tab, a modal) or it no longer works.
func (a *Adapter) answer(ctx context.Context, o origin, email string, r bot.Reply) {
	textOnly := false // Slack refused the reply's blocks: the DM sends its text alone
	if o.responseURL != "" {
		text, blocks := RenderTyped(r, MaxMessageBlocks, o.typed)
		refused, err := a.sendMessage(ctx, o.user, text, blocks, false, func(opts ...slack.MsgOption) error {
			_, _, err := a.api.PostMessageContext(ctx, "", append([]slack.MsgOption{slack.MsgOptionResponseURL(o.responseURL, slack.ResponseTypeEphemeral)}, opts...)...)
			return err
		})
		if err == nil {
			return
		}
		textOnly = refused
		a.log.Warn("response_url failed; answering by DM", "user", o.user, "err", err)
	}
	key := email
	if key == "" {
		key = o.user
	}
	user := o.user
	a.out.Push(a.base, key, func(ctx context.Context) { a.post(ctx, key, user, r, textOnly) })
}

// Send delivers a notice: it is queued for its recipient (an email or a #channel) and posted,
// paced and retried, in order. A notice with Update set edits the messages posted earlier to the
// same recipient with the same Ref; when there are none, it is posted.
func (a *Adapter) Send(ctx context.Context, r bot.Reply) error {
	if r.To == "" {
		return errors.New("slack: a notice without a recipient")
	}
	to := r.To
	return a.out.Call(ctx, a.base, policy.NameKey(to), func(ctx context.Context) error {
		channel, err := a.channelFor(ctx, to)
		if err != nil {
			err = a.unreachable(to, err)
			a.log.Error("cannot reach a notice's recipient", "to", to, "ref", r.Ref, "err", err)
			return err
		}
		if r.Update && r.Ref != "" {
			if ok, err := a.update(ctx, to, r); ok || err != nil || r.EditOnly {
				return err
			}
		}
		return a.post(ctx, to, channel, r, false)
	})
}

// channelFor is where a message to "to" goes: a person's DM (by user id), or the channel as named.
func (a *Adapter) channelFor(ctx context.Context, to string) (string, error) {
	if strings.Contains(to, "@") {
		if a.cfg.LinkedUser != nil {
			id, ok, err := a.cfg.LinkedUser(ctx, to)
			if err != nil {
				a.log.Warn("cannot read a person's linked Slack account; looking them up by email", "to", to, "err", err)
			}
			if ok {
				return id, nil
			}
		}
		return a.users.id(ctx, to)
	}
	return to, nil
}

// post sends r to channel and, when it has a Ref, remembers where it landed. With textOnly (Slack
// refused its blocks already) it sends r's text alone.
func (a *Adapter) post(ctx context.Context, to, channel string, r bot.Reply, textOnly bool) error {
	text, blocks := Render(r, MaxMessageBlocks)
	var ch, ts string
	_, err := a.sendMessage(ctx, to, text, blocks, textOnly, func(opts ...slack.MsgOption) error {
		var err error
		ch, ts, err = a.api.PostMessageContext(ctx, channel, opts...)
		return err
	})
	if err != nil {
		err = a.unreachable(to, err)
		a.log.Error("chat.postMessage failed", "to", to, "ref", r.Ref, "err", err)
		return err
	}
	if r.Ref != "" {
		if err := a.refs.SaveMessageRef(ctx, bot.MessageRef{Ref: r.Ref, Recipient: policy.NameKey(to), Channel: ch, MessageID: ts}); err != nil {
			a.log.Error("cannot remember a posted message", "ref", r.Ref, "channel", ch, "ts", ts, "err", err)
		}
	}
	a.touchedHome(ctx, to)
	return nil
}

// update edits every copy of r.Ref posted to "to"; false when there is none. Editing a message
// to what it already says changes nothing, so an edit delivered twice is harmless.
func (a *Adapter) update(ctx context.Context, to string, r bot.Reply) (bool, error) {
	refs, err := a.refs.MessageRefs(ctx, r.Ref)
	if err != nil {
		a.log.Error("cannot read posted messages", "ref", r.Ref, "err", err)
		return false, err
	}
	text, blocks := Render(r, MaxMessageBlocks)
	blocks = versioned(blocks, a.version())
	n, textOnly := 0, false
	for _, m := range refs {
		if !policy.SameName(m.Recipient, to) {
			continue
		}
		n++
		refused, err := a.sendMessage(ctx, to, text, blocks, textOnly, func(opts ...slack.MsgOption) error {
			_, _, _, err := a.api.UpdateMessageContext(ctx, m.Channel, m.MessageID, opts...)
			return err
		})
		textOnly = textOnly || refused
		if err != nil {
			a.log.Error("chat.update failed", "ref", r.Ref, "channel", m.Channel, "ts", m.MessageID, "err", err)
			return true, err
		}
	}
	if n > 0 {
		a.touchedHome(ctx, to)
	}
	return n > 0, nil
}

// bareDeny reports whether cmd is "/gpu deny LEASE" with no reason: the button that asks for one.
func bareDeny(cmd string) (string, bool) {
	f := strings.Fields(cmd)
	if len(f) == 3 && strings.EqualFold(f[0], "/gpu") && strings.EqualFold(f[1], "deny") {
		return f[2], true
	}
	return "", false
}

// String describes the adapter's configuration without its secrets.
func (a *Adapter) String() string {
	mode := "HTTP"
	if a.cfg.AppToken != "" {
		mode = "HTTP and Socket Mode"
	}
	return fmt.Sprintf("Slack (%s)", mode)
}

// version is a new suffix for the block ids of an edited message or a republished view.
func (a *Adapter) version() string {
	return strconv.FormatInt(time.Now().UnixNano(), 36) + strconv.FormatInt(a.versions.Add(1), 36)
}
