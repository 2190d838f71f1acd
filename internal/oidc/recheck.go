package oidc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/acme/quartermaster/internal/nfc"
	"github.com/acme/quartermaster/internal/qm"
)

// recheckBatch is how many links one pass reads at a time.
const recheckBatch = 100

// RecheckReport is what one re-check pass did.
type RecheckReport struct {
	Checked   int // links whose groups were read again
	Changed   int // of those, links whose groups changed
	Revoked   int // links the provider no longer honours: unlinked
	Unchecked int // links that could not be checked (no usable token, or the provider failed)
	NoGroups  int // of those, links the provider gave no groups claim for: their groups are kept
	Told      int // changes told through GroupsChanged: this pass's, and those a stopped pass left
}

// changeHold is how long a process holds the changes of groups it has to tell: the pass that
// found them renews it after each batch of links, and another replica takes them over once it
// lapses (a process killed mid-pass on another host; one on the same host is released at start).
const changeHold = 10 * time.Minute

// tellBatch is how many kept changes one claim takes to tell.
const tellBatch = 20

// Recheck reads again the groups of every link last checked more than the re-check period ago:
// with its refresh token (a new ID token, or userinfo), or else with its access token while that
// is valid. A link the provider refuses outright (the refresh token is revoked, the person is
// gone) is unlinked; a link that cannot be checked keeps its groups until it is no longer
// current (two periods), when its owner is asked to log in again. Whoever the groups changed for
// is told through GroupsChanged, once the whole pass is done and the groups' members are read
// again: what it tells (who decides a team's exceptions, who hears of it) is as things stand
// after the re-check, not halfway through it.
//
// Each change is kept in the database in the same write as the change itself, claimed by this
// process, until it is told; the pass tells its own and any that a pass stopped before it told
// them left (a crash, or a stop, of this process or another replica), each once. A pass whose
// context ends before it tells gives its claims back, so that the next pass of any replica
// tells them.
func (s *Service) Recheck(ctx context.Context) (rep RecheckReport, err error) {
	defer func() {
		if s.abandon {
			return
		}
		if ctx.Err() == nil {
			if rerr := s.RefreshMembers(ctx); rerr != nil && err == nil {
				err = rerr
			}
			n, terr := s.tellChanges(ctx)
			rep.Told += n
			if terr != nil && err == nil {
				err = terr
			}
		}
		if ctx.Err() != nil {
			// Stopping: give back what is left to tell, so that the next pass of any replica
			// (this process's after a restart, too) tells it at once.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if _, rerr := s.store.ReleaseGroupsChanges(rctx, []string{s.Owner}); rerr != nil {
				s.log.Warn("giving back the changes of groups still to tell; another replica tells them once the claim lapses", "err", rerr)
			}
		}
	}()
	p, err := s.discover(ctx)
	if err != nil {
		return rep, err
	}
	due := s.clock.Now().Add(-s.cfg.Recheck)
	// Links that could not be checked stay due, first in line; the next batch starts after them.
	for {
		links, err := s.store.AccountLinksCheckedBefore(ctx, due, rep.Unchecked, recheckBatch)
		if err != nil {
			return rep, err
		}
		for _, l := range links {
			if err := s.recheckOne(ctx, p, l, &rep); err != nil {
				return rep, err
			}
		}
		if rep.Changed+rep.Revoked > 0 {
			if err := s.store.RenewGroupsChanges(ctx, s.Owner, s.clock.Now().Add(changeHold)); err != nil {
				return rep, err
			}
		}
		if len(links) < recheckBatch || ctx.Err() != nil {
			return rep, ctx.Err()
		}
	}
}

// tellChanges tells GroupsChanged of the kept changes of groups that this process holds or that
// no live claim holds, the oldest first, and marks each told with what GroupsNotices says of it
// queued in the outbox; it says how many it told.
func (s *Service) tellChanges(ctx context.Context) (int, error) {
	told := 0
	for ctx.Err() == nil {
		cs, err := s.store.ClaimGroupsChanges(ctx, s.Owner, s.clock.Now(), changeHold, tellBatch)
		if err != nil {
			return told, err
		}
		for _, c := range cs {
			if s.GroupsChanged != nil {
				s.GroupsChanged(ctx, c.Before, c.After)
			}
			var ns []qm.Notice
			if s.GroupsNotices != nil {
				ns = s.GroupsNotices(ctx, c.Before, c.After)
			}
			// What it tells is queued as it is marked told, in one go: a crash before leaves
			// it to tell again, whole; one after loses none of it to the outbox.
			ids, ok, err := s.store.GroupsChangeTold(ctx, c.ID, s.clock.Now(), ns)
			if err != nil {
				return told, err
			}
			if !ok {
				continue // told meanwhile by a replica that took it over: its notices are queued
			}
			if len(ids) > 0 && s.Queued != nil {
				s.Queued(ctx, ids)
			}
			told++
		}
		if len(cs) < tellBatch {
			break
		}
	}
	return told, ctx.Err()
}

