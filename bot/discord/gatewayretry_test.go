package discord_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
)

// Discord out of reach when the service starts (the network not up yet at boot, an outage) does
// not leave the gateway closed for good: the adapter keeps trying, and once Discord answers,
// interactions delivered over the gateway are answered.
func TestTheGatewayOpensOnceDiscordAnswersAfterAStartWithoutIt(t *testing.T) {
	var down atomic.Bool
	var refused atomic.Int64
	down.Store(true)
	e := newEnv(t, func(c *discord.Config) {
		c.PublicKey = ""
		target, err := url.Parse(c.APIURL)
		if err != nil {
			t.Fatal(err)
		}
		proxy := httputil.NewSingleHostReverseProxy(target)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if down.Load() {
				refused.Add(1)
				http.Error(w, "upstream unreachable", http.StatusBadGateway)
				return
			}
			proxy.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		c.APIURL = srv.URL
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.adapter.RunGateway(ctx) }()
	if !e.fake.WaitFor(func() bool { return refused.Load() > 0 }) {
		t.Fatal("the gateway was never asked for")
	}
	down.Store(false)
	body := discordtest.Command(in(alice), "gpu", "request", discordtest.Opt{Name: "gpus", Value: 2})
	delivered := make(chan int, 1)
	go func() { delivered <- e.fake.Deliver(body) }() // waits for the gateway to be open
	select {
	case n := <-delivered:
		if n != 1 {
			t.Fatalf("delivered to %d clients", n)
		}
	case err := <-done:
		t.Fatalf("the adapter gave the gateway up while Discord was out of reach: %v", err)
	}
	if !e.fake.WaitFor(func() bool { return len(e.fake.Answers()) == 1 }) {
		t.Fatal("no answer over REST")
	}
	if a := e.fake.Answers()[0]; !strings.Contains(a.Text(), "You asked: /gpu request 2") {
		t.Errorf("answer = %+v", a)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("RunGateway: %v", err)
	}
}
