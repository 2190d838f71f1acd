// Package schedule runs Quartermaster's scheduled jobs (the weekly showback) with gocron: weekly
// jobs at a weekday and time in the policy's time zone, daylight saving time included, and interval
// jobs, each a typed func(context.Context) error. Several replicas share one database: a job runs
// on one replica at a time, under a lock the database holds (PostgreSQL advisory locks). It is the
// only package that imports gocron; the clock is injected, so tests move time with a fake clock.
package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/jonboulle/clockwork"

	"github.com/acme/quartermaster/internal/policy"
)

// Job is a scheduled job. Its context ends when the scheduler stops.
type Job func(ctx context.Context) error

// Weekly is a weekly instant: a weekday and a time of day in a time zone. On the day a daylight
// saving change skips the time, it falls just as much after the change (02:30 becomes 03:30), as
// the scheduler runs it.
type Weekly struct {
	Day time.Weekday
	At  time.Duration // since midnight
	Loc *time.Location
}

// ParseWeekly reads the policy's weekly schedule, like "MON 09:00", in loc.
func ParseWeekly(spec string, loc *time.Location) (Weekly, error) {
	d, at, err := policy.ParseWeekly(spec)
	if err != nil {
		return Weekly{}, err
	}
	if loc == nil {
		loc = time.UTC
	}
	return Weekly{Day: d, At: at, Loc: loc}, nil
}

func (w Weekly) hm() (int, int) { return int(w.At / time.Hour), int(w.At % time.Hour / time.Minute) }

// on is the schedule's instant on a local date (see policy.LocalTime): a time the clocks skip
// that day falls that much after the jump, and a time that happens twice is the first.
func (w Weekly) on(y int, m time.Month, d int) time.Time {
	h, mi := w.hm()
	return policy.LocalTime(y, m, d, h, mi, w.Loc)
}

// Next is the first instant of the schedule after t.
func (w Weekly) Next(t time.Time) time.Time {
	lt := t.In(w.Loc)
	y, m, d := lt.Date()
	ahead := (int(w.Day) - int(lt.Weekday()) + 7) % 7
	next := w.on(y, m, d+ahead)
	if !next.After(t) {
		next = w.on(y, m, d+ahead+7)
	}
	return next
}

// Last is the latest instant of the schedule at or before t.
func (w Weekly) Last(t time.Time) time.Time {
	lt := t.In(w.Loc)
	y, m, d := lt.Date()
	back := (int(lt.Weekday()) - int(w.Day) + 7) % 7
	last := w.on(y, m, d-back)
	if last.After(t) {
		last = w.on(y, m, d-back-7)
	}
	return last
}

// String writes the schedule as the policy does.
func (w Weekly) String() string {
	h, mi := w.hm()
	return fmt.Sprintf("%s %02d:%02d %s", w.Day.String()[:3], h, mi, w.Loc)
}

// Locker takes a job's lock without waiting; ok is false while another replica holds it.
type Locker interface {
	TryJobLock(ctx context.Context, key string) (release func(context.Context) error, ok bool, err error)
}

// ErrHeldElsewhere is why a replica skips a run: another one holds the job's lock.
var ErrHeldElsewhere = errors.New("schedule: the job runs on another replica")

// gocronLocker adapts a Locker to gocron's.
type gocronLocker struct{ l Locker }

type gocronLock struct{ release func(context.Context) error }

func (g gocronLock) Unlock(ctx context.Context) error { return g.release(context.WithoutCancel(ctx)) }

func (g gocronLocker) Lock(ctx context.Context, key string) (gocron.Lock, error) {
	release, ok, err := g.l.TryJobLock(ctx, key)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrHeldElsewhere
	}
	return gocronLock{release}, nil
}

// Options configure a Scheduler.
type Options struct {
	// Clock tells the time and runs the timers; nil is the real clock.
	Clock clockwork.Clock
	// Location is where weekly jobs' times are read; nil is UTC.
	Location *time.Location
	// Locker shares each job among replicas; nil runs every job on every replica.
	Locker Locker
	// Logger; nil discards.
	Logger *slog.Logger
	// StopTimeout bounds how long Stop waits for running jobs; zero means DefaultStopTimeout.
	StopTimeout time.Duration
}

