package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/acme/quartermaster/internal/qm"
)

// leaseRow is a row of leases.
type leaseRow struct {
	ID         int64           `db:"id"`
	User       string          `db:"user_name"`
	Team       string          `db:"team"`
	Class      string          `db:"class"`
	GPUs       int             `db:"gpus"`
	DurationNS int64           `db:"duration_ns"`
	Template   string          `db:"template"`
	DataClass  string          `db:"data_class"`
	Exclusive  bool            `db:"exclusive"`
	State      string          `db:"state"`
	Node       string          `db:"node"`
	GPUIndex   string          `db:"gpu_index"`
	Rules      string          `db:"rules"`
	Reason     string          `db:"reason"`
	Connect    string          `db:"connect"`
	Ref        string          `db:"ref"`
	RequestKey sql.NullString  `db:"request_key"`
	CreatedAt  dbTime          `db:"created_at"`
	StartedAt  dbTime          `db:"started_at"`
	ExpiresAt  dbTime          `db:"expires_at"`
	EndedAt    dbTime          `db:"ended_at"`
	KeptAt     dbTime          `db:"kept_at"`
	WarnedAt   dbTime          `db:"warned_at"`
	DecidedBy  string          `db:"decided_by"`
	DecidedAt  dbTime          `db:"decided_at"`
	Reclaimed  float64         `db:"reclaimed_gpu_hours"`
	Extensions int             `db:"extensions"`
	Kind       string          `db:"kind"`
	Parent     int64           `db:"parent_id"`
	Because    string          `db:"because"`
	Params     string          `db:"params"`
	Connection string          `db:"gpu_connection"`
	Price      sql.NullFloat64 `db:"price_per_gpu_hour"`
	// ExpiryWarnedFor is the end time the owner was warned of.
	ExpiryWarnedFor dbTime `db:"expiry_warned_for"`
	// Pauses are the spans the lease's workspace did not run (formatPauses).
	Pauses string `db:"pauses"`
	// SubmittingUntil is when the claim of the replica submitting the lease's job lapses.
	SubmittingUntil dbTime `db:"submitting_until"`
	// AskedGPUs are the GPUs asked for where they were rounded up to whole nodes; 0 otherwise.
	AskedGPUs int `db:"asked_gpus"`
	// SubmittingBy names the process that holds that claim (host/pid@start).
	SubmittingBy string `db:"submitting_by"`
	// ExtendedNS is what the lease's extensions added to its length.
	ExtendedNS int64 `db:"extended_ns"`
}

// leaseFields are the columns of leases other than id, in table order.
var leaseFields = []string{
	"user_name", "team", "class", "gpus", "duration_ns", "template", "data_class", "exclusive",
	"state", "node", "gpu_index", "rules", "reason", "connect", "ref", "request_key",
	"created_at", "started_at", "expires_at", "ended_at", "kept_at", "warned_at",
	"decided_by", "decided_at", "reclaimed_gpu_hours", "extensions",
	"kind", "parent_id", "because",
	"params",
	"gpu_connection",
	"price_per_gpu_hour",
	"expiry_warned_for",
	"pauses",
	"submitting_until",
	"asked_gpus",
	"submitting_by",
	"extended_ns",
}

// Statements built once from leaseFields, with :name parameters bound from a leaseRow.
var (
	leaseColumns = "id, " + strings.Join(leaseFields, ", ")
	// slimLeaseColumns are what a qm.LeaseFilter with Slim reads: what admission and placement need.
	slimLeaseColumns = "id, kind, user_name, team, class, gpus, duration_ns, exclusive, state, node, gpu_index, created_at, started_at, expires_at, ended_at, pauses"

	// ON CONFLICT DO NOTHING turns a repeated request key into "no row returned" instead of an
	// error, which on PostgreSQL would abort the whole transaction: the caller can still look the
	// earlier lease up in the same transaction.
	insertLeaseSQL = "INSERT INTO leases (" + strings.Join(leaseFields, ", ") + ") VALUES (:" +
		strings.Join(leaseFields, ", :") + ") ON CONFLICT DO NOTHING RETURNING id"

	updateLeaseSQL = func() string {
		set := make([]string, len(leaseFields))
		for i, f := range leaseFields {
			set[i] = f + " = :" + f
		}
		return "UPDATE leases SET " + strings.Join(set, ", ") + " WHERE id = :id AND state = :from_state"
	}()
)

