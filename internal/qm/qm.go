// Package qm is Quartermaster's domain: leases and their lifecycle, quota admission, placement,
// exceptions and approvals, and the ports (Store, Backend, Clock, Notifier, Telemetry, Directory)
// through which it reaches everything else. It imports only the standard library and the policy.
package qm

import (
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/acme/quartermaster/internal/policy"
)

// LeaseID identifies a lease; users see it as L-42.
type LeaseID int64

func (id LeaseID) String() string { return "L-" + strconv.FormatInt(int64(id), 10) }

// ParseLeaseID reads L-42, l-42 or 42.
func ParseLeaseID(s string) (LeaseID, error) {
	t := strings.TrimSpace(s)
	if len(t) > 2 && (t[0] == 'L' || t[0] == 'l') && t[1] == '-' {
		t = t[2:]
	}
	// Digits only: a sign (L-+1, +1) or anything else is no lease id; leading zeros are (L-0001).
	digits := t != "" && strings.Trim(t, "0123456789") == ""
	n, err := strconv.ParseInt(t, 10, 64)
	if !digits || err != nil || n <= 0 {
		return 0, Errorf(EINVALID, "%s is not a lease id; lease ids look like L-42", policy.Quoted(s, 40))
	}
	return LeaseID(n), nil
}

// State is where a lease is in its lifecycle.
type State string

// The lease lifecycle: pending_approval -> queued -> provisioning -> active -> (idle_warned) ->
// released | expired | reclaimed, plus denied, cancelled and failed.
const (
	PendingApproval State = "pending_approval"
	Queued          State = "queued"
	Provisioning    State = "provisioning"
	Active          State = "active"
	IdleWarned      State = "idle_warned"
	Released        State = "released"
	Expired         State = "expired"
	Reclaimed       State = "reclaimed"
	Denied          State = "denied"
	Cancelled       State = "cancelled"
	Failed          State = "failed"
)

// LiveStates hold (or wait in line for) GPUs and count against quota.
var LiveStates = []State{Queued, Provisioning, Active, IdleWarned}

// EndedStates are the states a lease ends in, each one way of ending.
var EndedStates = []State{Released, Expired, Reclaimed, Denied, Cancelled, Failed}

// OpenStates are the states in which a lease has not ended.
var OpenStates = []State{PendingApproval, Queued, Provisioning, Active, IdleWarned}

// Live reports whether the lease holds or waits for GPUs.
func (s State) Live() bool {
	return s == Queued || s == Provisioning || s == Active || s == IdleWarned
}

// Running reports whether the lease's workspace holds GPUs now.
func (s State) Running() bool { return s == Provisioning || s == Active || s == IdleWarned }

// Ended reports whether the lease is over.
func (s State) Ended() bool { return !s.Live() && s != PendingApproval }

// Kind says what a lease grants.
type Kind string

// Kinds of lease. Quota increases and extensions beyond policy are exceptions like any request:
// they wait for a budget owner, are decided the same way, and are active while they are in effect.
const (
	KindWorkspace Kind = ""       // GPUs and a workspace (or, with no GPUs, a CPU-only job: CPUOnly)
	KindQuota     Kind = "quota"  // a temporary quota increase of GPUs more GPUs of Class for Duration
	KindExtension Kind = "extend" // Duration more for lease Parent
)