// tellAtSignIn tells what a change of someone's groups found at their sign-in means, as a
// re-check's change is told: through GroupsChanged, and what GroupsNotices says of it queued in
// the outbox through Tell (a chat platform that is down delays it, as it does a re-check's).
func (s *Service) tellAtSignIn(ctx context.Context, before, after *qm.AccountLink) {
	if s.GroupsChanged != nil {
		s.GroupsChanged(ctx, before, after)
	}
	if s.GroupsNotices == nil || s.Tell == nil {
		return
	}
	if err := s.Tell(ctx, s.GroupsNotices(ctx, before, after)...); err != nil {
		s.log.Error("queueing what a change of groups found at a sign-in tells", "email", after.Email, "err", err)
	}
}

// errRevoked is a provider that refuses a link's tokens outright.
var errRevoked = errors.New("oidc: the provider refused the stored sign-in")

// errNoGroups is a provider that gave no groups claim at all at a re-check: neither the
// refreshed ID token (or none came) nor userinfo carries it. That says nothing about the groups,
// unlike a claim that is there and empty.
var errNoGroups = errors.New("the identity provider gave no groups: neither a refreshed ID token nor userinfo carries the groups claim")

// recheckOne re-checks the link l; a change of its groups (after nil: the link was revoked) is
// written with the change to tell, for GroupsChanged once the pass is done.
func (s *Service) recheckOne(ctx context.Context, p *gooidc.Provider, l *qm.AccountLink, rep *RecheckReport) error {
	groups, tokens, err := s.readGroups(ctx, p, l)
	switch {
	case errors.Is(err, errRevoked):
		now := s.clock.Now()
		_, ok, derr := s.store.RecordGroupsChange(ctx, *l, nil, now, s.Owner, now.Add(changeHold))
		if derr != nil {
			return derr
		}
		if !ok {
			// Logged in again, out, or re-checked by another replica meanwhile: that is newer.
			s.log.Debug("sign-in refused at the provider, but the link changed meanwhile; left as it is", "account", l.Account.String(), "email", l.Email)
			return nil
		}
		rep.Revoked++
		s.log.Info("sign-in revoked at the provider: account unlinked", "account", l.Account.String(), "email", l.Email, "err", err)
		return nil
	case errors.Is(err, errNoGroups) && len(l.Groups) == 0:
		// No groups at the last sign-in and none now (Google without a broker): there is
		// nothing to keep, and being in no group grants nothing, so the check stands.
		s.log.Debug("the identity provider gave no groups at the re-check; there were none to keep", "account", l.Account.String(), "email", l.Email, "claim", s.cfg.GroupsClaim)
	case errors.Is(err, errNoGroups):
		// Kept as they were, not confirmed: once they are no longer current (two periods), the
		// owner is asked to sign in again, which reads the groups from the sign-in's ID token.
		rep.Unchecked++
		rep.NoGroups++
		if tokens == nil {
			tokens = l.Tokens
		}
		now := s.clock.Now()
		attrs := []any{"account", l.Account.String(), "email", l.Email, "claim", s.cfg.GroupsClaim, "kept", l.Groups, "confirmed", l.CheckedAt}
		if l.NoGroupsAt.IsZero() {
			s.log.Warn("the identity provider gave no groups at the re-check; the groups of the last sign-in are kept until they are no longer current, then the person is asked to sign in again", attrs...)
		} else {
			s.log.Debug("the identity provider gave no groups at the re-check again", attrs...)
		}
		_, err := s.store.KeepAccountGroups(ctx, l.Account, l.LoginAt, now, tokens)
		return err
	case err != nil:
		rep.Unchecked++
		s.log.Warn("groups could not be read again", "account", l.Account.String(), "email", l.Email, "err", err)
		if tokens != nil {
			// The refresh went through, and a provider that rotates refresh tokens has spent
			// the old one: keep the new one, and the groups and their check as they were.
			if _, err := s.store.KeepAccountGroups(ctx, l.Account, l.LoginAt, l.NoGroupsAt, tokens); err != nil {
				return err
			}
		}
		return nil
	}
	now := s.clock.Now()
	if !sameGroups(l.Groups, groups) && s.foundOnAnother(ctx, l, groups, l.Account) {
		// A change of the person's groups that a sign-in or re-check of another chat account of
		// theirs found and told already: this account only catches up with it.
		ok, err := s.store.UpdateAccountGroups(ctx, l.Account, l.LoginAt, groups, now, tokens)
		if err != nil {
			return err
		}
		if ok {
			rep.Checked++
		}
		return nil
	}
	if !sameGroups(l.Groups, groups) {
		// The change and what is to be told of it are written at once: a pass stopped before it
		// tells leaves it for the next one.
		after := *l
		after.Groups, after.CheckedAt, after.Tokens, after.NoGroupsAt = groups, now, tokens, time.Time{}
		_, ok, err := s.store.RecordGroupsChange(ctx, *l, &after, now, s.Owner, now.Add(changeHold))
		if err != nil || !ok {
			return err // !ok: logged in again (or out), or re-checked by another replica: that is newer
		}
		rep.Checked++
		rep.Changed++
		s.log.Info("groups changed at the provider", "account", l.Account.String(), "email", l.Email, "before", l.Groups, "after", groups)
		return nil
	}
	ok, err := s.store.UpdateAccountGroups(ctx, l.Account, l.LoginAt, groups, now, tokens)
	if err != nil {
		return err
	}
	if ok {
		rep.Checked++
	}
	return nil // !ok: logged in again (or out) meanwhile: that is newer
}

