package slack

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/acme/quartermaster/bot"
)

// Block Kit limits (https://docs.slack.dev/reference/block-kit): a message holds at most 50
// blocks, a modal or the Home tab 100; a section's text at most 3000 characters, each of its at
// most 10 fields 2000; an actions block at most 25 elements; a button's label 75 characters, its
// value 2000 and its action_id 255.
const (
	MaxMessageBlocks = 50
	MaxViewBlocks    = 100
	MaxSectionText   = 3000
	MaxFieldText     = 2000
	MaxSectionFields = 10
	MaxActionButtons = 25
	MaxButtonLabel   = 75
	MaxButtonValue   = 2000
	MaxActionID      = 255
	// maxFallbackText bounds the notification text sent beside the blocks.
	maxFallbackText = 3000
	// maxActionBlocks is how many rows of buttons a long reply keeps once its sections no longer fit.
	maxActionBlocks = 2
)

// Action ids: a button's id carries nothing but its position; its value is the typed twin
// command the click runs.
const (
	actionCommandPrefix = "qm.cmd."
)

// escape makes text safe for mrkdwn: &, < and > are control characters there; a *, _ or ~ that
// could open or close bold, italics or strike-through with another is shown as its look-alike
// (∗ ˍ ∼), and a > that begins a line (a quote) as ›, so what someone typed reads as typed and is
// never formatted. A mark that can format nothing is kept as written: one inside a word (a class
// named a100_80g), one with a space or nothing on either side (the bot's own "- and _"), one
// with no partner to pair with; so is the commands' code (`…`, ```…```) and a link.
func escape(s string) string { return mrkdwnOf(nil, text(s)) }

// piece is a part of a mrkdwn text: the renderer's own markup (the * around a title) or text,
// shown as written (see escape).
type piece struct {
	s      string
	markup bool
}

func text(s string) piece   { return piece{s: s} }
func markup(s string) piece { return piece{s: s, markup: true} }

// lookalikes are the marks mrkdwn formats with, as characters that show the same and format nothing.
var lookalikes = map[byte]rune{'*': '\u2217', '_': '\u02cd', '~': '\u223c'}

// typedWords are the words of the command a reply answers, as the person typed it, that hold a *,
// _ or ~: where the reply shows one of them, its marks are theirs, not the bot's. Nil for a
// notice, a click or anything else nobody typed.
type typedWords []string

// typedIn is the words of the command line typed that hold a mark, each also without the quotes
// around it (a refusal quotes what it echoes), escaped as the reply's text is.
func typedIn(line string) typedWords {
	var out typedWords
	esc := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	for _, w := range strings.Fields(line) {
		if !strings.ContainsAny(w, "*_~") {
			continue
		}
		out = append(out, esc.Replace(w))
		if t := strings.Trim(w, "\"'“”‘’"); t != w && strings.ContainsAny(t, "*_~") {
			out = append(out, esc.Replace(t))
		}
	}
	return out
}

// ranges are the byte ranges of s where a typed word shows.
func (tw typedWords) ranges(s string) [][2]int {
	var out [][2]int
	for _, w := range tw {
		for from := 0; from < len(s); {
			i := strings.Index(s[from:], w)
			if i < 0 {
				break
			}
			out = append(out, [2]int{from + i, from + i + len(w)})
			from += i + len(w)
		}
	}
	return out
}

// mrkdwnOf joins pieces into one mrkdwn text: each text made safe as escape makes it, judged
// with the pieces around it, so that no mark of it pairs with another, the markup's bold
// included; the markup as it is. A mark of what the person typed (tw) that could pair with any
// other is shown as its look-alike first, so that a mark of the bot's own sentence never pairs
// with one typed and is kept as written.
func mrkdwnOf(tw typedWords, ps ...piece) string {
	var b strings.Builder
	var own [][2]int // the markup's byte ranges
	for _, p := range ps {
		if p.markup {
			own = append(own, [2]int{b.Len(), b.Len() + len(p.s)})
			b.WriteString(p.s)
			continue
		}
		for _, part := range exampleCode(p.s) {
			if strings.ContainsAny(part, "&<>") {
				part = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(part)
			}
			b.WriteString(part)
		}
	}
	s := b.String()
	if strings.ContainsAny(s, "*_~") {
		s = unpair(s, own, tw.ranges(s))
	}
	if strings.Contains(s, "&gt;") {
		s = bot.MapProse(s, unquote)
	}
	return s
}

// exampleLabel begins the example that ends a refusal: "Example: /gpu request 1 dev for 4h".
const exampleLabel = "Example: /gpu "

