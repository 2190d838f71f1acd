package oidc

import (
	"context"
	"sync"
	"time"

	"github.com/acme/quartermaster/internal/policy"
)

// members is who is in each group, as the account links say, kept in memory so the lease service
// can ask inside a transaction (qm.MemberLister). It is read from the store at start, after each
// login and after each re-check.
type members struct {
	mu      sync.RWMutex
	byGroup map[string][]string
}

// Members lists the people whose current link has group: approvers named by group hear of the
// exceptions they may decide.
func (s *Service) Members(group string) []string {
	s.members.mu.RLock()
	defer s.members.mu.RUnlock()
	return append([]string(nil), s.members.byGroup[policy.NameKey(group)]...)
}

// RefreshMembers reads every current account link into the group index.
func (s *Service) RefreshMembers(ctx context.Context) error {
	idx := map[string][]string{}
	far := s.clock.Now().Add(100 * 365 * 24 * time.Hour)
	for offset := 0; ; offset += recheckBatch {
		links, err := s.store.AccountLinksCheckedBefore(ctx, far, offset, recheckBatch)
		if err != nil {
			return err
		}
		for _, l := range links {
			if !s.current(l) {
				continue
			}
			for _, g := range l.Groups {
				k := policy.NameKey(g)
				if !containsFold(idx[k], l.Email) {
					idx[k] = append(idx[k], l.Email)
				}
			}
		}
		if len(links) < recheckBatch {
			break
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
