package discord

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/acme/quartermaster/bot"
)

// Discord's message limits (https://discord.com/developers/docs/resources/message): at most 10
// embeds whose texts add up to 6000 characters; a title 256, a description 4096, at most 25
// fields of 256 (name) and 1024 (value); at most 5 rows of 5 buttons, a label 80 characters and a
// custom id 100; a text input's value 4000.
const (
	MaxEmbeds         = 10
	MaxEmbedChars     = 6000
	MaxEmbedTitle     = 256
	MaxEmbedText      = 4096
	MaxEmbedFields    = 25
	MaxFieldName      = 256
	MaxFieldValue     = 1024
	MaxButtonRows     = 5
	MaxButtonsPerRow  = 5
	MaxButtonLabel    = 80
	MaxCustomID       = 100
	maxReasonLength   = 400
	colourReply       = 0x5865F2
	colourError       = 0xED4245
	colourDecided     = 0x99AAB5
	buttonPrefix      = "qm1"
	modalPrefix       = "qm1m"
	buttonMACBytes    = 12
	reasonInput       = "reason"
	tooLongForAButton = "Type it: "
	moreFooter        = "%d more part(s) did not fit in one Discord message."
	footerRoom        = 60   // characters kept for moreFooter
	typedRoom         = 1000 // characters at most for the actions written out
)

// message is a reply as Discord shows it.
type message struct {
	embeds     []*discordgo.MessageEmbed
	components []discordgo.MessageComponent
}

// noMentions keeps a message from pinging anyone, whatever its text says.
var noMentions = &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}}

// embeds builds a message's embeds within Discord's limits.
type embeds struct {
	list   []*discordgo.MessageEmbed
	budget int  // characters left of MaxEmbedChars
	limit  int  // how many embeds may be made
	open   bool // the last embed is text only, so more text may join it
	colour int
}

// text adds text: to the last embed when it is text only and has room, else to a new one. False
// when nothing more fits.
func (b *embeds) text(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return true
	}
	if b.budget <= 0 {
		return false
	}
	n := utf8.RuneCountInString(s)
	if b.open {
		last := b.list[len(b.list)-1]
		if have := utf8.RuneCountInString(last.Description); have+1+min(n, b.budget) <= MaxEmbedText || len(b.list) >= b.limit {
			room := min(MaxEmbedText-have-1, b.budget)
			if room <= 1 {
				return false
			}
			s = clip(s, room)
			last.Description += "\n" + s
			b.budget -= utf8.RuneCountInString(s) + 1
			return n < room
		}
	}
	if len(b.list) >= b.limit {
		return false
	}
	s = clip(s, min(MaxEmbedText, b.budget))
	b.list = append(b.list, &discordgo.MessageEmbed{Description: s, Color: b.colour})
	b.budget -= utf8.RuneCountInString(s)
	b.open = true
	return n <= utf8.RuneCountInString(s)
}

// section adds a section: one with fields as an embed of its own, one of text only as text.
func (b *embeds) section(s bot.Section) bool {
	if len(s.Fields) == 0 || len(b.list) >= b.limit {
		var lines []string
		if s.Title != "" {
			lines = append(lines, "**"+s.Title+"**")
		}
		if s.Text != "" {
			lines = append(lines, s.Text)
		}
		for _, f := range s.Fields {
			lines = append(lines, f.Label+": "+f.Value)
		}
		return b.text(strings.Join(lines, "\n"))
	}
	if b.budget < 40 {
		return false
	}
	e := &discordgo.MessageEmbed{Title: clip(s.Title, min(MaxEmbedTitle, b.budget/4)), Color: b.colour}
	b.budget -= utf8.RuneCountInString(e.Title)
	e.Description = clip(s.Text, min(MaxEmbedText, b.budget/2))
	b.budget -= utf8.RuneCountInString(e.Description)
	for _, f := range s.Fields {
		name := clip(nonEmpty(f.Label, "·"), MaxFieldName)
		value := clip(nonEmpty(f.Value, "—"), min(MaxFieldValue, b.budget-utf8.RuneCountInString(name)))
		if len(e.Fields) >= MaxEmbedFields || value == "" {
			break
		}
		e.Fields = append(e.Fields, &discordgo.MessageEmbedField{Name: name, Value: value, Inline: utf8.RuneCountInString(value) <= 40})
		b.budget -= utf8.RuneCountInString(name) + utf8.RuneCountInString(value)
	}
	b.list = append(b.list, e)
	b.open = false
	return true
}

// render shows replies as one message: the text and each section as embeds (a section with
// fields gets its own embed, text joins the embed before it), the actions as buttons carrying
// their signed typed twin. What does not fit Discord's limits is shortened and says so; an action
// whose command is too long for a button is written out instead.
func (a *Adapter) render(rs ...bot.Reply) message {
	b := embeds{budget: MaxEmbedChars - footerRoom, limit: MaxEmbeds, colour: colourReply}
	var buttons []discordgo.MessageComponent
	var typed []string
	ids := map[string]bool{}
	for _, r := range rs {
		switch {
		case r.Error:
			b.colour = colourError
		case r.Update:
			b.colour = colourDecided
		}
		for _, act := range r.Actions {
			id, ok := a.buttonID(act.Command)
			switch {
			case ok && ids[id]:
			case ok && len(buttons) < MaxButtonRows*MaxButtonsPerRow:
				ids[id] = true
				buttons = append(buttons, discordgo.Button{Label: clip(act.Label, MaxButtonLabel), Style: buttonStyle(act.Style), CustomID: id})
			default:
				typed = append(typed, act.Label+": `"+a.typed(act.Command)+"`")
			}
		}
	}
	// What cannot be a button is written out; room for it is kept from the start.
	typedLine := ""
	if len(typed) > 0 {
		typedLine = clip(tooLongForAButton+strings.Join(typed, "; "), typedRoom)
		b.budget -= utf8.RuneCountInString(typedLine) + 1
		b.limit--
	}
	dropped := 0
	for _, r := range rs {
		r = defangReply(r)
		r.Text = a.typedExample(r.Text)
		if !b.text(r.Text) {
			dropped += len(r.Sections)
			continue
		}
		for i, s := range r.Sections {
			if !b.section(s) {
				dropped += len(r.Sections) - i
				break
			}
		}
	}
	if typedLine != "" {
		b.limit++
		b.budget += utf8.RuneCountInString(typedLine) + 1
		b.text(typedLine)
	}
	if len(b.list) == 0 {
		b.text("Done.")
	}
	if dropped > 0 {
		b.list[len(b.list)-1].Footer = &discordgo.MessageEmbedFooter{Text: fmt.Sprintf(moreFooter, dropped)}
	}
	m := message{embeds: b.list}
	for i := 0; i < len(buttons); i += MaxButtonsPerRow {
		m.components = append(m.components, discordgo.ActionsRow{Components: buttons[i:min(i+MaxButtonsPerRow, len(buttons))]})
	}
	return m
}

