package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/acme/quartermaster/agent/report"
	"github.com/acme/quartermaster/internal/ingest"
	"github.com/acme/quartermaster/internal/kube"
	"github.com/acme/quartermaster/internal/nfc"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/qm"
	"github.com/acme/quartermaster/internal/shellword"
	"github.com/acme/quartermaster/internal/sim"
	"github.com/acme/quartermaster/internal/slurm"
)

func init() {
	registerCommand("agent-token", subcommand{
		summary: "the node agents' tokens: create NODE, list, revoke NODE",
		usage:   "quartermaster agent-token create NODE | list | revoke NODE [--db URL]\nexample: quartermaster agent-token create gpu-01",
		flags: func() *flag.FlagSet {
			fs := flag.NewFlagSet("agent-token", flag.ContinueOnError)
			var f commonFlags
			f.registerDB(fs)
			return fs
		},
		run:    runAgentToken,
		checks: true, // it stops before it opens the database
	})
}

const agentTokenUsage = "usage: quartermaster agent-token create NODE | list | revoke NODE [--db URL]; e.g. quartermaster agent-token create gpu-01"

func runAgentToken(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("agent-token", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f commonFlags
	f.registerDB(fs)
	// Flags may come before or after the verb and node.
	var pos []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			verb := verbIn(args, "list", "create", "list", "revoke")
			line := []string{"quartermaster", "agent-token"}
			if !slices.Contains(args, verb) {
				line = append(line, verb)
			}
			return flagMistake(fs, "quartermaster agent-token "+verb, line, args, err)
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	verb := ""
	if len(pos) > 0 {
		verb = pos[0]
	}
	verbs := []string{"create", "list", "revoke"}
	switch {
	case len(pos) == 0:
		return needsVerb("agent-token", false, verbs, "list", args, nil)
	case verb == "list" && len(pos) == 1:
	case verb == "list":
		return strayWords(fs, "agent-token list", pos[1:], args)
	case (verb == "create" || verb == "revoke") && len(pos) == 1:
		// The node goes right after the verb, as typed.
		example := slices.Clone(args)
		for i, a := range example {
			if a == verb && !isFlagValue(fs, example, i) {
				example = slices.Insert(example, i+1, "gpu-01")
				break
			}
		}
		return errUsage{fmt.Sprintf("agent-token %s needs the node's name, the one the scheduler knows it by, e.g. %s", verb,
			shellword.Join(append([]string{"quartermaster", "agent-token"}, example...)))}
	case verb == "create" || verb == "revoke":
		if len(pos) > 2 {
			return errUsage{fmt.Sprintf("agent-token %s takes one node name, but got %q too; e.g. %s", verb, pos[2],
				shellword.Join(append([]string{"quartermaster", "agent-token"}, withoutWords(fs, args, pos[2:])...)))}
		}
		if p := report.NodeNameProblem(pos[1]); p != "" {
			// The name put right, the rest of the line (the database) as typed.
			fixed := slices.Clone(args)
			for i, a := range fixed {
				if a == pos[1] && !isFlagValue(fs, fixed, i) {
					fixed[i] = report.NodeNameMeant(pos[1])
					break
				}
			}
			return refusal(p+"; use the name the scheduler knows the node by", "agent-token", onceEach(fs, fixed))
		}
	default:
		if err := notAVerb("agent-token", verb, verbs, args, append([]string{"list"}, givenFlag(fs, "db")...)); err != nil {
			return err
		}
		return errUsage{agentTokenUsage}
	}
	dbURL := f.dbURL
	if verb != "create" {
		dbURL = f.existingDBURL // list and revoke on a file that is not there: a wrong path
	}
	if checking(ctx) && verb == "create" {
		// A line only checked makes nothing: not the data directory dbURL would make either.
		return f.resolveSecrets()
	}
	url, err := dbURL()
	if err != nil || checking(ctx) {
		return err // a line only checked creates, revokes and lists nothing
	}
	db, err := f.open(ctx, url, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	now := time.Now().UTC()
	switch verb {
	case "create":
		token, err := ingest.NewToken()
		if err != nil {
			return err
		}
		if err := db.CreateAgentToken(ctx, pos[1], ingest.HashToken(token), now); err != nil {
			if hasCode(err, qm.ECONFLICT) { // the database's state, not the command line: exit 1
				return stateRefusal(fmt.Sprintf("node %s has a valid token already; revoke it first", pos[1]), "agent-token",
					append([]string{"revoke", pos[1]}, givenFlag(fs, "db")...))
			}
			return err
		}
		fmt.Fprintln(stdout, token)
		if known, where, ok := schedulerNodes(ctx); ok {
			if w := unknownNodeWarning(pos[1], known, where); w != "" {
				fmt.Fprintln(stderr, w)
			}
		}
		fmt.Fprintf(stderr, "This is node %s's token; it is shown once and kept only as a hash. Put it in the agent's --token-file (e.g. /etc/quartermaster/agent.token, mode 0600).\n", pos[1])
	case "revoke":
		if err := db.RevokeAgentToken(ctx, pos[1], now); err != nil {
			if hasCode(err, qm.ENOTFOUND) {
				return stateRefusal(fmt.Sprintf("node %s has no valid token; agent-token list shows the nodes that have one", pos[1]), "agent-token",
					append([]string{"list"}, givenFlag(fs, "db")...))
			}
			return err
		}
		fmt.Fprintf(stdout, "revoked node %s's token; its agent's reports are refused from now on\n", pos[1])
	case "list":
		ts, err := db.AgentTokens(ctx)
		if err != nil {
			return err
		}
		if len(ts) == 0 {
			fmt.Fprintln(stdout, "no agent tokens yet; create one with: quartermaster agent-token create NODE")
			return nil
		}
		// The service's clock is the one its logs, the idle path and /metrics go by; a node's own
		// may be days off, which NODE CLOCK says, as the agent's quartermaster_agent_clock_skew_seconds.
		fmt.Fprintln(stdout, "Times are the service's clock, UTC; NODE CLOCK is how far the node's clock was off it at the last report;")
		fmt.Fprintln(stdout, "INVENTORY whether the node's agent reports the GPUs the scheduler's inventory holds for the node.")
		w := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(w, "NODE\tTOKEN\tCREATED\tLAST REPORT\tNODE CLOCK\tINVENTORY")
		var differ []string
		for _, t := range ts {
			state := "valid"
			if !t.RevokedAt.IsZero() {
				state = "revoked " + t.RevokedAt.UTC().Format(time.RFC3339)
			}
			last := "never"
			if !t.LastReceivedAt.IsZero() {
				last = t.LastReceivedAt.UTC().Format(time.RFC3339)
			}
			inventory := "not checked"
			switch {
			case !t.InventoryChecked:
			case t.InventoryMismatch == "":
				inventory = "matches"
			default:
				inventory = "DIFFERS (below)"
				differ = append(differ, fmt.Sprintf("%s: %s.", t.Node, t.InventoryMismatch))
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", t.Node, state, t.CreatedAt.UTC().Format(time.RFC3339), last, clockOff(t.ClockSkewSecs), inventory)
		}
		if err := w.Flush(); err != nil {
			return err
		}
		// What differs is a sentence per node, too long for a column.
		for _, d := range differ {
			fmt.Fprintln(stdout, "\n"+d)
		}
		return nil
	}
	return nil
}

// stateRefusal is refusal's sentence for what the database holds rather than a mistake of the
// command line, which exits 1, not 2.
func stateRefusal(what, command string, words []string) error {
	return errors.New(refusal(what, command, words).msg)
}

// hasCode says whether err is the service's error of that code (qm.ENOTFOUND…).
func hasCode(err error, code string) bool {
	var e *qm.Error
	return errors.As(err, &e) && e.Code == code
}

// clockOff says how far a node's clock was off the service's, from its skew in seconds: "10m0s
// ahead", "48h0m0s behind", "7972 years ahead", "in step" within a second, "unknown" where no
// report said when it was sent.
func clockOff(secs *float64) string {
	switch {
	case secs == nil:
		return "unknown"
	case math.Abs(*secs) < 0.5:
		return "in step"
	case *secs > 0:
		return report.HowFar(*secs, time.Second) + " ahead"
	default:
		return report.HowFar(*secs, time.Second) + " behind"
	}
}

// schedulerNodes are the nodes the scheduler knows, where they can be read here cheaply: with
// the policy QM_POLICY names, its simulated cluster's nodes, on Slurm the nodes sinfo lists, or on
// Kubernetes the nodes the API server of KUBECONFIG (else the pod's service account) lists (one
// call, within schedulerNodesTimeout). The backend is QM_BACKEND's, else the policy's. where says
// whose nodes they are; ok is false when they cannot be read (no policy named, one that does not
// load, a Slurm controller or API server not answering, or refusing the credentials).
func schedulerNodes(ctx context.Context) (names []string, where string, ok bool) {
	path := os.Getenv("QM_POLICY")
	if path == "" {
		return nil, "", false
	}
	pol, err := policy.LoadFile(path, nfc.Name)
	if err != nil {
		return nil, "", false
	}
	backend := os.Getenv("QM_BACKEND")
	if backend == "" {
		backend = pol.Backend
	}
	switch backend {
	case "", "sim":
		for _, n := range sim.New(pol, sim.NewClock(time.Now())).Inventory() {
			names = append(names, n.Name)
		}
		return names, "the simulated cluster of " + path, true
	case "slurm":
		cat, err := templateCatalog()
		if err != nil {
			return nil, "", false
		}
		b, err := slurm.New(slurm.Config{Policy: pol, Catalog: cat, Instance: os.Getenv("QM_SLURM_INSTANCE")})
		if err != nil {
			return nil, "", false
		}
		ctx, cancel := context.WithTimeout(ctx, schedulerNodesTimeout)
		defer cancel()
		nodes, err := b.Nodes(ctx)
		if err != nil {
			return nil, "", false
		}
		for _, n := range nodes {
			names = append(names, n.Name)
		}
		return names, "sinfo", true
	case "kubernetes":
		cat, err := templateCatalog()
		if err != nil {
			return nil, "", false
		}
		cs, err := kube.Connect(os.Getenv("KUBECONFIG"))
		if err != nil {
			return nil, "", false
		}
		b, err := kube.New(kube.Config{Policy: pol, Catalog: cat, Client: cs, Instance: os.Getenv("QM_KUBE_INSTANCE")})
		if err != nil {
			return nil, "", false
		}
		ctx, cancel := context.WithTimeout(ctx, schedulerNodesTimeout)
		defer cancel()
		if names, err = b.NodeNames(ctx); err != nil {
			return nil, "", false
		}
		return names, "the Kubernetes cluster", true
	}
	return nil, "", false
}

// schedulerNodesTimeout bounds agent-token create's question to Slurm or to the Kubernetes API
// server about its nodes.
const schedulerNodesTimeout = 5 * time.Second

// unknownNodeWarning warns of a token made for a node that is not one of known (ignoring A-Z
// case), naming the nearest of known (ingest.NearestNodes, as serve's warning of an agent
// reporting as such a node does). Empty for a node known has, or when known is empty.
func unknownNodeWarning(node string, known []string, where string) string {
	nearest := ingest.NearestNodes(node, known)
	if len(nearest) == 0 {
		return ""
	}
	meant := ingest.OneOf(nearest)
	return fmt.Sprintf("warning: the scheduler does not know node %s (%s has no such node), so its agent's reports cover no lease until it does; did you mean %s? The token is made all the same, for a node added later.",
		node, where, meant)
}
