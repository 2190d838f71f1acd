package slack

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/slack-go/slack"
)

// blockRefusals are Slack's answers to a message it will not take for its blocks or its size:
// sending the same message again fails the same way, but its plain text alone goes through.
var blockRefusals = []string{"invalid_blocks", "invalid_blocks_format", "invalid_arguments", "msg_too_long", "msg_blocks_too_long", "too_many_blocks"}

// refusedBlocks reports whether err is Slack refusing a message for its blocks, with what Slack
// said. A response_url answers such a message with HTTP 400 and no code slack-go reads: that is
// taken as the same refusal (an expired or used response_url answers 404 instead).
func refusedBlocks(err error) (string, bool) {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		return se.Err, slices.Contains(blockRefusals, se.Err)
	}
	var sc slack.StatusCodeError
	if errors.As(err, &sc) {
		return sc.Status, sc.Code == http.StatusBadRequest
	}
	if err != nil && slices.Contains(blockRefusals, err.Error()) {
		return err.Error(), true // a response_url's plain-text answer
	}
	return "", false
}

// sendMessage sends a message (text beside its blocks) with send, retried after HTTP 429; when
// Slack refuses the blocks, it sends the text alone instead, so that the message still arrives
// without its layout and buttons, and logs the refusal once. With textOnly it sends the text
// alone from the start: the blocks were refused already. It reports whether the blocks were
// refused.
func (a *Adapter) sendMessage(ctx context.Context, to, text string, blocks []slack.Block, textOnly bool, send func(...slack.MsgOption) error) (bool, error) {
	if !textOnly {
		err := a.out.retry(ctx, func() error { return send(slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...)) })
		code, refused := refusedBlocks(err)
		if !refused || len(blocks) == 0 {
			return false, err
		}
		a.log.Warn("Slack refused a message's blocks; it is sent as plain text, without its layout and buttons", "to", to, "slack_error", code, "blocks", len(blocks))
	}
	return true, a.out.retry(ctx, func() error { return send(slack.MsgOptionText(text, false)) })
}
