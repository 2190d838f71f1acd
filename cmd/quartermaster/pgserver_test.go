package main

import (
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/store/storetest"
)

// startPrivatePostgres is a PostgreSQL server of the test's own (storetest.StartServer).
func startPrivatePostgres(t *testing.T) *storetest.Server { return storetest.StartServer(t, 2) }

// waitFor polls cond every 50 ms until it holds or d passes, and says how long it took.
func waitFor(d time.Duration, cond func() bool) (time.Duration, bool) {
	start := time.Now()
	for time.Since(start) < d {
		if cond() {
			return time.Since(start), true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Since(start), cond()
}
