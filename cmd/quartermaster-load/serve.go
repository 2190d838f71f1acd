package main

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

var lookPath = exec.LookPath

// serveProcess is a running `quartermaster serve`.
type serveProcess struct {
	cmd    *exec.Cmd
	url    string
	log    string
	exited chan error
}

// startServe starts serve on a free loopback port with the plan's policy, on the database named,
// with Slack and Discord pointed at the stand-ins at api, and waits until /readyz says ready.
func startServe(ctx context.Context, bin string, p plan, s signer, o options, api string) (*serveProcess, error) {
	dir, err := os.MkdirTemp("", "quartermaster-load-")
	if err != nil {
		return nil, err
	}
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte(p.policy()), 0o644); err != nil {
		return nil, err
	}
	logPath := o.serveLog
	if logPath == "" {
		logPath = filepath.Join(dir, "serve.log")
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	_ = ln.Close()

	cmd := exec.Command(bin, "serve", "--policy", policy, "--db", o.db, "--http", addr)
	cmd.Dir = dir
	// Only what this run sets: no Socket Mode, single sign-on or other database from the caller's
	// environment.
	for _, kv := range os.Environ() {
		name := kv[:max(0, strings.IndexByte(kv, '='))]
		if strings.HasPrefix(name, "SLACK_") || strings.HasPrefix(name, "DISCORD_") || strings.HasPrefix(name, "QM_") {
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env,
		"QM_DATA_DIR="+dir,
		"SLACK_BOT_TOKEN=xoxb-load", "SLACK_SIGNING_SECRET="+string(s.slackSecret), "SLACK_API_URL="+api+"/api/",
		"DISCORD_BOT_TOKEN=load", "DISCORD_APP_ID="+discordAppID, "DISCORD_API_URL="+api,
		"DISCORD_PUBLIC_KEY="+hex.EncodeToString(s.discordKey.Public().(ed25519.PublicKey)))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s serve: %w", bin, err)
	}
	sv := &serveProcess{cmd: cmd, url: "http://" + addr, log: logPath, exited: make(chan error, 1)}
	go func() { sv.exited <- cmd.Wait() }()

	ready := time.Now().Add(2 * time.Minute)
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		resp, err := client.Get(sv.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-sv.exited:
			return nil, fmt.Errorf("serve stopped before it was ready (%v); its log:\n%s", err, tail(logPath))
		case <-ctx.Done():
			_ = sv.stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(ready) {
			_ = sv.stop()
			return nil, fmt.Errorf("serve was not ready within 2 minutes; its log:\n%s", tail(logPath))
		}
	}
	if o.pidFile != "" {
		if err := os.WriteFile(o.pidFile, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
			_ = sv.stop()
			return nil, err
		}
	}
	return sv, nil
}

// stop sends SIGTERM and waits for serve to end (killing it after 40 s).
func (sv *serveProcess) stop() error {
	_ = sv.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-sv.exited:
		return err
	case <-time.After(40 * time.Second):
		_ = sv.cmd.Process.Kill()
		<-sv.exited
		return fmt.Errorf("serve did not stop within 40 s of SIGTERM and was killed")
	}
}

// tail is the end of a log file.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// summarize turns a phase's acknowledgements into figures.
func summarize(p plan, ph *phase) figures {
	f := figures{Sent: len(ph.ack), Failed: ph.failed, BehindMS: ms(ph.behind)}
	if ph.elapsed > 0 {
		f.Rate = float64(len(ph.ack)-1) / ph.elapsed.Seconds()
	}
	var slack, discord []time.Duration
	for i, d := range ph.ack {
		if mix[i%len(mix)].kind == discordCommand {
			discord = append(discord, d)
		} else {
			slack = append(slack, d)
		}
	}
	f.P50ms, f.P99ms = percentile(ph.ack, 0.50), percentile(ph.ack, 0.99)
	f.MaxMS = percentile(ph.ack, 1)
	f.SlackP99, f.DiscordP9 = percentile(slack, 0.99), percentile(discord, 0.99)
	return f
}

// percentile of the durations, in milliseconds (q = 1: the largest).
func percentile(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return ms(s[min(len(s)-1, int(q*float64(len(s))))])
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
