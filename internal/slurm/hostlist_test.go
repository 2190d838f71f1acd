package slurm_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/acme/quartermaster/internal/slurm"
)

// Host lists are read as Slurm writes them wherever it writes one: squeue's node column, the
// nodes of sinfo's records and squeue --json's nodes, which become a job's node list. Several
// bracket groups name every combination, zero padding is kept, text after a bracket is part of
// each name, and an expression that is not a host list (a sign is not a number) is one name as
// written.
func TestHostListsAsSlurmWritesThem(t *testing.T) {
	for list, want := range map[string]string{
		"rack[1-2]-n[01-02]":  "rack1-n01 rack1-n02 rack2-n01 rack2-n02",
		"gpu[01-03,07],dgx-a": "gpu01 gpu02 gpu03 gpu07 dgx-a",
		"n[08-11]":            "n08 n09 n10 n11",
		"gpu[1-2]-ib":         "gpu1-ib gpu2-ib",
		"n[+1]":               "n[+1]",
		"n[1-+2]":             "n[1-+2]",
		"n[-1],n2":            "n[-1] n2",
	} {
		own := slurm.ParseOwnJobs([]byte(list+"|gres/gpu:h100=1|qm:L-1\n"), func(c string) bool { return strings.HasPrefix(c, "qm:") })
		if len(own) != 1 || strings.Join(own[0].Nodes, " ") != want {
			t.Errorf("squeue %%N %s: %+v, want nodes %s", list, own, want)
		}

		nodes, err := slurm.ParseSinfo([]byte(`{"sinfo": [{"nodes": {"nodes": ["` + list + `"]}, "node": {"state": ["IDLE"]},
		 "partition": {"name": "train"}, "gres": {"total": "gpu:h100:8", "used": "gpu:h100:0"}}], "errors": []}`))
		var names []string
		for _, n := range nodes {
			names = append(names, n.Name)
		}
		// The inventory lists nodes by name.
		if sorted := slices.Sorted(slices.Values(strings.Fields(want))); err != nil || !slices.Equal(names, sorted) {
			t.Errorf("sinfo nodes %s: %v %v, want %v", list, names, err, sorted)
		}

		data := `{"jobs": [{"job_id": 7, "comment": "qm:L-3", "job_state": ["RUNNING"], "nodes": "` + list + `"}], "errors": []}`
		b := stubBackend(t, &stub{reply: func(string, []string) (string, error) { return data, nil }})
		jobs, err := b.Jobs(context.Background())
		if err != nil || len(jobs) != 1 || jobs[0].Node != strings.ReplaceAll(want, " ", ",") {
			t.Errorf("squeue --json nodes %s: %+v %v, want node list %s", list, jobs, err, strings.ReplaceAll(want, " ", ","))
		}
	}
}
