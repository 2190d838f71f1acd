package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// returns runs f and fails the test if it has not returned after limit (a hang, not a speed).
func returns(t *testing.T, limit time.Duration, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("still waiting after %s: a database that does not answer holds the caller", limit)
		return nil
	}
}

// Connecting to a server that accepts and never answers fails by default (no connect_timeout in
// the URL), with the URL's password hidden, instead of hanging.
func TestConnectToAMuteServerFails(t *testing.T) {
	addr := storetest.Mute(t)
	err := returns(t, time.Minute, func() error {
		_, err := store.Open(context.Background(), "postgres://qm:s3cret@"+addr+"/qm?sslmode=disable", nil)
		return err
	})
	if err == nil {
		t.Fatal("connected to a server that never answers")
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("the error shows the password: %v", err)
	}
}

// A database that stops answering in the middle of the run fails the statements that wait on
// it, so the service can say so, rather than holding them for good.
func TestADatabaseThatStopsAnsweringFailsStatements(t *testing.T) {
	storetest.RequirePostgres(t)
	p := storetest.NewProxy(t)
	url := p.Via(storetest.Postgres(t)) + "&statement_timeout=500"
	db, err := store.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p.Freeze(true)
	err = returns(t, time.Minute, func() error {
		return db.View(context.Background(), func(tx qm.Tx) error {
			_, err := tx.ListLeases(context.Background(), qm.LeaseFilter{})
			return err
		})
	})
	if qm.ErrorCode(err) != qm.EUNAVAILABLE {
		t.Fatalf("a statement to a database that stopped answering: %v; want the service to say it cannot reach its database", err)
	}
}

// While the database hangs, a transaction fails within the begin wait with the sentence the
// service shows, not after the statement timeout meant for slow statements.
func TestWhileTheDatabaseHangsATransactionFailsWithinTheBeginWait(t *testing.T) {
	storetest.RequirePostgres(t)
	p := storetest.NewProxy(t)
	url := p.Via(storetest.Postgres(t))
	db, err := store.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetBeginWait(300 * time.Millisecond)
	p.Freeze(true)
	start := time.Now()
	err = returns(t, time.Minute, func() error {
		return db.Update(context.Background(), []string{"k"}, func(tx qm.Tx) error {
			_, err := tx.ListLeases(context.Background(), qm.LeaseFilter{})
			return err
		})
	})
	took := time.Since(start)
	if err != qm.ErrUnavailable {
		t.Fatalf("a transaction on a hung database: %v; want %q", err, qm.ErrUnavailable.Message)
	}
	if took >= store.DefaultStatementTimeout {
		t.Errorf("the transaction failed after %v, at the statement timeout, not within the begin wait", took)
	}
	p.Freeze(false)
	if err := db.View(context.Background(), func(tx qm.Tx) error {
		_, err := tx.ListLeases(context.Background(), qm.LeaseFilter{})
		return err
	}); err != nil {
		t.Errorf("the database answers again, but a transaction fails: %v", err)
	}
}
