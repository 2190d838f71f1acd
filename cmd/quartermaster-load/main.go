// Command quartermaster-load puts `quartermaster serve` under load: it starts the service on
// loopback (the simulated cluster, the database it is given, Slack and Discord pointed at stand-ins
// it runs itself), sends signed Slack slash commands, Slack button clicks and Discord interactions
// at a fixed rate whether or not earlier ones were answered (open loop), catches the answers on
// their response URLs, and reports how fast they were acknowledged and answered and whether the
// database holds what the requests should have made. The same deliveries, sent first to a server
// that only checks their signatures, give the floor the figures are set beside.
//
//	quartermaster-load --db postgres://postgres@127.0.0.1:5432/test --rate 200 --duration 60s
package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

// options are the command line's.
type options struct {
	rate     int
	duration time.Duration
	drain    time.Duration
	db       string
	bin      string
	teams    int
	floor    bool
	jsonOut  string
	serveLog string
	pidFile  string
}

func flags(o *options) *flag.FlagSet {
	fs := flag.NewFlagSet("quartermaster-load", flag.ContinueOnError)
	fs.IntVar(&o.rate, "rate", 200, "deliveries per second, sent on schedule whether or not earlier ones were answered")
	fs.DurationVar(&o.duration, "duration", 60*time.Second, "how long to send for")
	fs.DurationVar(&o.drain, "drain", 2*time.Minute, "how long to wait after the last send for every answer")
	fs.StringVar(&o.db, "db", "", "the database serve runs on: postgres://… or sqlite:PATH (required; the run's teams are its own, so a database may hold several runs)")
	fs.StringVar(&o.bin, "quartermaster", "", "the quartermaster binary to start (default: the one beside this program, else the one on PATH)")
	fs.IntVar(&o.teams, "teams", defaultTeams, "teams in the organisation the load runs for, six users each")
	fs.BoolVar(&o.floor, "floor", true, "first send the same deliveries to a server that only checks their signatures")
	fs.StringVar(&o.jsonOut, "json", "", "also write the figures as JSON to this file")
	fs.StringVar(&o.serveLog, "serve-log", "", "write serve's log to this file (default: a temporary file, shown if serve fails)")
	fs.StringVar(&o.pidFile, "pid-file", "", "write serve's process id to this file once it answers (to profile it)")
	return fs
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "floor" {
		if err := runFloorServer(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "quartermaster-load floor:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var o options
	fs := flags(&o)
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		os.Exit(2)
	}
	res, err := run(ctx, o, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "quartermaster-load:", err)
		os.Exit(1)
	}
	if !res.ok() {
		os.Exit(1)
	}
}

// figures are one target's acknowledgements.
type figures struct {
	Sent      int     `json:"sent"`
	Failed    int     `json:"failed"` // no 200 (an error status, or no answer at all)
	P50ms     float64 `json:"p50_ms"`
	P99ms     float64 `json:"p99_ms"`
	MaxMS     float64 `json:"max_ms"`
	Rate      float64 `json:"rate"`      // deliveries per second actually sent
	BehindMS  float64 `json:"behind_ms"` // the most the sender fell behind its schedule
	SlackP99  float64 `json:"slack_p99_ms"`
	DiscordP9 float64 `json:"discord_p99_ms"`
}

// result is a run's report.
type result struct {
	Rate     int      `json:"rate"`
	Seconds  float64  `json:"seconds"`
	Floor    *figures `json:"floor,omitempty"`
	Serve    figures  `json:"serve"`
	Answered int      `json:"answered"`
	// AnsweredBeforeStop are the answers that came before the last delivery was sent.
	AnsweredBeforeStop int `json:"answered_before_stop"`
	// AllAnsweredAfter is how long after the last send the last answer came, in seconds; -1 when
	// some were still missing at the end of the drain.
	AllAnsweredAfter float64  `json:"all_answered_after_s"`
	AnswerP50ms      float64  `json:"answer_p50_ms"`
	AnswerP99ms      float64  `json:"answer_p99_ms"`
	Notices          int64    `json:"notices"`
	End              endState `json:"end_state"`
}

// ok: every delivery acknowledged with 200 and answered, and the end state right.
func (r result) ok() bool {
	return r.Serve.Failed == 0 && r.Answered == r.Serve.Sent && r.End.ok()
}

