package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/acme/quartermaster/internal/qm"
)

// AgentToken is a node agent's token as the store keeps it: only the hash of the secret.
type AgentToken struct {
	Node      string
	CreatedAt time.Time
	RevokedAt time.Time // zero while the token is valid
	// LastReceivedAt is when the last report of the node that was taken came in, by the service's
	// clock (a replay, or a report older than what is kept, does not count); zero before the first.
	LastReceivedAt time.Time
	// ClockSkewSecs is how far the node's clock was ahead of the service's, in seconds (negative:
	// behind), at the last report taken that said when it was sent; nil where none did. Seconds, as
	// a node's clock may be further off than a time.Duration holds (a clock set to the year 9999).
	ClockSkewSecs *float64
	// InventoryChecked is whether the service compared the node's agent with the scheduler's
	// inventory (the node is in it and reported since); InventoryMismatch then says what
	// differs, "" where they match.
	InventoryChecked  bool
	InventoryMismatch string
}

// ErrAgentUnauthorized is returned for a token the store does not know, or one that was revoked.
var ErrAgentUnauthorized = errors.New("store: unknown or revoked agent token")

// CreateAgentToken keeps the hash of a new token for node. A node whose token is valid gets
// ECONFLICT: revoke it first. A node whose token was revoked gets the new one; its kept samples
// still tell replays of its old reports.
func (db *DB) CreateAgentToken(ctx context.Context, node, hash string, at time.Time) error {
	tx, err := db.x.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: create agent token: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	// Node names match ignoring A-Z case; the node keeps the name it was first written with.
	var cur struct {
		Node    string `db:"node"`
		Revoked dbTime `db:"revoked_at"`
	}
	err = tx.GetContext(ctx, &cur, db.x.Rebind(`SELECT node, revoked_at FROM agent_tokens WHERE LOWER(node) = LOWER(?)`), node)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		_, err = tx.ExecContext(ctx, db.x.Rebind(`INSERT INTO agent_tokens (node, token_hash, created_at) VALUES (?, ?, ?)`), node, hash, dbTime(at))
	case err != nil:
	case time.Time(cur.Revoked).IsZero():
		return qm.Errorf(qm.ECONFLICT, "node %s has a valid token already; revoke it first: quartermaster agent-token revoke %s", cur.Node, cur.Node)
	default:
		_, err = tx.ExecContext(ctx, db.x.Rebind(`UPDATE agent_tokens SET token_hash = ?, created_at = ?, revoked_at = NULL WHERE node = ?`), hash, dbTime(at), cur.Node)
	}
	if err != nil {
		return fmt.Errorf("store: create agent token: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: create agent token: %w", err)
	}
	return nil
}

// RevokeAgentToken revokes node's token; ENOTFOUND when it has no valid one.
func (db *DB) RevokeAgentToken(ctx context.Context, node string, at time.Time) error {
	res, err := db.x.ExecContext(ctx, db.x.Rebind(`UPDATE agent_tokens SET revoked_at = ? WHERE LOWER(node) = LOWER(?) AND revoked_at IS NULL`), dbTime(at), node)
	if err != nil {
		return fmt.Errorf("store: revoke agent token: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return qm.Errorf(qm.ENOTFOUND, "node %s has no valid token; `quartermaster agent-token list` shows the nodes that do", node)
	}
	return nil
}

// AgentTokens lists every node's token, by node.
func (db *DB) AgentTokens(ctx context.Context) ([]AgentToken, error) {
	rows, err := db.x.QueryContext(ctx, `SELECT node, created_at, revoked_at, last_received_at, clock_skew_s, inventory_mismatch FROM agent_tokens ORDER BY node`)
	if err != nil {
		return nil, fmt.Errorf("store: agent tokens: %w", err)
	}
	defer rows.Close()
	var out []AgentToken
	for rows.Next() {
		var t AgentToken
		var created, revoked, received dbTime
		var skew sql.NullFloat64
		var mismatch sql.NullString
		if err := rows.Scan(&t.Node, &created, &revoked, &received, &skew, &mismatch); err != nil {
			return nil, fmt.Errorf("store: agent tokens: %w", err)
		}
		t.CreatedAt, t.RevokedAt, t.LastReceivedAt = time.Time(created), time.Time(revoked), time.Time(received)
		if skew.Valid {
			t.ClockSkewSecs = &skew.Float64
		}
		t.InventoryChecked, t.InventoryMismatch = mismatch.Valid, mismatch.String
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: agent tokens: %w", err)
	}
	return out, nil
}

// SetAgentInventoryMismatch records whether node's agent matches the scheduler's inventory:
// checked false where it was not compared (the node is not in the inventory), else mismatch says
// what differs, "" where nothing does.
func (db *DB) SetAgentInventoryMismatch(ctx context.Context, node string, checked bool, mismatch string) error {
	v := sql.NullString{String: mismatch, Valid: checked}
	if _, err := db.x.ExecContext(ctx, db.x.Rebind(`UPDATE agent_tokens SET inventory_mismatch = ? WHERE LOWER(node) = LOWER(?)`), v, node); err != nil {
		return fmt.Errorf("store: agent inventory mismatch: %w", err)
	}
	return nil
}

// AgentNode is the node whose valid token has this hash, or ErrAgentUnauthorized.
func (db *DB) AgentNode(ctx context.Context, hash string) (string, error) {
	var node string
	err := db.x.GetContext(ctx, &node, db.x.Rebind(`SELECT node FROM agent_tokens WHERE token_hash = ? AND revoked_at IS NULL`), hash)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrAgentUnauthorized
	}
	if err != nil {
		return "", fmt.Errorf("store: agent token: %w", err)
	}
	return node, nil
}

