package qm

import (
	"context"
	"errors"
)

// A chat platform may deliver one command or click more than once (Slack retries, a redelivery
// after a restart, another replica that got it too). Every state-changing command carries its
// delivery key; the key is stored in the same transaction as the change, so a repeat changes
// nothing and answers with what the first delivery did.

type deliveryKeyCtx struct{}

// WithDeliveryKey marks ctx with the delivery key of the command being served ("" for none).
func WithDeliveryKey(ctx context.Context, key string) context.Context {
	if key == "" {
		return ctx
	}
	return context.WithValue(ctx, deliveryKeyCtx{}, key)
}

// DeliveryKey is the delivery key ctx carries, or "".
func DeliveryKey(ctx context.Context) string {
	k, _ := ctx.Value(deliveryKeyCtx{}).(string)
	return k
}

// repeated is returned inside a transaction to abandon it when the command was done before.
type repeated struct{ lease LeaseID }

func (r repeated) Error() string {
	return "repeated delivery of lease " + r.lease.String() + "'s command"
}

// checkKey fails the transaction with repeated when ctx's delivery key was seen before.
func checkKey(ctx context.Context, tx Tx) error {
	key := DeliveryKey(ctx)
	if key == "" {
		return nil
	}
	id, ok, err := tx.CommandKey(ctx, key)
	if err != nil {
		return err
	}
	if ok {
		return repeated{id}
	}
	return nil
}

// keepKey records ctx's delivery key with the lease the command acted on, in the transaction
// that made the change.
func (s *Service) keepKey(ctx context.Context, tx Tx, id LeaseID) error {
	key := DeliveryKey(ctx)
	if key == "" {
		return nil
	}
	return tx.AddCommandKey(ctx, key, id, s.Clock.Now())
}

// wasRepeated reports whether err says the command was done before (checked, or caught by the
// key's uniqueness when two deliveries raced), and the lease it acted on.
func (s *Service) wasRepeated(ctx context.Context, err error) (*Lease, bool) {
	var r repeated
	if errors.As(err, &r) {
		l, gerr := s.Get(ctx, r.lease)
		return l, gerr == nil
	}
	if key := DeliveryKey(ctx); key != "" && ErrorCode(err) == ECONFLICT {
		var id LeaseID
		var ok bool
		if verr := s.Store.View(ctx, func(tx Tx) error {
			var e error
			id, ok, e = tx.CommandKey(ctx, key)
			return e
		}); verr == nil && ok {
			l, gerr := s.Get(ctx, id)
			return l, gerr == nil
		}
	}
	return nil, false
}

type outsideCtx struct{}

// WithOutsideWait marks ctx with what to do while the service waits on the backend (a
// scheduler's submission or cancellation, which may take long): outside is called before the
// wait and the function it returns after. The chat adapters free the command's slot meanwhile,
// so that a slow scheduler does not hold up other users' commands.
func WithOutsideWait(ctx context.Context, outside func() (back func())) context.Context {
	return context.WithValue(ctx, outsideCtx{}, outside)
}

// waitOutside is called before a wait on the backend; call what it returns after.
func waitOutside(ctx context.Context) (back func()) {
	if f, ok := ctx.Value(outsideCtx{}).(func() func()); ok {
		return f()
	}
	return func() {}
}
