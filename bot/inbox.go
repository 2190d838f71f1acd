package bot

import (
	"context"
	"time"
)

// Inbox keeps the commands a chat adapter acknowledged until their work is done, so that one
// acknowledged by a process that then stopped (a crash, a kill, a shutdown that ran out of time)
// is not lost: neither Slack nor Discord sends an acknowledged command again. The service keeps
// them in its database (store.DB's AcceptDeliveries, ClaimDeliveries and FinishDeliveries), each
// platform's apart.
type Inbox interface {
	// Accept keeps commands that are being acknowledged, each claimed by this process until
	// its Received + claim; kept[i] is false when a command with cmds[i]'s key is kept already.
	Accept(ctx context.Context, cmds []Accepted, claim time.Duration) (kept []bool, err error)
	// Finish forgets commands whose work is done.
	Finish(ctx context.Context, keys []string) error
	// Claim takes, until now + claim, the kept commands whose claim ran out before now.
	Claim(ctx context.Context, now time.Time, claim time.Duration) ([]Accepted, error)
}

// Accepted is a command an Inbox keeps: its key (the delivery's), what the adapter needs to run
// it and answer (its own format), and when it arrived.
type Accepted struct {
	Key      string
	Payload  []byte
	Received time.Time
}
