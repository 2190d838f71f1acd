package discord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/bot/internal/inflight"
	"github.com/acme/quartermaster/internal/policy"
)

const (
	// maxOptionLength bounds one option's text: what Discord lets a text option hold. The
	// grammar judges what is in it (a reason of at most 500 characters, template parameters of
	// up to 512 each), as it does the same line typed in Slack.
	maxOptionLength = 6000
	// maxInteger bounds an integer option as Discord bounds it: 2^53 either way. A value past it
	// did not come from Discord's own checks.
	maxInteger = 1 << 53
	// completeTimeout bounds the suggestions for an option being typed: they are useless late.
	completeTimeout = time.Second
	// identifyTimeout bounds finding out who a Discord user is (the accounts linked by signing in
	// are in the database), which comes before the acknowledgement: with the deferral's wait for
	// the inbox it keeps the answer well within Discord's three seconds when the database hangs.
	identifyTimeout = time.Second
	// checkTimeout bounds asking whether a command would be refused before its form opens (the
	// reason for a denial); a check that takes longer opens the form, and the command judges.
	checkTimeout = time.Second
	// followUpTries is how often a deferred answer's edit is tried when Discord does not know the
	// deferral yet (HTTP 404): the deferral and the edit can cross on the way.
	followUpTries = 4
	// followUpTimeout bounds the edit that replaces a deferral. It has time of its own, so that
	// work which ran out of time (waiting for a turn, or a slow handler) still replaces
	// "thinking…" with what it has to say.
	followUpTimeout = 30 * time.Second
)

// subcommandName is how Discord writes a subcommand's name: at most 32 lower-case letters, digits,
// - and _.
var subcommandName = regexp.MustCompile(`^[a-z0-9_-]{1,32}$`)

// incoming is what an interaction asks, read without side effects.
type incoming struct {
	user    string // the Discord user id of whoever acted
	text    string // the /gpu command line to run
	click   string // for a button: its key (bot.ClickKey), which every press of it shares
	problem string // why the interaction cannot be run as it is: one sentence
	example string // a command line that works, shown beside the problem
	// a bare "deny LEASE" button: ask for a reason first
	denyLease string
	// autocomplete: what to suggest, and what was typed
	suggest, typed string
	// autocomplete of an option whose values are known (the policy's classes, when there are
	// more than Discord shows as choices): those values
	choices []string
}

// decodeInteraction reads an interaction as Discord sends it.
func decodeInteraction(body []byte) (*discordgo.Interaction, error) {
	var i discordgo.Interaction
	if err := json.Unmarshal(body, &i); err != nil {
		return nil, fmt.Errorf("discord: malformed interaction: %w", err)
	}
	return &i, nil
}

// read works out what an interaction asks. Nothing in it trusts the payload's shape: options of
// the wrong type, unknown names, missing data and forged buttons are problems, never panics.
func (a *Adapter) read(i *discordgo.Interaction) incoming {
	var in incoming
	switch {
	case i.Member != nil && i.Member.User != nil:
		in.user = i.Member.User.ID
	case i.User != nil:
		in.user = i.User.ID
	}
	in.example = "/" + a.cfg.Name + " help"
	switch i.Type {
	case discordgo.InteractionPing:
		return in
	case discordgo.InteractionApplicationCommand, discordgo.InteractionApplicationCommandAutocomplete:
		data, ok := i.Data.(discordgo.ApplicationCommandInteractionData)
		if !ok {
			in.problem = "This interaction carries no command."
			break
		}
		a.readCommand(&in, data, i.Type == discordgo.InteractionApplicationCommandAutocomplete)
	case discordgo.InteractionMessageComponent:
		data, ok := i.Data.(discordgo.MessageComponentInteractionData)
		cmd, genuine := a.buttonCommand(data.CustomID)
		if !ok || !genuine {
			in.problem = "This button was not made by Quartermaster here (or it is from before its key changed), so it does nothing; type the command instead."
			in.example = "/" + a.cfg.Name + " list"
			break
		}
		if lease, ok := a.bareDeny(cmd); ok {
			in.denyLease = lease
			break
		}
		in.text = cmd
		if i.Message != nil {
			in.click = bot.ClickKey("discord", i.Message.ID, in.user, cmd)
		}
	case discordgo.InteractionModalSubmit:
		data, ok := i.Data.(discordgo.ModalSubmitInteractionData)
		cmd, genuine := a.verifyID(modalPrefix, data.CustomID)
		if !ok || !genuine {
			in.problem = "This form was not made by Quartermaster here, so it does nothing; type the command instead."
			break
		}
		in.text = strings.TrimSpace(cmd + " " + oneLine(bot.Clip(textInput(data.Components, reasonInput), maxReasonLength)))
	default:
		in.problem = fmt.Sprintf("Quartermaster does not handle this kind of interaction (%d).", i.Type)
	}
	switch {
	case in.problem != "" || i.Type == discordgo.InteractionPing:
	case in.user == "":
		in.problem = "Discord did not say who you are, so Quartermaster cannot answer."
	case i.ID == "":
		in.problem = "This interaction has no id, so Quartermaster cannot tell it from another."
	}
	if in.problem != "" {
		in.text, in.click, in.denyLease, in.suggest, in.choices = "", "", "", "", nil
	}
	return in
}

