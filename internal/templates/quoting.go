package templates

import (
	"fmt"
	"regexp/syntax"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"
)

// A researcher's string value reaches a job script only as one quoted shell word: a body that
// prints a string parameter unquoted (into its shell, or into an #SBATCH line, where sbatch would
// read a value with a space as another option) would let "$(...)", quotes or a "; rm" in the
// value run as code. unquotedParam finds such a place in a body when the catalog loads.

// quotingFuncs are the helpers whose result is safe whatever their arguments hold: shq quotes,
// the others make numbers, booleans or fixed words. Not json: its double quotes let the shell
// run a $(...) or `...` inside them.
var quotingFuncs = map[string]bool{
	"shq": true, "seconds": true, "minutes": true, "slurmTime": true,
	"add": true, "sub": true, "mul": true, "ro": true, "len": true,
	"eq": true, "ne": true, "lt": true, "le": true, "gt": true, "ge": true, "not": true,
}

// unsafeParams are the string parameters whose values may hold a character that is not one
// plain shell word (shellSafeRE): those without a pattern, or whose pattern admits such a
// character. Paths and enum choices are limited to safe characters already.
func (t *Template) unsafeParams() map[string]bool {
	out := map[string]bool{}
	for _, p := range t.Parameters {
		if p.Type == TypeString && !patternIsShellSafe(p.Pattern) {
			out[p.Name] = true
		}
	}
	return out
}

// patternIsShellSafe reports whether every string the pattern matches is made of shell-safe
// characters only (letters, digits and _ . / + = : @ % , -).
func patternIsShellSafe(pattern string) bool {
	if pattern == "" {
		return false
	}
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return false
	}
	return regexpShellSafe(re.Simplify())
}

func regexpShellSafe(re *syntax.Regexp) bool {
	safe := func(r rune) bool { return r < 128 && shellSafeRE.MatchString(string(r)) }
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if !safe(r) {
				return false
			}
		}
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if hi-lo > 128 {
				return false
			}
			for r := lo; r <= hi; r++ {
				if !safe(r) {
					return false
				}
			}
		}
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return false
	}
	for _, sub := range re.Sub {
		if !regexpShellSafe(sub) {
			return false
		}
	}
	return true
}

// unquotedParam finds the first place in body name where a parameter of unsafe is printed
// without going through shq (or a helper of quotingFuncs that makes a number or a fixed word): directly, through a pipe,
// printf, a variable, the dot of a with or range, or the whole .P map. It returns the
// parameter's name ("" for the whole map), the line within the body, and whether one was found.
func unquotedParam(tmpl *template.Template, unsafe map[string]bool) (param string, line int, found bool) {
	if tmpl == nil || tmpl.Tree == nil || tmpl.Tree.Root == nil || len(unsafe) == 0 {
		return "", 0, false
	}
	w := &quoteWalk{tree: tmpl.Tree, unsafe: unsafe, vars: map[string]string{}}
	w.list(tmpl.Tree.Root, "")
	if !w.found {
		return "", 0, false
	}
	return w.param, w.line, true
}

type quoteWalk struct {
	tree   *parse.Tree
	unsafe map[string]bool
	vars   map[string]string // variables that hold an unsafe parameter's value, to its name
	found  bool
	param  string
	line   int
}

func (w *quoteWalk) report(n parse.Node, param string) {
	if w.found {
		return
	}
	w.found, w.param = true, param
	loc, _ := w.tree.ErrorContext(n)
	// loc is "name:line:col"
	parts := strings.Split(loc, ":")
	if len(parts) >= 3 {
		w.line, _ = strconv.Atoi(parts[len(parts)-2])
	}
}

// list walks a list of nodes; dot is the unsafe parameter the dot holds there ("" when none).
func (w *quoteWalk) list(l *parse.ListNode, dot string) {
	if l == nil {
		return
	}
	for _, n := range l.Nodes {
		w.node(n, dot)
	}
}

