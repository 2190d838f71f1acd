// Package console is the chat adapter for a terminal: the developer's playground and the test
// harness. Lines are "USER: TEXT"; lines starting with ":" control the simulation.
package console

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/policy"
)

// Controls are the simulation commands the console offers.
type Controls struct {
	// Advance moves the simulated clock forward, doing everything that falls due on the way
	// (scheduled reports included).
	Advance func(ctx context.Context, d time.Duration) error
	// Util sets a lease's simulated GPU utilization.
	Util func(ctx context.Context, lease string, pct float64) error
	// Now tells the simulated time.
	Now func() time.Time
	// Wait lets time pass on a real clock while the service's loops run (a console on a real
	// scheduler); nil on a simulated clock, where :wait advances it instead.
	Wait func(ctx context.Context, d time.Duration) error
}

// Console reads commands and prints replies.
type Console struct {
	Handler  bot.Handler
	Controls Controls
	Out      io.Writer
	JSON     bool
	// Prompt is printed before each line when reading from a terminal.
	Prompt bool
	// FilesDir is where attachments of messages (a chart, a CSV) are written; each message names
	// the paths. Empty: they are not written, only named.
	FilesDir string
	// ExampleUser and ExampleClass make the examples the console shows work on the policy it
	// runs (someone in its directory, one of its classes). Without a user the examples name
	// someone no policy knows and a command anyone may run (/gpu help); without a class, a
	// request for the default class.
	ExampleUser, ExampleClass string
	// People are whom the policy's directory lists: :as refuses anyone else, for whom every
	// command would be refused. Empty: :as takes anyone.
	People []string

	mu      sync.Mutex
	pending []bot.Reply // notices raised while a command runs, printed after its reply
	busy    bool
	user    string // default user set with :as
}

type jsonMessage struct {
	To      string       `json:"to"`
	Text    string       `json:"text"`
	Actions []bot.Action `json:"actions"`
	Files   []string     `json:"files,omitempty"`
}

// Deliver prints a message at once, its attachments written to FilesDir (a scheduled post).
func (c *Console) Deliver(_ context.Context, r bot.Reply) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.print(r)
}