// DefaultStopTimeout is how long Stop waits for running jobs to return.
const DefaultStopTimeout = 30 * time.Second

// Scheduler runs jobs at their times.
type Scheduler struct {
	s    gocron.Scheduler
	log  *slog.Logger
	loc  *time.Location
	once sync.Once
	err  error
}

// New makes a scheduler; it runs nothing until Start.
func New(o Options) (*Scheduler, error) {
	if o.Clock == nil {
		o.Clock = clockwork.NewRealClock()
	}
	if o.Location == nil {
		o.Location = time.UTC
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.StopTimeout <= 0 {
		o.StopTimeout = DefaultStopTimeout
	}
	opts := []gocron.SchedulerOption{gocron.WithClock(o.Clock), gocron.WithLocation(o.Location), gocron.WithStopTimeout(o.StopTimeout)}
	if o.Locker != nil {
		opts = append(opts, gocron.WithDistributedLocker(gocronLocker{o.Locker}))
	}
	s, err := gocron.NewScheduler(opts...)
	if err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	return &Scheduler{s: s, log: o.Logger.With("component", "schedule"), loc: o.Location}, nil
}

// task wraps a job for gocron: it logs what the job returns; a run that another replica holds is
// skipped by gocron before it gets here.
func (s *Scheduler) task(name string, job Job) gocron.Task {
	return gocron.NewTask(func(ctx context.Context) {
		if err := job(ctx); err != nil && ctx.Err() == nil {
			s.log.Error("scheduled job failed", "job", name, "err", err)
		}
	})
}

// Weekly runs job at w (w.Loc must be the scheduler's location). The job is named: the name is
// also its lock's key.
func (s *Scheduler) Weekly(name string, w Weekly, job Job) error {
	if w.Loc != nil && w.Loc.String() != s.loc.String() {
		return fmt.Errorf("schedule: job %s is in %s but the scheduler runs in %s", name, w.Loc, s.loc)
	}
	// gocron's timers run the job at the instants Next gives: gocron's own weekly schedule
	// loses the job for good where the clocks skip a Sunday's midnight (Chile, Paraguay, Cuba,
	// Lebanon), and picks the second of a time that happens twice in zones east of UTC.
	_, err := s.s.NewJob(gocron.CronJob(w.String(), false),
		s.task(name, job), gocron.WithName(name), gocron.WithSingletonMode(gocron.LimitModeReschedule),
		gocron.WithCronImplementation(weeklyCron{w}))
	if err != nil {
		return fmt.Errorf("schedule: job %s: %w", name, err)
	}
	return nil
}

// weeklyCron is a Weekly as gocron's cron: its next run after a run is Weekly.Next.
type weeklyCron struct{ w Weekly }

func (c weeklyCron) IsValid(string, *time.Location, time.Time) error { return nil }

func (c weeklyCron) Next(last time.Time) time.Time { return c.w.Next(last) }

// Every runs job every d, and once at Start when now is set.
func (s *Scheduler) Every(name string, d time.Duration, now bool, job Job) error {
	opts := []gocron.JobOption{gocron.WithName(name), gocron.WithSingletonMode(gocron.LimitModeReschedule)}
	if now {
		opts = append(opts, gocron.WithStartAt(gocron.WithStartImmediately()))
	}
	if _, err := s.s.NewJob(gocron.DurationJob(d), s.task(name, job), opts...); err != nil {
		return fmt.Errorf("schedule: job %s: %w", name, err)
	}
	return nil
}

// NextRun is when the named job runs next.
func (s *Scheduler) NextRun(name string) (time.Time, error) {
	for _, j := range s.s.Jobs() {
		if j.Name() == name {
			return j.NextRun()
		}
	}
	return time.Time{}, fmt.Errorf("schedule: no job %s", name)
}

// Start starts running the jobs.
func (s *Scheduler) Start() { s.s.Start() }

// Stop stops the scheduler and waits for running jobs (their context ends); stopping twice is harmless.
func (s *Scheduler) Stop() error {
	s.once.Do(func() { s.err = s.s.Shutdown() })
	return s.err
}