// Lease is a time-bounded right to N GPUs of a class for one user of one team.
type Lease struct {
	ID       LeaseID
	Kind     Kind
	Parent   LeaseID // the lease an extension extends
	User     string
	Team     string
	Class    string
	GPUs     int
	Duration time.Duration // granted length, extensions included
	// Extended is what its extensions added to Duration: the length asked for is AskedDuration.
	Extended time.Duration
	Template string
	// Params are the template's key=value parameters (a job submitted from a template).
	Params    map[string]string
	DataClass string
	Exclusive bool
	State     State
	Node      string
	GPUIndex  []int  // GPU indexes on Node
	Rules     string // exception rules that stopped it, comma separated
	Reason    string // why it is in its state (last transition)
	// StopDeferred is set on the lease Release returns when the scheduler could not be told to
	// stop its job (it did not answer): the lease and its bill ended all the same, and the
	// reconcile pass cancels the job, which no live lease owns, once the scheduler answers. It is
	// not stored.
	StopDeferred bool
	// StopDeferredWhy, where set with StopDeferred, says why the scheduler could not be told: it
	// answers, but refuses the service's own credentials (Unreachable.Waiting), and the job is
	// stopped once it accepts them again. Not stored.
	StopDeferredWhy string
	Because         string // the requester's reason (quota increases)
	Connect         string // how to reach the workspace
	Ref             string // the backend's id (Slurm job id, pod name)
	// RequestKey makes a request idempotent: a retried delivery finds the lease it made.
	RequestKey string

	CreatedAt  time.Time
	StartedAt  time.Time // zero until active
	ExpiresAt  time.Time // zero until active
	EndedAt    time.Time // zero until ended
	KeptAt     time.Time // last "keep" answer to an idle warning, or its job running again after a requeue or suspension
	WarnedAt   time.Time // idle warning sent
	DecidedBy  string    // approver who decided an exception
	DecidedAt  time.Time
	Reclaimed  float64 // GPU-hours returned by idle reclaim
	Extensions int
	// Connection says how well the lease's GPUs are connected, one NVLink island or not: those
	// the service chose, or those the scheduler gave its job where it says (Slurm).
	Connection Connection
	// Price is the price per GPU-hour of the lease's class when it was requested, which it is
	// billed at (PricePerGPUHour), when Priced; leases made before prices were kept have none.
	Price  float64
	Priced bool
	// ExpiryWarnedFor is the end time (ExpiresAt) the owner was warned of shortly before it;
	// an extension moves ExpiresAt, so the new end is warned of again.
	ExpiryWarnedFor time.Time
	// Pauses are the spans in which the lease's workspace did not run while it was active, its
	// job back in the scheduler's queue or suspended, oldest first; the last one lasts while its
	// To is zero. The time its job waited in the queue is not billed (HeldFor).
	Pauses []Pause
	// SubmittingUntil is, while a replica submits the job of this provisioning lease (start), when
	// its claim lapses: until then no reconcile pass, of any replica, adopts a job it finds for the
	// lease or submits it again (Submitting). Zero when no submission is in flight.
	SubmittingUntil time.Time
	// AskedGPUs are the GPUs asked for where they were rounded up to whole nodes of the class
	// (6 asked on nodes of 4 GPUs each: GPUs is 8); 0 where nothing was rounded.
	AskedGPUs int
	// SubmittingBy names the process that holds that claim (Service.Submitter); empty when it
	// named none. A process starting on the same host releases at once the claims of one there
	// that no longer runs.
	SubmittingBy string
}

// AskedDuration is the length l was asked for: its length less what its extensions added.
func (l *Lease) AskedDuration() time.Duration {
	if l.Extended > 0 && l.Extended < l.Duration {
		return l.Duration - l.Extended
	}
	return l.Duration
}

// CPUOnly reports whether l is the lease of a job that runs on CPUs only (a template with no
// GPUs): it holds no GPU, so it is placed on none, billed nothing, counts against no GPU quota and
// has no GPU utilization to be reclaimed for; it runs in its class's partition or pool until it
// ends or is released.
func (l *Lease) CPUOnly() bool { return l.Kind == KindWorkspace && l.GPUs == 0 }

// PricePerGPUHour is what an hour of one of l's GPUs costs: the price its class had when it was
// requested, so that a later change of the catalog's price re-prices neither the lease nor a
// week already reported; for a lease from before prices were kept, its class's price now (0
// when the class is no longer in the catalog).
func PricePerGPUHour(p *policy.Policy, l *Lease) float64 {
	if l.Priced {
		return l.Price
	}
	if c, ok := p.Class(l.Class); ok {
		return c.PricePerGPUHour
	}
	return 0
}

// Bill is what d of l's GPUs cost, at its price per GPU-hour, rounded to the currency's minor
// unit: the bill chat gives for a lease that ran for d (BillUpTo), and, as the difference of two
// bills, the part of it a week of the showback charges (BillIn), so that a lease's weeks add up to
// its bill and a week's cost to the bills of its leases.
func Bill(p *policy.Policy, l *Lease, d time.Duration) float64 {
	return policy.RoundRat(charge(PricePerGPUHour(p, l), l.GPUs, d), policy.MinorUnits(p.Currency))
}

// BillUpTo is l's bill up to t: what the time it held its GPUs from its start to t (to its end,
// for t past it) costs, as Bill rounds it. It never decreases as t grows. It is the one rule for
// what any span of a lease costs: chat's cost so far and a lease's bill are BillUpTo of now or of
// its end, and a span's part of the bill is BillIn (of the clock) or BillBetween (of its time).
func BillUpTo(p *policy.Policy, l *Lease, t time.Time) float64 {
	return Bill(p, l, HeldFor(l, l.StartedAt, t))
}

