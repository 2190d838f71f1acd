package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/acme/quartermaster/internal/qm"
)

// linkJSON is an account link as group_notices keeps it: without the provider's tokens.
func linkJSON(l *qm.AccountLink) (sql.NullString, error) {
	if l == nil {
		return sql.NullString{}, nil
	}
	c := *l
	c.Tokens = nil
	b, err := json.Marshal(c)
	if err != nil {
		return sql.NullString{}, err
	}
	return sql.NullString{String: string(b), Valid: true}, nil
}

// RecordGroupsChange writes, in one transaction, a change of a link's groups that a re-check
// found (at) and the change to tell: after replaces the link (nil: the sign-in was revoked, and the
// account is unlinked), and the change is kept, claimed by owner until until, until
// GroupsChangeTold. It does so only while the link is still as the re-check read it (the same
// login and the same last check): false, with nothing written, when the account logged in again,
// logged out, or another replica's re-check took it first.
func (db *DB) RecordGroupsChange(ctx context.Context, before qm.AccountLink, after *qm.AccountLink, at time.Time, owner string, until time.Time) (int64, bool, error) {
	a := before.Account
	bj, err := linkJSON(&before)
	if err != nil {
		return 0, false, fmt.Errorf("store: record groups change of %s: %w", a, err)
	}
	aj, err := linkJSON(after)
	if err != nil {
		return 0, false, fmt.Errorf("store: record groups change of %s: %w", a, err)
	}
	tx, err := db.x.BeginTxx(ctx, nil)
	if err != nil {
		return 0, false, fmt.Errorf("store: record groups change of %s: %w", a, err)
	}
	defer func() { _ = tx.Rollback() }()
	var res sql.Result
	where := ` WHERE platform = ? AND workspace = ? AND chat_user = ? AND login_at = ? AND checked_at = ?`
	keys := []any{a.Platform, a.Workspace, a.User, dbTime(before.LoginAt), dbTime(before.CheckedAt)}
	if after == nil {
		res, err = tx.ExecContext(ctx, tx.Rebind(`DELETE FROM account_links`+where), keys...)
	} else {
		g, gerr := groupsText(after.Groups)
		if gerr != nil {
			return 0, false, gerr
		}
		res, err = tx.ExecContext(ctx, tx.Rebind(`UPDATE account_links SET idp_groups = ?, checked_at = ?, tokens = ?, no_groups_at = NULL`+where),
			append([]any{g, dbTime(after.CheckedAt), after.Tokens}, keys...)...)
	}
	if err != nil {
		return 0, false, fmt.Errorf("store: record groups change of %s: %w", a, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return 0, false, err
	}
	var id int64
	err = tx.QueryRowxContext(ctx, tx.Rebind(`INSERT INTO group_notices (platform, workspace, chat_user, before_link, after_link, created_at, claimed_by, claimed_until)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
		a.Platform, a.Workspace, a.User, bj, aj, dbTime(at), owner, dbTime(until)).Scan(&id)
	if err != nil {
		return 0, false, fmt.Errorf("store: record groups change of %s: %w", a, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, false, fmt.Errorf("store: record groups change of %s: %w", a, err)
	}
	return id, true, nil
}

// ClaimGroupsChanges claims for owner, until now+hold, up to limit changes still to tell, the
// oldest first: those owner holds already and those no live claim holds. On PostgreSQL the rows
// are locked with FOR UPDATE SKIP LOCKED, so replicas take different ones; on SQLite the one
// writer makes the claim atomic.
func (db *DB) ClaimGroupsChanges(ctx context.Context, owner string, now time.Time, hold time.Duration, limit int) ([]qm.GroupsChange, error) {
	if limit <= 0 {
		limit = 100
	}
	tx, err := db.x.BeginTxx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("store: claim groups changes: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	sel := `SELECT id, before_link, after_link FROM group_notices
		WHERE told_at IS NULL AND (claimed_by = ? OR claimed_until IS NULL OR claimed_until < ?) ORDER BY id LIMIT ?`
	if db.dialect == Postgres {
		sel += " FOR UPDATE SKIP LOCKED"
	}
	var rows []struct {
		ID     int64          `db:"id"`
		Before string         `db:"before_link"`
		After  sql.NullString `db:"after_link"`
	}
	if err := tx.SelectContext(ctx, &rows, tx.Rebind(sel), owner, dbTime(now), limit); err != nil {
		return nil, fmt.Errorf("store: claim groups changes: %w", err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	out := make([]qm.GroupsChange, 0, len(rows))
	ids := make([]int64, 0, len(rows))
	for _, r := range rows {
		c := qm.GroupsChange{ID: r.ID, Before: &qm.AccountLink{}}
		err := json.Unmarshal([]byte(r.Before), c.Before)
		if err == nil && r.After.Valid {
			c.After = &qm.AccountLink{}
			err = json.Unmarshal([]byte(r.After.String), c.After)
		}
		ids = append(ids, r.ID)
		if err != nil {
			// Claimed all the same, so that it is not read again and again; it cannot be told.
			db.logger.Error("a kept change of groups cannot be read; it is not told", "group_notice", r.ID, "err", err)
			continue
		}
		out = append(out, c)
	}
	if _, err := execIn(ctx, tx, "UPDATE group_notices SET claimed_by = ?, claimed_until = ? WHERE id IN (?)", owner, dbTime(now.Add(hold)), ids); err != nil {
		return nil, fmt.Errorf("store: claim groups changes: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("store: claim groups changes: %w", err)
	}
	return out, nil
}

// GroupsChangeTold marks a kept change of groups told and writes what is told of it (ns, one
// recipient each) into the outbox, in one transaction: the notices are queued once the change is
// marked told, and only then, so that a crash loses neither and a change is never queued twice.
// It returns the outbox rows, for the sender; false, with nothing written, when the change was
// told already (by another replica whose claim on it had lapsed).
func (db *DB) GroupsChangeTold(ctx context.Context, id int64, at time.Time, ns []qm.Notice) ([]int64, bool, error) {
	var ids []int64
	told := false
	err := db.Update(ctx, nil, func(qt qm.Tx) error {
		t := qt.(*tx)
		ids, told = nil, false
		res, err := t.x.ExecContext(ctx, t.x.Rebind(`UPDATE group_notices SET told_at = ?, claimed_until = NULL WHERE id = ? AND told_at IS NULL`), dbTime(at), id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return err
		}
		told = true
		if len(ns) > 0 {
			ids, err = t.AddNotices(ctx, ns, at)
		}
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("store: groups change %d told: %w", id, err)
	}
	return ids, told, nil
}

// RenewGroupsChanges extends owner's claims on the changes it has still to tell until until.
func (db *DB) RenewGroupsChanges(ctx context.Context, owner string, until time.Time) error {
	if _, err := db.x.ExecContext(ctx, db.x.Rebind(`UPDATE group_notices SET claimed_until = ? WHERE claimed_by = ? AND told_at IS NULL`), dbTime(until), owner); err != nil {
		return fmt.Errorf("store: renew claims on groups changes: %w", err)
	}
	return nil
}

// GroupsChangeClaimers names the processes that hold live claims at now on changes still to tell.
func (db *DB) GroupsChangeClaimers(ctx context.Context, now time.Time) ([]string, error) {
	var owners []string
	err := db.x.SelectContext(ctx, &owners, db.x.Rebind(`SELECT DISTINCT claimed_by FROM group_notices
		WHERE told_at IS NULL AND claimed_until >= ? AND claimed_by <> '' ORDER BY claimed_by`), dbTime(now))
	if err != nil {
		return nil, fmt.Errorf("store: claimers of groups changes: %w", err)
	}
	return owners, nil
}

// ReleaseGroupsChanges ends at once the claims of owners (a process that stops, or one known to
// have stopped) on the changes they have still to tell, so that the next pass of any replica
// tells them; it says how many it released.
func (db *DB) ReleaseGroupsChanges(ctx context.Context, owners []string) (int64, error) {
	if len(owners) == 0 {
		return 0, nil
	}
	res, err := execIn(ctx, db.x, "UPDATE group_notices SET claimed_by = '', claimed_until = NULL WHERE told_at IS NULL AND claimed_by IN (?)", owners)
	if err != nil {
		return 0, fmt.Errorf("store: release claims on groups changes: %w", err)
	}
	return res.RowsAffected()
}

// PruneGroupsChanges forgets the changes told before t and says how many it forgot.
func (db *DB) PruneGroupsChanges(ctx context.Context, before time.Time) (int64, error) {
	res, err := db.x.ExecContext(ctx, db.x.Rebind(`DELETE FROM group_notices WHERE told_at < ?`), dbTime(before))
	if err != nil {
		return 0, fmt.Errorf("store: prune groups changes: %w", err)
	}
	return res.RowsAffected()
}