func toLeaseRow(l *qm.Lease) leaseRow {
	return leaseRow{
		ID:         int64(l.ID),
		User:       l.User,
		Team:       l.Team,
		Class:      l.Class,
		GPUs:       l.GPUs,
		DurationNS: int64(l.Duration),
		Template:   l.Template,
		DataClass:  l.DataClass,
		Exclusive:  l.Exclusive,
		State:      string(l.State),
		Node:       l.Node,
		GPUIndex:   formatGPUIndex(l.GPUIndex),
		Rules:      l.Rules,
		Reason:     l.Reason,
		Connect:    l.Connect,
		Ref:        l.Ref,
		RequestKey: sql.NullString{String: l.RequestKey, Valid: l.RequestKey != ""},
		CreatedAt:  dbTime(l.CreatedAt),
		StartedAt:  dbTime(l.StartedAt),
		ExpiresAt:  dbTime(l.ExpiresAt),
		EndedAt:    dbTime(l.EndedAt),
		KeptAt:     dbTime(l.KeptAt),
		WarnedAt:   dbTime(l.WarnedAt),
		DecidedBy:  l.DecidedBy,
		DecidedAt:  dbTime(l.DecidedAt),
		Reclaimed:  l.Reclaimed,
		Extensions: l.Extensions,
		Kind:       string(l.Kind),
		Parent:     int64(l.Parent),
		Because:    l.Because,
		Params:     formatParams(l.Params),
		Connection: string(l.Connection),
		Price:      sql.NullFloat64{Float64: l.Price, Valid: l.Priced},

		ExpiryWarnedFor: dbTime(l.ExpiryWarnedFor),
		Pauses:          formatPauses(l.Pauses),
		SubmittingUntil: dbTime(l.SubmittingUntil),
		AskedGPUs:       l.AskedGPUs,
		SubmittingBy:    l.SubmittingBy,
		ExtendedNS:      int64(l.Extended),
	}
}

func (r *leaseRow) lease() (*qm.Lease, error) {
	idx, err := parseGPUIndex(r.GPUIndex)
	if err != nil {
		return nil, fmt.Errorf("store: lease %d: %w", r.ID, err)
	}
	params, err := parseParams(r.Params)
	if err != nil {
		return nil, fmt.Errorf("store: lease %d: %w", r.ID, err)
	}
	pauses, err := parsePauses(r.Pauses)
	if err != nil {
		return nil, fmt.Errorf("store: lease %d: %w", r.ID, err)
	}
	return &qm.Lease{
		ID:         qm.LeaseID(r.ID),
		User:       r.User,
		Team:       r.Team,
		Class:      r.Class,
		GPUs:       r.GPUs,
		Duration:   time.Duration(r.DurationNS),
		Template:   r.Template,
		DataClass:  r.DataClass,
		Exclusive:  r.Exclusive,
		State:      qm.State(r.State),
		Node:       r.Node,
		GPUIndex:   idx,
		Rules:      r.Rules,
		Reason:     r.Reason,
		Connect:    r.Connect,
		Ref:        r.Ref,
		RequestKey: r.RequestKey.String,
		CreatedAt:  time.Time(r.CreatedAt),
		StartedAt:  time.Time(r.StartedAt),
		ExpiresAt:  time.Time(r.ExpiresAt),
		EndedAt:    time.Time(r.EndedAt),
		KeptAt:     time.Time(r.KeptAt),
		WarnedAt:   time.Time(r.WarnedAt),
		DecidedBy:  r.DecidedBy,
		DecidedAt:  time.Time(r.DecidedAt),
		Reclaimed:  r.Reclaimed,
		Extensions: r.Extensions,
		Kind:       qm.Kind(r.Kind),
		Parent:     qm.LeaseID(r.Parent),
		Because:    r.Because,
		Params:     params,
		Connection: qm.Connection(r.Connection),
		Price:      r.Price.Float64,
		Priced:     r.Price.Valid,

		ExpiryWarnedFor: time.Time(r.ExpiryWarnedFor),
		Pauses:          pauses,
		SubmittingUntil: time.Time(r.SubmittingUntil),
		AskedGPUs:       r.AskedGPUs,
		SubmittingBy:    r.SubmittingBy,
		Extended:        time.Duration(r.ExtendedNS),
	}, nil
}

// formatParams writes template parameters as a JSON object; none is "".
func formatParams(p map[string]string) string {
	if len(p) == 0 {
		return ""
	}
	b, _ := json.Marshal(p) // a map of strings always marshals
	return string(b)
}