// readCommand turns /gpu SUBCOMMAND with typed options into the command line the grammar reads,
// refusing what the grammar could not make sense of with a sentence that names the option.
func (a *Adapter) readCommand(in *incoming, data discordgo.ApplicationCommandInteractionData, autocomplete bool) {
	if data.Name != a.cfg.Name {
		in.problem = fmt.Sprintf("/%s is not Quartermaster's command; use /%s.", trunc(data.Name, 32), a.cfg.Name)
		return
	}
	if len(data.Options) == 0 || data.Options[0] == nil || data.Options[0].Type != discordgo.ApplicationCommandOptionSubCommand {
		in.problem = fmt.Sprintf("/%s needs a subcommand saying what to do.", a.cfg.Name)
		return
	}
	sub := data.Options[0]
	c, ok := a.cmds[sub.Name]
	if !ok {
		if subcommandName.MatchString(sub.Name) {
			// One Discord still shows that is not offered here now (registered before the
			// policy or the templates changed) or not known at all: the handler answers it in
			// the words it answers the same command typed in Slack with. Its options, of a
			// command this installation has not registered, are not read.
			in.text = handlerCommand + " " + sub.Name
			return
		}
		in.problem = fmt.Sprintf("/%s %s is not a command here; /%s help lists them.", a.cfg.Name, trunc(sub.Name, 32), a.cfg.Name)
		return
	}
	in.example = c.Example
	values := map[string]string{}
	for _, o := range sub.Options {
		if o == nil {
			continue
		}
		def, ok := c.option(o.Name)
		if !ok {
			in.problem = fmt.Sprintf("/%s %s has no option %s; %s.", a.cfg.Name, c.Name, policy.Quoted(o.Name, 32), c.optionNames())
			return
		}
		if _, dup := values[def.Name]; dup {
			in.problem = fmt.Sprintf("/%s %s got the option %s twice.", a.cfg.Name, c.Name, def.Name)
			return
		}
		if autocomplete {
			// While one option is typed Discord sends the others as they stand, unchecked (an
			// integer as the text typed so far): only the one typed is read.
			if o.Focused {
				in.suggest, in.choices = def.Autocomplete, def.Choices
				in.typed, _ = o.Value.(string)
			}
			values[def.Name] = ""
			continue
		}
		v, problem := optionValue(def, o.Value)
		if problem != "" {
			in.problem = fmt.Sprintf("The option %s of /%s %s %s", def.Name, a.cfg.Name, c.Name, problem)
			return
		}
		if def.Type == OptionString {
			v = a.namedChannels(v)
		}
		values[def.Name] = v
	}
	if autocomplete {
		return
	}
	for _, def := range c.Options {
		if v := values[def.Name]; def.Required && v == "" {
			in.problem = fmt.Sprintf("/%s %s needs the option %s (%s).", a.cfg.Name, c.Name, def.Name, strings.TrimSuffix(def.Description, "."))
			return
		}
	}
	in.text = c.Text(values)
}

