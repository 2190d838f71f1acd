// Package discord is Quartermaster's Discord app: the /gpu application command, with one
// subcommand per command of the command table and typed options, buttons, DMs and posts to teams'
// channels, over HTTP interactions (signed with Ed25519) or the gateway. It turns interactions
// into bot.Requests for one bot.Handler and renders every bot.Reply as embeds and buttons; it is
// the only package that imports discordgo.
//
// Discord waits three seconds for an interaction's answer. A reply ready within AnswerWithin
// goes in the answer itself; otherwise the answer says "thinking" (deferred) and the reply
// replaces it when the work is done. A button carries its typed twin command, signed, so a click
// runs exactly the command the button was made with, as the person who clicked; the domain
// decides who may do what. Notices go to people by DM and to teams' channels, in order per
// recipient, retried after HTTP 429; approval messages are remembered by their Ref (RefStore) and
// edited in place when the decision comes.
package discord

import (
	"context"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/acme/quartermaster/internal/nfc"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/bot/internal/inflight"
	"github.com/acme/quartermaster/internal/policy"
)

// Defaults.
const (
	// DefaultName is the application command's name: /gpu.
	DefaultName = "gpu"
	// DefaultAnswerWithin is how long an interaction's work may take to be answered in the
	// acknowledgement itself; slower work is deferred and answered by editing the deferral.
	DefaultAnswerWithin = 50 * time.Millisecond
	// DefaultWorkTimeout bounds the work one interaction starts. Discord keeps an interaction's
	// token valid for 15 minutes, so a deferred answer can still be given.
	DefaultWorkTimeout = 2 * time.Minute
	// DefaultMaxSkew is how far a signed timestamp may be from now. Discord signs each delivery
	// as it sends it, so an older one is a replay.
	DefaultMaxSkew = 5 * time.Minute
	// maxBody bounds a request body; Discord's interactions are a few kilobytes.
	maxBody = 1 << 20
)

// DefaultMaxWork is how many commands the handler runs at once; the rest wait their turn, so the
// acknowledgements, which must be fast, do not queue behind more work than the CPUs can run.
var DefaultMaxWork = max(4, 2*runtime.GOMAXPROCS(0))

// Config configures the adapter.
type Config struct {
	// BotToken calls Discord's REST API (DMs, posts, edits) and opens the gateway.
	BotToken string
	// PublicKey is the application's Ed25519 public key, in hex, which verifies HTTP
	// interactions. Without it the HTTP endpoint refuses everything.
	PublicKey string
	// AppID is the application's id; registration needs it.
	AppID string
	// APIURL sends REST calls to another server than https://discord.com (tests, Discord-compatible
	// servers); empty: Discord's.
	APIURL string
	// Name is the application command's name; empty means DefaultName.
	Name string
	// Commands are the /gpu subcommands, from the command table.
	Commands []Command
	// Handler answers /gpu commands.
	Handler bot.Handler
	// People says who a Discord user is and how to reach a person. Required.
	People People
	// Channels maps the channels the policy names ("#vision-gpu") to Discord channel ids, upper
	// and lower case and the Unicode form of an accented letter aside (policy.ChannelKey); a notice to a channel without one is not posted on Discord.
	Channels map[string]string
	// OptionsOf reads a typed command line ("/gpu request 2 train for 8h") as the subcommand and
	// the option values that run it, so that the example beside a refusal is shown as a Discord
	// user types it (/gpu request gpus:2 class:train duration:8h); false, or nil, leaves the line
	// as it is.
	OptionsOf func(line string) (sub string, opts []OptionValue, ok bool)
	// Verbs are the names of every /gpu command of the command table, offered here or not
	// (gputable.Verbs): a DM that begins with one that is not among Commands (reports, templates
	// or single sign-on not set up) runs as that command, so the Handler says it is not offered
	// here, and why, as it tells Slack. Nil: such a DM gets the hint a DM that names no command gets.
	Verbs []string
	// DMExample, when set, is a command line that works for req's person as they would send it
	// (/gpu request 1 loft for 2h: a class their team can use), for the one sentence that
	// answers a DM that is no command; false, or nil, offers the request subcommand's Example.
	DMExample func(ctx context.Context, req bot.Request) (line string, ok bool)
	// Complete suggests values for options with an Autocomplete kind; nil suggests nothing.
	Complete Completer
	// Refs remembers posted messages by Ref; nil keeps them in memory only.
	Refs bot.RefStore
	// Logger; nil discards.
	Logger *slog.Logger
	// HTTPClient calls the REST API; nil uses a client with a 30 s timeout.
	HTTPClient *http.Client
	// AnswerWithin: see DefaultAnswerWithin; zero means the default.
	AnswerWithin time.Duration
	// WorkTimeout bounds the work of one interaction; zero means DefaultWorkTimeout.
	WorkTimeout time.Duration
	// MaxWork bounds how many commands the handler runs at once; zero means DefaultMaxWork.
	MaxWork int
	// ButtonKey signs the commands buttons carry; empty derives one from the bot token, so every
	// replica agrees and buttons keep working across restarts (until the token changes).
	ButtonKey []byte
	// MaxSkew: see DefaultMaxSkew; zero means the default.
	MaxSkew time.Duration
	// Now is the clock signed timestamps are checked against; nil means time.Now.
	Now func() time.Time
	// Inbox, when set, keeps every deferred command until its answer is given, so that one
	// deferred by a process that then stops is run and answered by another (Recover).
	Inbox bot.Inbox
	// InboxClaim is how long a process keeps a command it took to itself before another may
	// take it; zero means WorkTimeout plus a minute.
	InboxClaim time.Duration
	// ReplayWithin is how old a recovered command may be and still run; zero means
	// DefaultReplayWithin.
	ReplayWithin time.Duration
}

