package slack

import "strings"

// unescapeSent turns Slack's escapes back into the characters people typed.
var unescapeSent = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">")

// typed is the text of a slash command as the person typed it, from the text Slack sent. Slack
// escapes the &, < and > people type (as &amp; &lt; &gt;), so a < in what it sends always opens
// something Slack made: a mention or a link, written <TARGET> or <TARGET|LABEL>. Each becomes
// what Slack showed the person: a user, a user group or a channel as @name or #name (the id when
// Slack gave no name), @channel, @here and @everyone as such, a link as its text or its address
// (an email, from <mailto:ann@example.com|ann@example.com>, as ann@example.com). The escapes are
// undone once, so "&amp;lt;" someone typed as "&lt;" stays "&lt;".
func typed(sent string) string {
	if !strings.ContainsAny(sent, "<&") {
		return sent
	}
	var b strings.Builder
	for {
		open := strings.IndexByte(sent, '<')
		if open < 0 {
			break
		}
		end := strings.IndexByte(sent[open:], '>')
		if end < 0 {
			break
		}
		b.WriteString(unescapeSent.Replace(sent[:open]))
		b.WriteString(shown(sent[open+1 : open+end]))
		sent = sent[open+end+1:]
	}
	b.WriteString(unescapeSent.Replace(sent))
	return b.String()
}

// shown is what Slack shows for the inside of a <…> it made.
func shown(token string) string {
	target, label, _ := strings.Cut(token, "|")
	label = unescapeSent.Replace(label)
	switch {
	case strings.HasPrefix(target, "@"): // a user: <@U123|name>
		if label != "" {
			return "@" + strings.TrimPrefix(label, "@")
		}
		return target
	case strings.HasPrefix(target, "#"): // a channel: <#C123|name>
		if label != "" {
			return "#" + strings.TrimPrefix(label, "#")
		}
		return target
	case strings.HasPrefix(target, "!"): // <!here>, <!subteam^S123|@team>, <!date^…|fallback>
		kind, id, _ := strings.Cut(target[1:], "^")
		switch {
		case kind == "here" || kind == "channel" || kind == "everyone":
			return "@" + kind
		case kind == "subteam" && label != "":
			return "@" + strings.TrimPrefix(label, "@")
		case kind == "subteam":
			return "@" + id
		case label != "":
			return label
		}
		return target
	case label != "": // a link with its text: <https://x|x>, <mailto:a@b|a@b>
		return label
	}
	return unescapeSent.Replace(strings.TrimPrefix(target, "mailto:"))
}
