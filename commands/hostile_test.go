package commands

import (
	"context"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// leaseCount is how many leases the service holds, in any state.
func (h *harness) leaseCount() int {
	h.t.Helper()
	ls, err := h.svc.List(context.Background(), qm.LeaseFilter{})
	if err != nil {
		h.t.Fatal(err)
	}
	return len(ls)
}

// refusedWithAWorkingExample checks that line is refused in one sentence saying want, with an
// example, and that nothing is made; then that the example works.
func refusedWithAWorkingExample(t *testing.T, h *harness, user, line, want string) {
	t.Helper()
	before := h.leaseCount()
	r := h.say(user, line)
	msg, ex, ok := strings.Cut(r.Text, " Example: ")
	if !r.Error || !ok || !strings.Contains(msg, want) || strings.Contains(msg, ". ") || len(r.Text) > 300 {
		t.Errorf("%.80q: %.300q; want one sentence saying %q and an example", line, r.Text, want)
		return
	}
	if n := h.leaseCount(); n != before {
		t.Errorf("%.80q was refused but made %d lease(s)", line, n-before)
	}
	if r := h.say(user, ex); r.Error {
		t.Errorf("%.80q: its example %q is refused: %s", line, ex, r.Text)
	}
}

// A request that names its team, template or data class twice, or a submit that gives team=,
// for=, class= or gpus= twice, is refused rather than charged, run or sized by whichever came
// last: someone in two teams who writes "team robotics … team speech" is told, not charged to
// speech.
func TestACommandThatNamesSomethingTwiceIsRefused(t *testing.T) {
	h := templatesOn(t, policyVariant(t, otherPolicy,
		"{user: rita@borealis.example, groups: [grp-robotics]}", "{user: rita@borealis.example, groups: [grp-robotics, grp-speech]}"))
	for line, want := range map[string]string{
		"/gpu request 1 dev for 1h team robotics team speech":                     "names its team twice",
		"/gpu request 1 dev for 1h team speech team speech":                       "names its team twice",
		"/gpu request 1 dev for 1h data open data secret":                         "names its data class twice",
		"/gpu request 1 dev for 1h template jupyterlab template ssh-shell":        "names its template twice",
		"/gpu submit cuda-smoke team=robotics team=speech":                        "gives team= twice",
		"/gpu submit cuda-smoke for=1h for=2h":                                    "gives for= twice",
		"/gpu submit cuda-smoke class=dev class=bigiron":                          "gives class= twice",
		"/gpu submit cuda-smoke gpus=1 gpus=2":                                    "gives gpus= twice",
		"/gpu request 1 dev for 1h template cuda-smoke team speech team robotics": "names its team twice",
	} {
		refusedWithAWorkingExample(t, h, "rita@borealis.example", line, want)
	}
}

// Class and team names in commands compare as everywhere else (policy.SameName): the same text,
// upper and lower case of A to Z aside. A letter that only looks like one (a dotted capital İ, a
// Kelvin sign for a K) names no class or team, as a Cyrillic one does not; a team that is no
// name at all (markup, 5,000 characters) is refused in a short sentence, not echoed back.
func TestClassAndTeamNamesInCommandsCompareOnlyAToZCase(t *testing.T) {
	h := templatesOn(t, policyVariant(t, otherPolicy, "  - name: dev\n", "  - name: kdev\n",
		"{gpus: {dev: 1,", "{gpus: {kdev: 1,", "{gpus: {dev: 6,", "{gpus: {kdev: 6,", "{gpus: {dev: 6,", "{gpus: {kdev: 6,",
		"{gpus: {dev: 2,", "{gpus: {kdev: 2,", "class: dev,", "class: kdev,"))
	rita := "rita@borealis.example"
	for line, want := range map[string]string{
		"/gpu request 1 b\u0130giron for 1h":                           "class",
		"/gpu request 1 \u212adev for 1h":                              "class",
		"/gpu estimate 1 b\u0130giron 1h":                              "class",
		"/gpu quota request +1 \u212adev because a deadline":           "class",
		"/gpu request 1 kdev for 1h team robot\u0130cs":                "team",
		"/gpu submit cuda-smoke class=\u212adev":                       "class",
		"/gpu submit cuda-smoke team=robot\u0130cs":                    "team",
		"/gpu request 1 kdev for 1h team " + strings.Repeat("r", 5000): "is not a team name",
		"/gpu request 1 kdev for 1h team <!channel>":                   "is not a team name",
		"/gpu submit cuda-smoke team=" + strings.Repeat("r", 5000):     "is not a team name",
	} {
		refusedWithAWorkingExample(t, h, rita, line, want)
	}
	for _, line := range []string{"/gpu quota robot\u0130cs", "/gpu quota " + strings.Repeat("q", 5000)} {
		if r := h.say(rita, line); !r.Error || strings.Contains(r.Text, "Team robotics") || len(r.Text) > 300 {
			t.Errorf("%.40q: %.300q; want a short refusal", line, r.Text)
		}
	}
	// Upper case A to Z still names them.
	for _, line := range []string{"/gpu request 1 KDEV for 1h TEAM ROBOTICS", "/gpu estimate 1 BigIron 1h", "/gpu submit cuda-smoke class=KDEV team=Robotics"} {
		if r := h.say(rita, line); r.Error {
			t.Errorf("%s: %s", line, r.Text)
		}
	}
	if r := h.say(rita, "/gpu quota ROBOTICS"); r.Error || !strings.Contains(r.Text, "Team robotics") {
		t.Errorf("/gpu quota ROBOTICS: %s", r.Text)
	}
}

// Characters that do not show (a zero-width space or joiner, a byte order mark, a soft hyphen,
// the bidirectional controls) and control characters, pasted into a command with a name, are not
// part of what was typed: a command reads as it shows. Before, "robo<ZWSP>tics" was refused as
// `"robotics" is not a team name`, which names the very team that was meant; a right-to-left
// override that shows "scitobor" as "robotics" is read as the letters it holds, and refused
// quoting them.
func TestCharactersThatDoNotShowAreNotPartOfACommand(t *testing.T) {
	rita := "rita@borealis.example"
	for _, line := range []string{
		"/gpu request 1 d\u200bev for 1h team robo\u200btics",
		"/gpu request 1 \u202adev\u202c for 1h team \ufeffrobotics",
		"/gpu request 1 dev\u00ad for 1\u200dh team robotics\u0007",
		"/gpu request\u2060 1 dev for 1h team rob\u200cotics",
		"/gpu req\u200buest 1 d\u200eev for 1h",
	} {
		h := templatesOn(t, otherPolicy)
		if r := h.say(rita, line); r.Error || !strings.Contains(r.Text, "L-1 is active") {
			t.Errorf("%q: %s; want it granted as typed without the characters that do not show", line, r.Text)
		}
		if r := h.say(rita, "/gpu status L-\u200b1"); r.Error || !strings.Contains(r.Text, "L-1") {
			t.Errorf("/gpu status L-<ZWSP>1 after %q: %s", line, r.Text)
		}
	}
	h := templatesOn(t, otherPolicy)
	refusedWithAWorkingExample(t, h, rita, "/gpu request 1 dev for 1h team \u202escitobor", `no team "scitobor"`)
	refusedWithAWorkingExample(t, h, rita, "/gpu request 1 \u202evedgib for 1h", `"vedgib"`)
}

// A number of GPUs written as no plain whole number (hexadecimal 0x10, 1_000, 2k) is refused as
// that (the Arabic-Indic ٢ for its digits), not read as a class: before, "0x10 dev" was answered
// `"dev" is not part of a request; the class is already 0x10`.
func TestANumberOfGPUsThatIsNoWholeNumberIsRefusedAsOne(t *testing.T) {
	h := templatesOn(t, otherPolicy)
	for _, n := range []string{"0x10", "0b11", "1_000", "2k", "+-2"} {
		refusedWithAWorkingExample(t, h, "rita@borealis.example", "/gpu request "+n+" dev for 1h", policy.Quoted(n, 40)+" is not a whole number of GPUs")
		refusedWithAWorkingExample(t, h, "rita@borealis.example", "/gpu estimate "+n+" dev 1h", policy.Quoted(n, 40)+" is not a whole number of GPUs")
	}
	// The Arabic-Indic ٢ is refused for its digits, naming the number in 0-9.
	refusedWithAWorkingExample(t, h, "rita@borealis.example", "/gpu request \u0662 dev for 1h", "\"\u0662\" is written with digits other than 0-9; write the number with the digits 0-9: 2.")
	refusedWithAWorkingExample(t, h, "rita@borealis.example", "/gpu estimate \u0662 dev 1h", "\"\u0662\" is written with digits other than 0-9; write the number with the digits 0-9: 2.")
}
