package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

var _ qm.ReportStore = (*DB)(nil)

// reportLeaseColumns are what the showback reads of a lease.
const reportLeaseColumns = "id, kind, parent_id, user_name, team, class, gpus, duration_ns, state, rules, because, " +
	"created_at, started_at, expires_at, ended_at, decided_by, decided_at, reclaimed_gpu_hours, gpu_connection, price_per_gpu_hour, pauses"

// ReportLeases lists the leases of every kind created before to that had not ended before from,
// ordered by id: every lease that can count in the week [from, to).
func (db *DB) ReportLeases(ctx context.Context, from, to time.Time) ([]*qm.Lease, error) {
	var rows []leaseRow
	// Two index searches, the leases that ended in or after the window and those still open,
	// rather than one condition with OR, which both databases may answer by reading every lease.
	// Sorted here: an ORDER BY over both would have SQLite read the table in id order instead.
	err := db.x.SelectContext(ctx, &rows, db.x.Rebind(`SELECT `+reportLeaseColumns+` FROM leases WHERE ended_at >= ? AND created_at < ?
		UNION ALL SELECT `+reportLeaseColumns+` FROM leases WHERE ended_at IS NULL AND created_at < ?`), dbTime(from), dbTime(to), dbTime(to))
	if err != nil {
		return nil, fmt.Errorf("store: leases of a report: %w", err)
	}
	slices.SortFunc(rows, func(a, b leaseRow) int { return cmp.Compare(a.ID, b.ID) })
	out := make([]*qm.Lease, len(rows))
	for i := range rows {
		l, err := rows[i].lease()
		if err != nil {
			return nil, err
		}
		out[i] = l
	}
	return out, nil
}

// HistoryStart is when the first lease was ever asked for; zero when none was.
func (db *DB) HistoryStart(ctx context.Context) (time.Time, error) {
	var t dbTime
	if err := db.x.GetContext(ctx, &t, `SELECT MIN(created_at) FROM leases`); err != nil {
		return time.Time{}, fmt.Errorf("store: first lease: %w", err)
	}
	return time.Time(t), nil
}

// HistoryEnd is the last change the database records: the latest of a lease's changes in the
// audit trail, a showback week posted and where a simulated clock last stood (NoteClock); zero
// when there is none.
func (db *DB) HistoryEnd(ctx context.Context) (time.Time, error) {
	var ts []dbTime
	if err := db.x.SelectContext(ctx, &ts, `SELECT MAX(at) FROM lease_events
		UNION ALL SELECT MAX(posted_at) FROM showback_weeks
		UNION ALL SELECT MAX(at) FROM sim_clock`); err != nil {
		return time.Time{}, fmt.Errorf("store: last change: %w", err)
	}
	var last time.Time
	for _, t := range ts {
		if time.Time(t).After(last) {
			last = time.Time(t)
		}
	}
	return last, nil
}

// NoteClock records that a simulated clock stands at t, unless the database already has it
// further on: HistoryEnd is then at least t.
func (db *DB) NoteClock(ctx context.Context, t time.Time) error {
	if _, err := db.x.ExecContext(ctx, db.x.Rebind(`INSERT INTO sim_clock (id, at) VALUES (1, ?)
		ON CONFLICT (id) DO UPDATE SET at = excluded.at WHERE excluded.at > sim_clock.at`), dbTime(t)); err != nil {
		return fmt.Errorf("store: simulated clock: %w", err)
	}
	return nil
}

// LeaseTeams lists the teams that have ever had a lease, by name.
func (db *DB) LeaseTeams(ctx context.Context) ([]string, error) {
	var out []string
	if err := db.x.SelectContext(ctx, &out, `SELECT DISTINCT team FROM leases ORDER BY team`); err != nil {
		return nil, fmt.Errorf("store: teams: %w", err)
	}
	return out, nil
}

