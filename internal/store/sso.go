package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/acme/quartermaster/internal/qm"
)

// accountLinkRow is a row of account_links.
type accountLinkRow struct {
	Platform  string `db:"platform"`
	Workspace string `db:"workspace"`
	ChatUser  string `db:"chat_user"`
	Issuer    string `db:"issuer"`
	Subject   string `db:"subject"`
	Email     string `db:"email"`
	Groups    string `db:"idp_groups"`
	LoginAt   dbTime `db:"login_at"`
	CheckedAt dbTime `db:"checked_at"`
	Tokens    []byte `db:"tokens"`
	NoGroups  dbTime `db:"no_groups_at"`
}

const accountLinkCols = `platform, workspace, chat_user, issuer, subject, email, idp_groups, login_at, checked_at, tokens, no_groups_at`

func (r accountLinkRow) link() (*qm.AccountLink, error) {
	l := &qm.AccountLink{
		Account: qm.Account{Platform: r.Platform, Workspace: r.Workspace, User: r.ChatUser},
		Issuer:  r.Issuer, Subject: r.Subject, Email: r.Email,
		LoginAt: time.Time(r.LoginAt), CheckedAt: time.Time(r.CheckedAt), Tokens: r.Tokens,
		NoGroupsAt: time.Time(r.NoGroups),
	}
	if r.Groups != "" {
		if err := json.Unmarshal([]byte(r.Groups), &l.Groups); err != nil {
			return nil, fmt.Errorf("store: groups of %s: %w", l.Account, err)
		}
	}
	return l, nil
}

func groupsText(groups []string) (string, error) {
	if len(groups) == 0 {
		return "", nil
	}
	b, err := json.Marshal(groups)
	return string(b), err
}

func linkRow(l qm.AccountLink) (accountLinkRow, error) {
	if l.Account.Platform == "" || l.Account.User == "" || l.Subject == "" || l.Email == "" || l.LoginAt.IsZero() {
		return accountLinkRow{}, fmt.Errorf("store: an account link needs a platform, a user, a subject, an email and a login time")
	}
	g, err := groupsText(l.Groups)
	if err != nil {
		return accountLinkRow{}, err
	}
	checked := l.CheckedAt
	if checked.IsZero() {
		checked = l.LoginAt
	}
	return accountLinkRow{Platform: l.Account.Platform, Workspace: l.Account.Workspace, ChatUser: l.Account.User,
		Issuer: l.Issuer, Subject: l.Subject, Email: qm.CanonicalUser(l.Email), Groups: g,
		LoginAt: dbTime(l.LoginAt), CheckedAt: dbTime(checked), Tokens: l.Tokens, NoGroups: dbTime(l.NoGroupsAt)}, nil
}

// upsertLink writes an account link in place of any the account had.
func (db *DB) upsertLink(ctx context.Context, x sqlx.ExtContext, l qm.AccountLink) error {
	row, err := linkRow(l)
	if err != nil {
		return err
	}
	q, args, err := sqlx.Named(`INSERT INTO account_links (`+accountLinkCols+`)
		VALUES (:platform, :workspace, :chat_user, :issuer, :subject, :email, :idp_groups, :login_at, :checked_at, :tokens, :no_groups_at)
		ON CONFLICT (platform, workspace, chat_user) DO UPDATE SET issuer = excluded.issuer,
		subject = excluded.subject, email = excluded.email, idp_groups = excluded.idp_groups,
		login_at = excluded.login_at, checked_at = excluded.checked_at, tokens = excluded.tokens,
		no_groups_at = excluded.no_groups_at`, row)
	if err != nil {
		return fmt.Errorf("store: save account link: %w", err)
	}
	if _, err := x.ExecContext(ctx, x.Rebind(q), args...); err != nil {
		return fmt.Errorf("store: save account link %s: %w", l.Account, err)
	}
	// The account is where the person's notices reach them on its platform, and nobody else's.
	if _, err := x.ExecContext(ctx, x.Rebind(`DELETE FROM chat_accounts WHERE platform = ? AND workspace = ? AND chat_user = ? AND email <> ?`),
		l.Account.Platform, l.Account.Workspace, l.Account.User, qm.CanonicalUser(l.Email)); err != nil {
		return fmt.Errorf("store: save chat account %s: %w", l.Account, err)
	}
	if _, err := x.ExecContext(ctx, x.Rebind(`INSERT INTO chat_accounts (email, platform, workspace, chat_user, linked_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (email, platform) DO UPDATE SET workspace = excluded.workspace, chat_user = excluded.chat_user, linked_at = excluded.linked_at`),
		qm.CanonicalUser(l.Email), l.Account.Platform, l.Account.Workspace, l.Account.User, dbTime(l.LoginAt)); err != nil {
		return fmt.Errorf("store: save chat account %s: %w", l.Account, err)
	}
	return nil
}