// LeaseActivity is what one report saw of one lease's GPUs.
type LeaseActivity struct {
	Lease       qm.LeaseID
	Utilization float64 // mean over the lease's GPUs, percent
	MemUsed     uint64  // bytes its processes held
	Active      bool    // a GPU of the lease was busy
	// Unjudged, when set, says why the report could not judge the lease (qm.Activity.Unjudged):
	// nothing else of it is kept, and what the last report that judged it said stands.
	Unjudged string
}

// AgentReport is an accepted report as the store keeps it.
type AgentReport struct {
	Node      string
	TokenHash string
	// At is when the GPUs were read, by the node's clock.
	At time.Time
	// Seen is At on the service's clock: the time of the leases' activity, which orders the
	// node's reports. Zero: At.
	Seen time.Time
	// Run is the agent's run (a random id it picks when it starts) and Seq the report's number in
	// it: together they identify the report, so that one sent again is known. A report without a
	// run (an older agent) is known by its At.
	Run      string
	Seq      uint64
	Received time.Time
	// ClockSkewSecs is how far the node's clock was ahead of the service's, in seconds (negative:
	// behind), when the report came in, as the service measured it; nil where the report did not
	// say when it was sent.
	ClockSkewSecs *float64
	// Interval is the agent's reporting interval.
	Interval time.Duration
	// GPUs is the report's GPUs, JSON, kept raw.
	GPUs     []byte
	Activity []LeaseActivity
	// Topology, when set, replaces the node's stored topology.
	Topology     *qm.Topology
	TopologyHash string
}

// AgentReportResult says what became of a report.
type AgentReportResult struct {
	// Unauthorized is set when the token is unknown or was revoked: nothing was stored.
	Unauthorized bool
	// Replayed is set when the node's samples already hold this report (its run and sequence
	// number; without a run, its time by the node's clock): nothing was stored.
	Replayed bool
	// TooOld is set when the report is older than what the store keeps of the node's reports: its
	// run's sample of that number, or a later one, was forgotten (without a run: a sample of that
	// time by the node's clock, or a later one). Nothing was stored.
	TooOld bool
	// TopologyHash is the hash of the node's stored topology after the report ("" for none).
	TopologyHash string
}

// memChanged is how much a lease's GPU memory in use must change between two reports of one node
// in a row to count as activity (a process loading or freeing data), in bytes: 64 MiB. The
// reports of a lease over several nodes interleave, and one node's memory against another's is no
// change. Less is the noise of a process
// that holds memory and does nothing (a notebook kernel with a model loaded, whose CUDA context and
// allocator move by a few MiB from one reading to the next), which is idle.
const memChanged = 64 << 20

// RecordAgentReport stores one report (see RecordAgentReports); a token that is unknown or revoked
// gives ErrAgentUnauthorized.
func (db *DB) RecordAgentReport(ctx context.Context, r AgentReport) (AgentReportResult, error) {
	res, err := db.RecordAgentReports(ctx, []AgentReport{r})
	if err != nil {
		return AgentReportResult{}, err
	}
	if res[0].Unauthorized {
		return res[0], ErrAgentUnauthorized
	}
	return res[0], nil
}

