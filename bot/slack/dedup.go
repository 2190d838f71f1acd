package slack

import (
	"sync"
	"time"
)

// Redelivery defaults.
const (
	// seenTTL is how long a delivery's key is remembered: Slack retries within minutes, and a
	// signed request older than five minutes is refused anyway.
	seenTTL = 10 * time.Minute
	// seenMax bounds the memory the keys take; past it the oldest are forgotten first.
	seenMax = 100000
)

// seen remembers the keys of recent deliveries (trigger ids, event ids) so a retried or replayed
// delivery is dropped before it does any work. It is only the first line: a delivery that reaches
// another replica, or arrives after a restart, is caught by the lease service's request key.
type seen struct {
	mu    sync.Mutex
	now   func() time.Time
	at    map[string]time.Time
	order []string
}

func newSeen() *seen { return &seen{now: time.Now, at: map[string]time.Time{}} }

// first records key and reports whether it is new. An empty key is always new.
func (s *seen) first(key string) bool {
	if key == "" {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if t, ok := s.at[key]; ok && now.Sub(t) < seenTTL {
		return false
	}
	// Forget what has expired (or overflowed), oldest first.
	for len(s.order) > 0 {
		k := s.order[0]
		if t, ok := s.at[k]; ok && now.Sub(t) < seenTTL && len(s.order) < seenMax {
			break
		}
		delete(s.at, k)
		s.order = s.order[1:]
	}
	s.at[key] = now
	s.order = append(s.order, key)
	return true
}