// exampleCode is s cut so that each example a line of it ends with (exampleLabel to the line's
// end) is a code span of its own: the command is to be copied, and in code Slack formats none of
// its *, _ or ~ and unpair shows none as a look-alike, so what is copied is the command as typed.
// An example holding a backtick (which would end the code) or following one that opens code
// is left as prose.
func exampleCode(s string) []string {
	if !strings.Contains(s, exampleLabel) {
		return []string{s}
	}
	var out []string
	lines := strings.SplitAfter(s, "\n")
	for _, l := range lines {
		body := strings.TrimSuffix(l, "\n")
		at := strings.LastIndex(body, exampleLabel)
		if at < 0 {
			out = append(out, l)
			continue
		}
		at += len("Example: ")
		cmd := strings.TrimRight(body[at:], " ")
		if strings.Contains(cmd, "`") || strings.Count(strings.ReplaceAll(body[:at], "```", ""), "`")%2 != 0 {
			out = append(out, l)
			continue
		}
		out = append(out, body[:at], "`", cmd, "`", body[at+len(cmd):], l[len(body):])
	}
	return out
}

// mark is a *, _ or ~ of a text's prose at byte at: whether it could open a span of formatting
// (something other than a space follows it) or close one (something other than a space comes
// before it), and whether it is the renderer's markup.
type mark struct {
	at            int
	c             byte
	opens, closes bool
	markup        bool
	typed         bool
}

