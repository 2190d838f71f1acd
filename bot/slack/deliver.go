package slack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/policy"
)

var _ bot.Deliverer = (*Adapter)(nil)

// Deliver posts r to its recipient (a #channel, or a person's DM by email) and uploads its files
// to the same conversation, and returns only once Slack has taken all of it, or failed. It waits
// its turn behind the other messages to that recipient (about one a second per channel) and
// retries after HTTP 429, as Send does; unlike Send it reports the outcome, for scheduled posts
// that record each message as it goes out. Files go through Slack's current upload API:
// files.getUploadURLExternal for each, the upload itself, then files.completeUploadExternal to
// share them all in the conversation at once.
func (a *Adapter) Deliver(ctx context.Context, r bot.Reply) error {
	if r.To == "" {
		return errors.New("slack: a message without a recipient")
	}
	done := make(chan error, 1)
	to := r.To
	a.out.Push(a.base, policy.NameKey(to), func(context.Context) {
		if err := ctx.Err(); err != nil {
			done <- err // the caller gave up while it waited its turn: send nothing
			return
		}
		done <- a.deliver(ctx, to, r)
	})
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (a *Adapter) deliver(ctx context.Context, to string, r bot.Reply) error {
	channel, err := a.channelFor(ctx, to)
	if err != nil {
		return fmt.Errorf("slack: cannot reach %s: %w", to, a.unreachable(to, err))
	}
	text, blocks := Render(r, MaxMessageBlocks)
	var ch, ts string
	_, err = a.sendMessage(ctx, to, text, blocks, false, func(opts ...slack.MsgOption) error {
		var err error
		ch, ts, err = a.api.PostMessageContext(ctx, channel, opts...)
		return err
	})
	if err != nil {
		return fmt.Errorf("slack: chat.postMessage to %s: %w", to, a.unreachable(to, err))
	}
	if r.Ref != "" {
		if err := a.refs.SaveMessageRef(ctx, bot.MessageRef{Ref: r.Ref, Recipient: policy.NameKey(to), Channel: ch, MessageID: ts}); err != nil {
			a.log.Error("cannot remember a posted message", "ref", r.Ref, "channel", ch, "ts", ts, "err", err)
		}
	}
	if len(r.Files) > 0 {
		if err := a.upload(ctx, ch, r.Files, filesComment(r)); err != nil {
			return fmt.Errorf("slack: upload to %s: %w", to, err)
		}
	}
	a.touchedHome(ctx, to)
	return nil
}

// filesComment is the line that goes with a message's files.
func filesComment(r bot.Reply) string {
	var names []string
	for _, f := range r.Files {
		names = append(names, f.Title)
	}
	return safe(strings.Join(names, "; "), maxFallbackText)
}

// upload sends files to a conversation (a channel id) and shares them there together.
func (a *Adapter) upload(ctx context.Context, channel string, files []bot.File, comment string) error {
	var shared []slack.FileSummary
	for _, f := range files {
		if len(f.Content) == 0 {
			continue
		}
		var u *slack.GetUploadURLExternalResponse
		err := a.out.retry(ctx, func() error {
			var err error
			u, err = a.api.GetUploadURLExternalContext(ctx, slack.GetUploadURLExternalParameters{FileName: f.Name, FileSize: len(f.Content), AltTxt: clip(f.Title, 1000)})
			return err
		})
		if err != nil {
			return fmt.Errorf("files.getUploadURLExternal for %s: %w", f.Name, err)
		}
		err = a.out.retry(ctx, func() error {
			return a.api.UploadToURL(ctx, slack.UploadToURLParameters{UploadURL: u.UploadURL, Reader: bytes.NewReader(f.Content), Filename: f.Name})
		})
		if err != nil {
			return fmt.Errorf("uploading %s: %w", f.Name, err)
		}
		shared = append(shared, slack.FileSummary{ID: u.FileID, Title: f.Title})
	}
	if len(shared) == 0 {
		return nil
	}
	return a.out.retry(ctx, func() error {
		_, err := a.api.CompleteUploadExternalContext(ctx, slack.CompleteUploadExternalParameters{Files: shared, Channel: channel, InitialComment: comment})
		if err != nil {
			return fmt.Errorf("files.completeUploadExternal: %w", err)
		}
		return nil
	})
}
