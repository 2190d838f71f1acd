package commands

import (
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// A team typed with a typo keeps, in the example, the team of the asker's nearest to it (as "did
// you mean" finds one), not the asker's first; /gpu quota of a team with a typo asks whether the
// nearest team of the policy was meant.
func TestATeamWithATypoIsTheNearestInTheExample(t *testing.T) {
	h := kelpOn(t)
	refusedAs(t, h, "mara@kelp.example", "request 1 tidal for 2h team reeef", `There is no team "reeef"`, "request 1 tidal for 2h team reef")
	refusedAs(t, h, "mara@kelp.example", "quota request +2 abyss team reeef because a survey", `There is no team "reeef"`, "quota request +2 abyss team reef because a survey")
	refusedAs(t, h, "mara@kelp.example", "quota reeef", `There is no team "reeef" in the policy; did you mean reef?`, "quota reef")
}

// /gpu submit with a word written as a request writes it (team reef, for 2h, class abyss) is
// told how a job writes it, with the job so written as the example; an empty class=, team=,
// gpus= or for= is refused as empty, with the job without it.
func TestARequestWordInASubmitIsWrittenAsAJobWritesIt(t *testing.T) {
	h := kelpOn(t)
	who := "mara@kelp.example"
	refusedAs(t, h, who, "submit depth-probe size=128 team reef", `"team reef" is how a request names a team; /gpu submit writes team=reef.`, "submit depth-probe size=128 team=reef")
	refusedAs(t, h, who, "submit depth-probe for 2h size=128", `"for 2h" is how a request names the length; /gpu submit writes for=2h.`, "submit depth-probe for=2h size=128")
	refusedAs(t, h, who, "submit depth-probe size=128 class abyss", `"class abyss" is how a request names a class; /gpu submit writes class=abyss.`, "submit depth-probe size=128 class=abyss")
	refusedAs(t, h, who, "submit depth-probe class= size=128", `"class=" gives no class; name one or leave it out.`, "submit depth-probe size=128")
	refusedAs(t, h, who, "submit depth-probe size=128 team=", `"team=" gives no team; name one or leave it out.`, "submit depth-probe size=128")
}

// A /gpu quota request typed with a typo of request (/gpu quota requst …) is refused as that,
// with the quota request as the example, not as /gpu quota given too many words.
func TestAQuotaRequestTypoIsNamed(t *testing.T) {
	h := kelpOn(t)
	refusedAs(t, h, "mara@kelp.example", "quota requst +2 abyss because a survey", `"requst" is not a word of /gpu quota; did you mean /gpu quota request?`, "quota request +2 abyss because a survey")
}

// A request that names the template it names already (template jupyterlab jupyterlab) is told
// it names it twice.
func TestATemplateNamedAgainIsNamedTwice(t *testing.T) {
	h := kelpOn(t)
	refusedAs(t, h, "mara@kelp.example", "request 1 tidal for 2h template lagoon-lab lagoon-lab", `"lagoon-lab" names the request's template again; give it once.`, "request 1 tidal for 2h template lagoon-lab")
}

// A class named where a team goes, without the @ (team tidal, /gpu quota tidal), is said to be a
// class, as its mention is, rather than a team that does not exist.
func TestAClassWhereATeamGoesWithoutTheAtIsSaidToBeAClass(t *testing.T) {
	h := kelpOn(t)
	refusedAs(t, h, "mara@kelp.example", "request 1 tidal for 2h team abyss", `"abyss" is a class, not a team;`, "request 1 abyss for 2h")
	refusedAs(t, h, "mara@kelp.example", "request 1 tidal for 2h team abyss", `"abyss" is a class, not a team; a class is named after the number of GPUs.`, "request 1 abyss for 2h")
	refusedAs(t, h, "mara@kelp.example", "submit depth-probe size=128 team=abyss", `"abyss" is a class, not a team; a job names its class as class=abyss.`, "submit depth-probe size=128 class=abyss")
	refusedAs(t, h, "mara@kelp.example", "quota tidal", `"tidal" is a class, not a team;`, "quota")
}

// A typo of a command this installation offers beyond those every one offers (/gpu reprot, with
// reports on) is answered with the nearest, as a typo of /gpu request is.
func TestATypoOfAnOfferedCommandNamesIt(t *testing.T) {
	h := kelpOn(t)
	AddReport(h.bot, &showback.Service{Policy: h.svc.Policy, Source: h.svc.Store.(qm.ReportStore), Clock: h.clock})
	got := h.say("mara@kelp.example", "/gpu reprot")
	if !got.Error || !strings.Contains(got.Text, `"reprot" is not a /gpu command; the nearest is /gpu report.`) {
		t.Errorf("/gpu reprot answered %q", got.Text)
	}
}

// A request's word typed twice in a row (data silt silt, tidal tidal) is refused as given twice,
// not as a second class.
func TestARequestWordTypedTwiceInARowIsGivenTwice(t *testing.T) {
	h := kelpOn(t)
	refusedAs(t, h, "mara@kelp.example", "request 1 tidal 2h data silt silt", `"silt" is given twice; give it once.`, "request 1 tidal for 2h data silt")
	refusedAs(t, h, "mara@kelp.example", "request 1 tidal tidal 2h", `"tidal" is given twice; give it once.`, "request 1 tidal for 2h")
	refusedAs(t, h, "mara@kelp.example", "request 1 tidal 2h team reef reef", `"reef" is given twice; give it once.`, "request 1 tidal for 2h team reef")
}

// /gpu extend with a second length, or words it does not take after the length, is refused
// naming them, with the lease extended by the first length as the example.
func TestAnExtensionWithWordsAfterItsLengthNamesThem(t *testing.T) {
	h := kelpOn(t)
	if r := h.say("mara@kelp.example", "/gpu request 1 tidal for 2h"); r.Error {
		t.Fatal(r.Text)
	}
	refusedAs(t, h, "mara@kelp.example", "extend L-1 1h 2h", `"1h 2h" gives two lengths; give one.`, "extend L-1 1h")
	refusedAs(t, h, "mara@kelp.example", "extend L-1 by 1h team reef", `"team reef" is not part of /gpu extend, which takes a lease id and how much longer; leave it out.`, "extend L-1 1h")
}

// A quota request's class typed twice (+2 abyss abyss) is refused as given twice, not as a
// length that is none.
func TestAQuotaRequestsClassTypedTwiceIsGivenTwice(t *testing.T) {
	h := kelpOn(t)
	refusedAs(t, h, "mara@kelp.example", "quota request +2 abyss abyss for 1w because a survey", `"abyss" is given twice; give it once.`, "quota request +2 abyss for 7d because a survey")
}

// A class written as a mention where it goes (1 @abyss) is the class without the @, asked about
// as an accented name is, with the command so written as the example.
func TestAClassWithAnAtIsAskedAbout(t *testing.T) {
	h := kelpOn(t)
	who := "mara@kelp.example"
	refusedAs(t, h, who, "request 1 @abyss 2h", `"@abyss" is not a class name; did you mean abyss?`, "request 1 abyss for 2h")
	refusedAs(t, h, who, "quota request +2 @abyss because a survey", `"@abyss" is not a class name; did you mean abyss?`, "quota request +2 abyss because a survey")
}

// A quota request that gives its extra GPUs and no class keeps them in the example; one that
// names its class before them is told to put them first.
func TestAQuotaRequestsExtraGPUsStayInItsExample(t *testing.T) {
	h := kelpOn(t)
	who := "mara@kelp.example"
	refusedAs(t, h, who, "quota request +2 because a survey", "quota request needs +N and a class.", "quota request +2 tidal because a survey")
	refusedAs(t, h, who, "quota request abyss +2 because a survey", `"+2" goes before the class: +N, then the class.`, "quota request +2 abyss because a survey")
}
