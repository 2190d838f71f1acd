// Package bot is the neutral chat model shared by every adapter (Slack, Discord, the console): a
// request in, replies out, with buttons that each have a typed twin command.
package bot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Request is one command from a chat user.
type Request struct {
	// User is the identity the adapter resolved (the directory name, e.g. alice@acme.example).
	User string
	// Text is the command, e.g. "/gpu request 1 interactive 4h".
	Text string
	// Channel is where it was typed, when the adapter knows.
	Channel string
	// Key de-duplicates redelivery of the same command (e.g. Slack's trigger id). For a click it
	// is the button's key (ClickKey), which every press of that button shares.
	Key string
	// Click says the command is a button's: pressing the same button of the same message again
	// (a double click, or a minute later) does nothing more and answers with what the first did.
	Click bool
	// Account is the chat account that asked, where the adapter knows it. With single sign-on
	// this, not User, says who asks: the account's link to the identity provider.
	Account Account
}

// Account is a chat account: the platform, the workspace on it (a Slack team id, a Discord
// guild id) and the user's id there.
type Account struct {
	Platform  string
	Workspace string
	User      string
}

// Action is a button; Command is its typed twin, run when the button is pressed.
type Action struct {
	Label   string `json:"label"`
	Command string `json:"command"`
	Style   string `json:"style,omitempty"` // primary | danger
}

// ClickKey keys a press of a button: the platform, the message the button is on (as the
// platform names it, e.g. Slack's channel and ts, Discord's message id), who pressed it and the
// command it runs. Every press of that button of that message by that person has the same key,
// whatever delivery brought it; "" when the message is not known.
func ClickKey(platform, message, user, command string) string {
	if message == "" || user == "" {
		return ""
	}
	h := sha256.Sum256([]byte(message + "\x00" + user + "\x00" + strings.TrimSpace(command)))
	return platform + ":click:" + hex.EncodeToString(h[:16])
}

// Field is a labelled value inside a section.
type Field struct {
	Label string `json:"label"`
	Value string `json:"value"`
}

// Section is one block of a reply: a title line, text and fields.
type Section struct {
	Title  string  `json:"title,omitempty"`
	Text   string  `json:"text,omitempty"`
	Fields []Field `json:"fields,omitempty"`
}

// Reply is what the bot says.
type Reply struct {
	// To is the recipient: a user's directory name or a channel (#vision-gpu). Empty: whoever asked.
	To       string    `json:"to"`
	Text     string    `json:"text"`
	Sections []Section `json:"sections,omitempty"`
	Actions  []Action  `json:"actions,omitempty"`
	// Ephemeral replies are shown only to the asker where the platform can.
	Ephemeral bool `json:"-"`
	// Ref groups messages about one thing (e.g. "approval:L-42") so an adapter can update them in place.
	Ref string `json:"-"`
	// Update asks the adapter to edit the earlier messages with the same Ref instead of posting anew.
	Update bool `json:"-"`
	// EditOnly, with Update, edits the recipient's earlier messages with the same Ref and posts
	// nothing where there are none: a change to a message someone holds, not news.
	EditOnly bool `json:"-"`
	// Error marks a reply that refuses bad input.
	Error bool `json:"-"`
	// Files are attachments (a chart, a CSV) shown with the message.
	Files []File `json:"-"`
	// Typed are texts someone typed that the reply shows as they were typed (a reason, a
	// template parameter's value): an adapter that rewrites the bot's own commands in a text
	// (Discord writes /gpu approve L-5 as /gpu approve lease:L-5) leaves these as they are.
	Typed []string `json:"-"`
}

// File is an attachment of a reply.
type File struct {
	Name    string // a file name, e.g. showback-2026-W48.png
	Title   string
	Type    string // a MIME type, e.g. image/png
	Content []byte
}

// PlainText renders a reply as text, sections included (for the console and plain-text fallbacks).
func (r Reply) PlainText() string {
	var b strings.Builder
	b.WriteString(r.Text)
	for _, s := range r.Sections {
		b.WriteString("\n")
		if s.Title != "" {
			b.WriteString("• " + s.Title)
			if s.Text != "" {
				b.WriteString(" — ")
			}
		}
		b.WriteString(s.Text)
		for _, f := range s.Fields {
			b.WriteString("\n    " + f.Label + ": " + f.Value)
		}
	}
	return b.String()
}

// MostlyLeases reports whether sections are mostly leases: at least half of them (and one) titled
// with a lease's id (L-42), as a list of leases is. A reply too long to show whole says how to
// see one lease of those it leaves out.
func MostlyLeases(sections []Section) bool {
	n := 0
	for _, s := range sections {
		if strings.HasPrefix(s.Title, "L-") {
			n++
		}
	}
	return n > 0 && n >= len(sections)/2
}

// MaxReason is the most characters a typed reason may have (a denial's, a quota request's): the
// command grammar refuses more, so the adapters' forms that ask for one take no more than this.
const MaxReason = 500

// Handler answers a request with replies: the first to the asker, others to whomever they name.
type Handler interface {
	Handle(ctx context.Context, req Request) []Reply
}

// Checker is a Handler that can tell, before a form asks for more of a command (the reason for
// a denial), that the command would be refused as it stands: Check returns that refusal, or nil
// when the command may go on (or when it cannot tell in time). It changes nothing the command
// would (it may tidy the message whose button was pressed).
type Checker interface {
	Check(ctx context.Context, req Request) *Reply
}

// Check asks h, when it is a Checker, whether req would be refused; nil otherwise.
func Check(ctx context.Context, h Handler, req Request) *Reply {
	if c, ok := h.(Checker); ok {
		return c.Check(ctx, req)
	}
	return nil
}

// Opener is a Handler that tells which command lines anyone may run, even someone it cannot
// tell who they are (help, browsing templates): an adapter that cannot tell who asks (a chat
// profile without an email) runs those all the same, as no one in particular.
type Opener interface {
	Open(text string) bool
}

// Open asks h, when it is an Opener, whether anyone may run the command line text; false
// otherwise.
func Open(h Handler, text string) bool {
	if o, ok := h.(Opener); ok {
		return o.Open(text)
	}
	return false
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, req Request) []Reply

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, req Request) []Reply { return f(ctx, req) }

// Sender delivers replies that nobody asked for (notices: expiry, approvals, idle warnings).
type Sender interface {
	Send(ctx context.Context, r Reply) error
}

// SenderFunc adapts a function to Sender.
type SenderFunc func(ctx context.Context, r Reply) error

// Send calls f.
func (f SenderFunc) Send(ctx context.Context, r Reply) error { return f(ctx, r) }

// Deliverer delivers one message and returns only once the chat platform has taken it (files
// included) or failed to: scheduled posts that must go out exactly once record their progress by it.
type Deliverer interface {
	Deliver(ctx context.Context, r Reply) error
}
