package showback_test

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/acme/quartermaster/docs"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/reports/showback"
)

// In a currency whose minor unit is finer than a hundredth (KWD, three decimals) the CSV's cost is
// what the text and chat show, not rounded again to two decimals: ten minutes of train at 3.50 KWD
// per GPU-hour is 0.583 KWD there and in the CSV, so the CSV's rows add up to the costs shown. A
// currency of two or fewer decimals keeps its two (USD 0.68, JPY 151.00).
func TestCSVCostKeepsTheCurrencysMinorUnit(t *testing.T) {
	for _, tc := range []struct{ currency, price, cost string }{
		{"KWD", "3.50", "0.583"},
		{"USD", "3.50", "0.58"},
		{"JPY", "906", "151.00"},
		{"CLF", "3.50", "0.5833"},
	} {
		t.Run(tc.currency, func(t *testing.T) {
			src := strings.Replace(string(docs.ExamplePolicy), "currency: USD", "currency: "+tc.currency, 1)
			src = strings.Replace(src, "price_per_gpu_hour: 3.50", "price_per_gpu_hour: "+tc.price, 1)
			p, err := policy.Load([]byte(src), "p.yaml")
			if err != nil {
				t.Fatal(err)
			}
			w, _ := showback.ParseWeek("2026-W48", showback.Week{})
			from := w.Start(chicago).Add(9 * time.Hour)
			l := &qm.Lease{ID: 1, User: "alice@acme.example", Team: "vision", Class: "train", GPUs: 1, State: qm.Released,
				CreatedAt: from, StartedAt: from, ExpiresAt: from.Add(time.Hour), EndedAt: from.Add(10 * time.Minute)}
			r := showback.Build(showback.Input{Policy: p, Week: w, Now: from.Add(8 * 24 * time.Hour), Leases: []*qm.Lease{l}})
			recs, err := csv.NewReader(bytes.NewReader(r.CSV())).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			var got string
			for _, rec := range recs[1:] {
				if rec[1] == "vision" && rec[2] == "train" {
					got = rec[4]
				}
			}
			if got != tc.cost {
				t.Errorf("the CSV's cost of vision's train is %q, want %q (the text shows %s)", got, tc.cost, r.Money(row(t, r, "vision", "train").Cost))
			}
		})
	}
}