// RecordAgentReports stores reports in one transaction, so that the reports several nodes send at
// once share one commit. For each it moves forward when the node's last report came in; a report whose
// token is no longer valid, or which the node's samples already hold (a replay: the same run and
// sequence number, or without a run the same time by the node's clock), stores nothing. A report
// dated before the node's last one is no replay: the node's clock may have been set back, or the
// report came late. Each accepted report keeps its raw sample, updates the activity of the leases it covers
// and, when it carries one, the node's topology. Results are in the order of rs.
func (db *DB) RecordAgentReports(ctx context.Context, rs []AgentReport) ([]AgentReportResult, error) {
	out := make([]AgentReportResult, len(rs))
	if len(rs) == 0 {
		return out, nil
	}
	wrap := func(err error) ([]AgentReportResult, error) {
		return nil, fmt.Errorf("store: record agent reports: %w", err)
	}
	// Token rows are locked in one order (node, then time) in every transaction: no deadlocks.
	order := make([]int, len(rs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		ra, rb := rs[order[a]], rs[order[b]]
		if ra.Node != rb.Node {
			return ra.Node < rb.Node
		}
		return placed(ra).Before(placed(rb))
	})
	tx, err := db.x.BeginTxx(ctx, nil)
	if err != nil {
		return wrap(err)
	}
	defer func() { _ = tx.Rollback() }()
	// The nodes' rows are locked and checked in one statement per round, a round holding each node
	// once (an UPDATE touches a row once): a report goes on if its token is still valid. The
	// statement also reads each node's stored topology hash. Once a node's row is locked, no other
	// transaction stores a report of it until this one ends, so the replays are then found among
	// its samples. Only the reports taken then move when the node's last report came in: a replay,
	// or a report older than what is kept, says nothing of whether the node still reports.
	typed := func(t string) string { // the first VALUES row fixes the column types on PostgreSQL
		if db.dialect == Postgres {
			return "CAST(? AS " + t + ")"
		}
		return "?"
	}
	var accepted []int
	var q strings.Builder
	left := order
	for len(left) > 0 {
		var round, later []int
		inRound := map[string]bool{}
		for _, i := range left {
			if inRound[rs[i].Node] {
				later = append(later, i)
				continue
			}
			inRound[rs[i].Node] = true
			round = append(round, i)
		}
		q.Reset()
		q.WriteString(`UPDATE agent_tokens SET token_hash = agent_tokens.token_hash
FROM (VALUES `)
		args := make([]any, 0, 2*len(round))
		for k, i := range round {
			if k == 0 {
				q.WriteString("(" + typed("TEXT") + ", " + typed("TEXT") + ")")
			} else {
				q.WriteString(", (?, ?)")
			}
			args = append(args, rs[i].Node, rs[i].TokenHash)
		}
		q.WriteString(`) AS v
WHERE agent_tokens.node = v.column1 AND agent_tokens.token_hash = v.column2 AND agent_tokens.revoked_at IS NULL
RETURNING agent_tokens.node, (SELECT hash FROM node_topology WHERE node_topology.node = agent_tokens.node)`)
		rows, err := tx.QueryContext(ctx, db.x.Rebind(q.String()), args...)
		if err != nil {
			return wrap(err)
		}
		took := map[string]string{}
		for rows.Next() {
			var node string
			var hash sql.NullString
			if err := rows.Scan(&node, &hash); err != nil {
				rows.Close()
				return wrap(err)
			}
			took[node] = hash.String
		}
		if err := rows.Err(); err != nil {
			rows.Close()
			return wrap(err)
		}
		rows.Close()
		for _, i := range round {
			if hash, ok := took[rs[i].Node]; ok {
				out[i].TopologyHash = hash
				accepted = append(accepted, i)
				continue
			}
			// The row of a node whose token is valid moves in every round the node is in: a
			// report that did not move it has a token that is not the node's (any more).
			out[i].Unauthorized = true
		}
		left = later
	}
	sort.Slice(accepted, func(a, b int) bool { // back in node and time order
		ra, rb := rs[accepted[a]], rs[accepted[b]]
		if ra.Node != rb.Node {
			return ra.Node < rb.Node
		}
		return placed(ra).Before(placed(rb))
	})
	if accepted, err = db.dropReplays(ctx, tx, rs, accepted, out); err != nil {
		return wrap(err)
	}
	if len(accepted) == 0 {
		return out, tx.Commit()
	}
	// When each node's last report taken came in moves forward, in one statement.
	last := map[string]time.Time{}
	for _, i := range accepted {
		if r := rs[i]; received(r).After(last[r.Node]) {
			last[r.Node] = received(r)
		}
	}
	q.Reset()
	q.WriteString(`UPDATE agent_tokens SET
  last_received_at = CASE WHEN agent_tokens.last_received_at IS NULL OR agent_tokens.last_received_at < v.column2 THEN v.column2 ELSE agent_tokens.last_received_at END
FROM (VALUES `)
	args := make([]any, 0, 2*len(last))
	for k, node := range slices.Sorted(maps.Keys(last)) {
		if k == 0 {
			q.WriteString("(" + typed("TEXT") + ", " + typed("TIMESTAMPTZ") + ")")
		} else {
			q.WriteString(", (?, ?)")
		}
		args = append(args, node, dbTime(last[node]))
	}
	q.WriteString(`) AS v
WHERE agent_tokens.node = v.column1`)
	if _, err := tx.ExecContext(ctx, db.x.Rebind(q.String()), args...); err != nil {
		return wrap(err)
	}
	// Each node's clock skew, from its latest report taken that measured one (a replay's is that
	// of when it was first sent).
	skews := map[string]AgentReport{}
	for _, i := range accepted {
		if r := rs[i]; r.ClockSkewSecs != nil && !received(r).Before(received(skews[r.Node])) {
			skews[r.Node] = r
		}
	}
	for _, node := range slices.Sorted(maps.Keys(skews)) {
		r := skews[node]
		if _, err := tx.ExecContext(ctx, db.x.Rebind(`UPDATE agent_tokens SET clock_skew_s = ? WHERE node = ? AND (last_received_at IS NULL OR last_received_at <= ?)`),
			*r.ClockSkewSecs, node, dbTime(received(r))); err != nil {
			return wrap(err)
		}
	}
	q.Reset()
	// A sample whose node and time a kept one has already is not written again: two reports of
	// one node dated alike to the microsecond are not worth failing the whole batch for, which
	// would hold the agent's outbox on that report.
	q.WriteString(`INSERT INTO agent_samples (node, at, received_at, gpus, run, seq) VALUES `)
	args = make([]any, 0, 6*len(accepted))
	for k, i := range accepted {
		if k > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(?, ?, ?, ?, ?, ?)")
		var run sql.NullString
		if rs[i].Run != "" {
			run = sql.NullString{String: rs[i].Run, Valid: true}
		}
		args = append(args, rs[i].Node, dbTime(rs[i].At), dbTime(rs[i].Received), string(rs[i].GPUs), run, int64(rs[i].Seq))
	}
	q.WriteString(" ON CONFLICT DO NOTHING")
	if _, err := tx.ExecContext(ctx, db.x.Rebind(q.String()), args...); err != nil {
		return wrap(err)
	}
	// Lease activity, in rounds in which each lease appears once (an upsert may not touch a row
	// twice), oldest report first.
	type act struct {
		a        LeaseActivity
		node     string
		at       dbTime
		interval float64
		since    dbTime // when the lease's unbroken run of reports began
	}
	var pending []act
	for _, i := range accepted {
		seen := rs[i].Seen
		if seen.IsZero() {
			seen = rs[i].At
		}
		for _, a := range rs[i].Activity {
			if a.Unjudged != "" {
				// What its node's newest report says of a lease it could not judge: the idle
				// path tells that from a lease whose telemetry is missing.
				if _, err := tx.ExecContext(ctx, db.x.Rebind(`INSERT INTO lease_unjudged (lease_id, node, seen_at, why, interval_s) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (lease_id) DO UPDATE SET node = excluded.node, seen_at = excluded.seen_at, why = excluded.why, interval_s = excluded.interval_s
WHERE lease_unjudged.seen_at < excluded.seen_at`), int64(a.Lease), rs[i].Node, dbTime(seen), a.Unjudged, rs[i].Interval.Seconds()); err != nil {
					return wrap(err)
				}
				continue
			}
			pending = append(pending, act{a: a, node: rs[i].Node, at: dbTime(seen), interval: rs[i].Interval.Seconds()})
		}
	}
	// A lease's run of reports is broken where two of them are further apart than its telemetry
	// may be missing (qm.TelemetryStaleAfter): the reports after the gap start a new run.
	if len(pending) > 0 {
		type run struct {
			seen, since time.Time
			interval    time.Duration
		}
		runs := map[qm.LeaseID]run{}
		q.Reset()
		q.WriteString(`SELECT lease_id, seen_at, observed_since, interval_s FROM lease_activity WHERE lease_id IN (`)
		args := make([]any, 0, len(pending))
		for k, p := range pending {
			if k > 0 {
				q.WriteString(", ")
			}
			q.WriteString("?")
			args = append(args, int64(p.a.Lease))
		}
		q.WriteString(")")
		rows, err := tx.QueryContext(ctx, db.x.Rebind(q.String()), args...)
		if err != nil {
			return wrap(err)
		}
		for rows.Next() {
			var id int64
			var seen, since dbTime
			var interval float64
			if err := rows.Scan(&id, &seen, &since, &interval); err != nil {
				rows.Close()
				return wrap(err)
			}
			runs[qm.LeaseID(id)] = run{time.Time(seen), time.Time(since), time.Duration(interval * float64(time.Second))}
		}
		if err := rows.Err(); err != nil {
			rows.Close()
			return wrap(err)
		}
		rows.Close()
		for k := range pending {
			p := &pending[k]
			at, interval := StoredTime(time.Time(p.at)), time.Duration(p.interval*float64(time.Second))
			r, ok := runs[p.a.Lease]
			switch {
			case !ok:
				r = run{seen: at, since: at, interval: interval}
			case !at.After(r.seen): // not newer than what is kept: not written
			case at.Sub(r.seen) > qm.TelemetryStaleAfter(qm.Activity{Interval: max(r.interval, interval)}):
				r = run{seen: at, since: at, interval: interval}
			default:
				r.seen, r.interval = at, interval
			}
			runs[p.a.Lease] = r
			p.since = dbTime(r.since)
		}
	}
	for len(pending) > 0 {
		seen := map[qm.LeaseID]bool{}
		var round, later []act
		for _, p := range pending {
			if seen[p.a.Lease] {
				later = append(later, p)
				continue
			}
			seen[p.a.Lease] = true
			round = append(round, p)
		}
		q.Reset()
		q.WriteString(`INSERT INTO lease_activity (lease_id, node, seen_at, last_active_at, utilization, mem_used, interval_s, observed_since) VALUES `)
		args = args[:0]
		for k, p := range round {
			if k > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(?, ?, ?, ?, ?, ?, ?, ?)")
			var active dbTime
			if p.a.Active {
				active = p.at
			}
			args = append(args, int64(p.a.Lease), p.node, p.at, active, p.a.Utilization, int64(min(p.a.MemUsed, 1<<62)), p.interval, p.since)
		}
		q.WriteString(`
ON CONFLICT (lease_id) DO UPDATE SET
  node = excluded.node,
  seen_at = excluded.seen_at,
  utilization = excluded.utilization,
  mem_used = excluded.mem_used,
  interval_s = excluded.interval_s,
  observed_since = excluded.observed_since,
  last_active_at = CASE
    WHEN excluded.last_active_at IS NOT NULL OR (lease_activity.node = excluded.node AND ABS(excluded.mem_used - lease_activity.mem_used) >= ` + fmt.Sprint(memChanged) + `)
    THEN excluded.seen_at ELSE lease_activity.last_active_at END
WHERE lease_activity.seen_at < excluded.seen_at`)
		if _, err := tx.ExecContext(ctx, db.x.Rebind(q.String()), args...); err != nil {
			return wrap(err)
		}
		pending = later
	}
	topo := db.x.Rebind(`INSERT INTO node_topology (node, hash, read_at, topology) VALUES (?, ?, ?, ?)
ON CONFLICT (node) DO UPDATE SET hash = excluded.hash, read_at = excluded.read_at, topology = excluded.topology`)
	for _, i := range accepted {
		r := rs[i]
		if r.Topology == nil {
			continue
		}
		b, err := json.Marshal(r.Topology)
		if err != nil {
			return wrap(err)
		}
		if _, err := tx.ExecContext(ctx, topo, r.Node, r.TopologyHash, dbTime(r.At), string(b)); err != nil {
			return wrap(err)
		}
		for _, j := range accepted { // later reports of the node in this batch see it too
			if rs[j].Node == r.Node && !placed(rs[j]).Before(placed(r)) {
				out[j].TopologyHash = r.TopologyHash
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return wrap(err)
	}
	return out, nil
}

// Activity is what the agents last saw of a lease's GPUs; ok is false when no report covered it.
func (db *DB) Activity(ctx context.Context, id qm.LeaseID) (a qm.Activity, ok bool, err error) {
	var seen, last, since dbTime
	var interval float64
	err = db.x.QueryRowContext(ctx, db.x.Rebind(`SELECT seen_at, last_active_at, utilization, interval_s, observed_since FROM lease_activity WHERE lease_id = ?`), int64(id)).
		Scan(&seen, &last, &a.Utilization, &interval, &since)
	ok = err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return a, false, fmt.Errorf("store: lease activity: %w", err)
	}
	a.Seen, a.LastActive, a.ObservedSince = time.Time(seen), time.Time(last), time.Time(since)
	a.Interval = time.Duration(interval * float64(time.Second))
	// A newer report that could not judge the lease says why.
	var unjudged dbTime
	var why string
	var uInterval float64
	err = db.x.QueryRowContext(ctx, db.x.Rebind(`SELECT seen_at, why, interval_s FROM lease_unjudged WHERE lease_id = ?`), int64(id)).Scan(&unjudged, &why, &uInterval)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return a, false, fmt.Errorf("store: lease activity: %w", err)
	}
	if err == nil && time.Time(unjudged).After(a.Seen) {
		a.Unjudged, a.UnjudgedAt = why, time.Time(unjudged)
		a.Interval = max(a.Interval, time.Duration(uInterval*float64(time.Second)))
	}
	return a, ok, nil
}