// unpair shows as its look-alike each mark of s's prose, outside the markup ranges own, that
// could pair with another of its kind: one that could open a span with a mark after it that could
// close one, or close a span opened before it. Marks that could pair with none are kept, as is
// every mark inside a word (letters or digits on both sides), which formats nothing. A mark inside
// the ranges typed (what the person typed) that could pair with any other mark is shown as its
// look-alike before the others are judged, so a mark of the bot's own text is never changed for
// pairing with one typed.
func unpair(s string, own, typed [][2]int) string {
	var marks []mark
	for _, p := range bot.ProseParts(s) {
		for i := p.Start; i < p.End; i++ {
			c := s[i]
			if c != '*' && c != '_' && c != '~' {
				continue
			}
			before, _ := utf8.DecodeLastRuneInString(s[:i])
			after, _ := utf8.DecodeRuneInString(s[i+1:])
			if i > 0 && i+1 < len(s) && word(before) && word(after) {
				continue
			}
			m := mark{at: i, c: c, opens: i+1 < len(s) && !unicode.IsSpace(after), closes: i > 0 && !unicode.IsSpace(before)}
			for _, r := range own {
				m.markup = m.markup || r[0] <= i && i < r[1]
			}
			for _, r := range typed {
				m.typed = m.typed || r[0] <= i && i < r[1]
			}
			marks = append(marks, m)
		}
	}
	shown := map[int]bool{}
	for _, c := range []byte("*_~") {
		var all []mark
		for _, m := range marks {
			if m.c == c {
				all = append(all, m)
			}
		}
		// What was typed first: a typed mark that could open a span with any later mark, or close
		// one opened by any earlier mark.
		for j, m := range all {
			if !m.typed || m.markup {
				continue
			}
			for k, o := range all {
				if k < j && o.opens && m.closes || k > j && m.opens && o.closes {
					shown[m.at] = true
					break
				}
			}
		}
		var of []mark
		for _, m := range all {
			if !shown[m.at] {
				of = append(of, m)
			}
		}
		closesAfter := make([]bool, len(of)+1)
		for j := len(of) - 1; j >= 0; j-- {
			closesAfter[j] = closesAfter[j+1] || of[j].closes
		}
		opened := false
		for j, m := range of {
			if !m.markup && (m.opens && closesAfter[j+1] || m.closes && opened) {
				shown[m.at] = true
			}
			opened = opened || m.opens
		}
	}
	if len(shown) == 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if shown[i] {
			b.WriteRune(lookalikes[s[i]])
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// word reports whether r is a letter or a digit.
func word(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// unquote replaces a > (escaped) that begins a line of s, which would make the line a quote, with
// › (s may begin a line wherever lineStart says it does).
func unquote(s string, lineStart bool) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if (i > 0 || lineStart) && strings.HasPrefix(l, "&gt;") {
			lines[i] = "\u203a" + l[len("&gt;"):]
		}
	}
	return strings.Join(lines, "\n")
}

// clip shortens s to at most n characters, ending it with "…" when it was cut. The cut never falls
// inside an escape (&amp; &lt; &gt;), so escaped text stays escaped, nor inside a character as it
// is shown (an emoji sequence, a flag, a letter with its marks).
func clip(s string, n int) string {
	c := bot.Clip(s, n)
	head, cut := strings.CutSuffix(c, "…")
	if c == s || !cut {
		return c
	}
	if amp := strings.LastIndexByte(head, '&'); amp >= 0 && len(head)-amp < len("&amp;") && !strings.Contains(head[amp:], ";") {
		head = head[:amp]
	}
	return head + "…"
}

// safe is text that may hold what a user typed (a reason, a template parameter, a team's or a
// class's name), made safe for a field Slack reads as mrkdwn and at most n characters: <, > and &
// escaped, so nothing in it becomes a link, a mention (<!channel>, <@U…>) or a formatting
// command, and never cut inside an escape.
func safe(s string, n int) string { return clip(escape(s), n) }

// sectionCutter cuts text into pieces of at most MaxSectionText characters, one a section (see
// bot.Cutter), preferring line breaks, then spaces. A piece begins a line of its own in Slack, so
// a cut never leaves the next piece beginning with what changes meaning at a line's start (a > or
// &gt;, a quote; •, - or * and a space, or 1., a list); and no cut falls inside an escape
// (&amp;), a code span (an example's command), a mention (<@U…>) or a link (<…|…>). Slack reads
// no language after a block's fence: a block cut in two opens again with ``` alone.
var sectionCutter = bot.Cutter{Limit: MaxSectionText, Cuttable: cuttable, WholeWords: true}

// cuttable reports whether a piece may end at byte i of s, the next beginning with s[i:]: not
// inside an escape (&amp; &lt; &gt;), a code span or a <…> Slack reads as a mention or a link,
// and, but at a line break, not before what Slack reads differently at a line's start (lineMark).
func cuttable(s string, i int) bool {
	if amp := strings.LastIndexByte(s[:i], '&'); amp >= 0 && i-amp < len("&amp;") && !strings.Contains(s[amp:i], ";") && !strings.ContainsAny(s[amp+1:i], " \n&") {
		return false
	}
	if line := s[strings.LastIndexByte(s[:i], '\n')+1 : i]; strings.Count(strings.ReplaceAll(line, "```", ""), "`")%2 != 0 {
		return false // inside a code span (an example's command)
	}
	if lt := strings.LastIndexByte(s[:i], '<'); lt >= 0 && !strings.Contains(s[lt:i], ">") && strings.Contains(s[i:], ">") {
		return false
	}
	return s[i] == '\n' || !lineMark(strings.TrimLeft(s[i:], " \n"))
}

// lineMark reports whether s begins with what Slack reads differently at the start of a line: a
// quote (> or &gt;) or a list item (•, ◦, -, *, + or 1. with a space after it).
func lineMark(s string) bool {
	if strings.HasPrefix(s, "&gt;") || strings.HasPrefix(s, ">") || strings.HasPrefix(s, "\u2022") || strings.HasPrefix(s, "\u25e6") {
		return true
	}
	for _, m := range []string{"- ", "* ", "+ ", "\u2013 ", "\u2014 "} {
		if strings.HasPrefix(s, m) {
			return true
		}
	}
	d := 0
	for d < len(s) && s[d] >= '0' && s[d] <= '9' {
		d++
	}
	return d > 0 && (strings.HasPrefix(s[d:], ". ") || strings.HasPrefix(s[d:], ") "))
}

func mrkdwn(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, s, false, false)
}

func plain(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, s, true, false)
}

// textBlocks renders text as sections of at most MaxSectionText characters each.
func textBlocks(text string, tw typedWords) []slack.Block {
	var out []slack.Block
	for _, part := range sectionCutter.Pieces(mrkdwnOf(tw, piece{s: text})) {
		if part == "" {
			continue
		}
		out = append(out, slack.NewSectionBlock(mrkdwn(part), nil, nil))
	}
	return out
}