// writeFiles writes a message's attachments and returns their paths.
func (c *Console) writeFiles(fs []bot.File) ([]string, error) {
	var paths []string
	for _, f := range fs {
		name := filepath.Base(f.Name)
		if c.FilesDir == "" {
			paths = append(paths, name)
			continue
		}
		if err := os.MkdirAll(c.FilesDir, 0o755); err != nil {
			return paths, fmt.Errorf("console: %w", err)
		}
		p := filepath.Join(c.FilesDir, name)
		if err := os.WriteFile(p, f.Content, 0o644); err != nil {
			return paths, fmt.Errorf("console: %w", err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// Send prints a message nobody asked for (a notice), after the reply of the command that caused
// it. An edit-only reply (bot.Reply's EditOnly) changes a message already posted: the console
// keeps none to edit, so it prints nothing, rather than the edited message again as news.
func (c *Console) Send(_ context.Context, r bot.Reply) error {
	if r.Update && r.EditOnly {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.busy {
		c.pending = append(c.pending, r)
		return nil
	}
	return c.print(r)
}

func (c *Console) print(r bot.Reply) error {
	paths, ferr := c.writeFiles(r.Files)
	if c.JSON {
		acts := r.Actions
		if acts == nil {
			acts = []bot.Action{}
		}
		b, err := json.Marshal(jsonMessage{To: r.To, Text: r.PlainText(), Actions: acts, Files: paths})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(c.Out, "%s\n", b)
		return errors.Join(ferr, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "→ %s: %s\n", r.To, indent(r.PlainText()))
	for _, a := range r.Actions {
		fmt.Fprintf(&b, "    [%s] %s\n", a.Label, a.Command)
	}
	for _, p := range paths {
		fmt.Fprintf(&b, "    file: %s\n", p)
	}
	_, err := io.WriteString(c.Out, b.String())
	return errors.Join(ferr, err)
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n  ") }

// Run reads lines until EOF or ctx ends.
func (c *Console) Run(ctx context.Context, in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	if c.Prompt {
		u := c.exampleUser()
		controls := "`:advance 45m`, `:util L-1 0`"
		if c.realClock() {
			controls = "`:wait 30s`"
		}
		fmt.Fprintf(c.Out, "Quartermaster console. Type `%s: /gpu help`, `:as %s` to set who you are, %s, or Ctrl-D to quit.\n", u, u, controls)
	}
	// Lines are read on their own, so that the console stops when ctx ends (a signal) even while
	// its input stays open and sends nothing.
	lines := make(chan string)
	readErr := make(chan error, 1)
	go func() {
		defer close(lines)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
		readErr <- sc.Err()
	}()
	for {
		if c.Prompt {
			fmt.Fprint(c.Out, "> ")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case line, ok := <-lines:
			if !ok {
				if err := ctx.Err(); err != nil {
					return err
				}
				return <-readErr
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			c.Line(ctx, line)
		}
	}
}

// Line handles one input line.
func (c *Console) Line(ctx context.Context, line string) {
	line = strings.TrimSpace(line)
	if line == "" || strings.HasPrefix(line, "#") {
		return
	}
	if strings.HasPrefix(line, ":") {
		c.control(ctx, line)
		return
	}
	user, text, ok := splitUser(line)
	if !ok {
		if c.user == "" || !strings.HasPrefix(line, "/") {
			c.say(bot.Reply{To: "console", Error: true, Text: "Lines look like USER: TEXT. Example: " + c.exampleLine()})
			return
		}
		user, text = c.user, line
	}
	c.mu.Lock()
	c.busy = true
	c.mu.Unlock()
	replies := c.Handler.Handle(ctx, bot.Request{User: user, Text: text, Channel: "console"})
	c.mu.Lock()
	c.busy = false
	pending := c.pending
	c.pending = nil
	c.mu.Unlock()
	for _, r := range replies {
		if r.To == "" {
			r.To = user
		}
		c.say(r)
	}
	for _, r := range pending {
		c.say(r)
	}
}

func (c *Console) say(r bot.Reply) {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.print(r)
}

// anyone is whom the examples name when the policy names nobody: an address no policy has.
const anyone = "you@example.com"

func (c *Console) exampleUser() string {
	if c.ExampleUser != "" {
		return c.ExampleUser
	}
	return anyone
}

// exampleLine is a line that works as given on the console's policy.
func (c *Console) exampleLine() string {
	switch {
	case c.ExampleUser == "":
		return anyone + ": /gpu help" // help answers anyone
	case c.ExampleClass == "":
		return c.ExampleUser + ": /gpu request for 2h"
	}
	return fmt.Sprintf("%s: /gpu request 1 %s for 2h", c.ExampleUser, c.ExampleClass)
}

// splitUser splits "alice@acme.example: /gpu list".
func splitUser(line string) (user, text string, ok bool) {
	i := strings.Index(line, ":")
	if i <= 0 {
		return "", "", false
	}
	user = strings.TrimSpace(line[:i])
	if strings.ContainsAny(user, " \t/") || user == "" {
		return "", "", false
	}
	return user, strings.TrimSpace(line[i+1:]), true
}

func (c *Console) control(ctx context.Context, line string) {
	f := strings.Fields(line)
	fail := func(msg string) {
		c.say(bot.Reply{To: "console", Error: true, Text: msg})
	}
	switch strings.ToLower(f[0]) {
	case ":advance", ":wait":
		verb := strings.ToLower(f[0])
		if verb == ":advance" && c.realClock() {
			fail(realClockText)
			return
		}
		if len(f) == 3 {
			if msg, d := policy.DurationSlip(f[1] + " " + f[2]); d > 0 {
				// "- 2h": a minus written apart, refused as -2h is.
				fail(fmt.Sprintf("%s Example: %s %s", msg, verb, policy.FormatDuration(d)))
				return
			}
		}
		if len(f) != 2 {
			fail(fmt.Sprintf("`%s` needs one duration. Example: %s 45m", verb, verb))
			return
		}
		d, err := policy.ParseDuration(f[1])
		if msg, d := policy.DurationSlip(f[1]); d > 0 && (err != nil || d <= 0) {
			// -2h, ٢h: refused for its sign or its digits, as chat refuses them.
			fail(fmt.Sprintf("%s Example: %s %s", msg, verb, policy.FormatDuration(d)))
			return
		}
		if err != nil || d <= 0 {
			fail(fmt.Sprintf("%s is not a duration. Example: %s 45m", policy.Quoted(f[1], 40), verb))
			return
		}
		switch {
		case verb == ":wait" && c.Controls.Wait != nil:
			err = c.Controls.Wait(ctx, d)
		case c.Controls.Advance != nil:
			err = c.Controls.Advance(ctx, d)
		default:
			fail(realClockText)
			return
		}
		if err != nil {
			fail(verb[1:] + " failed: " + err.Error())
		}
	case ":util":
		if c.Controls.Util == nil {
			if c.realClock() {
				fail("`:util` sets a simulated GPU utilization, but this console runs on a real scheduler, whose GPUs' utilization comes from the node agents that report to quartermaster serve (docs/agent.md); let time pass with :wait. Example: :wait 30s")
				return
			}
			fail("this console has no simulated telemetry.")
			return
		}
		if len(f) != 3 {
			fail("`:util` needs a lease and a percentage. Example: :util L-1 0")
			return
		}
		var pct float64
		if _, err := fmt.Sscanf(strings.TrimSuffix(f[2], "%"), "%g", &pct); err != nil || pct < 0 || pct > 100 {
			fail(fmt.Sprintf("%s is not a percentage between 0 and 100. Example: :util L-1 0", policy.Quoted(f[2], 40)))
			return
		}
		if err := c.Controls.Util(ctx, f[1], pct); err != nil {
			fail(err.Error() + " Example: :util L-1 0")
		}
	case ":as":
		if len(f) != 2 {
			fail("`:as` needs a user. Example: :as " + c.exampleUser())
			return
		}
		if !c.known(f[1]) {
			fail(fmt.Sprintf("%s is not in the policy's directory, so every command would be refused; be someone who is, like %s. Example: :as %s",
				policy.Quoted(f[1], 40), policy.JoinList(c.somePeople(3), "or"), c.exampleUser()))
			return
		}
		c.user = f[1]
	case ":now":
		if c.Controls.Now != nil {
			c.say(bot.Reply{To: "console", Text: c.Controls.Now().Format(time.RFC3339)})
		}
	default:
		if c.realClock() {
			fail(fmt.Sprintf("%s is not a console command; on a real scheduler they are :wait, :as and :now. Example: :wait 30s", policy.Quoted(f[0], 40)))
			return
		}
		fail(fmt.Sprintf("%s is not a console command; they are :advance, :wait, :util, :as and :now. Example: :advance 45m", policy.Quoted(f[0], 40)))
	}
}

// realClockText refuses :advance on a console that runs on a real scheduler's clock.
const realClockText = "this console runs on the real clock of a real scheduler, so time cannot be moved; let it pass with :wait. Example: :wait 30s"

// realClock reports whether the console runs on a real scheduler's clock: time passes with
// :wait, and there is no simulated clock to move nor simulated telemetry to set.
func (c *Console) realClock() bool {
	return c.Controls.Advance == nil && c.Controls.Wait != nil
}

// known reports whether the directory lists user (in any case), or there is no directory.
func (c *Console) known(user string) bool {
	if len(c.People) == 0 {
		return true
	}
	for _, p := range c.People {
		if policy.NameKey(p) == policy.NameKey(user) {
			return true
		}
	}
	return false
}

// somePeople are up to n people of the directory, the examples' user first.
func (c *Console) somePeople(n int) []string {
	var out []string
	for _, p := range append([]string{c.ExampleUser}, c.People...) {
		if p != "" && len(out) < n && !slices.ContainsFunc(out, func(o string) bool { return policy.NameKey(o) == policy.NameKey(p) }) {
			out = append(out, p)
		}
	}
	return out
}
