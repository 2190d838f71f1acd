package discord

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/policy"
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
	maxReasonLength   = bot.MaxReason // what /gpu deny takes
	colourReply       = 0x5865F2
	colourError       = 0xED4245
	colourDecided     = 0x99AAB5
	buttonPrefix      = "qm1"
	modalPrefix       = "qm1m"
	buttonMACBytes    = 12
	reasonInput       = "reason"
	tooLongForAButton = "Type it: "
	moreFooter        = "%s did not fit in one Discord message."
	cutFooter         = "Cut here: %s would have been too many."
	cutSections       = "Cut here: %d more not shown, too many for %d messages."
	cutLeases         = "Cut here: %d more not shown; /gpu status lease:LEASE shows one."
	footerRoom        = 100  // characters kept for a footer: the longest, cutLeases with a count of 19 digits, is 80
	typedRoom         = 1000 // characters at most for the actions written out
)

// MaxParts is how many messages an answer to an interaction may take: the answer itself and
// follow-ups (a long /gpu policy or /gpu report).
const MaxParts = 10

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
	// sections is how many of the replies' sections end in this message (parts).
	sections int
	// cutLines is how many lines of text did not fit (text).
	cutLines int
}

// text adds text: to the last embed when it is text only and has room, else to new ones, cut
// between lines where it must be (take). False when not all of it fits; the lines left out are
// counted in cutLines.
func (b *embeds) text(s string) bool {
	s = strings.TrimSpace(s)
	for s != "" {
		rest := b.take(s)
		if rest == s {
			b.cutLines += strings.Count(s, "\n") + 1
			return false
		}
		s = rest
	}
	return true
}