// pauseJSON is a qm.Pause as the pauses column keeps it; To is absent while the pause lasts.
type pauseJSON struct {
	Kind string     `json:"kind"`
	From time.Time  `json:"from"`
	To   *time.Time `json:"to,omitempty"`
}

// formatPauses writes a lease's pauses as a JSON list, with times in UTC to the microsecond, as
// the database keeps every other time; none is "".
func formatPauses(ps []qm.Pause) string {
	if len(ps) == 0 {
		return ""
	}
	out := make([]pauseJSON, len(ps))
	for i, p := range ps {
		out[i] = pauseJSON{Kind: string(p.Kind), From: p.From.UTC().Truncate(time.Microsecond)}
		if !p.To.IsZero() {
			to := p.To.UTC().Truncate(time.Microsecond)
			out[i].To = &to
		}
	}
	b, _ := json.Marshal(out) // strings and times always marshal
	return string(b)
}

// parsePauses reads what formatPauses wrote; "" is nil.
func parsePauses(s string) ([]qm.Pause, error) {
	if s == "" {
		return nil, nil
	}
	var in []pauseJSON
	if err := json.Unmarshal([]byte(s), &in); err != nil {
		return nil, fmt.Errorf("bad pauses %q", s)
	}
	out := make([]qm.Pause, len(in))
	for i, p := range in {
		out[i] = qm.Pause{Kind: qm.PauseKind(p.Kind), From: p.From}
		if p.To != nil {
			out[i].To = *p.To
		}
	}
	return out, nil
}

// parseParams reads what formatParams wrote; "" is nil.
func parseParams(s string) (map[string]string, error) {
	if s == "" {
		return nil, nil
	}
	var p map[string]string
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		return nil, fmt.Errorf("bad params %q", s)
	}
	return p, nil
}

// formatGPUIndex writes GPU indexes as "0,1"; none is "".
func formatGPUIndex(idx []int) string {
	parts := make([]string, len(idx))
	for i, n := range idx {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}

// parseGPUIndex reads what formatGPUIndex wrote; "" is nil.
func parseGPUIndex(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	idx := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return nil, fmt.Errorf("bad gpu_index %q", s)
		}
		idx[i] = n
	}
	return idx, nil
}

// CreateLease inserts l and sets l.ID. A RequestKey already used gives an ECONFLICT error and
// leaves the transaction usable.
func (t *tx) CreateLease(ctx context.Context, l *qm.Lease) error {
	if err := t.writable(); err != nil {
		return err
	}
	q, args, err := t.x.BindNamed(insertLeaseSQL, toLeaseRow(l))
	if err != nil {
		return fmt.Errorf("store: create lease: %w", err)
	}
	var id int64
	err = t.x.QueryRowxContext(ctx, q, args...).Scan(&id)
	switch {
	case errors.Is(err, sql.ErrNoRows), isUniqueViolation(err):
		return conflictKey(l.RequestKey)
	case err != nil:
		return fmt.Errorf("store: create lease: %w", err)
	}
	l.ID = qm.LeaseID(id)
	return nil
}

func conflictKey(key string) error {
	if key == "" {
		return qm.Errorf(qm.ECONFLICT, "that lease exists already")
	}
	return qm.Errorf(qm.ECONFLICT, "request %s has already made a lease", key)
}

// GetLease returns qm.ErrNotFound when there is no such lease.
func (t *tx) GetLease(ctx context.Context, id qm.LeaseID) (*qm.Lease, error) {
	return t.oneLease(ctx, "SELECT "+leaseColumns+" FROM leases WHERE id = ?", int64(id))
}

// LeaseByRequestKey returns qm.ErrNotFound when no lease has that key; "" has none.
func (t *tx) LeaseByRequestKey(ctx context.Context, key string) (*qm.Lease, error) {
	if key == "" {
		return nil, qm.ErrNotFound
	}
	return t.oneLease(ctx, "SELECT "+leaseColumns+" FROM leases WHERE request_key = ?", key)
}

func (t *tx) oneLease(ctx context.Context, q string, args ...any) (*qm.Lease, error) {
	var r leaseRow
	err := t.x.GetContext(ctx, &r, t.x.Rebind(q), args...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, qm.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: get lease: %w", err)
	}
	return r.lease()
}

// updateLeaseArg is what updateLeaseSQL binds: every field of l, and the state it must still be in.
type updateLeaseArg struct {
	leaseRow
	From string `db:"from_state"`
}

func updateArg(l *qm.Lease, from qm.State) updateLeaseArg {
	return updateLeaseArg{toLeaseRow(l), string(from)}
}

