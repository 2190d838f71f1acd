package oidc_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/oidc/oidctest"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/store/storetest"
)

// TestALinkNoEmailBindsWarnsWhoeverOpensIt: Discord shows an app no email (nor does a Slack
// profile without one), so a link such an account asked for links whoever signs in with it. If
// Mallory passes hers to Alice, Alice must be able to see, before she signs in, that it links a
// chat account that may not be hers, and that its owner would act as her: the page names the
// account and says so, instead of calling it "your Discord account".
func TestALinkNoEmailBindsWarnsWhoeverOpensIt(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t), 0)
	mallory := qm.Account{Platform: "discord", User: "80351110224678912"}
	link := e.link(mallory, "")
	p := oidctest.NewBrowser(t).Get(link)
	if p.Status != http.StatusOK || !p.HasForm() {
		t.Fatalf("the link's page: %d %s", p.Status, p.Body)
	}
	for _, want := range []string{"the Discord account with user id 80351110224678912", "Continue only if you asked for this link yourself",
		"whoever uses that Discord account acts as you"} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("the page does not say %q:\n%s", want, p.Body)
		}
	}
	if strings.Contains(p.Body, "your Discord account") {
		t.Errorf("the page calls a chat account it cannot vouch for yours:\n%s", p.Body)
	}
	// Signed in, the page names the account that was linked.
	e.idp.SignIn(oidctest.NewUser("sub-alice", "alice@acme.example", "ai-vision"))
	done := oidctest.NewBrowser(t).Follow(link)
	if done.Status != http.StatusOK || !strings.Contains(done.Body, "the Discord account with user id 80351110224678912 is linked to it") {
		t.Fatalf("the signed-in page: %d %s", done.Status, done.Body)
	}
}
