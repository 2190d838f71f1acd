package store_test

import (
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// mute is a TCP server that accepts connections and never answers.
func mute(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(io.Discard, c) }()
		}
	}()
	return ln.Addr().String()
}

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
	addr := mute(t)
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

// freezer forwards TCP to a server until frozen; then it stops forwarding both ways (a hung
// database, or a dead link) without closing anything.
type freezer struct {
	mu     sync.Mutex
	frozen bool
}

func (f *freezer) copy(dst, src net.Conn) {
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if err != nil {
			return
		}
		for {
			f.mu.Lock()
			fr := f.frozen
			f.mu.Unlock()
			if !fr {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			return
		}
	}
}

// freezingProxy forwards loopback connections to the test PostgreSQL until its freezer is set; it
// returns the server's host:port as the test DSN names it, the proxy's, and the freezer.
func freezingProxy(t *testing.T) (target, proxy string, f *freezer) {
	target = strings.TrimPrefix(storetest.PostgresDSN(), "postgres://")
	target = target[strings.Index(target, "@")+1:]
	target = target[:strings.IndexAny(target, "/?")]
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	f = &freezer{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			go f.copy(s, c)
			go f.copy(c, s)
		}
	}()
	return target, ln.Addr().String(), f
}

// A database that stops answering in the middle of the run fails the statements that wait on
// it, so the service can say so, rather than holding them for good.
func TestADatabaseThatStopsAnsweringFailsStatements(t *testing.T) {
	storetest.RequirePostgres(t)
	target, proxy, f := freezingProxy(t)
	url := storetest.Postgres(t)
	url = strings.Replace(url, target, proxy, 1) + "&statement_timeout=500"
	db, err := store.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	f.mu.Lock()
	f.frozen = true
	f.mu.Unlock()
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
	target, proxy, f := freezingProxy(t)
	url := strings.Replace(storetest.Postgres(t), target, proxy, 1)
	db, err := store.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetBeginWait(300 * time.Millisecond)
	f.mu.Lock()
	f.frozen = true
	f.mu.Unlock()
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
	f.mu.Lock()
	f.frozen = false
	f.mu.Unlock()
	if err := db.View(context.Background(), func(tx qm.Tx) error {
		_, err := tx.ListLeases(context.Background(), qm.LeaseFilter{})
		return err
	}); err != nil {
		t.Errorf("the database answers again, but a transaction fails: %v", err)
	}
}
