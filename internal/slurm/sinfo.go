package slurm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/acme/quartermaster/internal/hostlist"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
)

// SinfoNode is one node as the scheduler reports it: from sinfo --json, or from scontrol show
// node when sinfo cannot print JSON.
type SinfoNode struct {
	Name string
	// States are the node's base state and flags in upper case: IDLE, MIXED, DRAIN,
	// NOT_RESPONDING, …
	States     []string
	Partitions []string
	GRES       string // configured GRES, e.g. "gpu:h100:8(S:0-1),gpu:l40s:4"
	GRESUsed   string // allocated GRES, e.g. "gpu:h100:2(IDX:0-1),gpu:l40s:0(IDX:N/A)"
}

// sinfoOutput reads both shapes of sinfo --json. Slurm 22.05 and 23.02 print "nodes", one record
// per node (22.05: state a word and state_flags a list; 23.02: state a list). Slurm 23.11 and
// later print "sinfo", one record per node and partition with -N (several nodes of one partition
// when grouped), with the state under node.state and GRES under gres.total and gres.used.
type sinfoOutput struct {
	Errors []json.RawMessage `json:"errors"`
	Nodes  []struct {
		Name       string          `json:"name"`
		State      json.RawMessage `json:"state"`
		StateFlags []string        `json:"state_flags"`
		Partitions []string        `json:"partitions"`
		GRES       string          `json:"gres"`
		GRESUsed   string          `json:"gres_used"`
	} `json:"nodes"`
	Sinfo []struct {
		Node struct {
			State json.RawMessage `json:"state"`
		} `json:"node"`
		Nodes struct {
			Nodes json.RawMessage `json:"nodes"`
		} `json:"nodes"`
		Partition struct {
			Name string `json:"name"`
		} `json:"partition"`
		GRES struct {
			Total string `json:"total"`
			Used  string `json:"used"`
		} `json:"gres"`
	} `json:"sinfo"`
}

// ParseSinfo reads sinfo -N --json output, of Slurm 22.05 (OpenAPI v0.0.38) or later, into one
// record per node.
func ParseSinfo(data []byte) ([]SinfoNode, error) {
	var out sinfoOutput
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("slurm: sinfo --json: %w", err)
	}
	if len(out.Errors) > 0 && len(out.Nodes) == 0 && len(out.Sinfo) == 0 {
		return nil, fmt.Errorf("slurm: sinfo --json reported errors: %s", clip(string(bytes.Join(rawList(out.Errors), []byte(", ")))))
	}
	if out.Nodes == nil && out.Sinfo == nil {
		return nil, fmt.Errorf("slurm: sinfo --json printed neither nodes nor sinfo records")
	}
	m := nodeSet{}
	for _, n := range out.Nodes {
		states := append(stringList(n.State), n.StateFlags...)
		m.add(SinfoNode{Name: n.Name, States: states, Partitions: n.Partitions, GRES: n.GRES, GRESUsed: n.GRESUsed})
	}
	for _, r := range out.Sinfo {
		for _, name := range hostlist.Expand(stringList(r.Nodes.Nodes)...) {
			var parts []string
			if r.Partition.Name != "" {
				parts = []string{r.Partition.Name}
			}
			m.add(SinfoNode{Name: name, States: stringList(r.Node.State), Partitions: parts, GRES: r.GRES.Total, GRESUsed: r.GRES.Used})
		}
	}
	return m.list(), nil
}

// ParseScontrolNodes reads scontrol show node -d -o: one line per node of Key=Value words
// (State=MIXED+DRAIN, Partitions=a,b, Gres=…, GresUsed=…).
func ParseScontrolNodes(data []byte) ([]SinfoNode, error) {
	m := nodeSet{}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		kv := parseKeyValues(line)
		name := kv["NodeName"]
		if name == "" {
			return nil, fmt.Errorf("slurm: scontrol show node printed a line without NodeName: %q", clip(line))
		}
		n := SinfoNode{Name: name, GRES: nullable(kv["Gres"]), GRESUsed: nullable(kv["GresUsed"])}
		for _, s := range strings.Split(kv["State"], "+") {
			n.States = append(n.States, stateWords(s)...)
		}
		if p := nullable(kv["Partitions"]); p != "" {
			n.Partitions = strings.Split(p, ",")
		}
		m.add(n)
	}
	return m.list(), nil
}

// nullable is "" for scontrol's words for nothing.
func nullable(s string) string {
	switch s {
	case "(null)", "N/A", "none", "None":
		return ""
	}
	return s
}

