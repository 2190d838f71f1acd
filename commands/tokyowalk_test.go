package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/bot"
	"github.com/acme/quartermaster/internal/templates"
	"github.com/acme/quartermaster/internal/workload"
	qmtemplates "github.com/acme/quartermaster/templates"
)

const tokyoPolicy = "testdata/tokyo.yaml"

const (
	haru  = "haru@sakura.example"  // proteomics
	kenji = "kenji@sakura.example" // proteomics' budget owner
	maxc  = "max@vendor.example"   // proteomics, a contractor
)

// tokyoHarness is the bot on the Tokyo policy, with the template catalog.
func tokyoHarness(t *testing.T) *harness {
	t.Helper()
	h := newHarnessOn(t, tokyoPolicy)
	cat, err := templates.Load(qmtemplates.FS)
	if err != nil {
		t.Fatal(err)
	}
	AddTemplates(h.bot, cat, workload.Settings{})
	return h
}

// A budget owner's /gpu approvals shows what each request asks that a rule may have read: the
// data class a rule on data classes sent to them, and the template of a job, as the approval
// message does, so that the decision is made on what was asked.
func TestApprovalsShowTheDataClassAndTheTemplateAsked(t *testing.T) {
	h := tokyoHarness(t)
	data := leaseIn(t, mustOK(t, h.say(haru, "/gpu request 1 jupyter for 2h data genomic")).Text).String()
	job := leaseIn(t, mustOK(t, h.say(maxc, "/gpu submit cuda-smoke")).Text).String()
	for _, n := range h.notices(kenji) {
		if strings.Contains(n.Text, "as "+job+".") && !strings.Contains(texts([]bot.Reply{n}), "cuda-smoke") {
			t.Errorf("the approval message of %s does not name its template cuda-smoke: %q", job, texts([]bot.Reply{n}))
		}
	}
	r := mustOK(t, h.say(kenji, "/gpu approvals"))
	want := map[string]string{data: "genomic", job: "cuda-smoke"}
	for _, sec := range r.Sections {
		w, ok := want[sec.Title]
		if !ok {
			continue
		}
		delete(want, sec.Title)
		if !strings.Contains(sec.Text, w) {
			t.Errorf("/gpu approvals shows %s as %q; want it to say %s", sec.Title, sec.Text, w)
		}
	}
	if len(want) > 0 {
		t.Errorf("/gpu approvals lists no %v: %q", want, texts([]bot.Reply{r}))
	}
}

// The approvers of an extension see what it lengthens and what it costs: the lease's GPUs and
// class, and the estimated cost of the time added, in the approval message and in /gpu approvals.
func TestAnExtensionsApproversSeeItsGPUsAndCost(t *testing.T) {
	h := tokyoHarness(t)
	id := leaseIn(t, mustOK(t, h.say(haru, "/gpu request 3 a100-big for 40h")).Text).String()
	r := mustOK(t, h.say(haru, "/gpu extend "+id+" 10h"))
	ext := leaseIn(t, strings.TrimPrefix(r.Text, "Extending "+id)).String()
	const gpus, cost = "3 × a100-big", "14400 JPY" // 3 GPUs × 10h × 480 JPY
	var asked string
	for _, n := range h.notices(kenji) {
		if strings.Contains(n.Text, "as "+ext+".") {
			asked = texts([]bot.Reply{n})
		}
	}
	if !strings.Contains(asked, gpus) || !strings.Contains(asked, cost) {
		t.Errorf("the approval message of %s: %q; want it to name %s and the extension's cost %s", ext, asked, gpus, cost)
	}
	list := texts([]bot.Reply{mustOK(t, h.say(kenji, "/gpu approvals"))})
	if !strings.Contains(list, gpus) || !strings.Contains(list, cost) {
		t.Errorf("/gpu approvals: %q; want %s to name %s and cost %s", list, ext, gpus, cost)
	}
}