// NodeTopology is every node's latest topology, by node.
func (db *DB) NodeTopology(ctx context.Context) (map[string]qm.Topology, error) {
	rows, err := db.x.QueryContext(ctx, `SELECT node, topology FROM node_topology`)
	if err != nil {
		return nil, fmt.Errorf("store: node topology: %w", err)
	}
	defer rows.Close()
	out := map[string]qm.Topology{}
	for rows.Next() {
		var node, doc string
		if err := rows.Scan(&node, &doc); err != nil {
			return nil, fmt.Errorf("store: node topology: %w", err)
		}
		var t qm.Topology
		if err := json.Unmarshal([]byte(doc), &t); err != nil {
			return nil, fmt.Errorf("store: node topology of %s: %w", node, err)
		}
		out[node] = t
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: node topology: %w", err)
	}
	return out, nil
}

// NodeTopologyOf is one node's latest topology and its hash; ok is false when it has none.
func (db *DB) NodeTopologyOf(ctx context.Context, node string) (t qm.Topology, hash string, ok bool, err error) {
	var doc string
	err = db.x.QueryRowContext(ctx, db.x.Rebind(`SELECT hash, topology FROM node_topology WHERE node = ?`), node).Scan(&hash, &doc)
	if errors.Is(err, sql.ErrNoRows) {
		return t, "", false, nil
	}
	if err != nil {
		return t, "", false, fmt.Errorf("store: node topology: %w", err)
	}
	if err := json.Unmarshal([]byte(doc), &t); err != nil {
		return t, "", false, fmt.Errorf("store: node topology of %s: %w", node, err)
	}
	return t, hash, true, nil
}