// sectionBlocks renders one bot.Section: its title and text as the section's text, its fields as
// the section's two-column fields (the table-like list Slack offers), ten to a block.
func sectionBlocks(s bot.Section, tw typedWords) []slack.Block {
	var head string
	switch {
	case s.Title != "" && s.Text != "":
		if strings.Contains(s.Text, "\n") {
			head = mrkdwnOf(tw, markup("*"), text(s.Title), markup("*\n"), text(s.Text))
		} else {
			head = mrkdwnOf(tw, markup("*"), text(s.Title), markup("* — "), text(s.Text))
		}
	case s.Title != "":
		head = mrkdwnOf(tw, markup("*"), text(s.Title), markup("*"))
	default:
		head = mrkdwnOf(tw, text(s.Text))
	}
	var fields []*slack.TextBlockObject
	for _, f := range s.Fields {
		fields = append(fields, mrkdwn(clip(mrkdwnOf(tw, markup("*"), text(f.Label), markup("*\n"), text(f.Value)), MaxFieldText)))
	}
	var out []slack.Block
	parts := []string{}
	if head != "" {
		parts = sectionCutter.Pieces(head)
	}
	for i, p := range parts {
		var fs []*slack.TextBlockObject
		if i == len(parts)-1 && len(fields) > 0 {
			n := min(len(fields), MaxSectionFields)
			fs, fields = fields[:n], fields[n:]
		}
		out = append(out, slack.NewSectionBlock(mrkdwn(p), fs, nil))
	}
	for len(fields) > 0 {
		n := min(len(fields), MaxSectionFields)
		out = append(out, slack.NewSectionBlock(nil, fields[:n], nil))
		fields = fields[n:]
	}
	return out
}

// buttons renders actions as buttons whose value is the typed twin command, 25 to a block.
// A command too long for a button's value is left out (it can still be typed).
func buttons(actions []bot.Action, blockPrefix string) []slack.Block {
	var els []slack.BlockElement
	for i, a := range actions {
		if a.Command == "" || len(a.Command) > MaxButtonValue {
			continue
		}
		label := a.Label
		if label == "" {
			label = a.Command
		}
		b := slack.NewButtonBlockElement(actionCommandPrefix+strconv.Itoa(i), a.Command, plain(clip(label, MaxButtonLabel)))
		switch a.Style {
		case "primary":
			b.Style = slack.StylePrimary
		case "danger":
			b.Style = slack.StyleDanger
		}
		els = append(els, b)
	}
	var out []slack.Block
	for i := 0; len(els) > 0; i++ {
		n := min(len(els), MaxActionButtons)
		out = append(out, slack.NewActionBlock(fmt.Sprintf("%sactions.%d", blockPrefix, i), els[:n]...))
		els = els[n:]
	}
	return out
}

// Render turns a reply into Block Kit blocks that fit within maxBlocks, with the plain text Slack
// shows in notifications. A reply too long for one message keeps its text, as many whole sections
// as fit, at most two rows of buttons and a line saying how much was left out.
func Render(r bot.Reply, maxBlocks int) (string, []slack.Block) {
	return render(r, maxBlocks, "", nil)
}

// RenderTyped is Render for the answer to a command the person typed as typed: a *, _ or ~ of
// theirs that the answer shows is never formatted, and never makes the bot's own marks change.
func RenderTyped(r bot.Reply, maxBlocks int, typed string) (string, []slack.Block) {
	return render(r, maxBlocks, "", typedIn(typed))
}

func render(r bot.Reply, maxBlocks int, blockPrefix string, tw typedWords) (string, []slack.Block) {
	text := r.Text
	if r.Error && text != "" {
		text = ":warning: " + text
	}
	// The top-level text is mrkdwn too (it is what notifications and old clients show).
	fallback := clip(mrkdwnOf(tw, piece{s: r.PlainText()}), maxFallbackText)
	if fallback == "" {
		fallback = " "
	}
	head := textBlocks(text, tw)
	var secs [][]slack.Block
	total := len(head)
	for _, s := range r.Sections {
		b := sectionBlocks(s, tw)
		if len(b) == 0 {
			continue
		}
		secs = append(secs, b)
		total += len(b)
	}
	acts := buttons(r.Actions, blockPrefix)
	if total+len(acts) <= maxBlocks {
		out := head
		for _, b := range secs {
			out = append(out, b...)
		}
		return fallback, append(out, acts...)
	}

	// Too long: keep whole sections while they fit beside the buttons and a closing note.
	keptActs := acts
	droppedButtons, example := 0, ""
	if len(keptActs) > maxActionBlocks {
		for _, b := range keptActs[maxActionBlocks:] {
			els := b.(*slack.ActionBlock).Elements.ElementSet
			if example == "" && len(els) > 0 {
				if btn, ok := els[0].(*slack.ButtonBlockElement); ok {
					example = btn.Value
				}
			}
			droppedButtons += len(els)
		}
		keptActs = keptActs[:maxActionBlocks]
	}
	budget := maxBlocks - len(keptActs) - 1
	if len(head) > budget {
		head = head[:max(budget, 0)]
	}
	out := head
	// Each section then becomes a few lines of text, packed several to a block (a section longer
	// than a block goes on over as many as it needs), so that a long catalog or list is shown whole
	// instead of losing its last entries.
	shown, partial := 0, ""
	for _, b := range packSections(r.Sections, tw) {
		if len(out)+1 > budget {
			break
		}
		out = append(out, slack.NewSectionBlock(mrkdwn(b.text), nil, nil))
		shown += b.n
		partial = b.open
	}
	omitted := len(secs) - shown
	if omitted > 0 || droppedButtons > 0 {
		out = append(out, slack.NewContextBlock(blockPrefix+"more", mrkdwn(moreNote(r, omitted, partial, droppedButtons, example))))
	}
	return fallback, append(out, keptActs...)
}

