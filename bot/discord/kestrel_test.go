package discord_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
	"github.com/acme/quartermaster/bot/discord/gputable"
	"github.com/acme/quartermaster/commands"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/store/chatstore"
	"github.com/acme/quartermaster/internal/store/storetest"
	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/workload"
)

// Kestrel Compute's Discord users (testdata/kestrel.yaml).
const (
	kZoe    = "810000000000000001" // team-7b
	kJorg   = "810000000000000002" // team-7b, and kc-budget: decides for team-7b and vision2
	kNoemi  = "810000000000000003" // vision2, kc-budget
	kTam    = "810000000000000004" // a contractor in team-7b
	kRuedi  = "810000000000000005" // ops, its budget owner
	kStray  = "810000000000000999" // a guild member nobody linked
	k7bChan = "710000000000000001" // #team-7b-gpu
	kRoom   = "720000000000000001" // where commands are typed
	kGuild  = "730000000000000001"
)

// kestrelEnv is the whole product behind the Discord adapter on Kestrel Compute's policy: the sim
// cluster, SQLite, the lease service and the /gpu handler, served over HTTP to a fake Discord.
type kestrelEnv struct {
	*env
	svc *qm.Service
	bot *commands.Bot
}

// kestrelPeople knows Discord users through the policy's directory (discord:USER_ID accounts).
type kestrelPeople struct{ p *policy.Policy }

func (kp kestrelPeople) Person(_ context.Context, id string) (string, bool, error) {
	u, ok := kp.p.UserByAccount(discord.Account(id))
	return qm.CanonicalUser(u), ok, nil
}

func (kp kestrelPeople) UserID(_ context.Context, person string) (string, bool, error) {
	id, ok := kp.p.Account(person, discord.Platform)
	return id, ok, nil
}

func newKestrel(t *testing.T, adjust ...func(*discord.Config)) *kestrelEnv {
	t.Helper()
	return newOnPolicy(t, "testdata/kestrel.yaml", nil, adjust...)
}

// newOnPolicy is the whole product behind the Discord adapter on the policy at path, with the
// templates of cat installed when cat is not nil.
func newOnPolicy(t *testing.T, path string, cat *templates.Catalog, adjust ...func(*discord.Config)) *kestrelEnv {
	t.Helper()
	p, err := policy.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	db := storetest.Open(t, storetest.SQLite(t))
	clock := sim.NewClock(time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC)) // a Monday: 09:00 in Zurich, 13:45 in Kathmandu
	cluster := sim.New(p, clock)
	svc := &qm.Service{Policy: p, Store: db, Clock: clock, Backend: cluster, Telemetry: cluster, Directory: p, Logger: storetest.Logger(t)}
	b := &commands.Bot{Svc: svc, Logger: storetest.Logger(t)}
	if cat != nil {
		commands.AddTemplates(b, cat, workload.Settings{})
	}
	e := &env{t: t, fake: discordtest.New(t), signer: discordtest.NewSigner(), handler: &recorder{}}
	e.cfg = discord.Config{
		BotToken: discordtest.Token, PublicKey: e.signer.PublicKey(), AppID: discordtest.App, APIURL: e.fake.URL,
		Commands: gputable.Commands(b), Verbs: gputable.Verbs(), OptionsOf: gputable.Options(b), Handler: b, People: kestrelPeople{p},
		Channels: p.Discord.Channels, Refs: chatstore.Refs{DB: db, Platform: discord.Platform},
		Logger: storetest.Logger(t), AnswerWithin: 5 * time.Second,
		Complete: gputable.Complete(b), // teams and data classes, as serve suggests them
	}
	for _, f := range adjust {
		f(&e.cfg)
	}
	a, err := discord.New(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.adapter = a
	svc.Notifier = &commands.Notices{Bot: b, Sender: a}
	mux := http.NewServeMux()
	a.Register(mux)
	e.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		e.srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = a.Close(ctx)
	})
	return &kestrelEnv{env: e, svc: svc, bot: b}
}

// kin is a Kestrel user typing in the guild's channel.
func kin(user string) discordtest.Who {
	return discordtest.Who{User: user, Channel: kRoom, Guild: kGuild}
}

// run types /gpu SUB with options as user and returns the answer's text.
func (k *kestrelEnv) run(who discordtest.Who, sub string, opts ...discordtest.Opt) response {
	k.t.Helper()
	r := k.send(discordtest.Command(who, "gpu", sub, opts...))
	k.wait()
	return r
}

// slack is what the same command line says through the handler as Slack would send it.
func (k *kestrelEnv) slack(person, line string) []bot.Reply {
	return k.bot.Handle(context.Background(), bot.Request{User: person, Text: line})
}
