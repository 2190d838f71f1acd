package showback_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// replyText is everything a reply shows: its text, its sections' titles, texts and fields.
func replyText(r bot.Reply) string {
	s := []string{r.Text}
	for _, sec := range r.Sections {
		s = append(s, sec.Title, sec.Text)
		for _, f := range sec.Fields {
			s = append(s, f.Label+": "+f.Value)
		}
	}
	return strings.Join(s, "\n")
}

// oneOf matches a count of one with a plural noun ("1 leases", "1 requests"): a count that
// does not agree with its noun.
var oneOf = regexp.MustCompile(`\b1 (leases|requests|human decisions|multi-GPU leases|GPUs)\b`)

// Every count in the showback agrees with its noun, in the text, the chat post and the budget
// owners' messages: "1 lease", "2 leases", never "lease(s)". One team with one lease that a
// person approved, the other with two leases of which none needed a person.
func TestShowbackCountsAgreeWithTheirNouns(t *testing.T) {
	p := loadBerlin(t)
	w, _ := showback.ParseWeek("2026-W48", showback.Week{})
	from := w.Start(p.Location)
	leases := []*qm.Lease{
		{ID: 1, User: "jana@nordlicht.example", Team: "optik", Class: "a100", GPUs: 2, State: qm.Expired, Rules: "too-many",
			CreatedAt: from.Add(time.Hour), StartedAt: from.Add(2 * time.Hour), ExpiresAt: from.Add(3 * time.Hour), EndedAt: from.Add(3 * time.Hour),
			DecidedBy: "jana@nordlicht.example", DecidedAt: from.Add(2 * time.Hour)},
	}
	for i := range 2 {
		s := time.Duration(i+1) * 5 * time.Hour
		leases = append(leases, &qm.Lease{ID: qm.LeaseID(10 + i), User: "lars@nordlicht.example", Team: "sprache", Class: "a100", GPUs: 1, State: qm.Expired,
			CreatedAt: from.Add(s), StartedAt: from.Add(s), ExpiresAt: from.Add(s + time.Hour), EndedAt: from.Add(s + time.Hour)})
	}
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: from.Add(8 * 24 * time.Hour), Leases: leases})
	texts := map[string]string{"text": r.Text(), "post": replyText(r.Post("#finanzen", nil)), "answer": replyText(r.Answer(nil)),
		"owner": replyText(r.OwnerDM("jana@nordlicht.example", []string{"optik"}))}
	for what, s := range texts {
		if strings.Contains(s, "(s)") {
			t.Errorf("the %s writes a count with (s):\n%s", what, s)
		}
		if m := oneOf.FindAllString(s, -1); m != nil {
			t.Errorf("the %s writes %q:\n%s", what, m, s)
		}
	}
	if line := showback.TouchesLine(r.Teams[0].Summary); !strings.Contains(line, "1 human decision on 1 request, 1 lease") {
		t.Errorf("optik's touches line is %q, want 1 human decision on 1 request, 1 lease", line)
	}
	if line := showback.TouchesLine(r.Total); !strings.Contains(line, "1 human decision on 3 requests, 3 leases") {
		t.Errorf("the total's touches line is %q, want 1 human decision on 3 requests, 3 leases", line)
	}
}
