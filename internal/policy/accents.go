package policy

import (
	"strings"
	"unicode"
)

// latinLetters maps the accented and joined Latin letters of Latin-1 and Latin Extended-A
// (é, ñ, ø, ß, œ, ł, …) to the letters a to z they are written with where only those are taken.
var latinLetters = func() map[rune]string {
	m := map[rune]string{}
	for base, runes := range map[string]string{
		"a": "àáâãäåāăąÀÁÂÃÄÅĀĂĄ", "c": "çćĉċčÇĆĈĊČ", "d": "ďđðĎĐÐ", "e": "èéêëēĕėęěÈÉÊËĒĔĖĘĚ",
		"g": "ĝğġģĜĞĠĢ", "h": "ĥħĤĦ", "i": "ìíîïĩīĭįıÌÍÎÏĨĪĬĮİ", "j": "ĵĴ", "k": "ķĸĶ",
		"l": "ĺļľŀłĹĻĽĿŁ", "n": "ñńņňŉŋÑŃŅŇŊ", "o": "òóôõöøōŏőÒÓÔÕÖØŌŎŐ", "r": "ŕŗřŔŖŘ",
		"s": "śŝşšſŚŜŞŠ", "t": "ţťŧŢŤŦ", "u": "ùúûüũūŭůűųÙÚÛÜŨŪŬŮŰŲ", "w": "ŵŴ", "y": "ýÿŷÝŶŸ",
		"z": "źżžŹŻŽ", "ae": "æÆ", "oe": "œŒ", "ss": "ß", "th": "þÞ", "ij": "ĳĲ",
	} {
		for _, r := range runes {
			m[r] = base
		}
	}
	return m
}()

// FoldAccents is s with each accented or joined Latin letter written with the letters a to z
// (équipe-vision is equipe-vision, straße strasse) and A to Z in lower case; other characters
// stay as they are. Names in a policy are a to z, so this is the name meant by one typed with
// its accents, also where an accent is typed as a combining mark after its letter (e and U+0301,
// as text copied from macOS often holds é): a combining mark after a letter a to z is left out
// with its accent; a letter of another alphabet that looks Latin (Cyrillic і) is not folded.
func FoldAccents(s string) string {
	var b strings.Builder
	latin := false // the last character written is a letter a to z
	for _, r := range s {
		if latin && unicode.Is(unicode.Mn, r) {
			continue
		}
		if f, ok := latinLetters[r]; ok {
			b.WriteString(f)
			latin = true
			continue
		}
		if r >= 'A' && r <= 'Z' {
			r += 'a' - 'A'
		}
		latin = r >= 'a' && r <= 'z'
		b.WriteRune(r)
	}
	return b.String()
}

// Mentioned is typed without the @ that a chat writes before a mention (@harakeke: a Slack user
// group, or a team written as people are mentioned; a full-width ＠ too), and whether it had one.
func Mentioned(typed string) (string, bool) {
	for _, at := range []string{"@", "\uff20"} {
		if rest, ok := strings.CutPrefix(typed, at); ok && rest != "" {
			return rest, true
		}
	}
	return typed, false
}

// TeamMeant is the team that typed, no team's name or channel as it is written, names with its
// accents put right or written as a mention: a team written without the accents typed
// (santé-données for team sante-donnees, the policy's names being a to z) or without the @ of a
// mention (@harakeke, as a Slack user group is mentioned, for team harakeke), or a channel written
// with accents typed without them (#sante for #santé, which it also returns). "" where there is
// no such team, or more than one.
func (p *Policy) TeamMeant(typed string) (team, channel string) {
	name, mention := Mentioned(typed)
	folded := FoldAccents(name)
	if strings.HasPrefix(typed, "#") {
		for _, t := range p.Teams {
			if t.Channel == "" || ChannelKey(t.Channel) == ChannelKey(typed) || FoldAccents(t.Channel) != folded {
				continue
			}
			if team != "" && team != t.Name {
				return "", "" // two teams' channels alike: which one is meant is unclear
			}
			team, channel = t.Name, t.Channel
		}
		return team, channel
	}
	if !mention && folded == NameKey(typed) {
		return "", "" // no accent to put right
	}
	if t, ok := p.Team(folded); ok {
		return t.Name, ""
	}
	return "", ""
}