// BillIn is the part of l's bill charged in [from, to): its bill up to to less its bill up to
// from. Never negative, since BillUpTo never decreases; nothing for a span in which l held no GPU, and the parts of any split of
// a lease's time add up to its bill (a week's part of a long lease may so differ by one minor
// unit from its hours in the week × its price).
func BillIn(p *policy.Policy, l *Lease, from, to time.Time) float64 {
	if !to.After(from) {
		return 0
	}
	return BillBetween(p, l, HeldFor(l, l.StartedAt, from), HeldFor(l, l.StartedAt, to))
}

// BillBetween is the part of l's bill for the time it holds its GPUs from a to b, counted from
// its start: its bill for b less its bill for a. BillIn is it for a span of the clock; an
// extension's time added is it from the time the lease held or will hold to its old end, so that
// what chat says the lease and each extension cost adds up to the lease's bill.
func BillBetween(p *policy.Policy, l *Lease, a, b time.Duration) float64 {
	if b <= a {
		return 0
	}
	return Bill(p, l, b) - Bill(p, l, a)
}

// charge is price × GPUs × d in hours, exactly: the price as it is written in the policy (3.17,
// not the binary value nearest it), so that a bill of exactly half a cent (5h30m of one GPU at
// 3.17 is 17.435) rounds up, as a person checking it by hand rounds it.
func charge(price float64, gpus int, d time.Duration) *big.Rat {
	v := new(big.Rat).Mul(policy.Decimal(price), big.NewRat(int64(gpus), 1))
	return v.Mul(v, big.NewRat(int64(d), int64(time.Hour)))
}

// GPUHours is what a lease of GPUs for d costs in GPU-hours.
func GPUHours(gpus int, d time.Duration) float64 { return float64(gpus) * d.Hours() }

// FormatHours writes GPU-hours as a person reads a quota: to the hundredth at most, without
// trailing zeros (8, 7.75, 50.5).
func FormatHours(h float64) string {
	return strconv.FormatFloat(policy.Round(h, 2), 'f', -1, 64)
}

// GPUCount is how every reply writes a number of GPUs, of a class or not: "1 GPU", "4 GPUs",
// "1 tiny GPU", "4 tiny GPUs".
func GPUCount(n int, class string) string {
	if class == "" {
		return policy.Count(n, "GPU", "GPUs")
	}
	return policy.Count(n, class+" GPU", class+" GPUs")
}

// Event is one audit record: a lease changed state, by whom, when and why.
type Event struct {
	ID     int64
	Lease  LeaseID
	At     time.Time
	Actor  string // a user, an approver, or "system"
	From   State
	To     State
	Reason string
}

// SystemActor is the actor of transitions nobody asked for: expiry, reclaim, timeouts.
const SystemActor = "system"

// Error codes, translated at the edge into one clear sentence.
const (
	EINVALID   = "invalid"
	ENOTFOUND  = "not_found"
	EFORBIDDEN = "forbidden"
	ECONFLICT  = "conflict"
	EINTERNAL  = "internal"
	// EUNAVAILABLE: the service cannot reach its database (or another part it needs) just now.
	EUNAVAILABLE = "unavailable"
)

// ErrUnavailable is what a command gets while the database cannot be reached.
var ErrUnavailable = &Error{Code: EUNAVAILABLE, Message: "The service cannot reach its database; try again in a minute."}

// Error is the one shape of a refusal, in every package: a code, one sentence fit to show the
// user, and, for bad input, an example that works. Match it with errors.As.
type Error struct {
	Code    string
	Message string
	// Example is a command that works, shown after the sentence; empty when none helps.
	Example string
}

func (e *Error) Error() string {
	if e.Example != "" {
		return e.Message + " Example: " + e.Example
	}
	return e.Message
}

// WithExample returns a copy of e that shows ex.
func (e *Error) WithExample(ex string) *Error {
	c := *e
	c.Example = ex
	return &c
}

// Invalid is bad input: one sentence and an example that works.
func Invalid(example, format string, args ...any) *Error {
	return &Error{Code: EINVALID, Message: sentence(format, args), Example: example}
}

// Errorf makes a domain error.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: sentence(format, args)}
}

// sentence is format with args, as the sentence the user reads: when the format starts with a
// word of its own ("there is no request %s…"), the word starts with a capital. A format that
// starts with what it is given (a lease id, an email, a team's or a parameter's name) or with
// something written as it is typed (gpus=%s, /gpu …) keeps it as written.
func sentence(format string, args []any) string {
	msg := fmt.Sprintf(format, args...)
	if !proseWord(format) {
		return msg
	}
	r, size := utf8.DecodeRuneInString(msg)
	return string(unicode.ToUpper(r)) + msg[size:]
}