// optionValue is an option's value as the grammar reads it, or what is wrong with it (the end of
// a sentence: "takes a whole number, not \"two\".").
func optionValue(def *Option, v any) (string, string) {
	switch def.Type {
	case OptionInteger:
		f, ok := v.(float64)
		if !ok || f != math.Trunc(f) || math.Abs(f) > maxInteger {
			return "", fmt.Sprintf("takes a whole number, not %s.", shown(v))
		}
		if def.MinValue != nil && f < *def.MinValue {
			return "", fmt.Sprintf("must be at least %g, not %g.", *def.MinValue, f)
		}
		// Written out in digits however big: the grammar judges how many is too many, as it does
		// the same number typed in Slack.
		return strconv.FormatFloat(f, 'f', 0, 64), ""
	case OptionBoolean:
		b, ok := v.(bool)
		if !ok {
			return "", fmt.Sprintf("takes true or false, not %s.", shown(v))
		}
		return strconv.FormatBool(b), ""
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Sprintf("takes text, not %s.", shown(v))
	}
	s = strings.TrimSpace(oneLine(s))
	if !visible(s) {
		// Only zero-width or direction characters: nothing was typed that shows, so the
		// option is as good as missing (and a required one is asked for by name).
		s = ""
	}
	switch {
	case utf8.RuneCountInString(s) > maxOptionLength:
		return "", fmt.Sprintf("is too long (%d characters; at most %d).", utf8.RuneCountInString(s), maxOptionLength)
	case def.OneWord && strings.ContainsAny(s, " \t"):
		return "", fmt.Sprintf("takes one word, not %s.", policy.Quoted(s, 40))
	}
	return s, ""
}

// namedChannels is s with each channel Discord wrote as <#CHANNEL_ID> (one picked as it was typed)
// written as its name in Config.Channels (#vision-gpu): as the person saw it, and as Slack passes a
// channel. A channel Config.Channels does not name is left as it is.
func (a *Adapter) namedChannels(s string) string {
	if !strings.Contains(s, "<#") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "<#")
		if i < 0 {
			break
		}
		end := strings.IndexByte(s[i:], '>')
		if end < 0 {
			break
		}
		b.WriteString(s[:i])
		if name := a.channelNames[s[i+2:i+end]]; name != "" {
			b.WriteString("#" + strings.TrimPrefix(name, "#"))
		} else {
			b.WriteString(s[i : i+end+1])
		}
		s = s[i+end+1:]
	}
	b.WriteString(s)
	return b.String()
}

// visible reports whether s has a character that shows: not only spaces and format characters
// (zero-width spaces and joiners, direction marks and overrides, the byte order mark).
func visible(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return !unicode.IsSpace(r) && !unicode.Is(unicode.Cf, r) }) >= 0
}