// GPUNodes maps each GPU UUID of the stored topologies to its node, for the nodes whose valid
// token had a report taken that came in at or after since, by the service's clock (a node's own clock may be
// days off either way): the GPUs another node's agent still reports.
func (db *DB) GPUNodes(ctx context.Context, since time.Time) (map[string]string, error) {
	rows, err := db.x.QueryContext(ctx, db.x.Rebind(`SELECT t.node, t.topology FROM node_topology t
JOIN agent_tokens a ON a.node = t.node AND a.revoked_at IS NULL AND a.last_received_at >= ?`), dbTime(since))
	if err != nil {
		return nil, fmt.Errorf("store: GPU nodes: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var node, doc string
		if err := rows.Scan(&node, &doc); err != nil {
			return nil, fmt.Errorf("store: GPU nodes: %w", err)
		}
		var t qm.Topology
		if err := json.Unmarshal([]byte(doc), &t); err != nil {
			return nil, fmt.Errorf("store: node topology of %s: %w", node, err)
		}
		for _, g := range t.GPUs {
			if g.UUID != "" {
				out[g.UUID] = node
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: GPU nodes: %w", err)
	}
	return out, nil
}

// AgentSamples counts the raw samples kept for node (all nodes for "").
func (db *DB) AgentSamples(ctx context.Context, node string) (int, error) {
	var n int
	err := db.x.GetContext(ctx, &n, db.x.Rebind(`SELECT COUNT(*) FROM agent_samples WHERE node = ? OR ? = ''`), node, node)
	if err != nil {
		return 0, fmt.Errorf("store: agent samples: %w", err)
	}
	return n, nil
}

// AgentRunMemory is how long the store keeps what it forgot of an agent run (agent_runs) after the
// newest of the run's forgotten samples came in: a report of a run not heard of for longer is
// taken as a new run's.
const AgentRunMemory = 366 * 24 * time.Hour

// PruneAgentData forgets raw samples received before samplesBefore (by the service's clock: a
// node's own clock may be days off) and the activity of leases no report has covered since
// activityBefore; it says how many rows it forgot. What identifies the forgotten reports is kept
// in short: each run's highest forgotten sequence number, and for reports without a run the
// latest forgotten time by the node's clock, so that a forgotten report sent again is known as
// older than what is kept (AgentReportResult.TooOld). That is forgotten AgentRunMemory later.
func (db *DB) PruneAgentData(ctx context.Context, samplesBefore, activityBefore time.Time) (int64, error) {
	wrap := func(err error) (int64, error) { return 0, fmt.Errorf("store: prune agent data: %w", err) }
	tx, err := db.x.BeginTxx(ctx, nil)
	if err != nil {
		return wrap(err)
	}
	defer func() { _ = tx.Rollback() }()
	greater := func(col string) string {
		return "CASE WHEN excluded." + col + " > agent_runs." + col + " THEN excluded." + col + " ELSE agent_runs." + col + " END"
	}
	if _, err := tx.ExecContext(ctx, db.x.Rebind(`INSERT INTO agent_runs (node, run, forgot_seq, forgot_at, forgot_received_at)
SELECT node, COALESCE(run, ''), MAX(COALESCE(seq, 0)), MAX(at), MAX(received_at) FROM agent_samples WHERE received_at < ?
GROUP BY node, COALESCE(run, '')
ON CONFLICT (node, run) DO UPDATE SET forgot_seq = `+greater("forgot_seq")+`, forgot_at = `+greater("forgot_at")+`,
  forgot_received_at = `+greater("forgot_received_at")), dbTime(samplesBefore)); err != nil {
		return wrap(err)
	}
	a, err := tx.ExecContext(ctx, db.x.Rebind(`DELETE FROM agent_samples WHERE received_at < ?`), dbTime(samplesBefore))
	if err != nil {
		return wrap(err)
	}
	if _, err := tx.ExecContext(ctx, db.x.Rebind(`DELETE FROM agent_runs WHERE forgot_received_at < ?`), dbTime(samplesBefore.Add(-AgentRunMemory))); err != nil {
		return wrap(err)
	}
	b, err := tx.ExecContext(ctx, db.x.Rebind(`DELETE FROM lease_activity WHERE seen_at < ?`), dbTime(activityBefore))
	if err != nil {
		return wrap(err)
	}
	if _, err := tx.ExecContext(ctx, db.x.Rebind(`DELETE FROM lease_unjudged WHERE seen_at < ?`), dbTime(activityBefore)); err != nil {
		return wrap(err)
	}
	if err := tx.Commit(); err != nil {
		return wrap(err)
	}
	na, _ := a.RowsAffected()
	nb, _ := b.RowsAffected()
	return na + nb, nil
}

// received is when a report came in, on the service's clock; a report without that time (a
// caller that set none) is taken to have come in when it was placed.
func received(r AgentReport) time.Time {
	if r.Received.IsZero() {
		return placed(r)
	}
	return r.Received
}

// placed is a report's time on the service's clock, which orders a node's reports.
func placed(r AgentReport) time.Time {
	if r.Seen.IsZero() {
		return r.At
	}
	return r.Seen
}

// dropReplays takes out of accepted (indexes into rs, whose nodes' rows tx has locked) the reports
// the nodes' samples already hold, and those an earlier one of accepted is, marking them Replayed
// in out, and those older than what is kept of their runs (agent_runs: PruneAgentData), marking
// them TooOld; it returns the rest, in order. A report with a run is held by a sample of its run and
// number, or by a sample of its time without a run (one stored before runs were kept); a report
// without a run by a sample of its time.
func (db *DB) dropReplays(ctx context.Context, tx *sqlx.Tx, rs []AgentReport, accepted []int, out []AgentReportResult) ([]int, error) {
	if len(accepted) == 0 {
		return accepted, nil
	}
	type runKey struct {
		node, run string
		seq       uint64
	}
	type atKey struct {
		node string
		at   int64
	}
	atOf := func(node string, t time.Time) atKey { return atKey{node, StoredTime(t).UnixMicro()} }
	byRun := map[runKey]bool{}
	byAt := map[atKey]bool{}      // every sample's time
	byAtNoRun := map[atKey]bool{} // the times of samples without a run
	var q strings.Builder
	q.WriteString(`SELECT node, run, seq, at FROM agent_samples WHERE `)
	args := make([]any, 0, 4*len(accepted))
	for k, i := range accepted {
		if k > 0 {
			q.WriteString(" OR ")
		}
		r := rs[i]
		if r.Run != "" {
			q.WriteString("(node = ? AND ((run = ? AND seq = ?) OR (at = ? AND run IS NULL)))")
			args = append(args, r.Node, r.Run, int64(r.Seq), dbTime(r.At))
		} else {
			q.WriteString("(node = ? AND at = ?)")
			args = append(args, r.Node, dbTime(r.At))
		}
	}
	rows, err := tx.QueryContext(ctx, db.x.Rebind(q.String()), args...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var node string
		var run sql.NullString
		var seq sql.NullInt64
		var at dbTime
		if err := rows.Scan(&node, &run, &seq, &at); err != nil {
			rows.Close()
			return nil, err
		}
		byAt[atOf(node, time.Time(at))] = true
		if run.Valid {
			byRun[runKey{node, run.String, uint64(seq.Int64)}] = true
		} else {
			byAtNoRun[atOf(node, time.Time(at))] = true
		}
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return nil, err
	}
	rows.Close()
	// What was forgotten of the reports' runs: a report at or below it is older than what is kept.
	type forgot struct {
		seq uint64
		at  time.Time
	}
	forgotten := map[[2]string]forgot{}
	q.Reset()
	q.WriteString(`SELECT node, run, forgot_seq, forgot_at FROM agent_runs WHERE `)
	args = args[:0]
	for k, i := range accepted {
		if k > 0 {
			q.WriteString(" OR ")
		}
		q.WriteString("(node = ? AND run = ?)")
		args = append(args, rs[i].Node, rs[i].Run)
	}
	rows, err = tx.QueryContext(ctx, db.x.Rebind(q.String()), args...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var node, run string
		var seq int64
		var at dbTime
		if err := rows.Scan(&node, &run, &seq, &at); err != nil {
			rows.Close()
			return nil, err
		}
		forgotten[[2]string{node, run}] = forgot{uint64(seq), time.Time(at)}
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return nil, err
	}
	rows.Close()
	kept := accepted[:0]
	for _, i := range accepted {
		r := rs[i]
		rk, ak := runKey{r.Node, r.Run, r.Seq}, atOf(r.Node, r.At)
		if f, ok := forgotten[[2]string{r.Node, r.Run}]; ok {
			if (r.Run != "" && r.Seq <= f.seq) || (r.Run == "" && !StoredTime(r.At).After(StoredTime(f.at))) {
				out[i] = AgentReportResult{TooOld: true}
				continue
			}
		}
		var replay bool
		if r.Run != "" {
			replay = byRun[rk] || byAtNoRun[ak]
		} else {
			replay = byAt[ak]
		}
		if replay {
			out[i] = AgentReportResult{Replayed: true}
			continue
		}
		byAt[ak] = true
		if r.Run != "" {
			byRun[rk] = true
		} else {
			byAtNoRun[ak] = true
		}
		kept = append(kept, i)
	}
	return kept, nil
}