// ChatAccount is the chat account on platform that the person with this email last signed in
// from, linked or not since (signed out, revoked at the identity provider): where their notices
// reach them there. ok is false when there is none, or a platform admin unlinked it.
func (db *DB) ChatAccount(ctx context.Context, email, platform string) (qm.Account, bool, error) {
	var row struct {
		Workspace string `db:"workspace"`
		User      string `db:"chat_user"`
	}
	err := db.x.GetContext(ctx, &row, db.x.Rebind(`SELECT workspace, chat_user FROM chat_accounts WHERE email = ? AND platform = ?`),
		qm.CanonicalUser(email), platform)
	if errors.Is(err, sql.ErrNoRows) {
		return qm.Account{}, false, nil
	}
	if err != nil {
		return qm.Account{}, false, fmt.Errorf("store: chat account of %s on %s: %w", email, platform, err)
	}
	return qm.Account{Platform: platform, Workspace: row.Workspace, User: row.User}, true, nil
}

// ForgetChatAccount forgets a chat account as where anyone's notices reach them (a platform
// admin unlinked it).
func (db *DB) ForgetChatAccount(ctx context.Context, a qm.Account) error {
	if _, err := db.x.ExecContext(ctx, db.x.Rebind(`DELETE FROM chat_accounts WHERE platform = ? AND workspace = ? AND chat_user = ?`),
		a.Platform, a.Workspace, a.User); err != nil {
		return fmt.Errorf("store: forget chat account %s: %w", a, err)
	}
	return nil
}

// ForgetChatAccountsOf forgets every chat account of the person with this email as where their
// notices reach them (a platform admin unlinked them).
func (db *DB) ForgetChatAccountsOf(ctx context.Context, email string) error {
	if _, err := db.x.ExecContext(ctx, db.x.Rebind(`DELETE FROM chat_accounts WHERE email = ?`), qm.CanonicalUser(email)); err != nil {
		return fmt.Errorf("store: forget the chat accounts of %s: %w", email, err)
	}
	return nil
}

// SaveAccountLink links a chat account, replacing what it was linked to before.
func (db *DB) SaveAccountLink(ctx context.Context, l qm.AccountLink) error {
	return db.upsertLink(ctx, db.x, l)
}

// AccountLink is the link of a chat account, or qm.ErrNotFound.
func (db *DB) AccountLink(ctx context.Context, a qm.Account) (*qm.AccountLink, error) {
	var row accountLinkRow
	err := db.x.GetContext(ctx, &row, db.x.Rebind(`SELECT `+accountLinkCols+` FROM account_links
		WHERE platform = ? AND workspace = ? AND chat_user = ?`), a.Platform, a.Workspace, a.User)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, qm.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: account link of %s: %w", a, err)
	}
	return row.link()
}

// AccountLinksByEmail lists the chat accounts linked to the identity with this email, the most
// recent login first.
func (db *DB) AccountLinksByEmail(ctx context.Context, email string) ([]*qm.AccountLink, error) {
	var rows []accountLinkRow
	err := db.x.SelectContext(ctx, &rows, db.x.Rebind(`SELECT `+accountLinkCols+` FROM account_links
		WHERE email = ? ORDER BY login_at DESC, platform, workspace, chat_user`), qm.CanonicalUser(email))
	if err != nil {
		return nil, fmt.Errorf("store: account links of %s: %w", email, err)
	}
	return linksOf(rows)
}

