package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/acme/quartermaster/internal/policy"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/slack-go/slack"

	"github.com/acme/quartermaster/bot"
)

// Choices fill the request modal's menus; an empty list makes that field free text.
type Choices struct {
	Classes     []Choice // the catalog
	Durations   []string // e.g. 1h, 4h, 1d; empty: DefaultDurations
	Teams       []string
	DataClasses []string
	Templates   []string
	// ownData is how many of DataClasses are those of the person's teams (they come first).
	ownData int
	// DefaultDuration is the length a new form starts at: what the first class allows without
	// approval, 2h at most; empty: 2h.
	DefaultDuration string
}

// Choice is one menu entry.
type Choice struct {
	Value string
	Label string
	// Duration is the length a new form starts at when it starts on this class (what the class
	// allows without approval, 2h at most); empty: Choices.DefaultDuration.
	Duration string
}

// DefaultDurations are the lease lengths the modal offers when Choices names none.
var DefaultDurations = []string{"30m", "1h", "2h", "4h", "8h", "12h", "1d", "2d", "3d"}

// Modal ids. Each field is an input block whose block id and action id are the same, and the
// ones that change the estimate dispatch their changes at once.
const (
	callbackRequest   = "qm.request"
	callbackDeny      = "qm.deny"
	formPrefix        = "qm.form."
	fieldClass        = formPrefix + "class"
	fieldGPUs         = formPrefix + "gpus"
	fieldDuration     = formPrefix + "duration"
	fieldTemplate     = formPrefix + "template"
	fieldTeam         = formPrefix + "team"
	fieldData         = formPrefix + "data"
	blockEstimate     = "qm.estimate"
	fieldReason       = "qm.deny.reason"
	actionOpenRequest = "qm.open.request"
	defaultDuration   = "2h"
	maxReason         = bot.MaxReason // what /gpu deny takes
)

// form is what the request modal holds.
type form struct {
	Class, GPUs, Duration, Template, Team, Data string
}

// command is the typed twin of a filled-in modal.
func (f form) command() string {
	parts := []string{"/gpu request", f.GPUs, f.Class, "for", f.Duration}
	for _, kv := range [][2]string{{"template", f.Template}, {"team", f.Team}, {"data", f.Data}} {
		if kv[1] != "" {
			parts = append(parts, kv[0], kv[1])
		}
	}
	return strings.Join(parts, " ")
}

// errors checks what can be checked before the command runs, by field.
func (f form) errors() map[string]string {
	e := map[string]string{}
	n, err := strconv.Atoi(f.GPUs)
	if msg, _ := policy.NumberSlip(f.GPUs); msg != "" {
		// ٢, ２: the words chat refuses them with, naming the number in 0-9.
		e[fieldGPUs] = msg
	} else if (err == nil || errors.Is(err, strconv.ErrRange)) && n < 1 {
		e[fieldGPUs] = fmt.Sprintf("The number of GPUs must be at least 1, not %s.", clip(f.GPUs, 40))
	} else if n > policy.MaxGPUs || errors.Is(err, strconv.ErrRange) && n > 0 {
		// Past any request's limit, however many digits: the words chat refuses it with.
		e[fieldGPUs] = fmt.Sprintf("%s GPUs is more than any request can hold (at most %d).", clip(f.GPUs, 40), policy.MaxGPUs)
	} else if err != nil {
		e[fieldGPUs] = "Write a whole number of GPUs, 1 or more."
	}
	if f.Class == "" || hasSpace(f.Class) {
		e[fieldClass] = "Choose a class from the catalog."
	}
	if msg, _ := policy.DurationSlip(f.Duration); msg != "" {
		// -2h, ٢h: the words chat refuses them with, naming the duration meant.
		e[fieldDuration] = msg
	} else if f.Duration == "" || hasSpace(f.Duration) {
		e[fieldDuration] = "Write a duration like 4h or 2d."
	}
	for id, v := range map[string]string{fieldTemplate: f.Template, fieldTeam: f.Team, fieldData: f.Data} {
		if hasSpace(v) {
			e[id] = "One word, without spaces."
		}
	}
	return e
}