// section adds a section: one with fields as an embed of its own, one of text only as text.
func (b *embeds) section(s bot.Section) bool {
	if len(s.Fields) == 0 || len(b.list) >= b.limit {
		return b.text(sectionText(s))
	}
	if b.budget < 40 {
		return false
	}
	e := &discordgo.MessageEmbed{Title: bot.Clip(s.Title, min(MaxEmbedTitle, b.budget/4)), Color: b.colour}
	b.budget -= utf8.RuneCountInString(e.Title)
	e.Description = bot.Clip(s.Text, min(MaxEmbedText, b.budget/2))
	b.budget -= utf8.RuneCountInString(e.Description)
	for _, f := range s.Fields {
		name := bot.Clip(nonEmpty(f.Label, "·"), MaxFieldName)
		value := bot.Clip(nonEmpty(f.Value, "—"), min(MaxFieldValue, b.budget-utf8.RuneCountInString(name)))
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

// actions are the replies' actions as buttons (at most 25, each once) and, for the rest and
// those whose command is too long for a button, the line that writes them out as typed ("" when
// none); and the colour the replies' embeds take.
func (a *Adapter) actions(rs []bot.Reply) (buttons []discordgo.MessageComponent, typedLine string, colour int) {
	colour = colourReply
	var typed []string
	ids := map[string]bool{}
	for _, r := range rs {
		switch {
		case r.Error:
			colour = colourError
		case r.Update:
			colour = colourDecided
		}
		for _, act := range r.Actions {
			id, ok := a.buttonID(act.Command)
			switch {
			case ok && ids[id]:
			case ok && len(buttons) < MaxButtonRows*MaxButtonsPerRow:
				ids[id] = true
				buttons = append(buttons, discordgo.Button{Label: bot.Clip(a.discordText(act.Label), MaxButtonLabel), Style: buttonStyle(act.Style), CustomID: id})
			default:
				typed = append(typed, act.Label+": "+codeSpan(a.typed(act.Command)))
			}
		}
	}
	if len(typed) > 0 {
		typedLine = writeOut(typed, typedRoom)
	}
	return buttons, typedLine, colour
}

// codeSpan is s as inline code, whole whatever backticks it holds (a reason someone typed): its
// fence is a run of backticks longer than any in s, with a space between it and a backtick that
// begins or ends s (Discord drops that space, and shows any other).
func codeSpan(s string) string {
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	if longest == 0 {
		return "`" + s + "`"
	}
	fence := strings.Repeat("`", longest+1)
	open, end := fence, fence
	if strings.HasPrefix(s, "`") {
		open += " "
	}
	if strings.HasSuffix(s, "`") {
		end = " " + end
	}
	return open + s + end
}

// writeOut is the line that writes out actions as typed, at most room characters: the ones that
// fit whole, then how many more there are ("; and 66 more"). Only a first one longer than
// the room is cut (and still followed by the count).
func writeOut(typed []string, room int) string {
	line := tooLongForAButton
	for i, s := range typed {
		next := line + s
		if i > 0 {
			next = line + "; " + s
		}
		reserve := 0
		if i < len(typed)-1 {
			reserve = len(fmt.Sprintf("; and %d more", len(typed)-i-1))
		}
		switch {
		case utf8.RuneCountInString(next)+reserve <= room:
			line = next
		case i == 0 && reserve == 0:
			return bot.Clip(next, room)
		case i == 0:
			return bot.Clip(next, room-reserve) + fmt.Sprintf("; and %d more", len(typed)-1)
		default:
			return line + fmt.Sprintf("; and %d more", len(typed)-i)
		}
	}
	return line
}

// rows lays buttons out five to a row.
func rows(buttons []discordgo.MessageComponent) []discordgo.MessageComponent {
	var out []discordgo.MessageComponent
	for i := 0; i < len(buttons); i += MaxButtonsPerRow {
		out = append(out, discordgo.ActionsRow{Components: buttons[i:min(i+MaxButtonsPerRow, len(buttons))]})
	}
	return out
}

// render shows replies as one message: the text and each section as embeds (a section with
// fields gets its own embed, text joins the embed before it), the actions as buttons carrying
// their signed typed twin. What does not fit Discord's limits is shortened and says so; an action
// whose command is too long for a button is written out instead. (An answer to an interaction
// is not shortened: see parts.)
func (a *Adapter) render(rs ...bot.Reply) message {
	buttons, typedLine, colour := a.actions(rs)
	b := newEmbeds(colour)
	// What cannot be a button is written out; room for it is kept from the start.
	if typedLine != "" {
		b.budget -= utf8.RuneCountInString(typedLine) + 1
		b.limit--
	}
	dropped := 0
	for _, r := range rs {
		// Each section is mapped as it is shown: those past the first that does not fit are only
		// counted.
		f := a.discordTexts(r)
		if !b.text(f(r.Text)) {
			dropped += len(r.Sections)
			continue
		}
		for i, s := range r.Sections {
			if !b.section(mapSection(s, f)) {
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
	var left []string
	if b.cutLines > 0 {
		left = append(left, policy.Count(b.cutLines, "more line", "more lines"))
	}
	if dropped > 0 {
		left = append(left, policy.Count(dropped, "more part", "more parts"))
	}
	if len(left) > 0 {
		b.list[len(b.list)-1].Footer = &discordgo.MessageEmbedFooter{Text: fmt.Sprintf(moreFooter, strings.Join(left, " and "))}
	}
	return message{embeds: b.list, components: rows(buttons)}
}

// parts shows replies as as many messages as they need (at most MaxParts): the text and the
// sections as render lays them out, a part of the text or a section that does not fit in one
// message going on in the next, and the buttons (with what is written out instead of a button)
// under the last. A section too big for an embed of its own (more than 25 fields, a field longer
// than Discord lets one be) is written as text. Nothing is shortened but what would take more
// than MaxParts messages, which the last says.
func (a *Adapter) parts(rs ...bot.Reply) []message {
	buttons, typedLine, colour := a.actions(rs)
	pages, total := a.layout(rs, typedLine, colour, false)
	if len(pages) > MaxParts {
		// Too many messages with a section with fields as an embed of its own (a long /gpu list):
		// each section as a paragraph of text instead, several to an embed.
		pages, total = a.layout(rs, typedLine, colour, true)
	}
	if dropped := len(pages) - MaxParts; dropped > 0 {
		shown := 0
		for _, pg := range pages[:MaxParts] {
			shown += pg.sections
		}
		pages = pages[:MaxParts]
		last := pages[MaxParts-1].list
		note := fmt.Sprintf(cutFooter, policy.Count(dropped, "more message", "more messages"))
		if n := total - shown; n > 0 {
			note = fmt.Sprintf(cutSections, n, MaxParts)
			if mostlyLeases(rs) {
				note = fmt.Sprintf(cutLeases, n)
			}
		}
		last[len(last)-1].Footer = &discordgo.MessageEmbedFooter{Text: note}
	}
	out := make([]message, len(pages))
	for i, pg := range pages {
		out[i].embeds = pg.list
	}
	out[len(out)-1].components = rows(buttons)
	return out
}

// layout lays replies out over as many messages as they need, and counts their sections; compact
// writes each section as a paragraph of text (compactText) rather than an embed of its own.
//
// Once a section lands past the MaxParts messages parts sends, what is still to come is only
// counted: parts cuts there and says how many sections are left, whatever messages they would
// take, so a list of thousands costs the work of the messages shown, not of the whole list.
func (a *Adapter) layout(rs []bot.Reply, typedLine string, colour int, compact bool) (pages []*embeds, sections int) {
	for _, r := range rs {
		sections += len(r.Sections)
	}
	p := pager{colour: colour}
	p.fresh()
	cut := false
	for _, r := range rs {
		f := a.discordTexts(r)
		p.text(f(r.Text))
		for _, s := range r.Sections {
			s = mapSection(s, f)
			if compact {
				p.text(compactText(s))
			} else {
				p.section(s)
			}
			p.last().sections++
			if len(p.pages) > MaxParts {
				cut = true
				break
			}
		}
		if cut {
			break
		}
	}
	if !cut {
		p.text(typedLine)
	}
	if len(p.pages[0].list) == 0 {
		p.text("Done.")
	}
	pages = p.pages
	if len(pages[len(pages)-1].list) == 0 {
		pages = pages[:len(pages)-1]
	}
	return pages, sections
}

// compactText is a section as a paragraph: its title in bold and its text, then its fields on one
// line.
func compactText(s bot.Section) string {
	var lines []string
	switch {
	case s.Title != "" && s.Text != "":
		lines = append(lines, "**"+s.Title+"** — "+s.Text)
	case s.Title != "":
		lines = append(lines, "**"+s.Title+"**")
	case s.Text != "":
		lines = append(lines, s.Text)
	}
	var fs []string
	for _, f := range s.Fields {
		fs = append(fs, f.Label+": "+f.Value)
	}
	if len(fs) > 0 {
		lines = append(lines, strings.Join(fs, " · "))
	}
	return strings.Join(lines, "\n")
}

// mostlyLeases reports whether the replies' sections are mostly leases (bot.MostlyLeases).
func mostlyLeases(rs []bot.Reply) bool {
	var all []bot.Section
	for _, r := range rs {
		all = append(all, r.Sections...)
	}
	return bot.MostlyLeases(all)
}

// newEmbeds is an empty message's embeds, with room kept for a footer.
func newEmbeds(colour int) *embeds {
	return &embeds{budget: MaxEmbedChars - footerRoom, limit: MaxEmbeds, colour: colour}
}

// pager lays text and sections out over as many messages as they need.
type pager struct {
	pages  []*embeds
	colour int
}

// fresh starts a message.
func (p *pager) fresh() *embeds {
	b := newEmbeds(p.colour)
	p.pages = append(p.pages, b)
	return b
}

func (p *pager) last() *embeds { return p.pages[len(p.pages)-1] }

// text adds text, in the message under way when it fits there; otherwise text that fits in one
// message starts the next one, and longer text fills this one and goes on in the next ones, cut
// between lines where it can be.
func (p *pager) text(s string) {
	s = strings.TrimSpace(s)
	b := p.last()
	if s != "" && !b.fits(s) && len(b.list) > 0 && newEmbeds(0).fits(s) {
		b = p.fresh()
	}
	for s != "" {
		rest := b.take(s)
		if rest == s {
			b = p.fresh()
		}
		s = rest
	}
}

// section adds a section: one with fields as an embed of its own, in the message under way when
// it fits there and else in the next one; one of text only, or one too big for any message, as
// text.
func (p *pager) section(s bot.Section) {
	if len(s.Fields) == 0 || !newEmbeds(0).fitsSection(s) {
		p.text(sectionText(s))
		return
	}
	b := p.last()
	if !b.fitsSection(s) {
		b = p.fresh()
	}
	b.section(s)
}

// fits reports whether text s fits whole in these embeds.
func (b *embeds) fits(s string) bool {
	n := utf8.RuneCountInString(s)
	if b.open && utf8.RuneCountInString(b.list[len(b.list)-1].Description)+1+n <= MaxEmbedText && n+1 <= b.budget {
		return true
	}
	return len(b.list) < b.limit && n <= MaxEmbedText && n <= b.budget
}

// fitsSection reports whether a section with fields fits whole in these embeds, as an embed of
// its own.
func (b *embeds) fitsSection(s bot.Section) bool {
	n := utf8.RuneCountInString
	if len(b.list) >= b.limit || len(s.Fields) > MaxEmbedFields || n(s.Title) > MaxEmbedTitle || n(s.Text) > MaxEmbedText {
		return false
	}
	total := n(s.Title) + n(s.Text)
	for _, f := range s.Fields {
		name, value := n(nonEmpty(f.Label, "·")), n(nonEmpty(f.Value, "—"))
		if name > MaxFieldName || value > MaxFieldValue {
			return false
		}
		total += name + value
	}
	// section() gives the title a quarter and the text half of what is left: keep to that.
	return total <= b.budget && 4*n(s.Title) <= b.budget && 2*n(s.Text) <= b.budget-n(s.Title)
}

// take adds as much of text s as fits, whole lines where it can, and returns the rest. Text that
// fits whole joins the last embed, or else starts one; only longer text is cut.
func (b *embeds) take(s string) string {
	const minPiece = 200 // less room than this is not worth a piece of longer text
	n := utf8.RuneCountInString(s)
	room := 0 // what may still join the last embed
	if b.open {
		room = min(MaxEmbedText-utf8.RuneCountInString(b.list[len(b.list)-1].Description)-1, b.budget-1)
	}
	fresh := 0 // what a new embed may hold
	if len(b.list) < b.limit {
		fresh = min(MaxEmbedText, b.budget)
	}
	switch {
	case n <= room:
		return b.join(s, room)
	case n <= fresh:
		return b.start(s, fresh)
	case room >= minPiece:
		return b.join(s, room)
	case fresh >= minPiece:
		return b.start(s, fresh)
	}
	return s
}

// join adds to the last embed's text at most room characters of s, and returns the rest.
func (b *embeds) join(s string, room int) string {
	head, rest := cut(s, room)
	last := b.list[len(b.list)-1]
	last.Description += "\n" + head
	b.budget -= utf8.RuneCountInString(head) + 1
	return rest
}

// start adds an embed with at most room characters of s, and returns the rest.
func (b *embeds) start(s string, room int) string {
	head, rest := cut(s, room)
	b.list = append(b.list, &discordgo.MessageEmbed{Description: head, Color: b.colour})
	b.budget -= utf8.RuneCountInString(head)
	b.open = true
	return rest
}

// cut splits s after at most n characters (see bot.Cutter). Each embed and message is rendered
// on its own, so a code block cut in two is closed at the end of the head and opened again, with
// its language, at the start of the rest: a block left open would show its code as text.
func cut(s string, n int) (string, string) {
	return bot.Cutter{Limit: n, Languages: true}.Cut(s)
}

// sectionText is a section written as text: its title in bold, its text, a line per field.
func sectionText(s bot.Section) string {
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
	return strings.Join(lines, "\n")
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
// the text as it reads while Discord no longer parses it. It breaks them in prose only: in code
// (a command offered for copying) Discord parses neither, and the code stays exactly what is
// typed. (Messages also go with allowed_mentions empty, so nothing pings whatever slips through.)
var defanger = strings.NewReplacer(
	"@everyone", "@\u2060everyone",
	"@here", "@\u2060here",
	"<@", "<\u2060@",
	"<#", "<\u2060#",
	"](", "]\u2060(",
)

func defang(s string) string {
	return bot.MapProse(s, func(prose string, lineStart bool) string { return unformat(defanger.Replace(prose), lineStart) })
}

// pings reports whether s holds what defang breaks in prose.
func pings(s string) bool { return defanger.Replace(s) != s }

// unformat escapes, in prose (not the commands' code), what Discord's markdown would show as
// formatting rather than as typed: a backslash, *, ~ and | (bold, italics, strike-through,
// spoilers), an _ that is not inside a word (italics, underline), and a #, -# or > that begins a
// line (a heading, small print, a quote). An escape shows nothing itself, so the text reads as typed.
func unformat(s string, lineStart bool) string {
	if !strings.ContainsAny(s, "\\*_~|#>") {
		return s
	}
	r := []rune(s)
	word := func(i int) bool {
		return i >= 0 && i < len(r) && (unicode.IsLetter(r[i]) || unicode.IsDigit(r[i]))
	}
	var b strings.Builder
	for i, c := range r {
		atLine := i == 0 && lineStart || i > 0 && r[i-1] == '\n'
		switch {
		case c == '\\' || c == '*' || c == '~' || c == '|':
			b.WriteRune('\\')
		case c == '_' && !(word(i-1) && word(i+1)):
			b.WriteRune('\\')
		case atLine && (c == '#' || c == '>' || c == '-' && i+1 < len(r) && r[i+1] == '#'):
			b.WriteRune('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// mapSection applies f to every text of a section.
func mapSection(s bot.Section, f func(string) string) bot.Section {
	s.Title, s.Text = f(s.Title), f(s.Text)
	fs := make([]bot.Field, len(s.Fields))
	for j, fl := range s.Fields {
		fl.Label, fl.Value = f(fl.Label), f(fl.Value)
		fs[j] = fl
	}
	s.Fields = fs
	return s
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
