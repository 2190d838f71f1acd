package qm

import (
	"context"
	"errors"
	"reflect"

	"github.com/acme/quartermaster/internal/policy"
)

// RuleEvaluator evaluates the exception rules on a request; *policy.Policy is one.
type RuleEvaluator interface {
	Evaluate(ctx context.Context, in policy.RuleInput) []policy.Match
}

// inlineRuleCost is the estimated cost of a policy's rules (policy.Policy.RulesCost) up to which
// they are evaluated inside the admitting transaction, as they take a millisecond at most (the
// example's add up to 542); costlier rules are evaluated outside it (see ruleCheck).
const inlineRuleCost = 5_000

// ruleAttempts is how many times an admission reads its rules' input again, when other changes to
// the team keep changing it, before it evaluates the rules inside its transaction (bounded by
// policy.RuleCostLimit all the same).
const ruleAttempts = 3

// errRulesToEvaluate ends an admission's transaction whose rules' input has not been evaluated yet.
var errRulesToEvaluate = errors.New("qm: exception rules to evaluate")

// ruleCheck keeps exception rules out of the transactions that admit requests, so that a costly
// rule holds no lock and no other user's command waits for it: the transaction builds the rules'
// input, and uses the matches of an evaluation made outside it on that same input; when there is
// none, it ends with errRulesToEvaluate, the rules are evaluated, and the transaction runs again.
type ruleCheck struct {
	in      policy.RuleInput
	matches []policy.Match
	done    bool
	inTx    bool // cheap rules, or inputs that kept changing: evaluate inside the transaction
}

// costed is an evaluator that knows what its rules may cost.
type costed interface{ RulesCost() uint64 }

// newRuleCheck starts the rule check of one admission: inside its transaction when the rules are
// cheap, else outside.
func (s *Service) newRuleCheck() *ruleCheck {
	c, ok := s.rules().(costed)
	return &ruleCheck{inTx: ok && c.RulesCost() <= inlineRuleCost}
}

// rules evaluates exception rules, inside a transaction or out; see ruleCheck.
func (s *Service) rules() RuleEvaluator {
	if s.Rules != nil {
		return s.Rules
	}
	return s.Policy
}

// result is the matches of in, or errRulesToEvaluate.
func (s *Service) ruleResult(ctx context.Context, c *ruleCheck, in policy.RuleInput) ([]policy.Match, error) {
	if c.done && reflect.DeepEqual(c.in, in) {
		return c.matches, nil
	}
	if c.inTx {
		return s.evaluate(ctx, in), nil
	}
	c.in, c.done = in, false
	return nil, errRulesToEvaluate
}

// withRules runs update (a Store.Update whose function calls ruleResult) until it no longer
// needs its rules evaluated.
func (s *Service) withRules(ctx context.Context, c *ruleCheck, update func() error) error {
	for attempt := 1; ; attempt++ {
		err := update()
		if !errors.Is(err, errRulesToEvaluate) {
			return err
		}
		if attempt >= ruleAttempts {
			c.inTx = true
			continue
		}
		c.matches, c.done = s.evaluate(ctx, c.in), true
	}
}

// evaluate runs the exception rules; a rule that could not be evaluated is logged with its error
// here, and its requester is told only that a person decides.
func (s *Service) evaluate(ctx context.Context, in policy.RuleInput) []policy.Match {
	ms := s.rules().Evaluate(ctx, in)
	for _, m := range ms {
		if m.Err != nil {
			s.log().Warn("an exception rule could not be evaluated, so the request waits for a person", "rule", m.Rule, "user", in.User.Name, "kind", in.Request.Kind, "err", m.Err)
		}
	}
	return ms
}