func (w *quoteWalk) node(n parse.Node, dot string) {
	switch n := n.(type) {
	case *parse.ActionNode:
		p, tainted := w.pipe(n.Pipe, dot)
		if len(n.Pipe.Decl) > 0 {
			for _, v := range n.Pipe.Decl {
				if tainted {
					w.vars[v.Ident[0]] = p
				} else {
					delete(w.vars, v.Ident[0])
				}
			}
			return
		}
		if tainted {
			w.report(n, p)
		}
	case *parse.IfNode:
		w.list(n.List, dot)
		w.list(n.ElseList, dot)
	case *parse.WithNode:
		p, tainted := w.pipe(n.Pipe, dot)
		w.list(n.List, innerDot(p, tainted))
		w.list(n.ElseList, dot)
	case *parse.RangeNode:
		p, tainted := w.pipe(n.Pipe, dot)
		inner := innerDot(p, tainted)
		if tainted {
			for _, v := range n.Pipe.Decl {
				w.vars[v.Ident[0]] = p
			}
		}
		w.list(n.List, inner)
		w.list(n.ElseList, dot)
	case *parse.ListNode:
		w.list(n, dot)
	}
}

// pipe says whether a pipeline's value may carry an unsafe parameter unquoted, and which.
func (w *quoteWalk) pipe(p *parse.PipeNode, dot string) (string, bool) {
	if p == nil || len(p.Cmds) == 0 {
		return "", false
	}
	last := p.Cmds[len(p.Cmds)-1]
	if len(last.Args) > 0 {
		if id, ok := last.Args[0].(*parse.IdentifierNode); ok && quotingFuncs[id.Ident] {
			return "", false
		}
	}
	for _, c := range p.Cmds {
		for _, a := range c.Args {
			if name, ok := w.arg(a, dot); ok {
				return name, true
			}
		}
	}
	return "", false
}

// arg says whether one argument is (or holds) an unsafe parameter's value.
func (w *quoteWalk) arg(a parse.Node, dot string) (string, bool) {
	switch a := a.(type) {
	case *parse.FieldNode:
		return w.field(a.Ident, dot)
	case *parse.VariableNode:
		if len(a.Ident) == 1 {
			if p, ok := w.vars[a.Ident[0]]; ok {
				return p, true
			}
			return "", false
		}
		if a.Ident[0] == "$" {
			return w.field(a.Ident[1:], "")
		}
		if p, ok := w.vars[a.Ident[0]]; ok {
			return p, true
		}
	case *parse.DotNode:
		if dot != "" {
			return dotName(dot), true
		}
	case *parse.ChainNode:
		if p, ok := w.arg(a.Node, dot); ok {
			return p, true
		}
	case *parse.PipeNode:
		return w.pipe(a, dot)
	}
	return "", false
}

// field says whether a field chain from the data (.P.note, .P) names an unsafe parameter.
func (w *quoteWalk) field(ident []string, dot string) (string, bool) {
	if dot != "" {
		return dotName(dot), true
	}
	if len(ident) == 0 || ident[0] != "P" {
		return "", false
	}
	if len(ident) == 1 {
		return "", true
	}
	if w.unsafe[ident[1]] {
		return ident[1], true
	}
	return "", false
}

func dotName(dot string) string {
	if dot == "P" {
		return ""
	}
	return dot
}

// unquotedMessage is the load error for a body that prints param unquoted.
func unquotedMessage(body, param string) string {
	if param == "" {
		return fmt.Sprintf("%s: parameter values (.P) reach the script unquoted, where a value with a space, a quote or $(...) would run as code; quote each value with shq, e.g. {{shq .P.NAME}}", body)
	}
	return fmt.Sprintf("%s: parameter %s (a string) reaches the script unquoted, where a value with a space, a quote or $(...) would run as code; write {{shq .P.%s}}, or give it a pattern of letters, digits and . _ - only", body, param, param)
}

// innerDot is the dot a with or range body is walked with, from what its pipeline carries (pipe):
// nothing to watch where it carries no unsafe parameter, else the parameter it names, or P (the
// parameters as a whole) where it names none.
func innerDot(p string, tainted bool) string {
	switch {
	case !tainted:
		return ""
	case p == "":
		return "P"
	}
	return p
}