// shown writes an option's value for a refusal.
func shown(v any) string {
	switch x := v.(type) {
	case nil:
		return "nothing"
	case string:
		return strconv.Quote(trunc(x, 40))
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return "a value of another kind"
}

// textInput is the value of the text input with id in a modal's components.
func textInput(cs []discordgo.MessageComponent, id string) string {
	for _, c := range cs {
		switch x := c.(type) {
		case *discordgo.ActionsRow:
			if v := textInput(x.Components, id); v != "" {
				return v
			}
		case *discordgo.TextInput:
			if x.CustomID == id {
				return x.Value
			}
		}
	}
	return ""
}

// bareDeny reports whether cmd is "/gpu deny LEASE" with no reason: the button that asks for one.
func (a *Adapter) bareDeny(cmd string) (string, bool) {
	f := strings.Fields(cmd)
	if len(f) == 3 && (f[0] == handlerCommand || f[0] == "/"+a.cfg.Name) && strings.EqualFold(f[1], "deny") {
		return f[2], true
	}
	return "", false
}

// request is the command an interaction runs: keyed by the interaction, or for a button by the
// button (every press of the same button of the same message by the same person is done once).
func request(channel, key, click, person, userID, text string) bot.Request {
	req := bot.Request{User: person, Text: text, Channel: channel, Key: key, Account: AccountOf(userID)}
	if click != "" {
		req.Key, req.Click = click, true
	}
	return req
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func trunc(s string, n int) string { return bot.Clip(s, n) }

// respond answers an interaction, whether it came over HTTP or the gateway. sent must be called
// once the answer has been delivered (or failed): work deferred by it waits for that before it
// edits the deferral. The gateway (gateway true) delivers an interaction to every replica: the
// one that claims it first answers it, and the others answer nothing (resp nil) and run nothing.
// Suggestions for an option being typed are the exception: they only read, so every replica
// makes them without a claim (a keystroke waits for no database write), and Discord keeps the
// first answer and refuses the others (see answeredFirst).
func (a *Adapter) respond(ctx context.Context, i *discordgo.Interaction, gateway bool) (resp *discordgo.InteractionResponse, sent func()) {
	noop := func() {}
	if i.Type == discordgo.InteractionPing {
		return &discordgo.InteractionResponse{Type: discordgo.InteractionResponsePong}, noop
	}
	if i.Type == discordgo.InteractionApplicationCommandAutocomplete {
		return a.autocomplete(ctx, a.read(i)), noop
	}
	if gateway && !a.claimDelivery(i.ID) {
		return nil, noop
	}
	in := a.read(i)
	if !a.seen.First("discord:" + i.ID) {
		a.log.Info("dropped a repeated interaction", "id", i.ID)
		return a.answer(bot.Reply{Ephemeral: true, Text: "Quartermaster already answered this."}), noop
	}
	if in.problem != "" {
		a.log.Info("refused an interaction", "type", i.Type.String(), "user", in.user, "problem", in.problem)
		return a.answer(a.refusal(in)), noop
	}
	person, err := a.person(ctx, in.user)
	if err != nil {
		a.log.Error("cannot tell who a Discord user is", "user", in.user, "err", err)
		return a.answer(bot.Reply{Error: true, Ephemeral: true, Text: "Quartermaster could not tell who you are just now; please try again in a minute."}), noop
	}
	if in.denyLease != "" {
		// Only someone who may decide is asked why: anyone else is refused at once.
		if r := a.check(ctx, request(i.ChannelID, "discord:"+i.ID, "", person, in.user, handlerCommand+" deny "+in.denyLease)); r != nil {
			return a.answer(*r), noop
		}
		return a.denyModal(in.denyLease), noop
	}
	return a.run(i, person, in.user, in.text, in.click)
}

// check asks the handler whether req would be refused, within checkTimeout: the refusal, or nil
// when it may go on or the handler could not tell in time.
func (a *Adapter) check(ctx context.Context, req bot.Request) *bot.Reply {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	r := bot.Check(ctx, a.cfg.Handler, req)
	if r != nil {
		a.log.Info("refused a form", "user", req.Account.User, "command", req.Text)
		r.Ephemeral = true
	}
	return r
}

func (a *Adapter) refusal(in incoming) bot.Reply {
	text := in.problem
	if in.example != "" {
		text += " Example: " + in.example
	}
	return bot.Reply{Error: true, Ephemeral: true, Text: text}
}

// person is who a Discord user is: a person the directory knows, or else the account itself
// (discord:USER_ID), which the handler refuses for everything but public commands, saying so.
// It gives up after identifyTimeout.
func (a *Adapter) person(ctx context.Context, userID string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, identifyTimeout)
	defer cancel()
	p, ok, err := a.cfg.People.Person(ctx, userID)
	if err != nil {
		return "", err
	}
	if !ok {
		return Account(userID), nil
	}
	return p, nil
}

// answer is an interaction's answer: a message only the asker sees.
func (a *Adapter) answer(rs ...bot.Reply) *discordgo.InteractionResponse {
	return answerWith(a.render(rs...))
}

func answerWith(m message) *discordgo.InteractionResponse {
	return &discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource, Data: &discordgo.InteractionResponseData{
		Embeds: m.embeds, Components: orEmpty(m.components), Flags: discordgo.MessageFlagsEphemeral, AllowedMentions: noMentions}}
}

// answerInParts is an interaction's answer to a command: its first part, and what sends the
// other parts as follow-ups once the answer has been delivered (it must be called then).
func (a *Adapter) answerInParts(i *discordgo.Interaction, rs ...bot.Reply) (*discordgo.InteractionResponse, func()) {
	ms := a.parts(rs...)
	if len(ms) == 1 {
		return answerWith(ms[0]), func() {}
	}
	sent := make(chan struct{})
	a.goWork(func(ctx context.Context) {
		select {
		case <-sent:
		case <-ctx.Done():
			return
		}
		if rest, err := a.followUps(i, ms[1:]); err != nil {
			a.log.Error("cannot send the rest of an answer", "id", i.ID, "part", len(ms)-len(rest)+1, "of", len(ms), "err", err)
		}
	})
	return answerWith(ms[0]), sync.OnceFunc(func() { close(sent) })
}

