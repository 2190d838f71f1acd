package main

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot/discord/discordtest"
	"github.com/acme/quartermaster/internal/oidc/oidctest"
	"github.com/acme/quartermaster/internal/qm"
)

// TestDiscordAdminUnlinksByMention: a platform admin in Discord unlinks someone by picking them
// in the who option (Discord writes the mention <@USER_ID>) or by the directory's discord:USER_ID;
// their Discord account's link is removed.
func TestDiscordAdminUnlinksByMention(t *testing.T) {
	t.Parallel()
	w := newSSOWorldWith(t, strings.Replace(globexPolicy, "  recheck: 1m\n", "  recheck: 24h\n", 1))
	e := &discordEnv{t: t, app: w.a, fake: discordtest.New(t), signer: discordtest.NewSigner()}
	e.settings = discordSettings{BotToken: discordtest.Token, PublicKey: e.signer.PublicKey(), AppID: discordtest.App, APIURL: e.fake.URL}
	e.start()
	const dSora, dKaito, dAdmin = "880000000000000201", "880000000000000202", "880000000000000203"
	people := map[string]*oidctest.User{
		dSora:  oidctest.NewUser("sub-sora", "sora@globex.example", "robotics-lab"),
		dKaito: oidctest.NewUser("sub-kaito", "kaito@globex.example", "robotics-lab"),
		dAdmin: oidctest.NewUser("sub-aoi", "aoi@globex.example", "GPU-Admins"),
	}
	for _, d := range []string{dSora, dKaito, dAdmin} {
		u := loginURL.FindString(e.command(d, "login").Text())
		w.idp.SignIn(people[d])
		if pg := oidctest.NewBrowser(t).Follow(u); pg.Status != http.StatusOK {
			t.Fatalf("%s's login: %d %s", people[d].Email, pg.Status, pg.Body)
		}
	}
	for who, d := range map[string]string{"<@" + dSora + ">": dSora, "discord:" + dKaito: dKaito} {
		m := e.command(dAdmin, "unlink", opt("who", who))
		if !strings.Contains(m.Text(), "Unlinked 1 chat account of discord::"+d) {
			t.Errorf("/gpu unlink who:%s answered %q", who, m.Text())
		}
		if _, err := w.a.Store.AccountLink(context.Background(), qm.Account{Platform: "discord", User: d}); !errors.Is(err, qm.ErrNotFound) {
			t.Errorf("after /gpu unlink who:%s, %s's link: %v", who, people[d].Email, err)
		}
	}
}
