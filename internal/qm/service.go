package qm

import (
	"context"
	"log/slog"
	"time"

	"github.com/acme/quartermaster/internal/policy"
)

// Defaults applied when a request leaves something out.
const (
	DefaultGPUs     = 1
	DefaultDuration = 4 * time.Hour
	// MaxRequestGPUs bounds any request; larger numbers are typos, not exceptions.
	MaxRequestGPUs = 4096
	// MaxRequestDuration bounds any request.
	MaxRequestDuration = 30 * 24 * time.Hour
	// TelemetryStale is how old a telemetry report may be before the lease counts as unobserved.
	TelemetryStale = 10 * time.Minute
)

// Service is the lease service: admission, lifecycle and approvals.
type Service struct {
	Policy    *policy.Policy
	Store     Store
	Backend   Backend
	Clock     Clock
	Notifier  Notifier
	Telemetry Telemetry
	Directory Directory
	Logger    *slog.Logger
	// Waits predicts queue waits; nil falls back to the known expiries of running leases.
	Waits WaitPredictor
}

func (s *Service) log() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

func (s *Service) notify(ctx context.Context, ns []Notice) {
	if s.Notifier == nil {
		return
	}
	for _, n := range ns {
		s.Notifier.Notify(ctx, n)
	}
}