func orEmpty(c []discordgo.MessageComponent) []discordgo.MessageComponent {
	if c == nil {
		return []discordgo.MessageComponent{}
	}
	return c
}

// denyModal asks a budget owner why, before a denial: the form's id carries the signed command.
func (a *Adapter) denyModal(lease string) *discordgo.InteractionResponse {
	id, _ := a.sign(modalPrefix, handlerCommand+" deny "+lease)
	return &discordgo.InteractionResponse{Type: discordgo.InteractionResponseModal, Data: &discordgo.InteractionResponseData{
		CustomID: id, Title: bot.Clip("Deny "+lease, 45),
		Components: []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
			discordgo.TextInput{CustomID: reasonInput, Label: "Why? The requester will read this.", Style: discordgo.TextInputParagraph,
				Required: false, MaxLength: maxReasonLength, Placeholder: "what to do instead, for the requester"},
		}}},
	}}
}

// autocomplete suggests values for the option being typed.
func (a *Adapter) autocomplete(ctx context.Context, in incoming) *discordgo.InteractionResponse {
	resp := &discordgo.InteractionResponse{Type: discordgo.InteractionApplicationCommandAutocompleteResult,
		Data: &discordgo.InteractionResponseData{Choices: []*discordgo.ApplicationCommandOptionChoice{}}}
	if in.problem != "" {
		return resp
	}
	if len(in.choices) > 0 {
		// The option's own values, as its choices would have listed them: the ones that contain
		// what was typed, as Suggests matches it.
		for _, v := range in.choices {
			if len(resp.Data.Choices) >= maxAutocompleteSize {
				break
			}
			if Suggests(in.typed, v) && fitsChoice(v) {
				resp.Data.Choices = append(resp.Data.Choices, &discordgo.ApplicationCommandOptionChoice{Name: bot.Clip(v, maxChoiceName), Value: v})
			}
		}
		return resp
	}
	if in.suggest == "" || a.cfg.Complete == nil {
		return resp
	}
	// Someone the directory does not know is asked about as their account (discord:USER_ID), as
	// their commands are: they get what is public (the templates) and none of anyone's leases.
	ctx, cancel := context.WithTimeout(ctx, completeTimeout)
	defer cancel()
	person, err := a.person(ctx, in.user)
	if err != nil {
		return resp
	}
	for _, c := range a.cfg.Complete(ctx, person, in.suggest, in.typed) {
		if len(resp.Data.Choices) >= maxAutocompleteSize {
			break
		}
		if !fitsChoice(c.Value) {
			continue
		}
		resp.Data.Choices = append(resp.Data.Choices, &discordgo.ApplicationCommandOptionChoice{Name: bot.Clip(nonEmpty(c.Name, c.Value), maxChoiceName), Value: c.Value})
	}
	return resp
}

// fitsChoice is whether v can be a suggestion's value as it is: Discord takes 1 to 100
// characters. A longer one is not offered rather than shortened, which would send back a value
// naming nothing the command takes (and one value too long makes Discord drop every suggestion).
func fitsChoice(v string) bool {
	n := utf8.RuneCountInString(v)
	return n >= 1 && n <= maxChoiceName
}