// Adapter is the Discord app. It implements bot.Sender for notices and http.Handler for the
// interactions endpoint; RunGateway answers the same interactions over the gateway.
type Adapter struct {
	cfg  Config
	s    *discordgo.Session
	log  *slog.Logger
	pub  ed25519.PublicKey
	key  []byte
	cmds map[string]*Command
	// channels is Config.Channels by channel as compared (policy.ChannelKey)
	channels map[string]string
	// channelNames are Config.Channels' names by their ids ("" for an id two names share)
	channelNames map[string]string
	refs         bot.RefStore
	track        *inflight.Tracker
	out          *inflight.Outbox
	seen         *inflight.Seen
	inbox        *inflight.Keeper // nil without Config.Inbox

	base   context.Context
	cancel context.CancelFunc
	work   chan struct{} // a token per command the handler is running

	dmMu sync.Mutex
	dms  map[string]string // Discord user id -> DM channel id
	// self is the app's user (*discordgo.User), as the gateway's READY names it.
	self atomic.Value
	// noDMs holds the recipients whose DMs Discord refused (they take none from the app), so
	// that the log says it once for each.
	noDMs sync.Map
}

var _ bot.Sender = (*Adapter)(nil)

// New makes the adapter; it calls nothing until an interaction or a notice arrives.
func New(cfg Config) (*Adapter, error) {
	if cfg.BotToken == "" {
		return nil, errors.New("discord: a bot token (DISCORD_BOT_TOKEN) is required")
	}
	if cfg.Handler == nil {
		return nil, errors.New("discord: no handler")
	}
	if cfg.People == nil {
		return nil, errors.New("discord: nothing says who Discord users are (People)")
	}
	var pub ed25519.PublicKey
	if cfg.PublicKey != "" {
		b, err := hex.DecodeString(strings.TrimSpace(cfg.PublicKey))
		if err != nil || len(b) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("discord: the public key (DISCORD_PUBLIC_KEY) must be %d bytes in hex, as the Developer Portal shows it", ed25519.PublicKeySize)
		}
		pub = b
	}
	if cfg.Name == "" {
		cfg.Name = DefaultName
	}
	if cfg.AnswerWithin <= 0 {
		cfg.AnswerWithin = DefaultAnswerWithin
	}
	if cfg.WorkTimeout <= 0 {
		cfg.WorkTimeout = DefaultWorkTimeout
	}
	if cfg.MaxWork <= 0 {
		cfg.MaxWork = DefaultMaxWork
	}
	if cfg.MaxSkew <= 0 {
		cfg.MaxSkew = DefaultMaxSkew
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Refs == nil {
		cfg.Refs = &bot.MemoryRefs{}
	}
	if cfg.ReplayWithin <= 0 {
		cfg.ReplayWithin = DefaultReplayWithin
	}
	s, err := newSession(cfg.BotToken, cfg.APIURL, cfg.HTTPClient)
	if err != nil {
		return nil, err
	}
	key := cfg.ButtonKey
	if len(key) == 0 {
		m := hmac.New(sha256.New, []byte(cfg.BotToken))
		m.Write([]byte("quartermaster discord buttons"))
		key = m.Sum(nil)
	}
	a := &Adapter{cfg: cfg, s: s, log: cfg.Logger.With("adapter", "discord"), pub: pub, key: key, cmds: map[string]*Command{},
		refs: cfg.Refs, track: inflight.NewTracker(), seen: inflight.NewSeen(), work: make(chan struct{}, cfg.MaxWork), dms: map[string]string{}}
	a.channels = map[string]string{}
	a.channelNames = map[string]string{}
	for name, id := range cfg.Channels {
		a.channels[channelKey(name)] = id
		id = strings.TrimSpace(id)
		if prev, twice := a.channelNames[id]; twice && channelKey(prev) != channelKey(name) {
			name = ""
		}
		a.channelNames[id] = name
	}
	for i := range cfg.Commands {
		c := &cfg.Commands[i]
		a.cmds[c.Name] = c
	}
	a.out = inflight.NewOutbox(0, a.track)
	a.base, a.cancel = context.WithCancel(context.Background())
	if cfg.Inbox != nil {
		a.inbox = inflight.NewKeeper(a.base, cfg.Inbox, a.claim(), a.log)
	}
	return a, nil
}

// Wait blocks until every interaction's work and every queued message is done, or ctx ends.
func (a *Adapter) Wait(ctx context.Context) error { return a.track.Wait(ctx) }

// Close lets the work in flight finish (until ctx ends), then stops whatever is left. Closing
// twice is harmless.
func (a *Adapter) Close(ctx context.Context) error {
	err := a.Wait(ctx)
	a.cancel()
	return err
}

// String describes the adapter's configuration without its secrets.
func (a *Adapter) String() string {
	mode := "gateway"
	if a.pub != nil {
		mode = "HTTP interactions"
	}
	return fmt.Sprintf("Discord (%s, /%s with %d subcommands)", mode, a.cfg.Name, len(a.cfg.Commands))
}

// goWork runs f after the interaction was acknowledged, tracked and bounded in time.
func (a *Adapter) goWork(f func(ctx context.Context)) {
	a.track.Go(a.base, a.cfg.WorkTimeout, a.log, "discord work", f)
}

// handle runs the handler, at most MaxWork at once.
func (a *Adapter) handle(ctx context.Context, req bot.Request) []bot.Reply {
	return inflight.Handle(ctx, a.work, a.cfg.Handler, req)
}

// channelKey is how the adapter compares channels: as policy.ChannelKey, the name first in NFC,
// since a channel may come from the policy or a notice in either Unicode form (ü, or u and a
// combining diaeresis).
func channelKey(ch string) string { return policy.ChannelKey(nfc.Name(ch)) }