// readGroups asks the provider for a link's groups now, and gives back the tokens to keep. Once
// a refresh went through, the new tokens come back even when the groups could not be read.
func (s *Service) readGroups(ctx context.Context, p *gooidc.Provider, l *qm.AccountLink) (groups []string, sealed []byte, err error) {
	if trusted := s.trustedIssuer(); !sameIssuer(l.Issuer, trusted) {
		// The provider the sign-in was made at is no longer the one configured: its tokens are
		// not sent to this one, which would refuse them (and the owner would hear that their
		// sign-in was revoked). The link keeps its groups until they go stale, and its owner
		// signs in at the new issuer.
		return nil, nil, fmt.Errorf("signed in at %s, not at %s (QM_OIDC_ISSUER); they are asked to sign in again once their groups are no longer current", l.Issuer, trusted)
	}
	if s.seal == nil || len(l.Tokens) == 0 {
		return nil, nil, errors.New("no tokens were kept for this sign-in")
	}
	tok, err := s.seal.open(l.Tokens)
	if err != nil {
		return nil, nil, err
	}
	var refreshed *oauth2.Token
	defer func() {
		if err != nil && sealed == nil && refreshed != nil {
			sealed, _ = s.seal.seal(refreshed)
		}
	}()
	pctx := s.providerCtx(ctx)
	now := s.clock.Now()
	var claims map[string]any
	switch {
	case tok.RefreshToken != "":
		// Expire the access token on purpose, so the source refreshes.
		old := &oauth2.Token{RefreshToken: tok.RefreshToken, Expiry: now.Add(-time.Minute)}
		nt, err := s.oauth(p).TokenSource(pctx, old).Token()
		if err != nil {
			// Only invalid_grant (RFC 6749, 5.2) says the sign-in itself is gone (revoked,
			// expired, the person disabled); invalid_client and the like say the provider
			// refuses Quartermaster (a rotated client secret), which is no one's sign-in.
			var re *oauth2.RetrieveError
			if errors.As(err, &re) && strings.EqualFold(re.ErrorCode, "invalid_grant") {
				return nil, nil, fmt.Errorf("%w: %s", errRevoked, providerSays(err))
			}
			return nil, nil, fmt.Errorf("oidc: refresh: %w", err)
		}
		if nt.RefreshToken == "" {
			nt.RefreshToken = tok.RefreshToken // providers that do not rotate it send none
		}
		tok, refreshed = nt, nt
		if raw, _ := nt.Extra("id_token").(string); raw != "" {
			idt, err := p.Verifier(&gooidc.Config{ClientID: s.cfg.ClientID, Now: s.clock.Now}).Verify(pctx, raw)
			if err != nil {
				return nil, nil, fmt.Errorf("oidc: refreshed ID token: %w", err)
			}
			if azp := s.otherParty(idt); azp != "" {
				return nil, nil, fmt.Errorf("oidc: refreshed ID token: issued to %s, not to this client", azp)
			}
			if idt.Subject != l.Subject {
				return nil, nil, fmt.Errorf("%w: the refreshed ID token is for another subject", errRevoked)
			}
			if err := idt.Claims(&claims); err != nil {
				return nil, nil, fmt.Errorf("oidc: refreshed ID token: %w", err)
			}
		}
	case tok.AccessToken != "" && tok.Expiry.After(now):
	default:
		return nil, nil, errors.New("the kept access token has expired and there is no refresh token")
	}
	if _, ok := claimOf(claims, s.cfg.GroupsClaim); !ok && overage(claims, s.cfg.GroupsClaim) {
		// Too many groups for a token: that says nothing about which groups they left.
		return nil, nil, errors.New("the provider left the groups out of the refreshed ID token: too many groups for a token; filter the groups claim to the groups assigned to the application (docs/sso.md)")
	}
	if _, ok := claimOf(claims, s.cfg.GroupsClaim); !ok {
		ui, err := p.UserInfo(pctx, oauth2.StaticTokenSource(tok))
		if err != nil {
			return nil, nil, fmt.Errorf("oidc: userinfo: %w", err)
		}
		if ui.Subject != l.Subject {
			return nil, nil, fmt.Errorf("%w: userinfo answers for another subject", errRevoked)
		}
		claims = map[string]any{}
		if err := ui.Claims(&claims); err != nil {
			return nil, nil, fmt.Errorf("oidc: userinfo: %w", err)
		}
	}
	if sealed, err = s.seal.seal(tok); err != nil {
		return nil, nil, err
	}
	g, ok := claimOf(claims, s.cfg.GroupsClaim)
	if !ok {
		return nil, sealed, errNoGroups
	}
	return groupsOf(g), sealed, nil
}