// run runs a command as person. A reply ready within AnswerWithin is the answer; otherwise (or
// at once, when the handler is busy with as many commands as it may run) the answer defers
// (Discord shows "thinking") and the reply edits it once sent was called. Replies addressed to
// others go out as notices either way. click is the key of the button pressed, if one was.
func (a *Adapter) run(i *discordgo.Interaction, person, userID, text, click string) (*discordgo.InteractionResponse, func()) {
	req := request(i.ChannelID, "discord:"+i.ID, click, person, userID, text)
	var (
		mu       sync.Mutex
		deferred bool
		finished bool
		mine     []bot.Reply
		kt       inflight.Kept // the inbox's hold on a deferred command
	)
	ready := make(chan struct{})
	acked := make(chan struct{})
	// When the handler is already running as many commands as it may, this one will wait its
	// turn: it is deferred at once rather than after AnswerWithin, which it could not meet.
	busy := len(a.work) >= cap(a.work)
	deferred = busy
	a.goWork(func(ctx context.Context) {
		own := a.reply(ctx, person, req)
		mu.Lock()
		if !deferred {
			mine, finished = own, true
			mu.Unlock()
			close(ready)
			return
		}
		mu.Unlock()
		select {
		case <-acked:
		case <-ctx.Done():
			select {
			case <-acked:
			default:
				return
			}
		}
		a.followUp(i, person, userID, text, own)
		a.inbox.Finish(kt)
	})
	if !busy {
		t := time.NewTimer(a.cfg.AnswerWithin)
		defer t.Stop()
		select {
		case <-ready:
			return a.answerInParts(i, mine...)
		case <-t.C:
		}
	}
	mu.Lock()
	if finished {
		mu.Unlock()
		return a.answerInParts(i, mine...)
	}
	deferred = true
	mu.Unlock()
	// Deferred: kept in the inbox until its answer is given, so that a successor gives it if
	// this process stops first. The work reads kt only once the deferral has been sent.
	kt = a.keep(i, person, userID, text, click)
	return &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Flags: discordgo.MessageFlagsEphemeral}}, sync.OnceFunc(func() { close(acked) })
}

// reply runs req as person and sends the replies addressed to others as notices; it returns the
// replies for the asker.
func (a *Adapter) reply(ctx context.Context, person string, req bot.Request) []bot.Reply {
	var own []bot.Reply
	for _, r := range a.handle(ctx, req) {
		if r.To == "" || policy.SameName(r.To, person) {
			own = append(own, r)
			continue
		}
		if err := a.Send(ctx, r); err != nil && !errors.Is(err, ErrNotHere) {
			a.log.Error("a reply to someone else did not go out", "to", r.To, "err", err)
		}
	}
	if len(own) > 0 && hearsBackByDM(req.Text) && a.dmsRefused(req.Account.User) {
		own[0].Text = strings.TrimSpace(own[0].Text + "\n\n" + noDMsNote)
	}
	return own
}

// followUp replaces a deferred answer with the replies, within followUpTimeout of its own (the
// work's time may be up: its answer still goes out), unless the adapter is closed. An answer
// longer than one message replaces the deferral with its first part and sends the rest as
// follow-ups. When Discord no longer takes answers to the interaction (its token works for 15
// minutes), the command ran all the same: its answer goes to person (Discord user userID) by DM,
// naming the command line text it answers.
func (a *Adapter) followUp(i *discordgo.Interaction, person, userID, text string, rs []bot.Reply) {
	ctx, cancel := context.WithTimeout(a.base, followUpTimeout)
	defer cancel()
	ms := a.parts(rs...)
	empty := ""
	comps := orEmpty(ms[0].components)
	edit := &discordgo.WebhookEdit{Content: &empty, Embeds: &ms[0].embeds, Components: &comps, AllowedMentions: noMentions}
	err := a.untilKnown(ctx, func() error {
		_, err := a.s.InteractionResponseEdit(i, edit, discordgo.WithContext(ctx))
		return err
	})
	if err != nil && tokenExpired(err) && userID != "" {
		// Recovered: the answer goes by DM. Only a DM that fails too loses it.
		if derr := a.answerByDM(ctx, person, userID, text, rs); derr != nil {
			a.log.Error("a deferred interaction's token no longer works, and its answer could not be given by DM either", "id", i.ID, "user", userID, "err", derr)
			return
		}
		a.log.Warn("a deferred interaction's token no longer works; its answer went by DM", "id", i.ID, "user", userID, "err", err)
		return
	}
	if err != nil {
		a.log.Error("cannot answer a deferred interaction", "id", i.ID, "err", err)
		return
	}
	rest, err := a.followUps(i, ms[1:])
	switch {
	case err == nil:
	case tokenExpired(err) && userID != "":
		// Recovered: the rest goes by DM. Only a DM that fails too loses part of the answer.
		part := len(ms) - len(rest) + 1
		note := a.render(bot.Reply{Text: fmt.Sprintf(lateRest, codeSpan(a.typed(text)))})
		if err := a.dmParts(ctx, person, userID, append([]message{note}, rest...)); err != nil {
			a.log.Error("a deferred interaction's token stopped working during its answer, and the rest of it could not be given by DM either", "id", i.ID, "user", userID, "part", part, "of", len(ms), "err", err)
			return
		}
		a.log.Warn("a deferred interaction's token stopped working during its answer; the rest went by DM", "id", i.ID, "user", userID, "part", part, "of", len(ms), "err", err)
	default:
		a.log.Error("cannot send the rest of an answer", "id", i.ID, "part", len(ms)-len(rest)+1, "of", len(ms), "err", err)
	}
}

