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

// escape makes text safe for mrkdwn: &, < and > are control characters there, and outside the
// commands' code (`…`, ```…```) a *, _ or ~ that could open or close bold, italics or
// strike-through is shown as its look-alike (∗ ˍ ∼), and a > that begins a line (a quote) as ›, so
// what someone typed reads as typed and is never formatted. Marks inside a word (a class named a100_80g) format nothing and are kept.
func escape(s string) string {
	if strings.ContainsAny(s, "&<>") {
		s = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
	}
	if !strings.ContainsAny(s, "*_~") && !strings.Contains(s, "&gt;") {
		return s
	}
	return bot.MapProse(s, unformat)
}

// lookalikes are the marks mrkdwn formats with, as characters that show the same and format nothing.
var lookalikes = map[rune]rune{'*': '\u2217', '_': '\u02cd', '~': '\u223c'}

// unformat replaces each formatting mark of s that is not inside a word with its look-alike, and a
// > (escaped) that begins a line, which would make the line a quote, with › (it may begin a line
// wherever lineStart says s does).
func unformat(s string, lineStart bool) string {
	if strings.Contains(s, "&gt;") {
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			if (i > 0 || lineStart) && strings.HasPrefix(l, "&gt;") {
				lines[i] = "\u203a" + l[len("&gt;"):]
			}
		}
		s = strings.Join(lines, "\n")
	}
	r := []rune(s)
	word := func(i int) bool {
		return i >= 0 && i < len(r) && (unicode.IsLetter(r[i]) || unicode.IsDigit(r[i]))
	}
	out := make([]rune, len(r))
	for i, c := range r {
		out[i] = c
		if l, ok := lookalikes[c]; ok && !(word(i-1) && word(i+1)) {
			out[i] = l
		}
	}
	return string(out)
}

// clip shortens s to at most n characters, ending it with "…" when it was cut. The cut never falls
// inside an escape (&amp; &lt; &gt;), so escaped text stays escaped.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	if n == 1 {
		return "…"
	}
	head := string([]rune(s)[:n-1])
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

// split cuts s into pieces of at most n characters, preferring line breaks, then spaces.
func split(s string, n int) []string {
	var out []string
	for utf8.RuneCountInString(s) > n {
		r := []rune(s)
		head := string(r[:n])
		cut := strings.LastIndex(head, "\n")
		if cut < len(head)/2 {
			if sp := strings.LastIndex(head, " "); sp > cut {
				cut = sp
			}
		}
		if cut <= 0 {
			// No break in the second half: a hard cut, but never inside an &entity;.
			cut = len(head)
			if amp := strings.LastIndex(head, "&"); amp >= 0 && amp > len(head)-6 && !strings.Contains(head[amp:], ";") {
				cut = amp
			}
		}
		out = append(out, strings.TrimRight(s[:cut], " \n"))
		s = strings.TrimLeft(s[cut:], " \n")
	}
	if s != "" || len(out) == 0 {
		out = append(out, s)
	}
	return out
}

// safeJoin is prefix (already mrkdwn) and the escaped s, clipped to n characters.
func safeJoin(prefix, s string, n int) string { return clip(prefix+escape(s), n) }

func mrkdwn(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, s, false, false)
}

func plain(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, s, true, false)
}

// textBlocks renders text as sections of at most MaxSectionText characters each.
func textBlocks(text string) []slack.Block {
	var out []slack.Block
	for _, part := range split(escape(text), MaxSectionText) {
		if part == "" {
			continue
		}
		out = append(out, slack.NewSectionBlock(mrkdwn(part), nil, nil))
	}
	return out
}

// sectionBlocks renders one bot.Section: its title and text as the section's text, its fields as
// the section's two-column fields (the table-like list Slack offers), ten to a block.
func sectionBlocks(s bot.Section) []slack.Block {
	var head string
	switch {
	case s.Title != "" && s.Text != "":
		if strings.Contains(s.Text, "\n") {
			head = "*" + escape(s.Title) + "*\n" + escape(s.Text)
		} else {
			head = "*" + escape(s.Title) + "* — " + escape(s.Text)
		}
	case s.Title != "":
		head = "*" + escape(s.Title) + "*"
	default:
		head = escape(s.Text)
	}
	var fields []*slack.TextBlockObject
	for _, f := range s.Fields {
		fields = append(fields, mrkdwn(safeJoin("*"+escape(f.Label)+"*\n", f.Value, MaxFieldText)))
	}
	var out []slack.Block
	parts := []string{}
	if head != "" {
		parts = split(head, MaxSectionText)
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
	return render(r, maxBlocks, "")
}

func render(r bot.Reply, maxBlocks int, blockPrefix string) (string, []slack.Block) {
	text := r.Text
	if r.Error && text != "" {
		text = ":warning: " + text
	}
	// The top-level text is mrkdwn too (it is what notifications and old clients show).
	fallback := safe(r.PlainText(), maxFallbackText)
	if fallback == "" {
		fallback = " "
	}
	head := textBlocks(text)
	var secs [][]slack.Block
	total := len(head)
	for _, s := range r.Sections {
		b := sectionBlocks(s)
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
	for _, b := range packSections(r.Sections) {
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
func compact(s bot.Section) string {
	var b strings.Builder
	switch {
	case s.Title != "" && s.Text != "":
		b.WriteString("*" + escape(s.Title) + "* — " + escape(s.Text))
	case s.Title != "":
		b.WriteString("*" + escape(s.Title) + "*")
	default:
		b.WriteString(escape(s.Text))
	}
	var fs []string
	for _, f := range s.Fields {
		fs = append(fs, "*"+escape(f.Label)+":* "+escape(f.Value))
	}
	if len(fs) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(strings.Join(fs, " · "))
	}
	return b.String()
}

// packSections packs sections' compact text into as few blocks as Slack's section limit allows;
// a section longer than one block is split over several, at line breaks where it has them.
func packSections(ss []bot.Section) []packed {
	var out []packed
	var cur packed
	for _, s := range ss {
		t := compact(s)
		if strings.TrimSpace(t) == "" {
			continue
		}
		pieces := split(t, MaxSectionText)
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
		if leaseTitles(r.Sections) {
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

func leaseTitles(ss []bot.Section) bool {
	n := 0
	for _, s := range ss {
		if strings.HasPrefix(s.Title, "L-") {
			n++
		}
	}
	return n > 0 && n >= len(ss)/2
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
