package oidc

import (
	"context"
	"sync"
	"time"

	"github.com/acme/quartermaster/internal/nfc"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// members is who is in each group, as the account links say, kept in memory so the lease service
// can ask inside a transaction (qm.MemberLister). It is read from the store at start, after each
// login, logout and unlink, and after each re-check.
type members struct {
	mu      sync.RWMutex
	byGroup map[string][]string
}

// Members lists the people whose current link has group: approvers named by group hear of the
// exceptions they may decide. Groups compare in NFC (composed), as at a sign-in.
func (s *Service) Members(group string) []string {
	s.members.mu.RLock()
	defer s.members.mu.RUnlock()
	return append([]string(nil), s.members.byGroup[policy.NameKey(nfc.Name(group))]...)
}

// RefreshMembers reads every current account link into the group index.
func (s *Service) RefreshMembers(ctx context.Context) error {
	// A person's groups are those of their link the provider confirmed last (see Groups).
	byPerson := map[string][]*qm.AccountLink{}
	var people []string
	far := s.clock.Now().Add(100 * 365 * 24 * time.Hour)
	for offset := 0; ; offset += recheckBatch {
		links, err := s.store.AccountLinksCheckedBefore(ctx, far, offset, recheckBatch)
		if err != nil {
			return err
		}
		for _, l := range links {
			k := policy.NameKey(l.Email)
			if _, ok := byPerson[k]; !ok {
				people = append(people, k)
			}
			byPerson[k] = append(byPerson[k], l)
		}
		if len(links) < recheckBatch {
			break
		}
	}
	idx := map[string][]string{}
	for _, p := range people {
		l := s.latest(byPerson[p])
		if l == nil {
			continue
		}
		for _, g := range l.Groups {
			k := policy.NameKey(nfc.Name(g))
			if !containsFold(idx[k], l.Email) {
				idx[k] = append(idx[k], l.Email)
			}
		}
	}
	s.members.mu.Lock()
	s.members.byGroup = idx
	s.members.mu.Unlock()
	return nil
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if policy.SameName(x, s) {
			return true
		}
	}
	return false
}
