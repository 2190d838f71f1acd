package main

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/acme/quartermaster/docs"
	"github.com/acme/quartermaster/internal/policy"
	"github.com/acme/quartermaster/internal/shellword"
)

// confRow is one row of the table in docs/configuration.md: the flags and environment variables
// it describes, their default, what they do and where they apply.
type confRow struct {
	flags, env       []string
	def, what, where string
}

var (
	codeRE  = regexp.MustCompile("`([^`]+)`")
	envName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*[A-Z0-9]$`)
)

// confRows reads the configuration table: the rows after the header whose first cell is "name".
func confRows(doc string) []confRow {
	var rows []confRow
	in := false
	for _, line := range strings.Split(doc, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			in = false
			continue
		}
		cells := splitRow(line)
		if len(cells) < 4 {
			continue
		}
		if strings.EqualFold(cells[0], "name") {
			in = true
			continue
		}
		if !in || strings.Trim(cells[0], "-: ") == "" {
			continue
		}
		r := confRow{def: cells[1], what: cells[2], where: cells[3]}
		for _, m := range codeRE.FindAllStringSubmatch(cells[0], -1) {
			tok := strings.Fields(m[1])
			if len(tok) == 0 {
				continue
			}
			switch {
			case strings.HasPrefix(tok[0], "--"):
				r.flags = append(r.flags, strings.TrimPrefix(tok[0], "--"))
			case envName.MatchString(tok[0]):
				r.env = append(r.env, tok[0])
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// splitRow splits a Markdown table row into its trimmed cells; \| inside a cell is kept.
func splitRow(line string) []string {
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

// appliesTo reports whether a row's "where" names the command (as a word), or all commands.
func (r confRow) appliesTo(command string) bool {
	w := strings.ToLower(plain(r.where))
	if strings.Contains(w, "every command") || strings.Contains(w, "all commands") {
		return true
	}
	for _, f := range strings.FieldsFunc(w, func(c rune) bool { return !(c >= 'a' && c <= 'z' || c == '-') }) {
		if f == command {
			return true
		}
	}
	return false
}

// plain drops Markdown's backticks and link syntax from a cell.
func plain(s string) string {
	s = strings.ReplaceAll(s, "`", "")
	s = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(s, "$1")
	return s
}

type envHelp struct{ name, what string }

// envFor lists the environment variables that apply to a command, from docs/configuration.md.
func envFor(command string) []envHelp {
	var out []envHelp
	seen := map[string]bool{}
	for _, r := range confRows(docs.Configuration) {
		if !r.appliesTo(command) {
			continue
		}
		what := plain(r.what)
		if d := plain(r.def); d != "" && d != "—" && d != "-" {
			what += " (default: " + d + ")"
		}
		for _, e := range r.env {
			if !seen[e] {
				seen[e] = true
				out = append(out, envHelp{e, what})
			}
		}
	}
	return out
}

// workspaceEnv are the variables a workspace's job runs with (templates/layouts and the
// templates): no settings, but no typos either, when quartermaster runs inside a job.
var workspaceEnv = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`QM_CHECKPOINT_DIR QM_CHECKPOINT_FLAG QM_DATA QM_DATASET QM_GPUS_PER_NODE
		QM_IMAGE QM_JOB_DIR QM_LEASE QM_MASTER_ADDR QM_MASTER_PORT QM_NNODES QM_NODE_RANK QM_PORT
		QM_TASK_COUNT QM_TASK_INDEX QM_TEAM QM_TEMPLATE QM_TOKEN QM_USER`) {
		workspaceEnv[n] = true
	}
}

// checkSettingNames looks at the QM_ variables of environ (NAME=VALUE): one that is a near miss
// of a setting in docs/configuration.md (QM_DATABSE_URL_FILE) is refused, naming the setting it
// was surely meant to be, since that setting would otherwise silently take its default. One like
// no setting is left alone (a test harness's, a script's). Its example renames it with the value
// that was set; a secret's (or a secret file's path) is never shown, but given by the variable
// set: QM_DATABASE_URL_FILE="$QM_DATABSE_URL_FILE".
func checkSettingNames(environ []string) error {
	known := map[string]bool{}
	var names []string
	for _, r := range confRows(docs.Configuration) {
		for _, e := range r.env {
			if !known[e] {
				known[e] = true
				names = append(names, e)
			}
		}
	}
	var unknown []string
	values := map[string]string{}
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "QM_") && !known[name] && !known[strings.TrimSuffix(name, "_FILE")] && !workspaceEnv[name] {
			unknown = append(unknown, name)
			values[name] = value
		}
	}
	sort.Strings(unknown)
	for _, name := range unknown {
		if near := policy.Closest(name, names); near != "" {
			value := shellword.Quote(values[name])
			if secretSetting(name) || secretSetting(near) {
				value = `"$` + name + `"`
			}
			return errUsage{fmt.Sprintf("%s is set, but no setting has that name, so it would be ignored (docs/configuration.md lists every setting); did you mean %s? Rename it, e.g. %s=%s", name, near, near, value)}
		}
	}
	return nil
}

// secretSetting says whether a setting's value may be a secret, or the path of a file holding one,
// and so is not shown: a URL (a database's carries its password), a token, secret, password or
// key, or a _FILE setting.
func secretSetting(name string) bool {
	for _, w := range []string{"URL", "TOKEN", "SECRET", "PASSWORD", "KEY", "_FILE"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}