// TeamFirsts gives, for each named team whose first request for GPUs (a workspace lease with
// GPUs: not a quota increase, an extension or a CPU-only job) was made at or after since, or whose
// first such workspace started at or after since, that first request, the team's first login and
// the start of its first workspace with GPUs. Each team costs an index lookup, and one more for a
// team that asked before since (which stops at the first workspace it finds started before since);
// only a new team's workspaces are looked at in full.
func (db *DB) TeamFirsts(ctx context.Context, teams []string, since time.Time) ([]qm.TeamFirst, error) {
	var out []qm.TeamFirst
	first := db.x.Rebind(`SELECT MIN(created_at) FROM leases WHERE team = ? AND kind = '' AND gpus > 0`)
	earlier := db.x.Rebind(`SELECT COUNT(*) FROM (SELECT 1 FROM leases WHERE team = ? AND kind = '' AND gpus > 0 AND started_at < ? LIMIT 1) e`)
	start := db.x.Rebind(`SELECT MIN(started_at) FROM leases WHERE team = ? AND kind = '' AND gpus > 0 AND started_at IS NOT NULL`)
	login := db.x.Rebind(`SELECT MIN(first_login_at) FROM team_logins WHERE team = ?`)
	for _, team := range teams {
		var req, st dbTime
		if err := db.x.GetContext(ctx, &req, first, team); err != nil {
			return nil, fmt.Errorf("store: first lease of team %s: %w", team, err)
		}
		if time.Time(req).IsZero() {
			continue
		}
		if time.Time(req).Before(since) {
			var n int
			if err := db.x.GetContext(ctx, &n, earlier, team, dbTime(since)); err != nil {
				return nil, fmt.Errorf("store: first start of team %s: %w", team, err)
			}
			if n > 0 {
				continue // it had GPUs before since
			}
		}
		if err := db.x.GetContext(ctx, &st, start, team); err != nil {
			return nil, fmt.Errorf("store: first start of team %s: %w", team, err)
		}
		if time.Time(req).Before(since) && time.Time(st).IsZero() {
			continue // asked before since and has no GPUs yet: nothing new
		}
		var in dbTime
		if err := db.x.GetContext(ctx, &in, login, team); err != nil {
			return nil, fmt.Errorf("store: first login of team %s: %w", team, err)
		}
		out = append(out, qm.TeamFirst{Team: team, FirstRequest: time.Time(req), FirstLogin: time.Time(in), FirstStart: time.Time(st)})
	}
	return out, nil
}

// NoteTeamLogins records at as the first login of each team that has none yet.
func (db *DB) NoteTeamLogins(ctx context.Context, teams []string, at time.Time) error {
	q := db.x.Rebind(`INSERT INTO team_logins (team, first_login_at) VALUES (?, ?) ON CONFLICT (team) DO NOTHING`)
	for _, t := range teams {
		if _, err := db.x.ExecContext(ctx, q, t, dbTime(at)); err != nil {
			return fmt.Errorf("store: note the first login of team %s: %w", t, err)
		}
	}
	return nil
}

// AddWaitPredictions keeps the predictions; a lease that has one keeps its first.
func (db *DB) AddWaitPredictions(ctx context.Context, ps []qm.WaitPrediction) error {
	if len(ps) == 0 {
		return nil
	}
	q := db.x.Rebind(`INSERT INTO lease_wait_predictions (lease_id, median_ns, p90_ns, at) VALUES (?, ?, ?, ?)
		ON CONFLICT (lease_id) DO NOTHING`)
	tx, err := db.x.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: add wait predictions: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	for _, p := range ps {
		if _, err := tx.ExecContext(ctx, q, int64(p.Lease), int64(p.Median), int64(p.P90), dbTime(p.At)); err != nil {
			return fmt.Errorf("store: add wait predictions: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: add wait predictions: %w", err)
	}
	return nil
}

// WaitPredictions lists the predictions kept for the leases that started in [from, to), and for
// those that ended in it without starting (they left the queue: right-censored).
func (db *DB) WaitPredictions(ctx context.Context, from, to time.Time) ([]qm.WaitPrediction, error) {
	rows, err := db.x.QueryContext(ctx, db.x.Rebind(`SELECT p.lease_id, p.median_ns, p.p90_ns, p.at
		FROM lease_wait_predictions p JOIN leases l ON l.id = p.lease_id
		WHERE l.started_at >= ? AND l.started_at < ?
		UNION ALL SELECT p.lease_id, p.median_ns, p.p90_ns, p.at
		FROM lease_wait_predictions p JOIN leases l ON l.id = p.lease_id
		WHERE l.started_at IS NULL AND l.ended_at >= ? AND l.ended_at < ? ORDER BY 1`), dbTime(from), dbTime(to), dbTime(from), dbTime(to))
	if err != nil {
		return nil, fmt.Errorf("store: wait predictions: %w", err)
	}
	defer rows.Close()
	var out []qm.WaitPrediction
	for rows.Next() {
		var p qm.WaitPrediction
		var id, med, p90 int64
		var at dbTime
		if err := rows.Scan(&id, &med, &p90, &at); err != nil {
			return nil, fmt.Errorf("store: wait predictions: %w", err)
		}
		p.Lease, p.Median, p.P90, p.At = qm.LeaseID(id), time.Duration(med), time.Duration(p90), time.Time(at)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: wait predictions: %w", err)
	}
	return out, nil
}

// ErrLostClaim is what a replica gets when it writes for a week it no longer holds: its claim ran
// out and another replica took the week over, or the week was posted.
var ErrLostClaim = qm.Errorf(qm.ECONFLICT, "the week's claim was lost to another replica")

// ClaimWeek claims the week for owner until now+ttl, in one statement that writes the week's row:
// it succeeds when the week has no row yet, or was not posted and its claim ran out or was
// released. A claim still running is refused even to its own owner, so two runs in one process
// cannot both hold a week. It reports whether owner holds the week now.
func (db *DB) ClaimWeek(ctx context.Context, week, owner string, now time.Time, ttl time.Duration) (bool, error) {
	var attempts int
	err := db.x.QueryRowxContext(ctx, db.x.Rebind(`INSERT INTO showback_weeks (week, claimed_by, claimed_at, claim_until, attempts)
		VALUES (?, ?, ?, ?, 1)
		ON CONFLICT (week) DO UPDATE SET claimed_by = excluded.claimed_by, claimed_at = excluded.claimed_at,
			claim_until = excluded.claim_until, attempts = showback_weeks.attempts + 1
		WHERE showback_weeks.posted_at IS NULL AND showback_weeks.claim_until <= excluded.claimed_at
		RETURNING attempts`), week, owner, dbTime(now), dbTime(now.Add(ttl))).Scan(&attempts)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: claim showback week %s: %w", week, err)
	}
	return true, nil
}

