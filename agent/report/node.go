package report

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxNodeName is the longest node name: a Kubernetes node's name is a DNS subdomain, of up to 253
// characters.
const MaxNodeName = 253

// NodeNameProblem says, in a clause fit to start a sentence, why name cannot name a node; "" when
// it can. A node name is a host name as Slurm and Kubernetes write it: letters, digits, '.', '-'
// and '_', starting with a letter or digit, at most MaxNodeName characters (so every Kubernetes
// node name, a DNS subdomain, is one). The agent, the service and its agent-token command take
// the same names.
func NodeNameProblem(name string) string {
	switch {
	case name == "":
		return "the node name is empty"
	case len(name) > MaxNodeName:
		return fmt.Sprintf("the node name %s is %d characters long, and a node name (a Kubernetes node's is a DNS subdomain) has at most %d", quoteClipped(name), len(name), MaxNodeName)
	}
	for k, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if k > 0 {
			ok = ok || c == '.' || c == '-' || c == '_'
		}
		if !ok {
			where := "has"
			if k == 0 {
				where = "starts with"
			}
			return fmt.Sprintf("%s is not a node name: it %s %s, and a node name has letters, digits, '.', '-' and '_', starting with a letter or digit",
				quoteClipped(name), where, strconv.QuoteRune(c))
		}
	}
	return ""
}

// quoteClipped quotes a name for a message, shortened to its first 60 bytes.
func quoteClipped(s string) string {
	if len(s) > 60 {
		return strconv.Quote(s[:60]) + "…"
	}
	return strconv.Quote(s)
}

// NodeNameMeant is name, which NodeNameProblem refuses, put right for a refusal's example: each run
// of characters a node name does not take becomes one hyphen, and the hyphens, dots and
// underscores it cannot start with, or would end with, go ("reef 08" is reef-08). Where nothing is
// left, or it is too long, it is gpu-01.
func NodeNameMeant(name string) string {
	const fallback = "gpu-01"
	var b []byte
	bad := false
	for _, c := range name {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_' {
			if bad && len(b) > 0 {
				b = append(b, '-')
			}
			bad = false
			b = append(b, byte(c))
			continue
		}
		bad = true
	}
	s := strings.TrimLeft(strings.TrimRight(string(b), ".-_"), ".-_")
	if s == "" || NodeNameProblem(s) != "" {
		return fallback
	}
	return s
}
