package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	discordbot "github.com/acme/quartermaster/bot/discord"
	"github.com/acme/quartermaster/bot/discord/discordtest"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// discordBenchCommands are what the load types, in turn: mostly reads, and one request in five.
var discordBenchCommands = []struct {
	sub  string
	opts []discordtest.Opt
}{
	{"list", nil},
	{"catalog", nil},
	{"request", []discordtest.Opt{{Name: "gpus", Value: 1}, {Name: "class", Value: "interactive"}, {Name: "duration", Value: "1h"}}},
	{"estimate", []discordtest.Opt{{Name: "gpus", Value: 2}, {Name: "class", Value: "train"}, {Name: "duration", Value: "8h"}}},
	{"quota", nil},
}

// BenchmarkDiscordAck measures how fast `quartermaster serve` acknowledges signed Discord
// interactions on its HTTP endpoint: QM_BENCH_DISCORD_RATE per second (default 200) for
// QM_BENCH_DISCORD_SECONDS (default 60), open loop, against PostgreSQL, everything on loopback (a
// fake Discord takes the deferred answers and the notices). An interaction's latency runs from
// when it was due to be sent to when its acknowledgement arrived, so a slow sender counts against
// the figures too. Run it once:
// go test -run '^$' -bench '^BenchmarkDiscordAck$' -benchtime 1x ./cmd/quartermaster/
func BenchmarkDiscordAck(b *testing.B) {
	rate := envInt("QM_BENCH_DISCORD_RATE", 200)
	seconds := envInt("QM_BENCH_DISCORD_SECONDS", 60)
	total := rate * seconds
	db := storetest.Postgres(b)
	fake := discordtest.New(b)
	signer := discordtest.NewSigner()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	o := serveOptions{listener: ln, grace: time.Second,
		discord: discordSettings{BotToken: discordtest.Token, PublicKey: signer.PublicKey(), AppID: discordtest.App, APIURL: fake.URL}}
	o.app.flags.db = db
	readyc := make(chan string, 1)
	o.onReady = func(addr string) { readyc <- addr }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, o) }()
	var endpoint string
	select {
	case addr := <-readyc:
		endpoint = "http://" + addr + discordbot.Path
	case err := <-done:
		b.Fatalf("serve: %v", err)
	}

	users := []string{dAlice, dBob, dDana}
	bodies := make([][]byte, total)
	for i := range total {
		c := discordBenchCommands[i%len(discordBenchCommands)]
		bodies[i] = discordtest.Command(discordtest.Who{User: users[i%len(users)], Channel: dChannel, Guild: dGuild}, "gpu", c.sub, c.opts...)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConns: 512, MaxIdleConnsPerHost: 512, IdleConnTimeout: time.Minute}}
	lat := make([]time.Duration, total)
	var failed, deferred atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	interval := time.Second / time.Duration(rate)
	for i := range total {
		due := start.Add(time.Duration(i) * interval)
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		wg.Go(func() {
			resp, err := client.Do(signer.Request(endpoint, bodies[i]))
			lat[i] = time.Since(due)
			if err != nil {
				failed.Add(1)
				return
			}
			var r struct {
				Type int `json:"type"`
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &r) != nil {
				failed.Add(1)
				return
			}
			if r.Type == 5 {
				deferred.Add(1)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	cancel()
	if err := <-done; err != nil {
		b.Errorf("serve: %v", err)
	}
	followUps := len(fake.Answers())

	var windows []string
	per := 10 * rate
	for w := 0; w < total; w += per {
		part := slices.Clone(lat[w:min(w+per, total)])
		slices.Sort(part)
		windows = append(windows, fmt.Sprintf("%.0f", float64(part[min(len(part)-1, len(part)*99/100)].Microseconds())/1000))
	}
	b.Logf("p99 ms by 10 s window: %s", strings.Join(windows, " "))
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
	b.ReportMetric(float64(total)/elapsed.Seconds(), "interactions/s")
	b.ReportMetric(float64(failed.Load()), "failed")
	b.ReportMetric(float64(deferred.Load()), "deferred")
	b.Logf("%d signed interactions at %d/s for %ds in %s: p50 %.2f ms, p99 %.2f ms, max %.2f ms; %d not acknowledged with 200; %d answered in the acknowledgement, %d deferred (%d deferred answers delivered before the stop)",
		total, rate, seconds, elapsed.Round(time.Millisecond), pct(0.5), pct(0.99), float64(lat[len(lat)-1].Microseconds())/1000, failed.Load(),
		int64(total)-failed.Load()-deferred.Load(), deferred.Load(), followUps)
}
