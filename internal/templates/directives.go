package templates

import (
	"regexp"
	"strings"
)

// serviceOptions are the sbatch options the service sets itself from the lease: the job name
// and comment that say whose job it is, and the partition, account, GPUs, time limit, shape,
// output file and placement the lease was granted. sbatch takes the last of an option it reads,
// so a template's directive would replace the service's without a word.
var serviceOptions = []string{
	"job-name", "comment", "partition", "account", "gres", "gres-flags", "gpus", "gpus-per-node",
	"gpus-per-socket", "gpus-per-task", "time", "nodes", "ntasks", "ntasks-per-node",
	"cpus-per-task", "mem", "array", "output", "nodelist", "nodefile", "exclusive", "chdir",
}

// serviceShort are the short forms of serviceOptions.
var serviceShort = map[byte]string{
	'J': "job-name", 'p': "partition", 'A': "account", 'G': "gpus", 't': "time", 'N': "nodes",
	'n': "ntasks", 'c': "cpus-per-task", 'a': "array", 'o': "output", 'w': "nodelist", 'F': "nodefile", 'D': "chdir",
}

var actionRE = regexp.MustCompile(`(?s)\{\{.*?\}\}`)

// serviceOption is the first option in a directive (one #SBATCH line, its template actions
// standing for a value) that sets what the service sets: as written, and the option sbatch reads
// it as (it takes an unambiguous abbreviation of a long option). "" when there is none.
func serviceOption(directive string) (written, option string) {
	for _, w := range shellWords(actionRE.ReplaceAllString(directive, "x")) {
		switch {
		case strings.HasPrefix(w, "--") && len(w) > 2:
			name, _, _ := strings.Cut(w[2:], "=")
			for _, o := range serviceOptions {
				if o == name {
					return "--" + name, "--" + o
				}
			}
			for _, o := range serviceOptions {
				if strings.HasPrefix(o, name) {
					return "--" + name, "--" + o
				}
			}
		case len(w) >= 2 && w[0] == '-' && w[1] != '-':
			if o, ok := serviceShort[w[1]]; ok {
				return w[:2], "--" + o
			}
		}
	}
	return "", ""
}

// shellWords splits an #SBATCH line into words as sbatch does: at blanks, outside quotes.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '"' || c == '\'':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// sbatchLine is the first line of a body that is an #SBATCH directive, counted from 1; 0 when
// there is none. sbatch reads such lines only before the script's first command, so in a body
// one would be ignored.
func sbatchLine(body string) int {
	for i, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#SBATCH") {
			return i + 1
		}
	}
	return 0
}
