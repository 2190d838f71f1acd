package slack

import (
	"context"
	"strings"
	"sync"

	"github.com/slack-go/slack"

	"github.com/acme/quartermaster/bot"
)

// Home tab budget: a view holds 100 blocks; the leases get most of them.
const (
	homeListBlocks  = 70
	homeQuotaBlocks = 20
)

// homeLock is the publish lock of a user who has opened the Home tab; ok is false for one who
// has not (since this process started), whose tab there is no point refreshing.
func (a *Adapter) homeLock(user string, open bool) (*sync.Mutex, bool) {
	a.homeMu.Lock()
	defer a.homeMu.Unlock()
	mu, ok := a.homes[user]
	if !ok && open {
		mu = &sync.Mutex{}
		a.homes[user] = mu
		ok = true
	}
	return mu, ok
}

// touchedHome refreshes the Home tab of a recipient ("to" is an email) after a message to them.
func (a *Adapter) touchedHome(ctx context.Context, to string) {
	if !strings.Contains(to, "@") {
		return
	}
	if id, ok := a.users.known(to); ok {
		a.publishHome(ctx, id, false)
	}
}

// publishHome builds a user's Home tab (their leases and their team's quota, from "/gpu list"
// and "/gpu quota") and publishes it. opened is true when the user has just opened the tab;
// otherwise only a tab the user has opened before is refreshed.
func (a *Adapter) publishHome(ctx context.Context, user string, opened bool) {
	mu, ok := a.homeLock(user, opened)
	if !ok {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	email, refusal := a.who(ctx, user)
	var blocks []slack.Block
	blocks = append(blocks,
		slack.NewHeaderBlock(plain("Quartermaster")),
		slack.NewActionBlock("home.actions",
			slack.NewButtonBlockElement(actionOpenRequest, "open", plain("Request GPUs")).WithStyle(slack.StylePrimary)),
	)
	if refusal != "" {
		blocks = append(blocks, textBlocks(refusal, nil)...)
	} else {
		blocks = append(blocks, slack.NewHeaderBlock(plain("Your leases")))
		blocks = append(blocks, a.homeSection(ctx, user, email, "/gpu list", "home.list.", homeListBlocks)...)
		blocks = append(blocks, slack.NewDividerBlock(), slack.NewHeaderBlock(plain("Your team's quota")))
		blocks = append(blocks, a.homeSection(ctx, user, email, "/gpu quota", "home.quota.", homeQuotaBlocks)...)
	}
	view := slack.HomeTabViewRequest{Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: versioned(blocks[:min(len(blocks), MaxViewBlocks)], a.version())}}
	err := a.out.retry(ctx, func() error {
		_, err := a.api.PublishViewContext(ctx, slack.PublishViewContextRequest{UserID: user, View: view})
		return err
	})
	if err != nil {
		a.log.Warn("views.publish failed", "user", user, "err", err)
	}
}

// homeSection runs a read-only command as the user and renders its first reply.
func (a *Adapter) homeSection(ctx context.Context, user, email, cmd, prefix string, budget int) []slack.Block {
	rs := a.handle(ctx, bot.Request{User: email, Text: cmd, Account: a.account(user)})
	if len(rs) == 0 {
		return nil
	}
	_, blocks := render(rs[0], budget, prefix, nil)
	return blocks
}
