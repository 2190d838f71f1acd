package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// AgentToken is a node agent's token as the store keeps it: only the hash of the secret.
type AgentToken struct {
	Node         string
	CreatedAt    time.Time
	RevokedAt    time.Time // zero while the token is valid
	LastReportAt time.Time // zero before the first report
	LastSeq      uint64
}

// ErrAgentUnauthorized is returned for a token the store does not know, or one that was revoked.
var ErrAgentUnauthorized = errors.New("store: unknown or revoked agent token")

// CreateAgentToken keeps the hash of a new token for node. A node whose token is valid gets
// ECONFLICT: revoke it first. A node whose token was revoked gets the new one and keeps its newest
// report time, so replays of old reports are still refused.
func (db *DB) CreateAgentToken(ctx context.Context, node, hash string, at time.Time) error {
	tx, err := db.x.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: create agent token: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	var revoked dbTime
	err = tx.GetContext(ctx, &revoked, db.x.Rebind(`SELECT revoked_at FROM agent_tokens WHERE node = ?`), node)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		_, err = tx.ExecContext(ctx, db.x.Rebind(`INSERT INTO agent_tokens (node, token_hash, created_at) VALUES (?, ?, ?)`), node, hash, dbTime(at))
	case err != nil:
	case time.Time(revoked).IsZero():
		return qm.Errorf(qm.ECONFLICT, "node %s has a valid token already; revoke it first: quartermaster agent-token revoke %s", node, node)
	default:
		_, err = tx.ExecContext(ctx, db.x.Rebind(`UPDATE agent_tokens SET token_hash = ?, created_at = ?, revoked_at = NULL WHERE node = ?`), hash, dbTime(at), node)
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
	res, err := db.x.ExecContext(ctx, db.x.Rebind(`UPDATE agent_tokens SET revoked_at = ? WHERE node = ? AND revoked_at IS NULL`), dbTime(at), node)
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
	rows, err := db.x.QueryContext(ctx, `SELECT node, created_at, revoked_at, last_report_at, last_seq FROM agent_tokens ORDER BY node`)
	if err != nil {
		return nil, fmt.Errorf("store: agent tokens: %w", err)
	}
	defer rows.Close()
	var out []AgentToken
	for rows.Next() {
		var t AgentToken
		var created, revoked, last dbTime
		var seq int64
		if err := rows.Scan(&t.Node, &created, &revoked, &last, &seq); err != nil {
			return nil, fmt.Errorf("store: agent tokens: %w", err)
		}
		t.CreatedAt, t.RevokedAt, t.LastReportAt, t.LastSeq = time.Time(created), time.Time(revoked), time.Time(last), uint64(seq)
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: agent tokens: %w", err)
	}
	return out, nil
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
}

// AgentReport is an accepted report as the store keeps it.
type AgentReport struct {
	Node      string
	TokenHash string
	At        time.Time
	Seq       uint64
	Received  time.Time
	// GPUs is the report's GPUs, JSON, kept raw.
	GPUs     []byte
	Activity []LeaseActivity
	// Topology, when set, replaces the node's stored topology.
	Topology     *qm.Topology
	TopologyHash string
}

// AgentReportResult says what became of a report.
type AgentReportResult struct {
	// Replayed is set when the node had already reported at or after this report's time: nothing
	// was stored.
	Replayed bool
	// TopologyHash is the hash of the node's stored topology after the report ("" for none).
	TopologyHash string
}

// memChanged is how much a lease's GPU memory in use must change between reports to count as
// activity (a process loading or freeing data), in bytes.
const memChanged = 1 << 20