// proseWord reports whether s starts with an ordinary lower-case word: letters (and an
// apostrophe) up to a space or the end of a clause.
func proseWord(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	if !unicode.IsLower(r) {
		return false
	}
	for _, r := range s {
		switch {
		case r == ' ' || r == ',' || r == ';' || r == ':' || r == '.':
			return true
		case !unicode.IsLetter(r) && r != '\'' && r != '’':
			return false
		}
	}
	return true
}

// ErrorCode is the code of a domain error, or EINTERNAL for anything else.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage is what the user sees for err: the domain sentence, or a plain apology for an internal error.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "Something went wrong on our side and it has been logged; please try again in a minute."
}

// Refused is a backend's error for a job the scheduler (or the cluster's API) would not take:
// Reason is what it said why, as it said it; Err is the whole error, for the log. The service
// shows the user ReasonLine(Reason) only, so a backend passes the scheduler's own words, never
// its command line, environment or script.
type Refused struct {
	Reason string
	Err    error
}

// refusedWords begin the reason of a lease whose job the cluster refused (RefusedByCluster).
const refusedWords = "the cluster refused its job: "

// RefusedByCluster reports whether a failed lease's reason says that the cluster refused its job:
// at its start (a Refused), or after it (a Job.Refused, such as a Kubernetes Job whose pod the API
// server refused). Its owner is told to send the cluster's words to the platform admins if asking
// again gets the same answer.
func RefusedByCluster(reason string) bool { return strings.HasPrefix(reason, refusedWords) }

func (r *Refused) Error() string { return r.Err.Error() }
func (r *Refused) Unwrap() error { return r.Err }

// Unreachable is a backend's error for a start that never reached the scheduler: it could not be
// contacted (a controller restarting or failing over), so nothing was submitted and nothing was
// refused. Reason is what the scheduler's client said, as it said it; Err is the whole error, for
// the log. The lease waits in the service's queue and is handed to the scheduler once it answers.
type Unreachable struct {
	Reason string
	Err    error
	// Waiting, where set, is the waiting lease's whole reason, in place of the one saying that
	// the scheduler does not answer: it answers, but refuses the service's own credentials
	// (ReasonCredentialsPrefix), which only a platform admin can renew.
	Waiting string
}

// ReasonCredentialsPrefix begins the reason of a lease that waits in the service's queue because
// the scheduler refuses the service's credentials (Unreachable.Waiting).
const ReasonCredentialsPrefix = "waiting until the scheduler accepts the service's credentials"

func (u *Unreachable) Error() string { return u.Err.Error() }
func (u *Unreachable) Unwrap() error { return u.Err }

// ansiRE matches terminal escape sequences (colour, cursor, window title), removed whole.
var ansiRE = regexp.MustCompile("\x1b(\\[[0-?]*[ -/]*[@-~]|\\][^\x07\x1b]*(\x07|\x1b\\\\)?|[@-_])")

// maxReasonLine is how many characters of a scheduler's reason chat shows.
const maxReasonLine = 200

// ReasonLine is a scheduler's text as one short line fit for chat: its first line that is not
// blank, with terminal escapes (ANSI colour) removed, as OneLine keeps it, and cut at
// maxReasonLine characters.
func ReasonLine(s string) string {
	s = ansiRE.ReplaceAllString(strings.ToValidUTF8(s, "\ufffd"), "")
	for _, line := range strings.Split(s, "\n") {
		if l := OneLine(line); l != "" {
			if r := []rune(l); len(r) > maxReasonLine {
				return string(r[:maxReasonLine]) + "…"
			}
			return l
		}
	}
	return ""
}

// OneLine is a message as Quartermaster keeps and shows it: its words joined by single spaces,
// valid UTF-8, without control characters (a NUL, a terminal escape) or invisible formatting
// ones (a right-to-left override). A workload writes its own termination message, and the
// database refuses a NUL or invalid UTF-8 in the reason it becomes.
func OneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && !unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	return strings.Join(strings.Fields(s), " ")
}

// ErrNotFound is returned by stores for a missing row.
var ErrNotFound = &Error{Code: ENOTFOUND, Message: "Not found."}

// ErrStale is returned by a conditional update when the row changed underneath.
var ErrStale = &Error{Code: ECONFLICT, Message: "The lease changed in the meantime."}
