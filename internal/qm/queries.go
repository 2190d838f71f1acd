package qm

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/acme/quartermaster/internal/policy"
)

// Get returns a lease.
func (s *Service) Get(ctx context.Context, id LeaseID) (*Lease, error) {
	var l *Lease
	err := s.Store.View(ctx, func(tx Tx) error {
		var err error
		l, err = tx.GetLease(ctx, id)
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return nil, Errorf(ENOTFOUND, "there is no lease %s.", id)
	}
	return l, err
}

// History is a lease's audit trail.
func (s *Service) History(ctx context.Context, id LeaseID) ([]*Event, error) {
	var ev []*Event
	err := s.Store.View(ctx, func(tx Tx) error {
		var err error
		ev, err = tx.Events(ctx, id)
		return err
	})
	return ev, err
}

// List returns leases matching f.
func (s *Service) List(ctx context.Context, f LeaseFilter) ([]*Lease, error) {
	var ls []*Lease
	err := s.Store.View(ctx, func(tx Tx) error {
		var err error
		ls, err = tx.ListLeases(ctx, f)
		return err
	})
	return ls, err
}

// ClassStatus is a catalog line's live figures.
type ClassStatus struct {
	Class    *policy.Class
	Capacity int
	Free     int
	Wait     WaitEstimate
	// NoNodes: the backend reports its nodes and none of the class takes jobs now.
	NoNodes bool
	// SchedulerAway: the scheduler does not answer now (a job could not reach it, or its nodes
	// could not be read), so Capacity, Free and NoNodes are what it said when it last answered,
	// at AsOf (zero: it has not answered since the service started).
	SchedulerAway bool
	AsOf          time.Time
	// FreeUpTo, when more than Free, is how many may be free after all: leases of a class that
	// takes GPUs of any type run on the class's nodes, whose GPUs are of several types, and which
	// type the scheduler gave them is not known; Free counts them as holding the class's.
	FreeUpTo int
	// CapText, where the capacity share is what keeps Free below the GPUs the class has free,
	// says what it allows and what is held ("dev may hold 4 GPUs at once (its capacity share)
	// and holds 2"); empty where the share does not bind it.
	CapText string
}

// Catalog lists the classes with free GPUs now and the predicted wait for one GPU for user.
func (s *Service) Catalog(ctx context.Context, user string) ([]ClassStatus, error) {
	s.readInventory(ctx)
	var out []ClassStatus
	team, resolved := "", false
	for _, c := range s.Policy.Classes {
		if c.Exclusive() && !resolved { // which nodes are the team's own matters only there
			team, resolved = s.defaultTeam(ctx, user), true
		}
		p, free, upTo, err := s.freeNow(ctx, c, team)
		if err != nil {
			return nil, err
		}
		cs := ClassStatus{Class: c, Capacity: p.Capacity, Free: free, NoNodes: s.noUsableNodes(c.Name)}
		if capFree := max(0, p.Limit-p.SharedUsed); p.Limit > 0 && free == capFree && capFree < max(0, p.Capacity-p.Used) {
			cs.CapText = s.capText(p)
		}
		if upTo > free {
			cs.FreeUpTo = upTo
		}
		if s.schedulerSilent() {
			cs.SchedulerAway, cs.AsOf = true, s.lastAnswer()
		}
		if cs.Wait, err = s.PredictWait(ctx, c.Name, team, 1); err != nil {
			return nil, err
		}
		out = append(out, cs)
	}
	return out, nil
}

// freeNow is a class's pool and how many of its GPUs are free now to a request of one GPU by a
// member of team, as placement sees them: not those a lease of another class holds where it
// takes a node whole (a reservation on a node in both classes' partitions), nor, on an exclusive
// class, those on nodes where another team's leases of the class run; never more than the
// capacity share leaves. So the catalog never shows GPUs free that a request for one would wait
// for. A class the scheduler places, and a shared class none of whose nodes another class counts
// (any free GPU will do), get the pool's free count, from its sums rather than every running lease.
// upTo is how many may be free after all, where leases of a class that takes GPUs of any type
// are counted as holding the class's GPUs as far as they may (anyTypeExtra); free otherwise.
func (s *Service) freeNow(ctx context.Context, c *policy.Class, team string) (p Pool, free, upTo int, err error) {
	// lessMaybe is the pool with what such leases may not hold off the cap's count.
	lessMaybe := func(p Pool) Pool {
		p.SharedUsed -= p.CapMaybe
		return p
	}
	if !s.placesItself(c.Name) || !c.Exclusive() && !s.sharesNodes(c.Name) {
		p, err := s.Pool(ctx, c.Name)
		return p, p.Free(), lessMaybe(p).Free(), err
	}
	err = s.Store.View(ctx, func(tx Tx) error {
		var held []Holding
		var err error
		if p, held, err = s.poolHeld(ctx, tx, c.Name); err != nil {
			return err
		}
		inv, ix := s.inventory()
		r := placeRequest{Class: c.Name, Team: team, GPUs: 1, ExclusiveClass: c.Exclusive()}
		free = min(p.Free(), usableGPUs(inv, ix, held, r))
		upTo = free
		var surely []Holding // held, with such leases holding only what they surely hold
		for i, h := range held {
			if h.Class == c.Name || h.Reserved || strings.IndexByte(h.Node, ',') >= 0 {
				continue
			}
			if x := anyTypeExtra(inv, ix, h.Node, c.Name, h.Class); x > 0 {
				if surely == nil {
					surely = slices.Clone(held)
				}
				surely[i].GPUs = max(0, h.GPUs-x)
			}
		}
		if surely != nil || p.CapMaybe > 0 {
			if surely == nil {
				surely = held
			}
			upTo = min(lessMaybe(p).Free(), usableGPUs(inv, ix, surely, r))
		}
		return nil
	})
	return p, free, upTo, err
}

// Estimate is a request's cost and predicted wait.
type Estimate struct {
	Class *policy.Class
	GPUs  int // the GPUs the lease would hold and be billed for
	For   time.Duration
	Cost  float64
	Wait  WaitEstimate
	// Asked is the GPUs asked for, where a request for them is rounded up to whole nodes of the
	// class (GPUs); WholeNodes then says what they are ("2 whole nodes of 6 GPUs = 12 GPUs").
	Asked      int
	WholeNodes string
	// Rules are the published rules a request like it, by the same person for their team,
	// would meet now, so that it would wait for a budget owner (Approvers) first; none where it
	// would start without a decision.
	Rules     []policy.Match
	Approvers []string
}

// EstimateRequest prices a request of user's and predicts its wait, with no side effects.
// An exclusive request is priced on the whole nodes it holds, as /gpu request with exclusive is.
func (s *Service) EstimateRequest(ctx context.Context, user, class string, gpus int, d time.Duration, exclusive bool) (Estimate, error) {
	s.readInventory(ctx)
	c, err := s.checkShape(class, gpus, d)
	if err != nil {
		return Estimate{}, err
	}
	// A request for more GPUs than a node holds takes whole nodes, as /gpu request rounds it:
	// the estimate is of what the lease would hold and be billed for.
	e := Estimate{Class: c, GPUs: gpus, For: d}
	if whole := s.countedGPUs(c.Name, gpus, exclusive); whole > gpus {
		if _, err := s.checkShape(c.Name, whole, d); err != nil {
			return Estimate{}, err
		}
		e.Asked, e.GPUs, e.WholeNodes = gpus, whole, s.WholeNodesText(c.Name, whole)
	}
	req := WaitRequest{Class: c.Name, User: user, GPUs: e.GPUs, Duration: d}
	if c.Exclusive() {
		req.Team = s.defaultTeam(ctx, user)
	}
	wait, err := s.predictWait(ctx, req, exclusive)
	if err != nil {
		return Estimate{}, err
	}
	e.Cost, e.Wait = Cost(c, e.GPUs, d), wait
	e.Rules, e.Approvers = s.wouldWaitFor(ctx, user, c.Name, gpus, d, exclusive)
	return e, nil
}

// wouldWaitFor is the exception rules a request of user's for gpus of class for d would meet now,
// charged to their team as a request naming none is, and who would decide it: what /gpu request
// would answer, with nothing written. None where it would start without a decision, or where
// who asks or their team cannot be told (the request itself would say why).
func (s *Service) wouldWaitFor(ctx context.Context, user, class string, gpus int, d time.Duration, exclusive bool) ([]policy.Match, []string) {
	if user == "" {
		return nil, nil
	}
	req := LeaseRequest{User: user, GPUs: gpus, Class: class, Duration: d, Exclusive: exclusive}
	id, c, err := s.Normalize(ctx, &req)
	if err != nil {
		return nil, nil
	}
	var matches []policy.Match
	rc := s.newRuleCheck()
	err = s.withRules(ctx, rc, func() error {
		return s.Store.View(ctx, func(tx Tx) error {
			now := s.Clock.Now()
			leases, err := tx.ListLeases(ctx, LeaseFilter{Kind: AnyKind, Team: req.Team, EndedAfter: s.WeekStart(now), Slim: true})
			if err != nil {
				return err
			}
			u, q := s.usageFrom(req.Team, leases, now)
			l := &Lease{User: req.User, Team: req.Team, Class: req.Class, GPUs: req.GPUs, Duration: req.Duration,
				DataClass: req.DataClass, Exclusive: req.Exclusive, AskedGPUs: req.asked, CreatedAt: now, Price: c.PricePerGPUHour, Priced: true}
			in := s.ruleInput(id, c, u, q, l, "lease", req.Duration)
			matches, err = s.ruleResult(ctx, rc, in)
			return err
		})
	})
	if err != nil || len(matches) == 0 {
		if err != nil {
			s.log().Warn("read the rules a priced request would meet", "user", user, "err", err)
		}
		return nil, nil
	}
	return matches, s.Deciders(req.Team, req.User)
}

// Cost is price × GPUs × duration, computed on the price as written, so that it rounds to the
// bill the lease would get (Bill).
func Cost(c *policy.Class, gpus int, d time.Duration) float64 {
	v, _ := charge(c.PricePerGPUHour, gpus, d).Float64()
	return v
}

// defaultTeam is the team a request of user's is charged to when it names none ("" when user
// belongs to no team or cannot be resolved).
func (s *Service) defaultTeam(ctx context.Context, user string) string {
	if user == "" {
		return ""
	}
	id, err := s.Resolve(ctx, user)
	if err != nil {
		return ""
	}
	t, _ := s.teamFor(id, "")
	return t
}