// RecordAgentReport stores a report in one transaction: it moves the node's newest report time
// forward (the token must still be valid: ErrAgentUnauthorized, nothing stored; a report not newer
// than the last one is a replay, nothing stored), keeps the raw sample, updates the activity of
// the leases it covers, and the node's topology when the report carries one.
func (db *DB) RecordAgentReport(ctx context.Context, r AgentReport) (AgentReportResult, error) {
	var res AgentReportResult
	wrap := func(err error) (AgentReportResult, error) {
		return res, fmt.Errorf("store: record agent report: %w", err)
	}
	tx, err := db.x.BeginTxx(ctx, nil)
	if err != nil {
		return wrap(err)
	}
	defer func() { _ = tx.Rollback() }()
	at := dbTime(r.At)
	// One statement moves the node's clock (if the token is still valid and the report is newer)
	// and reads the hash of the node's stored topology.
	var hash sql.NullString
	err = tx.QueryRowContext(ctx, db.x.Rebind(`UPDATE agent_tokens SET last_report_at = ?, last_seq = ?
WHERE node = ? AND token_hash = ? AND revoked_at IS NULL AND (last_report_at IS NULL OR last_report_at < ?)
RETURNING (SELECT hash FROM node_topology WHERE node_topology.node = agent_tokens.node)`),
		at, int64(r.Seq), r.Node, r.TokenHash, at).Scan(&hash)
	if errors.Is(err, sql.ErrNoRows) {
		var valid int
		err := tx.GetContext(ctx, &valid, db.x.Rebind(`SELECT COUNT(*) FROM agent_tokens WHERE node = ? AND token_hash = ? AND revoked_at IS NULL`), r.Node, r.TokenHash)
		if err != nil {
			return wrap(err)
		}
		if valid == 0 {
			return res, ErrAgentUnauthorized
		}
		res.Replayed = true
		return res, nil
	}
	if err != nil {
		return wrap(err)
	}
	res.TopologyHash = hash.String
	if _, err := tx.ExecContext(ctx, db.x.Rebind(`INSERT INTO agent_samples (node, at, received_at, gpus) VALUES (?, ?, ?, ?)`),
		r.Node, at, dbTime(r.Received), string(r.GPUs)); err != nil {
		return wrap(err)
	}
	if len(r.Activity) > 0 {
		// One statement for all the leases the report covers.
		var q strings.Builder
		q.WriteString(`INSERT INTO lease_activity (lease_id, node, seen_at, last_active_at, utilization, mem_used) VALUES `)
		args := make([]any, 0, 6*len(r.Activity))
		for i, a := range r.Activity {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(?, ?, ?, ?, ?, ?)")
			var active dbTime
			if a.Active {
				active = at
			}
			args = append(args, int64(a.Lease), r.Node, at, active, a.Utilization, int64(min(a.MemUsed, 1<<62)))
		}
		q.WriteString(`
ON CONFLICT (lease_id) DO UPDATE SET
  node = excluded.node,
  seen_at = excluded.seen_at,
  utilization = excluded.utilization,
  mem_used = excluded.mem_used,
  last_active_at = CASE
    WHEN excluded.last_active_at IS NOT NULL OR ABS(excluded.mem_used - lease_activity.mem_used) >= ` + fmt.Sprint(memChanged) + `
    THEN excluded.seen_at ELSE lease_activity.last_active_at END
WHERE lease_activity.seen_at < excluded.seen_at`)
		if _, err := tx.ExecContext(ctx, db.x.Rebind(q.String()), args...); err != nil {
			return wrap(err)
		}
	}
	if r.Topology != nil {
		b, err := json.Marshal(r.Topology)
		if err != nil {
			return wrap(err)
		}
		if _, err := tx.ExecContext(ctx, db.x.Rebind(`INSERT INTO node_topology (node, hash, read_at, topology) VALUES (?, ?, ?, ?)
ON CONFLICT (node) DO UPDATE SET hash = excluded.hash, read_at = excluded.read_at, topology = excluded.topology`),
			r.Node, r.TopologyHash, at, string(b)); err != nil {
			return wrap(err)
		}
		res.TopologyHash = r.TopologyHash
	}
	if err := tx.Commit(); err != nil {
		return wrap(err)
	}
	return res, nil
}

// Activity is what the agents last saw of a lease's GPUs; ok is false when no report covered it.
func (db *DB) Activity(ctx context.Context, id qm.LeaseID) (a qm.Activity, ok bool, err error) {
	var seen, last dbTime
	err = db.x.QueryRowContext(ctx, db.x.Rebind(`SELECT seen_at, last_active_at, utilization FROM lease_activity WHERE lease_id = ?`), int64(id)).
		Scan(&seen, &last, &a.Utilization)
	if errors.Is(err, sql.ErrNoRows) {
		return a, false, nil
	}
	if err != nil {
		return a, false, fmt.Errorf("store: lease activity: %w", err)
	}
	a.Seen, a.LastActive = time.Time(seen), time.Time(last)
	return a, true, nil
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

// AgentSamples counts the raw samples kept for node (all nodes for "").
func (db *DB) AgentSamples(ctx context.Context, node string) (int, error) {
	var n int
	err := db.x.GetContext(ctx, &n, db.x.Rebind(`SELECT COUNT(*) FROM agent_samples WHERE node = ? OR ? = ''`), node, node)
	if err != nil {
		return 0, fmt.Errorf("store: agent samples: %w", err)
	}
	return n, nil
}

// PruneAgentData forgets raw samples taken before samplesBefore and the activity of leases no
// report has covered since activityBefore; it says how many rows it forgot.
func (db *DB) PruneAgentData(ctx context.Context, samplesBefore, activityBefore time.Time) (int64, error) {
	a, err := db.x.ExecContext(ctx, db.x.Rebind(`DELETE FROM agent_samples WHERE at < ?`), dbTime(samplesBefore))
	if err != nil {
		return 0, fmt.Errorf("store: prune agent samples: %w", err)
	}
	b, err := db.x.ExecContext(ctx, db.x.Rebind(`DELETE FROM lease_activity WHERE seen_at < ?`), dbTime(activityBefore))
	if err != nil {
		return 0, fmt.Errorf("store: prune lease activity: %w", err)
	}
	na, _ := a.RowsAffected()
	nb, _ := b.RowsAffected()
	return na + nb, nil
}