func buttonStyle(s string) discordgo.ButtonStyle {
	switch s {
	case "primary":
		return discordgo.PrimaryButton
	case "danger":
		return discordgo.DangerButton
	}
	return discordgo.SecondaryButton
}

// handlerCommand is the word the handler's command lines begin with, whatever the application
// command is named (Config.Name): the lines Command.Text writes, the actions of its replies and
// the commands buttons run.
const handlerCommand = "/gpu"

// buttonID is the custom id of a button that runs cmd: "qm1.MAC.CMD", CMD being the command
// without its leading "/gpu " and MAC a truncated HMAC over it under the adapter's key, so a
// click can only run a command that a button of this installation was made with. False when the
// command is too long to fit Discord's 100 characters.
func (a *Adapter) buttonID(cmd string) (string, bool) { return a.sign(buttonPrefix, cmd) }

// buttonCommand is the command a button's custom id carries, when the id is genuine.
func (a *Adapter) buttonCommand(id string) (string, bool) { return a.verifyID(buttonPrefix, id) }

func (a *Adapter) sign(prefix, cmd string) (string, bool) {
	cmd = strings.TrimSpace(cmd)
	body, ok := strings.CutPrefix(cmd, handlerCommand+" ")
	if !ok {
		body, ok = strings.CutPrefix(cmd, "/"+a.cfg.Name+" ")
	}
	if !ok || body == "" {
		return "", false
	}
	id := prefix + "." + a.mac(prefix, body) + "." + body
	return id, len(id) <= MaxCustomID
}

func (a *Adapter) verifyID(prefix, id string) (string, bool) {
	rest, ok := strings.CutPrefix(id, prefix+".")
	if !ok {
		return "", false
	}
	mac, body, ok := strings.Cut(rest, ".")
	if !ok || body == "" || !hmac.Equal([]byte(mac), []byte(a.mac(prefix, body))) {
		return "", false
	}
	return handlerCommand + " " + body, true
}

func (a *Adapter) mac(prefix, body string) string {
	m := hmac.New(sha256.New, a.key)
	m.Write([]byte(prefix))
	m.Write([]byte{0})
	m.Write([]byte(body))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:buttonMACBytes])
}

// defanger breaks what Discord would turn into a ping or a disguised link in text a user may have
// typed (a reason, a template parameter, a team's name): @everyone and @here, <@…>, <@&…> and
// <#…> mentions, and masked links [text](url). A word joiner after the first character keeps
// the text as it reads while Discord no longer parses it. (Messages also go with
// allowed_mentions empty, so nothing pings whatever slips through.)
var defanger = strings.NewReplacer(
	"@everyone", "@\u2060everyone",
	"@here", "@\u2060here",
	"<@", "<\u2060@",
	"<#", "<\u2060#",
	"](", "]\u2060(",
)

func defang(s string) string { return defanger.Replace(s) }

// defangReply defangs every text of a reply.
func defangReply(r bot.Reply) bot.Reply {
	r.Text = defang(r.Text)
	secs := make([]bot.Section, len(r.Sections))
	for i, s := range r.Sections {
		s.Title, s.Text = defang(s.Title), defang(s.Text)
		fs := make([]bot.Field, len(s.Fields))
		for j, f := range s.Fields {
			f.Label, f.Value = defang(f.Label), defang(f.Value)
			fs[j] = f
		}
		s.Fields = fs
		secs[i] = s
	}
	r.Sections = secs
	return r
}

// typedExample rewrites the example that ends text ("… Example: /gpu request 1 dev for 4h") as
// a Discord user types it: /gpu request gpus:1 class:dev duration:4h. Any other text is
// returned as it is.
func (a *Adapter) typedExample(text string) string {
	const label = "Example: "
	i := strings.LastIndex(text, label+handlerCommand+" ")
	if i < 0 {
		return text
	}
	return text[:i+len(label)] + a.typed(text[i+len(label):])
}

// typed is a command line ("/gpu request 1 dev for 4h") as a Discord user types it: /gpu request
// gpus:1 class:dev duration:4h. A line OptionsOf cannot read is returned as it is.
func (a *Adapter) typed(line string) string {
	if a.cfg.OptionsOf == nil {
		return line
	}
	sub, opts, ok := a.cfg.OptionsOf(line)
	if !ok {
		return line
	}
	parts := []string{"/" + a.cfg.Name, sub}
	for _, o := range opts {
		parts = append(parts, o.Name+":"+o.Value)
	}
	return strings.Join(parts, " ")
}

// clip shortens s to at most n characters, ending it with "…" when it was cut.
func clip(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