// hasSpace reports whether s holds white space of any kind (a no-break or an ideographic space
// too): the command reads each as a break between words.
func hasSpace(s string) bool { return strings.IndexFunc(s, unicode.IsSpace) >= 0 }

// formFrom reads a modal's state.
func formFrom(v slack.View) form {
	get := func(id string) string {
		if v.State == nil {
			return ""
		}
		a, ok := v.State.Values[id][id]
		if !ok {
			return ""
		}
		// Around a value, what does not show (white space, a zero-width space, a direction
		// mark) is not part of it: a field of nothing else is empty.
		if a.SelectedOption.Value != "" {
			return strings.TrimFunc(a.SelectedOption.Value, unshown)
		}
		return strings.TrimFunc(a.Value, unshown)
	}
	// As typed: the command compares names as typed ones are (A to Z case aside, a look-alike
	// letter such as İ kept, so it names nothing), and what it echoes back, and what the form
	// shows again, is what was typed: a user or channel id (<@U…>) keeps its case.
	return form{Class: get(fieldClass), GPUs: get(fieldGPUs), Duration: get(fieldDuration),
		Template: get(fieldTemplate), Team: get(fieldTeam), Data: get(fieldData)}
}

// modalMeta travels in a modal's private_metadata: where it was opened, so its answer goes there.
type modalMeta struct {
	Channel     string `json:"c,omitempty"`
	ResponseURL string `json:"r,omitempty"`
	Lease       string `json:"l,omitempty"`
}

func (m modalMeta) encode() string {
	b, _ := json.Marshal(m)
	return string(b)
}

func decodeMeta(s string) modalMeta {
	var m modalMeta
	_ = json.Unmarshal([]byte(s), &m)
	return m
}

// estimate runs "/gpu estimate" for the form as the user: the cost and the predicted wait.
func (a *Adapter) estimate(ctx context.Context, user string, f form) string {
	errs := f.errors()
	for _, fv := range [][2]string{{fieldClass, f.Class}, {fieldGPUs, f.GPUs}, {fieldDuration, f.Duration}} {
		// A field of the estimate filled in wrong says what is wrong with it, as its refusal
		// will; one left empty asks for them. (The other fields do not change the estimate:
		// their refusals come beside them when the form is sent.)
		if msg := errs[fv[0]]; msg != "" && fv[1] != "" {
			return ":warning: " + msg
		} else if msg != "" {
			return "Choose a class, a number of GPUs and a duration to see the cost and the predicted wait."
		}
	}
	email, refusal := a.who(ctx, user)
	if refusal != "" {
		return ":warning: " + refusal
	}
	rs := a.handle(ctx, bot.Request{User: email, Text: fmt.Sprintf("/gpu estimate %s %s %s", f.GPUs, f.Class, f.Duration), Account: a.account(user)})
	if len(rs) == 0 {
		return "No estimate."
	}
	if rs[0].Error {
		return ":warning: " + rs[0].Text
	}
	return rs[0].Text
}

// defaultForm is a new modal's starting point: one GPU of the catalog's first class.
func (a *Adapter) defaultForm() form {
	f := form{GPUs: "1", Duration: defaultDuration}
	if d := a.cfg.Choices.DefaultDuration; d != "" {
		f.Duration = d
	}
	if len(a.cfg.Choices.Classes) > 0 {
		f.Class = a.cfg.Choices.Classes[0].Value
	}
	return f
}

// formBudget is how much of a trigger's life choosing a form's class may take; past it the form
// opens on the first class rather than not at all.
const formBudget = triggerLife / 2

// startingForm is the form user's request modal opens with: defaultForm, on the class that
// "/gpu request" naming no class would give them (Config.FormClass) and at the length that class
// starts at. Whatever keeps that from being known in time (who they are, the class) leaves the
// first class.
func (a *Adapter) startingForm(ctx context.Context, user string, received time.Time) form {
	f := a.defaultForm()
	if a.cfg.FormClass == nil {
		return f
	}
	ctx, cancel := context.WithDeadline(ctx, received.Add(formBudget))
	defer cancel()
	req, known := a.asker(ctx, user)
	if !known {
		return f
	}
	class, ok := a.cfg.FormClass(ctx, req)
	if !ok || ctx.Err() != nil {
		return f
	}
	if len(a.cfg.Choices.Classes) == 0 {
		f.Class = class // the class is free text
	}
	for _, c := range a.cfg.Choices.Classes {
		if c.Value == class {
			f.Class = class
			if c.Duration != "" {
				f.Duration = c.Duration
			}
		}
	}
	return f
}

