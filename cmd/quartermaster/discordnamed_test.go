package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/acme/quartermaster/bot/discord/gputable"

	"github.com/acme/quartermaster/bot/discord/discordtest"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// typedOptions reads "/gpu deny lease:L-5 reason:REASON" as Discord options.
func typedOptions(args string) []discordtest.Opt {
	var out []discordtest.Opt
	for _, f := range strings.Fields(args) {
		if name, v, ok := strings.Cut(f, ":"); ok {
			out = append(out, opt(name, v))
		} else if len(out) > 0 {
			out[len(out)-1].Value = out[len(out)-1].Value.(string) + " " + f
		}
	}
	return out
}

// TestDiscordNoticesNameCommandsAsDiscordTypesThem: a notice posted on Discord names the
// commands it offers as a Discord user types them, with options (/gpu approve lease:L-5), not
// Slack's words (/gpu approve L-5), which Discord refuses; each one, typed as Discord sends it,
// is accepted.
func TestDiscordNoticesNameCommandsAsDiscordTypesThem(t *testing.T) {
	t.Parallel()
	e := newDiscordEnv(t, storetest.SQLite(t))
	id, _ := discordOverQuota(e)
	toDana, _ := approvalPosts(e, id)
	text := toDana.Text()
	for _, slack := range []string{"/gpu approve " + id, "/gpu deny " + id} {
		if strings.Contains(text, slack) {
			t.Errorf("the approval post names %q, Slack's words: %q", slack, text)
		}
	}
	for _, want := range []string{"/gpu approve lease:" + id, "/gpu deny lease:" + id} {
		if !strings.Contains(text, want) {
			t.Errorf("the approval post does not name %q: %q", want, text)
		}
	}
	// Deny as the post writes it, then approve a second request as it writes that.
	deny := regexp.MustCompile(`/gpu deny ((?:lease|reason):\S+(?: reason:[A-Z]+)?)`).FindStringSubmatch(text)
	if deny == nil {
		t.Fatalf("no /gpu deny in %q", text)
	}
	m := e.command(dDana, "deny", typedOptions(deny[1])...)
	if l := e.lease(id); l.State != qm.Denied {
		t.Fatalf("/gpu deny %s typed as the post names it was answered %q; the lease is %s", deny[1], m.Text(), l.State)
	}
	second := e.command(dAlice, "request", opt("gpus", 1), opt("class", "interactive"), opt("duration", "2h"))
	if !strings.Contains(second.Text(), "waits for approval") {
		t.Fatalf("the second request was answered %q", second.Text())
	}
	id2 := e.leases()[len(e.leases())-1].ID.String()
	toDana, _ = approvalPosts(e, id2)
	approve := regexp.MustCompile(`/gpu approve (lease:\S+?)[,.;]`).FindStringSubmatch(toDana.Text())
	if approve == nil {
		t.Fatalf("no /gpu approve in %q", toDana.Text())
	}
	m = e.command(dDana, "approve", typedOptions(approve[1])...)
	if l := e.lease(id2); l.State == qm.PendingApproval || l.State == qm.Denied {
		t.Fatalf("/gpu approve %s typed as the post names it was answered %q; the lease is %s", approve[1], m.Text(), l.State)
	}
}

// TestDiscordRepliesNameCommandsAsDiscordTypesThem: a reply names commands with their options
// where they take some (a help's examples), and leaves the words around them as they are: prose
// such as an unknown help topic's list of topics, which follows no command.
func TestDiscordRepliesNameCommandsAsDiscordTypesThem(t *testing.T) {
	t.Parallel()
	e := newDiscordEnv(t, storetest.SQLite(t))
	m := e.command(dAlice, "help", opt("command", "extend"))
	if !strings.Contains(m.Text(), "/gpu extend lease:L-42 duration:2h") {
		t.Errorf("/gpu help extend's example is not written with its options: %q", m.Text())
	}
	m = e.do(discordtest.Command(discordtest.Who{User: dAlice, Channel: dChannel, Guild: dGuild}, "gpu", "help", opt("command", "frobnicate")))
	if !strings.Contains(m.Text(), "the help topics are help, catalog, request") || strings.Contains(m.Text(), "command:") {
		t.Errorf("/gpu help frobnicate: %q; want its prose left as it is", m.Text())
	}
}

// usageRE is a command's usage as /gpu help writes it: `/gpu SUB …` — summary.
var usageRE = regexp.MustCompile("`/gpu ([a-z-]+)([^`]*)` — ")

// TestDiscordHelpShowsCommandsAsDiscordTypesThem: /gpu help on Discord shows each command with
// Discord's options (`/gpu request [gpus:GPUS] …`), not Slack's words (`/gpu request [N] [CLASS]
// [for DURATION] …`), which Discord does not take: every word after the subcommand is one of
// its options, each once, the required ones without brackets; /gpu help COMMAND shows it so too.
func TestDiscordHelpShowsCommandsAsDiscordTypesThem(t *testing.T) {
	t.Parallel()
	e := newDiscordEnv(t, storetest.SQLite(t))
	options := map[string]map[string]bool{} // subcommand → option → required
	for _, c := range gputable.Commands(e.app.Bot) {
		options[c.Name] = map[string]bool{}
		for _, o := range c.Options {
			options[c.Name][o.Name] = o.Required
		}
	}
	check := func(what, text string) int {
		t.Helper()
		found := usageRE.FindAllStringSubmatch(text, -1)
		for _, u := range found {
			opts, ok := options[u[1]]
			if !ok {
				t.Errorf("%s shows /gpu %s, which is no subcommand: %q", what, u[1], u[0])
				continue
			}
			seen := map[string]bool{}
			for _, w := range strings.Fields(u[2]) {
				name, _, _ := strings.Cut(strings.Trim(w, "[]"), ":")
				required, ok := opts[name]
				switch {
				case !ok || !strings.Contains(w, ":") || seen[name]:
					t.Errorf("%s shows %q: %q is not an option of /gpu %s written name:VALUE", what, u[0], w, u[1])
				case required == strings.HasPrefix(w, "["):
					t.Errorf("%s shows %q: %q is bracketed as optional or not against its being required (%v)", what, u[0], w, required)
				}
				seen[name] = true
			}
			if len(seen) != len(opts) {
				t.Errorf("%s shows %q: %d of its %d options", what, u[0], len(seen), len(opts))
			}
		}
		return len(found)
	}
	m := e.command(dAlice, "help")
	if n := check("/gpu help", m.Text()); n != len(options) {
		t.Errorf("/gpu help shows %d commands, want %d: %q", n, len(options), m.Text())
	}
	for _, sub := range []string{"request", "quota-request", "deny", "submit"} {
		m := e.command(dAlice, "help", opt("command", sub))
		if n := check("/gpu help "+sub, m.Text()); n != 1 {
			t.Errorf("/gpu help %s: %q", sub, m.Text())
		}
	}
}