// WeekDeliveries lists the recipients a week's messages already went to.
func (db *DB) WeekDeliveries(ctx context.Context, week string) ([]string, error) {
	var out []string
	err := db.x.SelectContext(ctx, &out, db.x.Rebind(`SELECT recipient FROM showback_deliveries WHERE week = ? ORDER BY recipient`), week)
	if err != nil {
		return nil, fmt.Errorf("store: deliveries of showback week %s: %w", week, err)
	}
	return out, nil
}

// MarkDelivered records that the week's message to recipient went out and extends owner's claim
// to now+ttl, in one transaction; ErrLostClaim when owner no longer holds the week.
func (db *DB) MarkDelivered(ctx context.Context, week, owner, recipient string, now time.Time, ttl time.Duration) error {
	return db.holding(ctx, week, owner, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, db.x.Rebind(`INSERT INTO showback_deliveries (week, recipient, delivered_by, delivered_at)
			VALUES (?, ?, ?, ?) ON CONFLICT (week, recipient) DO NOTHING`), week, recipient, owner, dbTime(now)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, db.x.Rebind(`UPDATE showback_weeks SET claim_until = ? WHERE week = ?`), dbTime(now.Add(ttl)), week)
		return err
	})
}

// FinishWeek marks the week posted; ErrLostClaim when owner no longer holds it.
func (db *DB) FinishWeek(ctx context.Context, week, owner string, now time.Time) error {
	return db.holding(ctx, week, owner, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, db.x.Rebind(`UPDATE showback_weeks SET posted_at = ? WHERE week = ?`), dbTime(now), week)
		return err
	})
}

// ReleaseWeek gives up owner's claim on a week not yet posted, so another attempt may start at once.
func (db *DB) ReleaseWeek(ctx context.Context, week, owner string) error {
	_, err := db.x.ExecContext(ctx, db.x.Rebind(`UPDATE showback_weeks SET claim_until = claimed_at
		WHERE week = ? AND claimed_by = ? AND posted_at IS NULL`), week, owner)
	if err != nil {
		return fmt.Errorf("store: release showback week %s: %w", week, err)
	}
	return nil
}

// PostedWeek says when the week was posted; zero when it was not.
func (db *DB) PostedWeek(ctx context.Context, week string) (time.Time, error) {
	var at dbTime
	err := db.x.GetContext(ctx, &at, db.x.Rebind(`SELECT posted_at FROM showback_weeks WHERE week = ?`), week)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("store: showback week %s: %w", week, err)
	}
	return time.Time(at), nil
}