// asker is the request that user's commands are made as, for what a form offers them; false when
// who they are cannot be told (Slack did not say; their profile shows no email, without single
// sign-on to know them by their account).
func (a *Adapter) asker(ctx context.Context, user string) (bot.Request, bool) {
	email, refusal := a.who(ctx, user)
	if refusal != "" && !a.byAccount(ctx, user) {
		return bot.Request{}, false
	}
	return bot.Request{User: email, Account: a.account(user)}, true
}

// formChoices are the menus of user's request form, read now: Config.Choices, with the teams and
// data classes the person may name (Config.FormTeams, Config.FormDataClasses) in place of its
// own. team is the team the form starts on: their first, as a request naming none is charged to
// it; "" when they have none. Someone whose teams cannot be told is offered none (the field is
// free text), never another's.
func (a *Adapter) formChoices(ctx context.Context, user string) (ch Choices, team string) {
	ch = a.cfg.Choices
	if a.cfg.FormTeams == nil && a.cfg.FormDataClasses == nil {
		return ch, ""
	}
	req, known := a.asker(ctx, user)
	if a.cfg.FormTeams != nil {
		ch.Teams = nil
		if known {
			teams, mine := a.cfg.FormTeams(ctx, req)
			ch.Teams = teams
			if mine > 0 {
				team = teams[0]
			}
		}
	}
	if a.cfg.FormDataClasses != nil {
		ch.DataClasses, ch.ownData = nil, 0
		if known {
			ch.DataClasses, ch.ownData = a.cfg.FormDataClasses(ctx, req)
		}
	}
	return ch, team
}

// dataOptions are the data class menu's options: those of the person's teams marked so.
func dataOptions(ch Choices) []*slack.OptionBlockObject {
	var out []*slack.OptionBlockObject
	for i, dc := range ch.DataClasses {
		label := dc
		if i < ch.ownData {
			label += " — your team's"
		}
		out = append(out, slack.NewOptionBlockObject(dc, plain(clip(label, 75)), nil))
	}
	return out
}

func options(values []string) []*slack.OptionBlockObject {
	var out []*slack.OptionBlockObject
	for _, v := range values {
		out = append(out, slack.NewOptionBlockObject(v, plain(clip(v, 75)), nil))
	}
	return out
}

func choiceOptions(cs []Choice) []*slack.OptionBlockObject {
	var out []*slack.OptionBlockObject
	for _, c := range cs {
		label := c.Label
		if label == "" {
			label = c.Value
		}
		out = append(out, slack.NewOptionBlockObject(c.Value, plain(clip(label, 75)), nil))
	}
	return out
}

// maxStaticOptions is the most options Slack takes in a static menu; past it a menu loads its
// options as the user types (an external select), so no class or team is ever left out.
const maxStaticOptions = 100

// field is an input: a menu when there are options, free text otherwise.
func field(id, label, placeholder, value string, opts []*slack.OptionBlockObject, optional, dispatch bool) *slack.InputBlock {
	var el slack.BlockElement
	switch {
	case len(opts) > maxStaticOptions:
		s := slack.NewOptionsSelectBlockElement(slack.OptTypeExternal, plain(placeholder), id)
		zero := 0
		s.MinQueryLength = &zero
		for _, o := range opts {
			if o.Value == value {
				s.InitialOption = o
			}
		}
		el = s
	case len(opts) > 0:
		s := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, plain(placeholder), id, opts...)
		for _, o := range opts {
			if o.Value == value {
				s.InitialOption = o
			}
		}
		el = s
	default:
		t := slack.NewPlainTextInputBlockElement(plain(placeholder), id)
		t.InitialValue = value
		if dispatch {
			t.DispatchActionConfig = &slack.DispatchActionConfig{TriggerActionsOn: []string{"on_enter_pressed"}}
		}
		el = t
	}
	b := slack.NewInputBlock(id, plain(label), nil, el)
	b.Optional = optional
	b.DispatchAction = dispatch
	return b
}