// UpdateLease writes every field of l if the stored lease is still in state from. It returns
// qm.ErrStale when the state moved on, qm.ErrNotFound when there is no lease l.ID.
func (t *tx) UpdateLease(ctx context.Context, l *qm.Lease, from qm.State) error {
	if err := t.writable(); err != nil {
		return err
	}
	arg := updateArg(l, from)
	q, args, err := t.x.BindNamed(updateLeaseSQL, arg)
	if err != nil {
		return fmt.Errorf("store: update lease: %w", err)
	}
	res, err := t.x.ExecContext(ctx, q, args...)
	if isUniqueViolation(err) {
		return conflictKey(l.RequestKey)
	}
	if err != nil {
		return fmt.Errorf("store: update lease %s: %w", l.ID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: update lease %s: %w", l.ID, err)
	}
	if n > 0 {
		return nil
	}
	var exists int
	if err := t.x.GetContext(ctx, &exists, t.x.Rebind("SELECT COUNT(*) FROM leases WHERE id = ?"), int64(l.ID)); err != nil {
		return fmt.Errorf("store: update lease %s: %w", l.ID, err)
	}
	if exists == 0 {
		return qm.ErrNotFound
	}
	return qm.ErrStale
}

// ListLeases returns the leases f selects, ordered by id.
func (t *tx) ListLeases(ctx context.Context, f qm.LeaseFilter) ([]*qm.Lease, error) {
	var (
		where []string
		args  []any
	)
	if f.Kind != qm.AnyKind {
		where, args = append(where, "kind = ?"), append(args, string(f.Kind))
	}
	if f.Parent != 0 {
		where, args = append(where, "parent_id = ?"), append(args, int64(f.Parent))
	}
	if f.User != "" {
		where, args = append(where, "user_name = ?"), append(args, f.User)
	}
	if f.Team != "" {
		where, args = append(where, "team = ?"), append(args, f.Team)
	}
	if f.Class != "" {
		where, args = append(where, "class = ?"), append(args, f.Class)
	}
	if len(f.States) > 0 {
		states := make([]string, len(f.States))
		for i, s := range f.States {
			states[i] = string(s)
		}
		where, args = append(where, "state IN (?)"), append(args, states)
	}
	if !f.EndedAfter.IsZero() {
		where = append(where, "(ended_at IS NULL OR ended_at >= ?)")
		args = append(args, dbTime(f.EndedAfter))
	}
	cols := leaseColumns
	if f.Slim {
		cols = slimLeaseColumns
	}
	q := "SELECT " + cols + " FROM leases"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY id"
	if f.Limit > 0 {
		q, args = q+" LIMIT ?", append(args, f.Limit)
	}
	q, args, err := sqlx.In(q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list leases: %w", err)
	}
	var rows []leaseRow
	if err := t.x.SelectContext(ctx, &rows, t.x.Rebind(q), args...); err != nil {
		return nil, fmt.Errorf("store: list leases: %w", err)
	}
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

// SubmissionClaimers names the processes that hold live claims on leases' submissions at now
// (leases.submitting_by, of provisioning leases whose claim has not lapsed).
func (db *DB) SubmissionClaimers(ctx context.Context, now time.Time) ([]string, error) {
	var owners []string
	err := db.x.SelectContext(ctx, &owners, db.x.Rebind("SELECT DISTINCT submitting_by FROM leases WHERE state = ? AND submitting_by <> '' AND submitting_until > ? ORDER BY submitting_by"),
		string(qm.Provisioning), dbTime(now))
	if err != nil {
		return nil, fmt.Errorf("store: submission claimers: %w", err)
	}
	return owners, nil
}

// ReleaseSubmissionClaims ends at once the claims that owners (processes known to have stopped)
// hold on leases' submissions, as if they had lapsed: the next reconcile pass of any process
// adopts the job such a lease has in the scheduler, or, as after a lapse, submits it again once
// it has waited QM_SUBMIT_GRACE. It says how many leases it released.
func (db *DB) ReleaseSubmissionClaims(ctx context.Context, owners []string) (int64, error) {
	if len(owners) == 0 {
		return 0, nil
	}
	res, err := execIn(ctx, db.x, "UPDATE leases SET submitting_until = NULL, submitting_by = '' WHERE state = ? AND submitting_by IN (?)",
		string(qm.Provisioning), owners)
	if err != nil {
		return 0, fmt.Errorf("store: release submission claims: %w", err)
	}
	return res.RowsAffected()
}