func run(ctx context.Context, o options, out io.Writer) (*result, error) {
	if o.db == "" {
		return nil, errors.New("--db is required: the database serve runs on and the end state is read from, e.g. --db postgres://postgres@127.0.0.1:5432/test")
	}
	if o.rate <= 0 || o.duration <= 0 || o.teams <= 0 {
		return nil, fmt.Errorf("--rate, --duration and --teams must be above zero, e.g. --rate 200 --duration 60s --teams 10")
	}
	bin, err := findQuartermaster(o.bin)
	if err != nil {
		return nil, err
	}
	total := int(float64(o.rate) * o.duration.Seconds())
	if total < len(mix) {
		return nil, fmt.Errorf("%d deliveries (--rate × --duration) are fewer than one turn of the mix (%d); send more, e.g. --rate 20 --duration 2s", total, len(mix))
	}
	id := make([]byte, 3)
	_, _ = rand.Read(id)
	p := newPlan(hex.EncodeToString(id), o.teams, total)
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	secret := make([]byte, 16)
	_, _ = rand.Read(secret)
	s := signer{slackSecret: []byte(hex.EncodeToString(secret)), discordKey: priv}
	res := &result{Rate: o.rate, Seconds: o.duration.Seconds(), AllAnsweredAfter: -1}
	fmt.Fprintf(out, "run %s: %d deliveries at %d/s for %s; %d teams with a quota of %d GPUs, %d requests\n",
		p.run, total, o.rate, o.duration, p.teams, p.quota, countRequests(p))

	if o.floor {
		fl, err := startFloor(ctx, s)
		if err != nil {
			return nil, err
		}
		ph := sendAll(ctx, p, s, fl.url, "http://127.0.0.1:9", o.rate, nil)
		fl.stop()
		f := summarize(p, ph)
		res.Floor = &f
		fmt.Fprintf(out, "floor (signature check and 200): p50 %.2f ms, p99 %.2f ms, max %.1f ms, %d failed, sent at %.0f/s\n", f.P50ms, f.P99ms, f.MaxMS, f.Failed, f.Rate)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}

	fake, err := startPlatforms(p)
	if err != nil {
		return nil, err
	}
	defer fake.close()
	sv, err := startServe(ctx, bin, p, s, o, fake.url)
	if err != nil {
		return nil, err
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = sv.stop()
		}
	}()
	ph := sendAll(ctx, p, s, sv.url, fake.url, o.rate, func(i, status int, body []byte) {
		if mix[i%len(mix)].kind != discordCommand || status != 200 {
			return
		}
		var ack struct {
			Type int `json:"type"`
		}
		if json.Unmarshal(body, &ack) == nil && ack.Type == 4 { // answered in the acknowledgement
			fake.answer(i)
		}
	})
	res.Serve = summarize(p, ph)
	lastSend := ph.start.Add(ph.elapsed)
	fmt.Fprintf(out, "serve: p50 %.2f ms, p99 %.2f ms, max %.1f ms, %d failed, sent at %.0f/s (behind schedule by %.0f ms at most); %d of %d answered by the last send\n",
		res.Serve.P50ms, res.Serve.P99ms, res.Serve.MaxMS, res.Serve.Failed, res.Serve.Rate, res.Serve.BehindMS, fake.count.Load(), total)

	deadline := time.Now().Add(o.drain)
	for fake.count.Load() < int64(total) && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
	}
	at := fake.answers()
	answered := make([]bool, total)
	var answerLat []time.Duration
	interval := time.Second / time.Duration(o.rate)
	for i, t := range at {
		if t.IsZero() {
			continue
		}
		answered[i] = true
		res.Answered++
		if !t.After(lastSend) {
			res.AnsweredBeforeStop++
		}
		answerLat = append(answerLat, t.Sub(ph.start.Add(time.Duration(i)*interval)))
	}
	if res.Answered == total {
		res.AllAnsweredAfter = max(0, time.Unix(0, fake.last.Load()).Sub(lastSend).Seconds())
	}
	res.AnswerP50ms, res.AnswerP99ms = percentile(answerLat, 0.50), percentile(answerLat, 0.99)
	res.Notices = fake.notices.Load()
	stopped = true
	if err := sv.stop(); err != nil {
		fmt.Fprintf(out, "serve did not stop cleanly: %v\n", err)
	}
	if res.End, err = checkEndState(context.WithoutCancel(ctx), o.db, p, answered); err != nil {
		return nil, err
	}
	if res.AllAnsweredAfter >= 0 {
		fmt.Fprintf(out, "answers: all %d, the last %.1f s after the last send; p50 %.1f ms, p99 %.1f ms from due to answer; %d notices\n",
			total, res.AllAnsweredAfter, res.AnswerP50ms, res.AnswerP99ms, res.Notices)
	} else {
		fmt.Fprintf(out, "answers: %d of %d within %s of the last send (%d before it); p50 %.1f ms, p99 %.1f ms from due to answer; %d notices\n",
			res.Answered, total, o.drain, res.AnsweredBeforeStop, res.AnswerP50ms, res.AnswerP99ms, res.Notices)
	}
	e := res.End
	fmt.Fprintf(out, "end state: %d requests, %d leases (%d granted, %d waiting for approval, %d other); %d granted expected; %d duplicates; %d teams over quota; %d requests made no lease (%d answered with a refusal)\n",
		e.Requests, e.Leases, e.Granted, e.Pending, e.Other, e.ExpectedGrants, e.Duplicates, e.OverQuota, e.WithoutLease, e.Refused)
	for _, pr := range e.Problems {
		fmt.Fprintln(out, "problem:", pr)
	}
	if o.jsonOut != "" {
		b, _ := json.MarshalIndent(res, "", "  ")
		if err := os.WriteFile(o.jsonOut, append(b, '\n'), 0o644); err != nil {
			return nil, err
		}
	}
	return res, nil
}

func countRequests(p plan) int {
	n := 0
	for _, c := range p.perTeam {
		n += c
	}
	return n
}

// findQuartermaster is the binary named, or the one beside this program, or the one on PATH.
func findQuartermaster(named string) (string, error) {
	if named != "" {
		if _, err := os.Stat(named); err != nil {
			return "", fmt.Errorf("--quartermaster %s: %w", named, err)
		}
		return named, nil
	}
	if self, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(self), "quartermaster")
		if _, err := os.Stat(beside); err == nil {
			return beside, nil
		}
	}
	if p, err := lookPath("quartermaster"); err == nil {
		return p, nil
	}
	return "", errors.New("no quartermaster binary beside this program or on PATH; build one (go build -o bin/ ./cmd/...) or name it with --quartermaster PATH")
}