// suggest answers an external select's typeahead: up to 100 of the field's options whose value or
// label contains what was typed, A to Z case aside, in the menu's order.
func (a *Adapter) suggest(cb slack.InteractionCallback) slack.OptionsResponse {
	ch := a.cfg.Choices
	if cb.ActionID == fieldTeam || cb.ActionID == fieldData {
		// The person's own, read now: Slack waits 3 seconds for the answer.
		ctx, cancel := context.WithTimeout(context.Background(), triggerLife)
		ch, _ = a.formChoices(ctx, cb.User.ID)
		cancel()
	}
	var all []*slack.OptionBlockObject
	switch cb.ActionID {
	case fieldClass:
		all = choiceOptions(ch.Classes)
	case fieldTeam:
		all = options(ch.Teams)
	case fieldTemplate:
		all = options(ch.Templates)
	case fieldData:
		all = dataOptions(ch)
	case fieldDuration:
		all = options(ch.Durations)
	}
	// Names compare as everywhere else in the product (policy.NameKey: A to Z case aside, nothing
	// else folded), so a name typed with a look-alike letter (the Kelvin sign K) is offered nothing
	// a command naming it so would not reach.
	q := policy.NameKey(strings.TrimSpace(cb.Value))
	out := []*slack.OptionBlockObject{}
	for _, o := range all {
		if len(out) == maxStaticOptions {
			break
		}
		if q == "" || strings.Contains(policy.NameKey(o.Value), q) || strings.Contains(policy.NameKey(o.Text.Text), q) {
			out = append(out, o)
		}
	}
	return slack.OptionsResponse{Options: out}
}

// requestView is the request modal filled with f and its estimate, its menus ch (formChoices).
func (a *Adapter) requestView(f form, ch Choices, estimate string, meta modalMeta) slack.ModalViewRequest {
	durations := ch.Durations
	if len(durations) == 0 {
		durations = DefaultDurations
	}
	if f.Duration != "" && !slices.Contains(durations, f.Duration) {
		durations = append([]string{f.Duration}, durations...) // the form's length, offered first
	}
	gpus := slack.NewNumberInputBlockElement(plain("1"), fieldGPUs, false)
	gpus.InitialValue = f.GPUs
	gpus.MinValue = "1"
	gpus.DispatchActionConfig = &slack.DispatchActionConfig{TriggerActionsOn: []string{"on_character_entered"}}
	gpuBlock := slack.NewInputBlock(fieldGPUs, plain("GPUs"), nil, gpus)
	gpuBlock.DispatchAction = true
	blocks := []slack.Block{
		field(fieldClass, "Class", "Choose a class", f.Class, choiceOptions(ch.Classes), false, true),
		gpuBlock,
		field(fieldDuration, "Duration", "How long", f.Duration, options(durations), false, true),
		field(fieldTemplate, "Template", "e.g. jupyterlab (optional)", f.Template, options(ch.Templates), true, false),
		field(fieldTeam, "Team", "your first team (optional)", f.Team, options(ch.Teams), true, false),
		field(fieldData, "Data class", "your team's default (optional)", f.Data, dataOptions(ch), true, false),
		slack.NewSectionBlock(mrkdwn(clip(escape(estimate), MaxSectionText)), nil, nil, slack.SectionBlockOptionBlockID(blockEstimate)),
	}
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		CallbackID:      callbackRequest,
		Title:           plain("Request GPUs"),
		Submit:          plain("Request"),
		Close:           plain("Cancel"),
		PrivateMetadata: meta.encode(),
		Blocks:          slack.Blocks{BlockSet: blocks},
	}
}

// triggerLife is how long a trigger id lets a modal open: Slack allows 3 seconds from the click or
// command; a little is kept back for the call itself.
const triggerLife = 2500 * time.Millisecond

// calculating is the estimate's place in a form opened before the estimate is known.
const calculating = "Calculating the cost and the predicted wait…"

