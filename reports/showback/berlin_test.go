package showback_test

import (
	"bytes"
	"encoding/csv"
	"testing"

	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/reports/showback"
)

// berlinPolicy is another organization's policy: EUR, Europe/Berlin, its own classes and teams.
const berlinPolicy = `organization: Nordlicht Labs
currency: EUR
timezone: Europe/Berlin
classes:
  - name: a100
    sku: A100-80GB
    gpu_memory_gib: 80
    price_per_gpu_hour: 2.35
    isolation: exclusive
    max_gpus: 8
    max_duration: 48h
    idle_timeout: 1h
    idle_grace: 15m
teams:
  - name: optik
    idp_groups: [g-optik]
    budget_owners: [jana@nordlicht.example]
    quota: {gpus: {a100: 4}, gpu_hours_per_week: 500}
  - name: sprache
    idp_groups: [g-sprache]
    budget_owners: [lars@nordlicht.example]
    quota: {gpus: {a100: 2}, gpu_hours_per_week: 200}
reports:
  showback: {schedule: "MON 08:00", channel: "#finanzen", dm_budget_owners: true}
backend: sim
sim:
  nodes:
    - {name: gpu, count: 2, class: a100, gpus: 8}
`

func loadBerlin(t *testing.T) *policy.Policy {
	t.Helper()
	p, err := policy.Load([]byte(berlinPolicy), "berlin.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// csvRows reads a report's CSV into one map per row, keyed by the header's names.
func csvRows(t *testing.T, r *showback.Report) []map[string]string {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(r.CSV())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, rec := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = rec[i]
		}
		out = append(out, m)
	}
	return out
}
