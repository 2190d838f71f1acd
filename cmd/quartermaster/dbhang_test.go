package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/store/storetest"
)

// serve against a PostgreSQL that accepts connections and never answers gives up with a sentence
// instead of hanging, and a SIGTERM (ctx) meanwhile ends it.
func TestServeGivesUpOnADatabaseThatNeverAnswers(t *testing.T) {
	t.Parallel()
	mute := storetest.Mute(t)
	for _, cancelEarly := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		if cancelEarly {
			time.AfterFunc(200*time.Millisecond, cancel) // SIGTERM while it connects
		}
		var out, errb bytes.Buffer
		done := make(chan int, 1)
		go func() {
			done <- run(ctx, []string{"serve", "--http", "127.0.0.1:0", "--policy", "../../docs/quartermaster.example.yaml",
				"--db", "postgres://qm@" + mute + "/qm?sslmode=disable"}, strings.NewReader(""), &out, &errb)
		}()
		select {
		case code := <-done:
			if code == 0 || !strings.Contains(errb.String(), "postgres") {
				t.Errorf("serve on a database that never answers: exit %d, %q", code, errb.String())
			}
		case <-time.After(time.Minute):
			t.Fatal("serve still hangs on a database that never answers")
		}
		cancel()
	}
}