// openView opens a modal with a trigger id received at received. A 429 is retried only while the
// trigger is still valid: past its 3 seconds a retry could only fail.
func (a *Adapter) openView(ctx context.Context, trigger string, received time.Time, v slack.ModalViewRequest) (*slack.ViewResponse, error) {
	for {
		resp, err := a.api.OpenViewContext(ctx, trigger, v)
		after, limited := rateLimited(err)
		if !limited {
			return resp, err
		}
		wait := max(after, minRetryAfter)
		if time.Since(received)+wait > triggerLife {
			return nil, err
		}
		if err := a.out.Sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// openRequestModal opens the request modal (for "/gpu" alone, or the Home tab's button) at once,
// before any worker is free, on the class a request naming none would get (startingForm), with
// the estimate still to come; the estimate then fills it in with
// views.update. A slow estimate never costs the user the form.
func (a *Adapter) openRequestModal(ctx context.Context, trigger string, received time.Time, o origin) {
	f := a.startingForm(ctx, o.user, received)
	// The teams and data classes this person may name, as they are now (a changed policy, a new
	// sign-in show at once); the form starts on their first team. Not known in time: typed.
	choose, cancel := context.WithDeadline(ctx, received.Add(formBudget))
	ch, team := a.formChoices(choose, o.user)
	cancel()
	f.Team = team
	meta := modalMeta{Channel: o.channel}
	resp, err := a.openView(ctx, trigger, received, a.requestView(f, ch, calculating, meta))
	if err != nil {
		a.log.Error("views.open failed", "user", o.user, "err", err)
		a.answer(ctx, o, "", bot.Reply{Error: true, Ephemeral: true, Text: "The request form could not be opened; type the request instead. Example: " + f.command()})
		return
	}
	if resp == nil {
		return
	}
	v := a.requestView(f, ch, a.estimate(ctx, o.user, f), meta)
	err = a.out.retry(ctx, func() error {
		_, err := a.api.UpdateViewContext(ctx, v, "", resp.Hash, resp.ID)
		return err
	})
	if err != nil {
		// hash_conflict: the user changed a field first; that change brings its own estimate.
		a.log.Debug("views.update of a new form failed", "view", resp.ID, "err", err)
	}
}

// formState is what the adapter knows of a request form whose changes are being estimated: the
// number of its latest change, and a lock that keeps its updates one at a time.
type formState struct {
	mu     sync.Mutex
	latest atomic.Int64
}

// formChanged numbers a change to the request form viewID as its latest.
func (a *Adapter) formChanged(viewID string) int64 {
	seq := a.formSeq.Add(1)
	a.formsMu.Lock()
	defer a.formsMu.Unlock()
	st, ok := a.forms[viewID]
	if !ok {
		st = &formState{}
		a.forms[viewID] = st
	}
	st.latest.Store(seq)
	return seq
}

// updateRequestModal shows the estimate for what the modal holds after change seq, unless a
// later change came in meanwhile: that one brings its own estimate, and the form is left with
// the estimate of its last change, the one its fields show. Changes sent from the same version
// of the form (the user typed on before the last estimate landed) carry the same hash, so the
// update is made without one: the latest change wins, whatever order the estimates finish in.
func (a *Adapter) updateRequestModal(ctx context.Context, cb slack.InteractionCallback, seq int64) {
	if cb.View.CallbackID != callbackRequest {
		return
	}
	f := formFrom(cb.View)
	ch, _ := a.formChoices(ctx, cb.User.ID)
	v := a.requestView(f, ch, a.estimate(ctx, cb.User.ID, f), decodeMeta(cb.View.PrivateMetadata))
	a.formsMu.Lock()
	st := a.forms[cb.View.ID]
	a.formsMu.Unlock()
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.latest.Load() != seq {
		return
	}
	err := a.out.retry(ctx, func() error {
		_, err := a.api.UpdateViewContext(ctx, v, "", "", cb.View.ID)
		return err
	})
	if err != nil {
		// The form was closed or submitted meanwhile.
		a.log.Debug("views.update failed", "view", cb.View.ID, "err", err)
	}
	a.formsMu.Lock()
	if st.latest.Load() == seq {
		delete(a.forms, cb.View.ID)
	}
	a.formsMu.Unlock()
}

// onSubmit takes a submitted modal: the request runs as "/gpu request …" and its answer is DMed;
// a deny reason runs "/gpu deny LEASE REASON" and is answered where the button was.
func (a *Adapter) onSubmit(cb slack.InteractionCallback) any {
	key := ""
	if cb.View.ID != "" {
		key = "slack:view:" + cb.View.ID
	}
	meta := decodeMeta(cb.View.PrivateMetadata)
	switch cb.View.CallbackID {
	case callbackRequest:
		f := formFrom(cb.View)
		if e := f.errors(); len(e) > 0 {
			return slack.NewErrorsViewSubmissionResponse(e)
		}
		if !a.seen.First(key) {
			return nil
		}
		o := origin{user: cb.User.ID, team: cb.Team.ID, channel: meta.Channel}
		a.runKept(o, f.command(), key)
	case callbackDeny:
		reason := ""
		if cb.View.State != nil {
			reason = cb.View.State.Values[fieldReason][fieldReason].Value
		}
		reason = strings.Join(strings.Fields(reason), " ")
		if strings.TrimFunc(reason, unshown) == "" {
			// Nothing that shows (zero-width spaces, direction marks) is no reason either.
			return slack.NewErrorsViewSubmissionResponse(map[string]string{fieldReason: "Say why, so the requester knows what to do instead."})
		}
		if !a.seen.First(key) {
			return nil
		}
		o := origin{user: cb.User.ID, team: cb.Team.ID, channel: meta.Channel, responseURL: meta.ResponseURL}
		cmd := "/gpu deny " + meta.Lease + " " + clip(reason, maxReason)
		a.runKept(o, cmd, key)
	}
	return nil
}

// checkWithin is how much of the trigger's life asking whether a denial would be refused may
// take; a check that takes longer opens the form, and the denial is judged when it runs.
const checkWithin = time.Second

// denyRefused is the refusal that someone who clicked Deny gets at once, instead of the form,
// when they may not decide the request (or it no longer waits): nil when they may, or when that
// cannot be told within checkWithin of the click.
func (a *Adapter) denyRefused(ctx context.Context, received time.Time, lease string, o origin) *bot.Reply {
	ctx, cancel := context.WithDeadline(ctx, received.Add(checkWithin))
	defer cancel()
	email, refusal := a.who(ctx, o.user)
	if refusal != "" && !a.byAccount(ctx, o.user) {
		if ctx.Err() != nil {
			return nil
		}
		return &bot.Reply{Error: true, Ephemeral: true, Text: refusal}
	}
	r := bot.Check(ctx, a.cfg.Handler, bot.Request{User: email, Text: "/gpu deny " + lease, Channel: o.channel, Account: a.account(o.user)})
	if r != nil {
		r.Ephemeral = true
	}
	return r
}

// openDenyModal asks a budget owner why, before the denial runs; anyone who may not decide the
// request is refused at once instead, with no form.
func (a *Adapter) openDenyModal(ctx context.Context, trigger string, received time.Time, lease string, o origin) {
	if r := a.denyRefused(ctx, received, lease, o); r != nil {
		a.log.Info("refused a denial form", "user", o.user, "lease", lease)
		a.answer(ctx, o, "", *r)
		return
	}
	in := slack.NewPlainTextInputBlockElement(plain("what to do instead, for the requester"), fieldReason)
	in.Multiline = true
	in.MaxLength = maxReason
	v := slack.ModalViewRequest{
		Type:            slack.VTModal,
		CallbackID:      callbackDeny,
		Title:           plain(clip("Deny "+lease, 24)),
		Submit:          plain("Deny"),
		Close:           plain("Cancel"),
		PrivateMetadata: modalMeta{Channel: o.channel, ResponseURL: o.responseURL, Lease: lease}.encode(),
		Blocks: slack.Blocks{BlockSet: []slack.Block{
			slack.NewSectionBlock(mrkdwn(escape(fmt.Sprintf("Denying %s. The requester is told your reason.", lease))), nil, nil),
			slack.NewInputBlock(fieldReason, plain("Reason"), nil, in),
		}},
	}
	if _, err := a.openView(ctx, trigger, received, v); err != nil {
		a.log.Error("views.open failed", "user", o.user, "err", err)
		a.answer(ctx, o, "", bot.Reply{Error: true, Ephemeral: true, Text: fmt.Sprintf("The reason form could not be opened; type the denial instead. Example: /gpu deny %s the reason", lease)})
	}
}