// packed is the compact text of the sections that end in one section block: n of them, and, when
// the block ends inside a section too long for it, that section's title (open).
type packed struct {
	text string
	n    int
	open string
}

// compact is a section as lines of mrkdwn: its title and text, then its fields on one line.
func compact(s bot.Section, tw typedWords) string {
	var ps []piece
	switch {
	case s.Title != "" && s.Text != "":
		ps = append(ps, markup("*"), text(s.Title), markup("* — "), text(s.Text))
	case s.Title != "":
		ps = append(ps, markup("*"), text(s.Title), markup("*"))
	default:
		ps = append(ps, text(s.Text))
	}
	for i, f := range s.Fields {
		switch {
		case i > 0:
			ps = append(ps, markup(" · "))
		case s.Title != "" || s.Text != "":
			ps = append(ps, markup("\n"))
		}
		ps = append(ps, markup("*"), text(f.Label), markup(":* "), text(f.Value))
	}
	return mrkdwnOf(tw, ps...)
}

// packSections packs sections' compact text into as few blocks as Slack's section limit allows;
// a section longer than one block is split over several, at line breaks where it has them.
func packSections(ss []bot.Section, tw typedWords) []packed {
	var out []packed
	var cur packed
	for _, s := range ss {
		t := compact(s, tw)
		if strings.TrimSpace(t) == "" {
			continue
		}
		pieces := sectionCutter.Pieces(t)
		for i, p := range pieces {
			if cur.text != "" && utf8.RuneCountInString(cur.text)+2+utf8.RuneCountInString(p) > MaxSectionText {
				out = append(out, cur)
				cur = packed{}
			}
			if cur.text != "" {
				cur.text += "\n\n"
			}
			cur.text += p
			cur.open = ""
			if i == len(pieces)-1 {
				cur.n++
			} else {
				cur.open = s.Title
				if cur.open == "" {
					cur.open = "the text"
				}
			}
		}
	}
	if cur.text != "" {
		out = append(out, cur)
	}
	return out
}

// moreNote says what a shortened reply left out, and how to see it: the sections not shown (the
// first of them, partial, begun but cut short) and the buttons, with the command of the first
// button left out (example) as the one to type.
func moreNote(r bot.Reply, sections int, partial string, buttons int, example string) string {
	var parts []string
	if partial != "" {
		s := "…the rest of " + escape(partial) + " is too long for one Slack message"
		if sections > 1 {
			s += fmt.Sprintf("; %d more not shown here", sections-1)
		}
		parts = append(parts, s)
	} else if sections > 0 {
		s := fmt.Sprintf("…and %d more not shown here", sections)
		if bot.MostlyLeases(r.Sections) {
			s += "; /gpu status LEASE shows any one of them"
		}
		parts = append(parts, s)
	}
	if buttons > 0 {
		if example == "" {
			example = "/gpu help"
		}
		parts = append(parts, fmt.Sprintf("%d more buttons left out; type their commands instead (e.g. %s)", buttons, safe(example, 200)))
	}
	if len(parts) == 0 {
		return "…the rest is too long for one Slack message."
	}
	return strings.Join(parts, ". ") + "."
}

// versioned gives every block of an edited message or a republished view a block id of its
// own (its id with a version suffix), so a client redraws what changed instead of keeping what
// it showed under the old ids. Blocks without an id are left to Slack.
func versioned(blocks []slack.Block, version string) []slack.Block {
	out := make([]slack.Block, len(blocks))
	for i, b := range blocks {
		out[i] = b
		suffix := func(id string) string {
			if id == "" {
				return ""
			}
			return clip(id, 200) + "." + version
		}
		switch v := b.(type) {
		case *slack.SectionBlock:
			c := *v
			c.BlockID = suffix(c.BlockID)
			out[i] = &c
		case *slack.ActionBlock:
			c := *v
			c.BlockID = suffix(c.BlockID)
			out[i] = &c
		case *slack.ContextBlock:
			c := *v
			c.BlockID = suffix(c.BlockID)
			out[i] = &c
		case *slack.HeaderBlock:
			c := *v
			c.BlockID = suffix(c.BlockID)
			out[i] = &c
		}
	}
	return out
}