// LastPostedWeek is the latest week posted ("2026-W48"), whenever it was posted; "" when none was.
// Weeks are written YYYY-Wnn, so their order as text is their order in time.
func (db *DB) LastPostedWeek(ctx context.Context) (string, error) {
	var week string
	err := db.x.GetContext(ctx, &week, `SELECT week FROM showback_weeks WHERE posted_at IS NOT NULL ORDER BY week DESC LIMIT 1`)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("store: the last showback week posted: %w", err)
	}
	return week, nil
}

// holding runs fn in a transaction that first checks, with the week's row locked, that owner still
// holds the unposted week.
func (db *DB) holding(ctx context.Context, week, owner string, fn func(tx *sql.Tx) error) error {
	tx, err := db.x.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: showback week %s: %w", week, err)
	}
	defer func() { _ = tx.Rollback() }()
	lock := ""
	if db.dialect == Postgres {
		lock = " FOR UPDATE"
	}
	var by string
	var posted dbTime
	err = tx.QueryRowContext(ctx, db.x.Rebind(`SELECT claimed_by, posted_at FROM showback_weeks WHERE week = ?`+lock), week).Scan(&by, &posted)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return ErrLostClaim
	case err != nil:
		return fmt.Errorf("store: showback week %s: %w", week, err)
	case by != owner || !time.Time(posted).IsZero():
		return ErrLostClaim
	}
	if err := fn(tx); err != nil {
		return fmt.Errorf("store: showback week %s: %w", week, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: showback week %s: %w", week, err)
	}
	return nil
}

// TryJobLock takes the lock named key for a scheduled job, without waiting: ok is false when
// another holder has it. On PostgreSQL it is a session advisory lock held by one pinned
// connection, so it is shared by every replica on the database and goes away with the connection
// if the process dies; on SQLite (one process) it is a lock inside the process. release frees it.
func (db *DB) TryJobLock(ctx context.Context, key string) (release func(context.Context) error, ok bool, err error) {
	if db.dialect != Postgres {
		return db.localLock(key)
	}
	h := fnv.New64a()
	h.Write([]byte("qm:job:"))
	h.Write([]byte(key))
	id := int64(h.Sum64())
	conn, err := db.x.Connx(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("store: job lock %s: %w", key, err)
	}
	var got bool
	if err := conn.QueryRowxContext(ctx, `SELECT pg_try_advisory_lock($1)`, id).Scan(&got); err != nil {
		_ = conn.Close()
		return nil, false, fmt.Errorf("store: job lock %s: %w", key, err)
	}
	if !got {
		_ = conn.Close()
		return nil, false, nil
	}
	held := db.jobLocks.add(conn)
	var once sync.Once
	release = func(ctx context.Context) error {
		var err error
		once.Do(func() {
			db.jobLocks.remove(held)
			_, err = conn.ExecContext(ctx, `SELECT pg_advisory_unlock($1)`, id)
			if cerr := conn.Close(); err == nil {
				err = cerr
			}
		})
		if err != nil {
			return fmt.Errorf("store: release job lock %s: %w", key, err)
		}
		return nil
	}
	return release, true, nil
}

// jobLocks are the pinned connections that hold job locks: closing the DB closes them, which
// releases the locks as a process that exits does.
type jobLocks struct {
	mu    sync.Mutex
	n     int
	conns map[int]io.Closer
}

func (j *jobLocks) add(c io.Closer) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.conns == nil {
		j.conns = map[int]io.Closer{}
	}
	j.n++
	j.conns[j.n] = c
	return j.n
}

func (j *jobLocks) remove(n int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	delete(j.conns, n)
}

func (j *jobLocks) closeAll() {
	j.mu.Lock()
	defer j.mu.Unlock()
	for n, c := range j.conns {
		_ = c.Close()
		delete(j.conns, n)
	}
}

var (
	localLocksMu sync.Mutex
	localLocks   = map[string]bool{}
)

func (db *DB) localLock(key string) (func(context.Context) error, bool, error) {
	k := fmt.Sprintf("%p:%s", db, strings.ToLower(key))
	localLocksMu.Lock()
	defer localLocksMu.Unlock()
	if localLocks[k] {
		return nil, false, nil
	}
	localLocks[k] = true
	var once sync.Once
	return func(context.Context) error {
		once.Do(func() {
			localLocksMu.Lock()
			delete(localLocks, k)
			localLocksMu.Unlock()
		})
		return nil
	}, true, nil
}
