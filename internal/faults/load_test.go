//go:build faults

package faults_test

import (
	"context"
	mrand "math/rand/v2"
	"net/url"
	"sync"
	"testing"
	"time"
)

// sent is one command of a load run: when it went out and to which replicas.
type sent struct {
	c    command
	at   time.Time
	text string
}

// loadRun sends signed commands at a fixed rate (open loop) from n users: requests, releases of
// leases they were granted, and lists. With redeliver each command goes to two replicas, as a
// Slack retry that reaches another replica would.
type loadRun struct {
	sl        *slack
	targets   []string
	users     []string
	redeliver bool
	// request is the text of a request ("request 1 interactive for 1h" when empty).
	request string

	mu   sync.Mutex
	sent []sent
	errs int
}

func (l *loadRun) run(ctx context.Context, t *testing.T, perSecond int) {
	tick := time.NewTicker(time.Second / time.Duration(perSecond))
	defer tick.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		u := l.users[mrand.IntN(len(l.users))]
		text := l.requestText()
		switch r := mrand.IntN(10); {
		case r < 3:
			if id := l.grantedTo(u); id != "" {
				text = "release " + id
			}
		case r < 4:
			text = "list"
		}
		c := l.sl.command(u, text)
		l.mu.Lock()
		l.sent = append(l.sent, sent{c: c, at: time.Now(), text: text})
		l.mu.Unlock()
		first := mrand.IntN(len(l.targets))
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := send(l.targets[first], c); err != nil {
				l.mu.Lock()
				l.errs++
				l.mu.Unlock()
			}
			if l.redeliver && len(l.targets) > 1 {
				_ = send(l.targets[(first+1)%len(l.targets)], c)
			}
		}()
	}
}

// grantedTo picks a lease a user was told was theirs, from the answers so far.
func (l *loadRun) grantedTo(user string) string {
	l.mu.Lock()
	cmds := append([]sent(nil), l.sent...)
	l.mu.Unlock()
	var ids []string
	for _, s := range cmds {
		if s.text != l.requestText() || !s.from(user) {
			continue
		}
		if m, ok := l.sl.api.answer(s.c.n); ok {
			if id := leaseRef.FindString(m.Text); id != "" {
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 {
		return ""
	}
	return ids[mrand.IntN(len(ids))]
}

func (s sent) from(user string) bool {
	v, _ := url.ParseQuery(s.c.body)
	return v.Get("user_id") == slackID(user)
}

func (l *loadRun) commands() []sent {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]sent(nil), l.sent...)
}

// unanswered waits up to d for every command to be answered and returns those that were not.
func (l *loadRun) unanswered(d time.Duration) []sent {
	var missing []sent
	waitFor(d, func() bool {
		missing = missing[:0]
		for _, s := range l.commands() {
			if _, ok := l.sl.api.answer(s.c.n); !ok {
				missing = append(missing, s)
			}
		}
		return len(missing) == 0
	})
	return missing
}

func (l *loadRun) requestText() string {
	if l.request != "" {
		return l.request
	}
	return "request 1 interactive for 1h"
}