// stateWords reads one state word of scontrol, whose suffix marks a flag: DOWN* is down and not
// responding, IDLE$ idle in a maintenance reservation, IDLE^ rebooting.
func stateWords(s string) []string {
	s = strings.ToUpper(strings.TrimSpace(s))
	var out []string
	for s != "" {
		flag := ""
		switch s[len(s)-1] {
		case '*':
			flag = "NOT_RESPONDING"
		case '$':
			flag = "MAINTENANCE"
		case '^':
			flag = "REBOOT_ISSUED"
		case '~', '#', '%', '!', '@', '-':
			flag = "-" // power saving, reboot requested, planned: no effect on placement
		}
		if flag == "" {
			break
		}
		if flag != "-" {
			out = append(out, flag)
		}
		s = s[:len(s)-1]
	}
	if s != "" {
		out = append([]string{s}, out...)
	}
	return out
}

// nodeSet merges records of one node (newer sinfo prints a node once per partition).
type nodeSet map[string]*SinfoNode

func (m nodeSet) add(n SinfoNode) {
	if n.Name == "" {
		return
	}
	for i, s := range n.States {
		n.States[i] = strings.ToUpper(s)
	}
	cur, ok := m[n.Name]
	if !ok {
		c := n
		m[n.Name] = &c
		return
	}
	for _, p := range n.Partitions {
		if !contains(cur.Partitions, p) {
			cur.Partitions = append(cur.Partitions, p)
		}
	}
	for _, s := range n.States {
		if !contains(cur.States, s) {
			cur.States = append(cur.States, s)
		}
	}
	if cur.GRES == "" {
		cur.GRES, cur.GRESUsed = n.GRES, n.GRESUsed
	}
}

func (m nodeSet) list() []SinfoNode {
	out := make([]SinfoNode, 0, len(m))
	for _, n := range m {
		out = append(out, *n)
	}
	sort.Slice(out, func(i, j int) bool { return nodeLess(out[i].Name, out[j].Name) })
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// nodeLess orders node names as people do: gpu2 before gpu10.
func nodeLess(a, b string) bool {
	pa, na := splitNumber(a)
	pb, nb := splitNumber(b)
	if pa != pb || na < 0 || nb < 0 || na == nb {
		return a < b
	}
	return na < nb
}

func splitNumber(s string) (string, int) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	if i == len(s) || len(s)-i > 9 {
		return s, -1
	}
	n, _ := strconv.Atoi(s[i:])
	return s[:i], n
}

// stringList reads "word" or ["word", …].
func stringList(r json.RawMessage) []string {
	var s string
	if json.Unmarshal(r, &s) == nil {
		if s == "" {
			return nil
		}
		return []string{s}
	}
	var l []string
	if json.Unmarshal(r, &l) == nil {
		return l
	}
	return nil
}

// splitOutside splits s at sep where it is not between open and close.
func splitOutside(s string, sep, open, close byte) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case open:
			depth++
		case close:
			if depth > 0 {
				depth--
			}
		case sep:
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// unusable are the node states and flags under which a node takes no new jobs: it is left out of
// the inventory. Power saving (POWERED_DOWN, POWERING_UP…) is not among them: Slurm starts such
// nodes for jobs. RESERVED is a node in an advanced reservation now: only jobs that name the
// reservation run there, and the service's name none.
var unusable = map[string]bool{
	"DOWN": true, "DRAIN": true, "DRAINED": true, "DRAINING": true, "FAIL": true, "FAILING": true,
	"NOT_RESPONDING": true, "NO_RESPOND": true, "FUTURE": true, "UNKNOWN": true, "ERROR": true,
	"INVALID": true, "INVALID_REG": true, "MAINTENANCE": true, "REBOOT_ISSUED": true, "RESERVED": true,
}

// AwayNodes says, for each exclusive class of p that has nodes (its partition and GRES) and none
// of them takes new jobs, which they are and in what state (see Backend.NodesAway).
func AwayNodes(p *policy.Policy, nodes []SinfoNode) map[string]string {
	out := map[string]string{}
	for _, c := range p.Classes {
		if !c.Exclusive() {
			continue
		}
		want := c.Slurm.GRES
		if want == "" {
			want = "gpu"
		}
		var away []string
		up := false
		for _, n := range nodes {
			if !contains(n.Partitions, c.Slurm.Partition) || gresCount(n.GRES, want) == 0 {
				continue
			}
			if n.Usable() {
				up = true
				break
			}
			away = append(away, n.Name+": "+n.awayState())
		}
		if up || len(away) == 0 {
			continue
		}
		if len(away) > 5 {
			away = append(away[:5], fmt.Sprintf("and %d more", len(away)-5))
		}
		out[c.Name] = "every node of class " + c.Name + " is drained, down or reserved in Slurm (" + strings.Join(away, ", ") + ")"
	}
	return out
}

// awayState is the state that keeps a node from new jobs (DRAIN, DOWN, …), or its first.
func (n SinfoNode) awayState() string {
	for _, s := range n.States {
		if unusable[s] {
			return s
		}
	}
	if len(n.States) > 0 {
		return n.States[0]
	}
	return "UNKNOWN"
}

// Usable reports whether the node takes new jobs.
func (n SinfoNode) Usable() bool {
	if len(n.States) == 0 {
		return false
	}
	for _, s := range n.States {
		if unusable[s] {
			return false
		}
	}
	return true
}