// A quota increase nobody decided in time is denied, as a lease is, with the request that asks
// for it again; typed back (or pressed), it asks the budget owners again for the same increase.
func TestAQuotaIncreaseDeniedForTimeoutOffersToAskAgain(t *testing.T) {
	h := tokyoHarness(t)
	const sora = "sora@sakura.example" // vision-lab
	mustOK(t, h.say(sora, "/gpu quota request +2 jupyter for 3d because poster session"))
	h.notices(sora)
	h.advance(9 * time.Hour) // the policy's timeout is 8h
	again := againIn(t, h.notices(sora))
	if again != "/gpu quota request +2 jupyter for 3d because poster session" {
		t.Fatalf("Request again of a quota increase denied for timeout is %q", again)
	}
	r := mustOK(t, h.say(sora, again))
	if !strings.Contains(r.Text, "+2 jupyter GPUs for team vision-lab for 3d") {
		t.Errorf("%s: %q; want the same increase asked again", again, r.Text)
	}
}

// tokyoWith is the Tokyo policy with each old text replaced by its new one, as a file.
func tokyoWith(t *testing.T, pairs ...string) string {
	t.Helper()
	b, err := os.ReadFile(tokyoPolicy)
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	for i := 0; i+1 < len(pairs); i += 2 {
		if !strings.Contains(src, pairs[i]) {
			t.Fatalf("no %q in %s", pairs[i], tokyoPolicy)
		}
		src = strings.Replace(src, pairs[i], pairs[i+1], 1)
	}
	f := filepath.Join(t.TempDir(), "tokyo.yaml")
	if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// A rule that reads team.budget_owners sees them as it sees user.name, in lower case: a budget
// owner the policy writes with capitals (Kenji@Sakura.example) is matched by the rule
// user.name in team.budget_owners, and their large request waits for another approver rather
// than starting at once.
func TestARuleSeesBudgetOwnersAsItSeesUserNames(t *testing.T) {
	h := newHarnessOn(t, tokyoWith(t,
		"budget_owners: [kenji@sakura.example]", "budget_owners: [Kenji@Sakura.example]",
		"approvals:\n", "  - name: owners-big\n    when: user.name in team.budget_owners && request.gpus > 2\n    why: A budget owner's large request needs another approver\napprovals:\n"))
	r := h.say(kenji, "/gpu request 3 a100-big for 1h")
	if r.Error || !strings.Contains(r.Text, "waits for approval") || !strings.Contains(r.Text, "owners-big") {
		t.Errorf("kenji asking for 3 a100-big: %q; want it to wait for approval under owners-big", r.Text)
	}
}

// A request refused for want of weekly GPU-hours shows a quota request that, approved, lets it
// start: late in the week an increase of one GPU adds only the hours left until Monday, so the
// example asks for as many GPUs as the hours it needs take.
func TestTheWeeklyHoursRefusalAsksForEnoughGPUsLateInTheWeek(t *testing.T) {
	h := newHarnessOn(t, tokyoWith(t, "  - name: past-quota\n", "  - name: past-quota-off\n",
		"usage.gpus_in_use + request.gpus > team.quota.gpus[class.name] || usage.gpu_hours_week + request.gpu_hours > team.quota.gpu_hours_per_week",
		"false"))
	const sora, yuki = "sora@sakura.example", "yuki@sakura.example" // vision-lab: 40 GPU-hours a week
	mustOK(t, h.say(sora, "/gpu request 4 a100-big for 10h"))
	h.advance(143 * time.Hour) // Sunday 23:00 in Tokyo
	const ask = "/gpu request 1 jupyter for 2h"
	r := h.say(sora, ask)
	_, ex, _ := strings.Cut(r.Text, " Example: ")
	if !r.Error || !strings.HasPrefix(ex, "/gpu quota request ") {
		t.Fatalf("%s with no GPU-hours left: %q; want it refused with a quota request", ask, r.Text)
	}
	q := mustOK(t, h.say(sora, ex))
	mustOK(t, h.say(yuki, "/gpu approve "+leaseIn(t, q.Text).String()))
	if r := h.say(sora, ask); r.Error {
		t.Errorf("%s after %s was approved: %q", ask, ex, r.Text)
	}
}

// The approval message, updated in place with the decision, still says what was asked: the data
// class and the template stay on it.
func TestTheDecidedApprovalMessageKeepsTheDataClassAndTemplate(t *testing.T) {
	h := tokyoHarness(t)
	data := leaseIn(t, mustOK(t, h.say(haru, "/gpu request 1 jupyter for 2h data genomic")).Text).String()
	job := leaseIn(t, mustOK(t, h.say(maxc, "/gpu submit cuda-smoke")).Text).String()
	h.notices(kenji)
	mustOK(t, h.say(kenji, "/gpu approve "+data))
	mustOK(t, h.say(kenji, "/gpu deny "+job+" not this week"))
	want := map[string]string{data: "data class genomic", job: "template cuda-smoke"}
	for _, n := range h.notices(kenji) {
		if !n.Update {
			continue
		}
		for id, w := range want {
			if n.Ref == "approval:"+id {
				if !strings.Contains(texts([]bot.Reply{n}), w) {
					t.Errorf("the decided approval message of %s: %q; want it to keep %s", id, texts([]bot.Reply{n}), w)
				}
				delete(want, id)
			}
		}
	}
	if len(want) > 0 {
		t.Errorf("no updated approval message for %v", want)
	}
}

// Where nobody can decide a team's exceptions (no budget owners, no fallback approvers), a
// request that needs approval is refused at once, in words that agree with the number of rules
// met, and with an example that works when typed: an extension that stays within the class's
// limits, and the team's quota rather than another quota request that would be refused alike.
func TestRefusalsWhereNobodyDecidesShowExamplesThatWork(t *testing.T) {
	h := newHarnessOn(t, tokyoWith(t, "  fallback_approvers: [infra@sakura.example]\n", ""))
	const rin = "rin@sakura.example" // speech: no budget owners
	r := h.say(rin, "/gpu request 2 jupyter for 1h")
	if !r.Error || !strings.Contains(r.Text, "(Beyond the team's quota) need a budget owner's approval") {
		t.Errorf("a request meeting two rules nobody can decide: %q; want the rules ... need a budget owner's approval", r.Text)
	}
	id := leaseIn(t, mustOK(t, h.say(rin, "/gpu request 1 jupyter for 5h")).Text).String()
	for _, ask := range []string{"/gpu extend " + id + " 3h", "/gpu quota request +1 jupyter because a workshop"} {
		before := h.leaseCount()
		r := h.say(rin, ask)
		_, ex, _ := strings.Cut(r.Text, " Example: ")
		if !r.Error || ex == "" {
			t.Errorf("%s: %q; want it refused with an example", ask, r.Text)
			continue
		}
		if n := h.leaseCount(); n != before {
			t.Errorf("%s made %d request(s)", ask, n-before)
		}
		if again := h.say(rin, ex); again.Error {
			t.Errorf("%s: refused with the example %s, which is refused too: %q", ask, ex, again.Text)
		}
	}
}

// An extension refused for its length (none, or more than 30 days) shows an example with the
// lease typed, which works when typed back, rather than a lease of nobody's.
func TestAnExtensionOfNoLengthShowsAnExampleWithItsLease(t *testing.T) {
	h := tokyoHarness(t)
	id := leaseIn(t, mustOK(t, h.say(haru, "/gpu request 1 jupyter for 3h")).Text).String()
	for _, ask := range []string{"/gpu extend " + id + " 0", "/gpu extend " + id + " 31d"} {
		r := h.say(haru, ask)
		_, ex, _ := strings.Cut(r.Text, " Example: ")
		if !r.Error || !strings.HasPrefix(ex, "/gpu extend "+id+" ") {
			t.Errorf("%s: %q; want it refused with an extension of %s as the example", ask, r.Text, id)
			continue
		}
		if again := h.say(haru, ex); again.Error {
			t.Errorf("%s: the example %s is refused too: %q", ask, ex, again.Text)
		}
	}
}