// lateRest begins the rest of an answer given by DM because Discord stopped taking it in place.
const lateRest = "Discord stopped taking the answer to your command %s partway (it waits 15 minutes), so the rest comes here:"

// tokenExpired reports whether Discord refused a call with an interaction's token because the
// token no longer works (Invalid Webhook Token, or the interaction's webhook is unknown).
func tokenExpired(err error) bool {
	switch discordCode(err) {
	case discordgo.ErrCodeInvalidWebhookTokenProvided, discordgo.ErrCodeUnknownWebhook:
		return true
	}
	return false
}

// lateAnswer begins an answer given by DM because Discord no longer took it in place.
const lateAnswer = "Your command %s ran after Discord stopped waiting for its answer (it waits 15 minutes), so the answer comes here:"

// answerByDM gives person (Discord user userID) the answer to the command line text by DM, the
// first message saying why it comes there. An answer longer than one message goes in as many as
// it takes, in order, as it would have in place; a part that cannot be sent stops the rest, so
// none comes out of order.
func (a *Adapter) answerByDM(ctx context.Context, person, userID, text string, rs []bot.Reply) error {
	if len(rs) == 0 {
		rs = []bot.Reply{{Text: "Done."}}
	}
	rs = append([]bot.Reply(nil), rs...)
	rs[0].Text = strings.TrimSpace(fmt.Sprintf(lateAnswer, codeSpan(a.typed(text))) + "\n" + rs[0].Text)
	return a.dmParts(ctx, person, userID, a.parts(rs...))
}

// dmParts sends the parts of an answer to person (Discord user userID) by DM, in order.
func (a *Adapter) dmParts(ctx context.Context, person, userID string, ms []message) error {
	ch, err := a.dm(ctx, userID)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if _, err := a.postMessage(ctx, person, ch, m, bot.Reply{}); err != nil {
			return err
		}
	}
	return nil
}

// followUps sends the parts of an answer after its first, in order, as private follow-up
// messages of the interaction (its token allows them for 15 minutes). A part that cannot be sent
// stops the rest, so none comes out of order: it returns the parts not sent, from that one on,
// and why.
func (a *Adapter) followUps(i *discordgo.Interaction, ms []message) ([]message, error) {
	if len(ms) == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(a.base, followUpTimeout)
	defer cancel()
	for n, m := range ms {
		params := &discordgo.WebhookParams{Embeds: m.embeds, Components: orEmpty(m.components), Flags: discordgo.MessageFlagsEphemeral, AllowedMentions: noMentions}
		err := a.untilKnown(ctx, func() error {
			_, err := a.s.FollowupMessageCreate(i, true, params, discordgo.WithContext(ctx))
			return err
		})
		if err != nil {
			return ms[n:], err // the caller logs it, as a loss or as recovered by DM
		}
	}
	return nil, nil
}

// untilKnown makes a call with the interaction's token, retried after HTTP 429, and a few times
// more while Discord does not know the interaction yet (HTTP 404): its answer and the call can
// cross on the way.
func (a *Adapter) untilKnown(ctx context.Context, call func() error) error {
	for try := 1; ; try++ {
		err := a.retry(ctx, call)
		if err == nil {
			return nil
		}
		var re *discordgo.RESTError
		if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode == http.StatusNotFound && try < followUpTries {
			if inflight.Sleep(ctx, time.Duration(try)*250*time.Millisecond) == nil {
				continue
			}
		}
		return err
	}
}