func linksOf(rows []accountLinkRow) ([]*qm.AccountLink, error) {
	out := make([]*qm.AccountLink, 0, len(rows))
	for _, r := range rows {
		l, err := r.link()
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// AccountLinksCheckedBefore lists up to limit links whose groups were last read before t, the
// longest unchecked first, skipping the first offset of them.
func (db *DB) AccountLinksCheckedBefore(ctx context.Context, t time.Time, offset, limit int) ([]*qm.AccountLink, error) {
	if limit <= 0 {
		limit = 100
	}
	var rows []accountLinkRow
	err := db.x.SelectContext(ctx, &rows, db.x.Rebind(`SELECT `+accountLinkCols+` FROM account_links
		WHERE checked_at < ? ORDER BY checked_at, platform, workspace, chat_user LIMIT ? OFFSET ?`), dbTime(t), limit, max(offset, 0))
	if err != nil {
		return nil, fmt.Errorf("store: account links to check: %w", err)
	}
	return linksOf(rows)
}

// UpdateAccountGroups records a re-check of a link: its groups, when they were read and the
// provider's latest tokens (a note that the provider gave no groups is cleared). It changes
// nothing, and says false, when the account logged in again (or was unlinked) since loginAt:
// that login's groups are newer.
func (db *DB) UpdateAccountGroups(ctx context.Context, a qm.Account, loginAt time.Time, groups []string, checkedAt time.Time, tokens []byte) (bool, error) {
	g, err := groupsText(groups)
	if err != nil {
		return false, err
	}
	res, err := db.x.ExecContext(ctx, db.x.Rebind(`UPDATE account_links SET idp_groups = ?, checked_at = ?, tokens = ?, no_groups_at = NULL
		WHERE platform = ? AND workspace = ? AND chat_user = ? AND login_at = ?`),
		g, dbTime(checkedAt), tokens, a.Platform, a.Workspace, a.User, dbTime(loginAt))
	if err != nil {
		return false, fmt.Errorf("store: update groups of %s: %w", a, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// KeepAccountGroups records a re-check that confirmed no groups: the groups and when they were
// last read stay as they were; the provider's latest tokens are kept (a provider that rotates
// refresh tokens spent the old one), and noGroupsAt notes when the provider last gave no groups
// at all (zero: not since the last sign-in). Like UpdateAccountGroups, it changes nothing and
// says false when the account logged in again (or was unlinked) since loginAt.
func (db *DB) KeepAccountGroups(ctx context.Context, a qm.Account, loginAt, noGroupsAt time.Time, tokens []byte) (bool, error) {
	res, err := db.x.ExecContext(ctx, db.x.Rebind(`UPDATE account_links SET tokens = ?, no_groups_at = ?
		WHERE platform = ? AND workspace = ? AND chat_user = ? AND login_at = ?`),
		tokens, dbTime(noGroupsAt), a.Platform, a.Workspace, a.User, dbTime(loginAt))
	if err != nil {
		return false, fmt.Errorf("store: keep groups of %s: %w", a, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// DeleteAccountLink unlinks a chat account; false when it was not linked.
func (db *DB) DeleteAccountLink(ctx context.Context, a qm.Account) (bool, error) {
	res, err := db.x.ExecContext(ctx, db.x.Rebind(`DELETE FROM account_links WHERE platform = ? AND workspace = ? AND chat_user = ?`),
		a.Platform, a.Workspace, a.User)
	if err != nil {
		return false, fmt.Errorf("store: unlink %s: %w", a, err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// DeleteAccountLinksByEmail unlinks every chat account linked to the identity with this email
// and says how many there were.
func (db *DB) DeleteAccountLinksByEmail(ctx context.Context, email string) (int64, error) {
	res, err := db.x.ExecContext(ctx, db.x.Rebind(`DELETE FROM account_links WHERE email = ?`), qm.CanonicalUser(email))
	if err != nil {
		return 0, fmt.Errorf("store: unlink %s: %w", email, err)
	}
	return res.RowsAffected()
}

// loginLinkRow is a row of login_links.
type loginLinkRow struct {
	Hash      string         `db:"hash"`
	Platform  string         `db:"platform"`
	Workspace string         `db:"workspace"`
	ChatUser  string         `db:"chat_user"`
	ChatEmail string         `db:"chat_email"`
	Resume    string         `db:"resume"`
	CreatedAt dbTime         `db:"created_at"`
	ExpiresAt dbTime         `db:"expires_at"`
	OpenedAt  dbTime         `db:"opened_at"`
	StateHash sql.NullString `db:"state_hash"`
	DoneAt    dbTime         `db:"done_at"`
}

const loginLinkCols = `hash, platform, workspace, chat_user, chat_email, resume, created_at, expires_at, opened_at, state_hash, done_at`

func (r loginLinkRow) link() *qm.LoginLink {
	return &qm.LoginLink{Hash: r.Hash, Account: qm.Account{Platform: r.Platform, Workspace: r.Workspace, User: r.ChatUser},
		ChatEmail: r.ChatEmail, Resume: r.Resume, CreatedAt: time.Time(r.CreatedAt), ExpiresAt: time.Time(r.ExpiresAt),
		OpenedAt: time.Time(r.OpenedAt), StateHash: r.StateHash.String, DoneAt: time.Time(r.DoneAt)}
}

// CreateLoginLink keeps a new one-time link (its hash, never its secret).
func (db *DB) CreateLoginLink(ctx context.Context, l qm.LoginLink) error {
	if l.Hash == "" || l.Account.Platform == "" || l.Account.User == "" || l.CreatedAt.IsZero() || !l.ExpiresAt.After(l.CreatedAt) {
		return fmt.Errorf("store: a login link needs a hash, an account and a lifetime")
	}
	row := loginLinkRow{Hash: l.Hash, Platform: l.Account.Platform, Workspace: l.Account.Workspace, ChatUser: l.Account.User,
		ChatEmail: qm.CanonicalUser(l.ChatEmail), Resume: l.Resume, CreatedAt: dbTime(l.CreatedAt), ExpiresAt: dbTime(l.ExpiresAt)}
	q, args, err := db.x.BindNamed(`INSERT INTO login_links (hash, platform, workspace, chat_user, chat_email, resume, created_at, expires_at)
		VALUES (:hash, :platform, :workspace, :chat_user, :chat_email, :resume, :created_at, :expires_at)`, row)
	if err != nil {
		return fmt.Errorf("store: create login link: %w", err)
	}
	if _, err := db.x.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("store: create login link: %w", err)
	}
	return nil
}

// LoginLink is the link with this hash, or qm.ErrNotFound.
func (db *DB) LoginLink(ctx context.Context, hash string) (*qm.LoginLink, error) {
	return db.loginLinkWhere(ctx, "hash", hash)
}

// LoginLinkByState is the link whose login carries the state with this hash, or qm.ErrNotFound.
func (db *DB) LoginLinkByState(ctx context.Context, stateHash string) (*qm.LoginLink, error) {
	return db.loginLinkWhere(ctx, "state_hash", stateHash)
}

func (db *DB) loginLinkWhere(ctx context.Context, col, v string) (*qm.LoginLink, error) {
	var row loginLinkRow
	err := db.x.GetContext(ctx, &row, db.x.Rebind(`SELECT `+loginLinkCols+` FROM login_links WHERE `+col+` = ?`), v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, qm.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: login link: %w", err)
	}
	return row.link(), nil
}

// OpenLoginLink marks a link opened at now, with the hash of the state its login carries. Only
// the first opening of a link that has not expired counts: any other says false.
func (db *DB) OpenLoginLink(ctx context.Context, hash, stateHash string, now time.Time) (bool, error) {
	res, err := db.x.ExecContext(ctx, db.x.Rebind(`UPDATE login_links SET opened_at = ?, state_hash = ?
		WHERE hash = ? AND opened_at IS NULL AND done_at IS NULL AND expires_at > ?`),
		dbTime(now), stateHash, hash, dbTime(now))
	if err != nil {
		return false, fmt.Errorf("store: open login link: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// FinishLoginLink marks an opened link done without linking anything (a refused login), so its
// state cannot be tried again; false when it was done already.
func (db *DB) FinishLoginLink(ctx context.Context, hash string, now time.Time) (bool, error) {
	res, err := db.x.ExecContext(ctx, db.x.Rebind(`UPDATE login_links SET done_at = ? WHERE hash = ? AND done_at IS NULL`), dbTime(now), hash)
	if err != nil {
		return false, fmt.Errorf("store: finish login link: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// CompleteLogin marks an opened link done and saves the account link its login proved, in one
// transaction: a link completes once, and links an account at most once. False, with nothing
// saved, when the link was done already.
func (db *DB) CompleteLogin(ctx context.Context, hash string, l qm.AccountLink, now time.Time) (bool, error) {
	tx, err := db.x.BeginTxx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("store: complete login: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	res, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE login_links SET done_at = ? WHERE hash = ? AND done_at IS NULL AND opened_at IS NOT NULL`), dbTime(now), hash)
	if err != nil {
		return false, fmt.Errorf("store: complete login: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return false, err
	}
	if err := db.upsertLink(ctx, tx, l); err != nil {
		return false, err
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("store: complete login: %w", err)
	}
	return true, nil
}

// PruneLoginLinks forgets links that expired before t and says how many it forgot.
func (db *DB) PruneLoginLinks(ctx context.Context, before time.Time) (int64, error) {
	res, err := db.x.ExecContext(ctx, db.x.Rebind(`DELETE FROM login_links WHERE expires_at < ?`), dbTime(before))
	if err != nil {
		return 0, fmt.Errorf("store: prune login links: %w", err)
	}
	return res.RowsAffected()
}
