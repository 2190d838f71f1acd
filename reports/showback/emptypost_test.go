package showback_test

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/reports/showback"
)

// The weekly channel post of a week in which nobody held a GPU read "0.00 GPU-hours, 0.000 BHD,
// n/a of it idle." and "Idle: 0.00 GPU-hours, n/a of GPU-hours": a share of nothing, where the
// text report, the chat answer and the chart of the same week say that no GPUs were used. The post
// says so too.
func TestTheChannelPostOfAnEmptyWeekSaysNoGPUsWereUsed(t *testing.T) {
	p := oddPolicy(t, oddCase{zone: "Australia/Lord_Howe", currency: "BHD", price: "0.4375"})
	w, _ := showback.ParseWeek("2026-W40", showback.Week{})
	r := showback.Build(showback.Input{Policy: p, Week: w, Now: w.Start(p.Location).AddDate(0, 0, 8)})
	post := r.Post("#showback", nil)
	text := post.PlainText()
	if strings.Contains(text, "n/a") || !strings.Contains(post.Text, "no GPUs used") || !strings.Contains(text, "no GPUs used, so none idle") {
		t.Errorf("the post of an empty week:\n%s\nwant it to say no GPUs used, so none idle, and no n/a", text)
	}
}
