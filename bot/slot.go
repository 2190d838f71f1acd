package bot

import "context"

type slotCtx struct{}

// WithSlot marks ctx as holding one of an adapter's bounded command slots; release gives it up
// and returns the function that takes one back (waiting for it).
func WithSlot(ctx context.Context, release func() (reacquire func())) context.Context {
	return context.WithValue(ctx, slotCtx{}, release)
}

// WaitOutside gives up ctx's command slot, when it holds one, until the returned function is
// called: a handler calls it before a wait on something outside the process (a scheduler's
// submission), so that other users' commands run meanwhile, and the function after.
func WaitOutside(ctx context.Context) (resume func()) {
	release, ok := ctx.Value(slotCtx{}).(func() func())
	if !ok {
		return func() {}
	}
	return release()
}