// otherLatest is the current link of another chat account of the person l links (the same
// subject at the same issuer) whose groups the provider gave last; nil when there is none.
func (s *Service) otherLatest(ctx context.Context, l *qm.AccountLink) *qm.AccountLink {
	links, err := s.store.AccountLinksByEmail(ctx, l.Email)
	if err != nil {
		s.log.Warn("reading the person's other chat accounts", "email", l.Email, "err", err)
		return nil
	}
	var best *qm.AccountLink
	for _, m := range links {
		if m.Account != l.Account && m.Subject == l.Subject && sameIssuer(m.Issuer, l.Issuer) && s.current(m) &&
			(best == nil || m.CheckedAt.After(best.CheckedAt)) {
			best = m
		}
	}
	return best
}

// foundOnAnother reports whether another chat account of the person l links (the same subject
// at the same issuer) holds groups already, read by a sign-in or re-check after l's groups
// were: the person's groups are those the provider gave last on any of their chat accounts, so
// that change of theirs was found, and told, there; l only catches up with it. The account skip
// (the one signing in) is not another. A change is one
// change of one person, told once, however many chat accounts they signed in from.
func (s *Service) foundOnAnother(ctx context.Context, l *qm.AccountLink, groups []string, skip qm.Account) bool {
	links, err := s.store.AccountLinksByEmail(ctx, l.Email)
	if err != nil {
		s.log.Warn("reading the person's other chat accounts; a change of groups found on one is told as its own", "email", l.Email, "err", err)
		return false
	}
	for _, m := range links {
		if m.Account != l.Account && m.Account != skip && m.Subject == l.Subject && sameIssuer(m.Issuer, l.Issuer) &&
			m.CheckedAt.After(l.CheckedAt) && sameGroups(m.Groups, groups) {
			return true
		}
	}
	return false
}

// sameGroups reports whether a and b are the same groups in any order, each compared in NFC: a
// link kept with groups the provider sent decomposed has not changed when they come composed.
func sameGroups(a, b []string) bool {
	a, b = nfc.Names(a), nfc.Names(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// Prune forgets login links that expired more than a day ago, and changes of groups told more
// than a week ago, and says how many login links it forgot.
func (s *Service) Prune(ctx context.Context) (int64, error) {
	if _, err := s.store.PruneGroupsChanges(ctx, s.clock.Now().Add(-7*24*time.Hour)); err != nil {
		return 0, err
	}
	return s.store.PruneLoginLinks(ctx, s.clock.Now().Add(-24*time.Hour))
}
