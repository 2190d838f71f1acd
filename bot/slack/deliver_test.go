package slack_test

import (
	"bytes"
	"context"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	slackbot "github.com/acme/quartermaster/bot/slack"
	"github.com/acme/quartermaster/docs"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
	"github.com/acme/quartermaster/reports/showback"
)

func newDeliverer(t *testing.T, f *fakeSlack) *slackbot.Adapter {
	t.Helper()
	a, err := slackbot.New(slackbot.Config{BotToken: "xoxb-test", SigningSecret: secret, APIURL: f.apiURL(),
		Handler: bot.HandlerFunc(func(context.Context, bot.Request) []bot.Reply { return nil }),
		Logger:  storetest.Logger(t), ChannelInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = a.Close(ctx)
	})
	return a
}

// weekReport is a small showback of 2026-W48 on the example policy.
func weekReport(t *testing.T) *showback.Report {
	t.Helper()
	p, err := policy.Load(docs.ExamplePolicy, docs.ExamplePolicyName)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := showback.ParseWeek("2026-W48", showback.Week{})
	from := w.Start(p.Location)
	ls := []*qm.Lease{
		{ID: 1, User: "alice@acme.example", Team: "vision", Class: "train", GPUs: 8, State: qm.Expired, CreatedAt: from, StartedAt: from, ExpiresAt: from.Add(10 * time.Hour), EndedAt: from.Add(10 * time.Hour)},
		{ID: 2, User: "maya@acme.example", Team: "language", Class: "interactive", GPUs: 1, State: qm.Released, CreatedAt: from, StartedAt: from, ExpiresAt: from.Add(8 * time.Hour), EndedAt: from.Add(3 * time.Hour)},
	}
	usage := []qm.UsageRollup{{Lease: 1, Hour: from.Add(time.Hour), GPUSeconds: 8 * 3600, IdleGPUSeconds: 2 * 3600, UtilSum: 3000, Samples: 100}}
	return showback.Build(showback.Input{Policy: p, Week: w, Now: from.Add(8 * 24 * time.Hour), Leases: ls, Usage: usage})
}

// The weekly post lands in the showback channel as Block Kit, and its chart and CSV arrive through
// Slack's upload API: each announced with files.getUploadURLExternal, sent whole to the URL it
// gave, then shared together in the post's channel with files.completeUploadExternal.
func TestShowbackPostArrivesWithItsChartAndCSV(t *testing.T) {
	f := newFakeSlack(t)
	a := newDeliverer(t, f)
	r := weekReport(t)
	chart, err := r.PNG()
	if err != nil {
		t.Fatal(err)
	}
	post := r.Post("#gpu-showback", chart)
	if err := a.Deliver(t.Context(), post); err != nil {
		t.Fatal(err)
	}
	posts, _, _, _ := f.snapshot()
	if len(posts) != 1 || posts[0].Channel != "CGPUSHOWBACK" {
		t.Fatalf("posts = %+v, want one in #gpu-showback", posts)
	}
	blocks := textIn(posts[0].Blocks)
	for _, want := range []string{"GPU showback", "2026-W48", "*This week*", "*Top teams by cost*", "1. vision", "*Every team*", "language:", "*Idle*"} {
		if !strings.Contains(blocks, want) {
			t.Errorf("the post lacks %q: %s", want, blocks)
		}
	}
	uploads, shares := f.files()
	if len(uploads) != 2 || len(shares) != 1 {
		t.Fatalf("%d uploads and %d shares, want 2 and 1", len(uploads), len(shares))
	}
	byName := map[string]upload{}
	for _, u := range uploads {
		byName[u.Name] = u
	}
	pngUp, csvUp := byName["showback-2026-W48.png"], byName["showback-2026-W48.csv"]
	if !bytes.Equal(pngUp.Content, chart) || pngUp.Uploaded != "showback-2026-W48.png" {
		t.Errorf("the chart arrived as %q with %d bytes, want %d", pngUp.Uploaded, len(pngUp.Content), len(chart))
	}
	if _, err := png.Decode(bytes.NewReader(pngUp.Content)); err != nil {
		t.Errorf("the uploaded chart is not a PNG: %v", err)
	}
	if !bytes.Equal(csvUp.Content, r.CSV()) || !strings.HasPrefix(string(csvUp.Content), "week,team,class,gpu_hours,cost,idle_gpu_hours,reclaimed_gpu_hours,leases") {
		t.Errorf("the CSV arrived as %q", csvUp.Content)
	}
	sh := shares[0]
	if sh.Channel != "CGPUSHOWBACK" || len(sh.Files) != 2 {
		t.Fatalf("share = %+v, want both files in the post's channel", sh)
	}
	titles := sh.Files[0].Title + " | " + sh.Files[1].Title
	if !strings.Contains(titles, "GPU-hours and idle GPU-hours per team, 2026-W48") || !strings.Contains(titles, "per team and class") {
		t.Errorf("shared titles %q", titles)
	}
}

// A budget owner's DM is retried after HTTP 429, on the post and on the upload alike, and arrives
// once; a delivery whose caller gave up before its turn sends nothing.
func TestDeliverRetriesAfterRateLimitsAndSendsOnce(t *testing.T) {
	f := newFakeSlack(t)
	a := newDeliverer(t, f)
	r := weekReport(t)
	dm := r.OwnerDM("dana@acme.example", []string{"vision"})
	dm.Files = r.Files(nil) // the CSV alone
	f.limit("chat.postMessage", 1)
	f.limit("files.getUploadURLExternal", 1)
	if err := a.Deliver(t.Context(), dm); err != nil {
		t.Fatal(err)
	}
	posts, _, _, _ := f.snapshot()
	if len(posts) != 1 || posts[0].Channel != "DUDANA" || !strings.Contains(posts[0].Text, "team vision used 80.00 GPU-hours") {
		t.Fatalf("posts = %+v, want one DM to dana", posts)
	}
	if uploads, shares := f.files(); len(uploads) != 1 || len(shares) != 1 || shares[0].Channel != "DUDANA" {
		t.Fatalf("uploads %+v, shares %+v: want the CSV once in dana's DM", uploads, shares)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := a.Deliver(ctx, r.OwnerDM("lee@acme.example", []string{"language"})); err == nil {
		t.Fatal("a cancelled delivery reported success")
	}
	if err := a.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	if posts, _, _, _ := f.snapshot(); len(posts) != 1 {
		t.Fatalf("a delivery its caller gave up on was posted: %+v", posts[1:])
	}
}

// A 429 without a Retry-After header (a proxy in front of Slack may drop it) still means Slack
// took nothing: the notice is posted once, after a pause, instead of being lost.
func TestA429WithoutRetryAfterIsStillRetried(t *testing.T) {
	f := newFakeSlack(t)
	f.bareLimits = true
	a := newDeliverer(t, f)
	f.limit("chat.postMessage", 1)
	if err := a.Send(t.Context(), bot.Reply{To: "#kelp-forest", Text: "L-3 waits for tane@harbor.example"}); err != nil {
		t.Fatalf("the notice was given up after one 429: %v", err)
	}
	posts, _, _, _ := f.snapshot()
	if len(posts) != 1 || posts[0].Channel != "CKELPFOREST" || posts[0].Text != "L-3 waits for tane@harbor.example" {
		t.Fatalf("posts = %+v, want the notice once in #kelp-forest", posts)
	}
}