// gresCount is how many units of GRES want (name or name:type, e.g. "gpu" or "gpu:h100") a GRES
// string holds: "gpu:h100:8(S:0-1),gpu:l40s:4" holds 8 gpu:h100 and 12 gpu. A want without a
// type counts every type of that name.
func gresCount(gres, want string) int {
	wantName, wantType, typed := strings.Cut(want, ":")
	total := 0
	for _, e := range splitOutside(gres, ',', '(', ')') {
		e = strings.TrimSpace(e)
		if i := strings.IndexByte(e, '('); i >= 0 {
			e = e[:i]
		}
		parts := strings.Split(e, ":")
		if parts[0] != wantName || parts[0] == "" {
			continue
		}
		typ, count := "", "1"
		switch len(parts) {
		case 1:
		case 2: // gpu:8, or gpu:h100 (one)
			if _, err := strconv.Atoi(parts[1]); err == nil {
				count = parts[1]
			} else {
				typ = parts[1]
			}
		default: // gpu:h100:8; a type may hold colons only in theory
			typ, count = strings.Join(parts[1:len(parts)-1], ":"), parts[len(parts)-1]
		}
		if typed && typ != wantType {
			continue
		}
		n, err := strconv.Atoi(count)
		if err != nil || n < 0 {
			continue
		}
		total += n
	}
	return total
}

// OwnJob is one of this service's jobs that holds GPUs: its nodes (by name) and the GRES it asked
// for on each (tres_per_node: "gres:gpu:h100:2" in 22.05, "gres/gpu:h100=2" later).
type OwnJob struct {
	Nodes       []string
	TRESPerNode string
}

// ParseOwnJobs reads squeue -h -o '%N|%b|%k' (nodes, tres_per_node, comment): the jobs whose
// comment own accepts.
func ParseOwnJobs(data []byte, own func(comment string) bool) []OwnJob {
	var out []OwnJob
	for _, line := range strings.Split(string(data), "\n") {
		parts := strings.SplitN(strings.TrimSpace(line), "|", 3)
		if len(parts) != 3 || !own(parts[2]) {
			continue
		}
		out = append(out, OwnJob{Nodes: hostlist.Expand(nullable(parts[0])), TRESPerNode: nullable(parts[1])})
	}
	return out
}

// tresGRES turns tres_per_node into a GRES string: "gres:gpu:h100:2" and "gres/gpu:h100=2" are
// "gpu:h100:2"; entries that are not GRES (cpu=4) go.
func tresGRES(tres string) string {
	var out []string
	for _, e := range strings.Split(tres, ",") {
		e = strings.TrimSpace(e)
		switch {
		case strings.HasPrefix(e, "gres:"):
			out = append(out, strings.TrimPrefix(e, "gres:"))
		case strings.HasPrefix(e, "gres/"):
			out = append(out, strings.Replace(strings.TrimPrefix(e, "gres/"), "=", ":", 1))
		}
	}
	return strings.Join(out, ",")
}

// BuildInventory maps the scheduler's nodes to the policy's classes: a node belongs to every
// class whose slurm.partition it is in and whose GRES (slurm.gres, e.g. gpu:h100; "gpu" when
// the class names none) it has; its GPUs are that GRES's count, and Used the count allocated to
// jobs that are not this service's (own: its running jobs, which the service counts itself).
// An own job that Slurm gave more than it asked for (--exclusive takes every GRES of its nodes)
// leaves the rest counted as used. Each node carries the GRES its class counts (qm.Node.GRES):
// where two classes count the same GPUs of a node, an own job of one is left out of both sides'
// Used, and the service counts the GPUs its lease holds on the other side itself. Nodes that take no new jobs (down, drained, not responding…)
// are left out. Classes come in the policy's order, nodes in name order within each.
func BuildInventory(p *policy.Policy, nodes []SinfoNode, own []OwnJob) []qm.Node {
	ownOn := map[string][]string{} // node -> GRES of the service's jobs on it
	for _, j := range own {
		g := tresGRES(j.TRESPerNode)
		for _, n := range j.Nodes {
			ownOn[n] = append(ownOn[n], g)
		}
	}
	inv := []qm.Node{}
	for _, c := range p.Classes {
		want := c.Slurm.GRES
		if want == "" {
			want = "gpu"
		}
		for _, n := range nodes {
			if !n.Usable() || !contains(n.Partitions, c.Slurm.Partition) {
				continue
			}
			gpus := gresCount(n.GRES, want)
			if gpus == 0 {
				continue
			}
			used := gresCount(n.GRESUsed, want)
			for _, g := range ownOn[n.Name] {
				used -= gresCount(g, want)
			}
			inv = append(inv, qm.Node{Name: n.Name, Class: c.Name, GPUs: gpus, Used: min(max(used, 0), gpus), GRES: want})
		}
	}
	return inv
}
