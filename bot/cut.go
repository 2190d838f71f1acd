package bot

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// A Cutter cuts a text too long for one block of a chat platform (a Slack section, a Discord
// embed) into pieces, each shown on its own. A piece ends at the last line break in the second
// half of what fits, else at the last space there (WholeWords: that fits), else between two
// characters as they are shown (ClusterBoundary): a line is not cut in two for a fuller piece,
// nor an emoji, a flag or a letter with its marks for any reason, unless one character alone is
// longer than a piece. Each piece is rendered on its own, so a cut inside a code block (```…```)
// closes the block at the end of the piece and opens it again at the start of the next, which
// keeps the indentation of its first line; a cut right after a block's opening fence leaves the
// fence, not an empty block, to the next piece (a limit of 16 or less has no room for fences).
type Cutter struct {
	// Limit is the most a piece may measure.
	Limit int
	// Len is a text's measure as the platform counts it against Limit; nil counts code points, a
	// byte that is no UTF-8 as one (as JSON carries it, one �). A text's measure is never less
	// than that of its start.
	Len func(string) int
	// Cuttable, when set, reports whether the platform lets a piece end at byte i of s, the next
	// piece beginning with s[i:] (which starts a line there): not inside what it reads as one
	// thing (an escape, a mention, a link), nor before what it reads differently at a line's
	// start. Where no line break, space or character boundary is cuttable, the piece is cut
	// where it must be.
	Cuttable func(s string, i int) bool
	// WholeWords says a piece ends at the last space that fits however short that leaves it, so
	// that no word is cut in two where a space allows. Without, a piece ends at a space only in
	// the second half of what fits, and a longer word is cut between characters, so that no piece
	// is much shorter than it need be.
	WholeWords bool
	// Languages says the platform reads a word written right after a block's opening fence as
	// the code's language (```yaml): a block cut in two is opened again with it. Without, the
	// block is opened again with ``` alone.
	Languages bool
}

// closing is what ends a piece that a cut leaves inside a code block.
const closing = "\n```"

// Cut splits s into its first piece, which measures at most c.Limit, and the rest, which the next
// pieces hold ("" when s fits whole, and s is its own first piece as it is).
func (c Cutter) Cut(s string) (head, rest string) {
	if c.measure(s) <= c.Limit {
		return s, ""
	}
	room := c.Limit // what a piece holds besides the fence that closes a block cut in two
	fenced := c.Limit > 4*c.measure(closing)
	if fenced {
		room -= c.measure(closing)
	}
	end := c.fit(s, room)
	if end == 0 {
		// One code point longer than a piece: a piece holds it all the same.
		_, end = utf8.DecodeRuneInString(s)
	}
	at := c.breakAt(s, end, c.fit(s, room/2))
	if !fenced || strings.Count(s[:at], "```")%2 == 0 {
		return strings.TrimRightFunc(s[:at], unicode.IsSpace), strings.TrimLeftFunc(s[at:], unicode.IsSpace)
	}
	fence := strings.LastIndex(s[:at], "```")
	opener, empty := c.block(s[fence:at])
	if empty && !blank(s[:fence]) {
		// The cut falls right after the fence that opens a block (or inside its line): the head
		// would end with an empty block, so the block begins the rest instead.
		return strings.TrimRightFunc(s[:fence], unicode.IsSpace), s[fence:]
	}
	if empty {
		// The block begins the piece, and none of its code fits before where the platform lets a
		// piece end: it is cut where it must be.
		if at = ClusterCut(s, end); at <= fence+len("```") {
			at = end
		}
		if opener, empty = c.block(s[fence:at]); empty && !strings.Contains(s[fence:at], "\n") {
			opener, empty = "```", blank(s[fence+len("```"):at])
		}
		if t := opener + "\n" + strings.TrimLeftFunc(s[fence+len(opener):], unicode.IsSpace); empty && c.measure(t) < c.measure(s) {
			// Blanks longer than a piece begin the block: they are left out.
			return c.Cut(t)
		}
		if empty {
			return s[:at], s[at:]
		}
	}
	head, rest = s[:at], s[at:]
	if strings.HasPrefix(rest, "\n") || strings.HasPrefix(rest, " ") {
		rest = rest[1:]
	}
	head = strings.TrimRightFunc(head, unicode.IsSpace) + closing
	if after, closed := strings.CutPrefix(rest, "```"); closed {
		// The block ends where the head does: the rest goes on after it.
		return head, strings.TrimLeftFunc(after, unicode.IsSpace)
	}
	return head, opener + "\n" + rest
}

// block reads the start of a code block, from its opening fence to a cut: the fence that opens
// it again after the cut (```, and with c.Languages the language written after it), and whether
// it holds no code. With c.Languages a cut inside the fence's line may fall inside a language,
// so what is there counts as no code (Cut takes it for code where it must cut there all the same).
func (c Cutter) block(b string) (opener string, empty bool) {
	code := b[len("```"):]
	if !c.Languages {
		return "```", blank(code)
	}
	lang, body, whole := strings.Cut(code, "\n")
	if !whole {
		return "```", true
	}
	return "```" + lang, blank(body)
}

func blank(s string) bool { return strings.TrimSpace(s) == "" }

// Pieces cuts s into pieces that each measure at most c.Limit (one piece, s itself, when it fits).
func (c Cutter) Pieces(s string) []string {
	var out []string
	for {
		head, rest := c.Cut(s)
		if rest == "" {
			if head != "" || len(out) == 0 {
				out = append(out, head)
			}
			return out
		}
		out = append(out, head)
		s = rest
	}
}

func (c Cutter) measure(s string) int {
	if c.Len == nil {
		return utf8.RuneCountInString(s)
	}
	return c.Len(s)
}

// fit is the length in bytes of the longest start of s that measures at most n and ends between
// two code points (a byte that is no UTF-8 counting as one).
func (c Cutter) fit(s string, n int) int {
	if c.Len == nil {
		i := 0
		for ; n > 0 && i < len(s); n-- {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
		}
		return i
	}
	// Where the code points end, found as far as twice the answer; then the last that fits.
	ends := []int{0}
	for i, want := 0, 1; ; want *= 2 {
		for len(ends) <= want && i < len(s) {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
			ends = append(ends, i)
		}
		if i >= len(s) || c.Len(s[:i]) > n {
			break
		}
	}
	lo, hi := 0, len(ends)-1 // ends[lo] fits; ends[hi+1], if any, does not
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if c.Len(s[:ends[mid]]) <= n {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return ends[lo]
}

// breakAt is where a piece of s that may hold its first end bytes ends: the last line break
// after byte half, else the last space after byte half (WholeWords: after byte 0), else the last boundary between two
// characters as they are shown; each where c.Cuttable allows. Failing all, end.
func (c Cutter) breakAt(s string, end, half int) int {
	for _, sep := range []byte{'\n', ' '} {
		from := half
		if sep == ' ' && c.WholeWords {
			from = 0
		}
		for i := min(end, len(s)-1); i > from; i-- {
			if s[i] == sep && c.cuttable(s, i) {
				return i
			}
		}
	}
	for i := end; i > 0; i-- {
		if ClusterBoundary(s, i) && c.cuttable(s, i) {
			return i
		}
	}
	return end
}

func (c Cutter) cuttable(s string, i int) bool {
	return c.Cuttable == nil || i >= len(s) || c.Cuttable(s, i)
}
