package commands

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/internal/store/storetest"
)

// What chat says a lease costs adds up: the cost it gave when the lease was granted and the cost
// of each extension's time added come to the bill it gives when the lease ends. The time added is
// charged as any part of a lease is (what it adds to the lease's bill), not as a lease of its own:
// at 98765.43 JPY per GPU-hour an hour is 98765 JPY, two hours 197531 JPY, so the second hour adds
// 98766 JPY. The same holds for an extension that waits for a budget owner, on its card and in
// what its requester is told once it is approved, from SQLite and PostgreSQL alike.
func TestExtensionCostsAddUpToTheLeasesBill(t *testing.T) {
	amount := regexp.MustCompile(`(\d+) JPY`)
	yen := func(t *testing.T, text, after string) int {
		t.Helper()
		i := strings.Index(text, after)
		if i < 0 {
			t.Fatalf("%q does not say %q", text, after)
		}
		m := amount.FindStringSubmatch(text[i:])
		if m == nil {
			t.Fatalf("%q gives no amount after %q", text, after)
		}
		v, _ := strconv.Atoi(m[1])
		return v
	}
	for _, db := range []struct {
		name string
		url  func(testing.TB) string
	}{{"sqlite", storetest.SQLite}, {"postgres", storetest.Postgres}} {
		t.Run(db.name, func(t *testing.T) {
			extensionCostsAddUp(t, newHarnessOnStore(t, ferroPolicy(t, "JPY", "98765.43"), db.url(t)), yen)
		})
	}
}

func extensionCostsAddUp(t *testing.T, h *harness, yen func(t *testing.T, text, after string) int) {
	r := mustOK(t, h.say("greta@ferro.example", "/gpu request 1 mill for 1h"))
	id := leaseIn(t, r.Text)
	told := yen(t, r.Text, "Estimated cost")
	e := mustOK(t, h.say("greta@ferro.example", "/gpu extend "+id.String()+" 1h"))
	told += yen(t, e.Text, "Estimated cost of the 1h added")

	// Past the mill's 4h: 3h more waits for bruno, whose card says what the time added costs.
	w := mustOK(t, h.say("greta@ferro.example", "/gpu extend "+id.String()+" 3h"))
	ext := leaseIn(t, w.Text[strings.Index(w.Text, " as ")+len(" as "):])
	var card int
	for _, n := range h.notices("bruno@ferro.example") {
		for _, s := range n.Sections {
			for _, f := range s.Fields {
				if f.Label == "Estimated cost" {
					card = yen(t, f.Value, "")
				}
			}
		}
	}
	h.notices("greta@ferro.example")
	mustOK(t, h.say("bruno@ferro.example", "/gpu approve "+ext.String()))
	var approved int
	for _, n := range h.notices("greta@ferro.example") {
		if strings.Contains(n.Text, "was approved by") {
			approved = yen(t, n.Text, "Estimated cost of the 3h added")
		}
	}
	if card != approved {
		t.Errorf("bruno's card says the 3h added cost %d JPY; greta was told %d JPY once he approved", card, approved)
	}
	told += approved

	h.advance(6 * time.Hour)
	var bill int
	for _, n := range h.notices("greta@ferro.example") {
		if strings.Contains(n.Text, "It used") {
			bill = yen(t, n.Text, "It used")
		}
	}
	if bill == 0 {
		t.Fatal("greta was not told the lease's bill when it ended")
	}
	if told != bill {
		t.Errorf("chat gave greta costs adding up to %d JPY (the lease's, then each extension's time added); the lease's bill is %d JPY", told, bill)
	}
}
