package seatbelt

import (
	"fmt"
	"strings"
)

// Param is one parameter of a profile: the profile text refers to it as
// (param "Name") and sandbox-exec receives it as -DName=Value.
type Param struct {
	Name  string
	Value string
}

// Profile is a generated profile: the text and the parameters it refers to.
// Every parameter is referenced by the text and every reference is defined.
type Profile struct {
	Text   string
	Params []Param
}

// Generate builds the profile for in. It touches the filesystem only through
// in.Locate.
func Generate(in Input) (*Profile, error) {
	n, err := in.normalized()
	if err != nil {
		return nil, err
	}
	// Located on the caller's own paths: on a machine without the /private
	// aliases only those exist.
	protected, err := in.protectedPaths()
	if err != nil {
		return nil, err
	}
	g := &generator{}
	g.b.WriteString(header)
	g.b.WriteString(processRules)
	g.b.WriteString(systemRules)
	g.b.WriteString(deviceRules)
	g.b.WriteString(readRule)
	g.files(n, protected)
	g.network(n)
	return &Profile{Text: g.b.String(), Params: g.params}, nil
}

// Args returns the parameters as sandbox-exec flags, -DName=Value.
func (p *Profile) Args() []string {
	args := make([]string, len(p.Params))
	for i, prm := range p.Params {
		args[i] = "-D" + prm.Name + "=" + prm.Value
	}
	return args
}

// Command returns the arguments for [SandboxExec] (without its own name)
// that run name with args under p.
func (p *Profile) Command(name string, args ...string) []string {
	out := make([]string, 0, 4+len(p.Params)+len(args))
	out = append(out, "-p", p.Text)
	out = append(out, p.Args()...)
	out = append(out, "--", name)
	return append(out, args...)
}

// String returns the profile as a file that sandbox-exec -f accepts: the
// text, preceded by comments that show the command line applying it with
// its parameters shell-quoted.
func (p *Profile) String() string {
	var b strings.Builder
	b.WriteString("; Apply with:\n;   " + SandboxExec + " -p \"$PROFILE\" \\\n")
	for _, a := range p.Params {
		fmt.Fprintf(&b, ";     -D%s=%s \\\n", a.Name, shellQuote(a.Value))
	}
	b.WriteString(";     -- CMD [ARG...]\n")
	b.WriteString("; where PROFILE is the text below. Paths reach it only as these\n")
	b.WriteString("; parameters; the text itself never contains one.\n")
	b.WriteString(p.Text)
	return b.String()
}

// generator accumulates the profile text and its parameters.
type generator struct {
	b      strings.Builder
	params []Param
	byName map[string]string // parameter name by value, for reuse
	counts map[string]int    // parameters defined so far by prefix
}

// param defines a parameter holding value and returns its name. A value
// already defined reuses its parameter.
func (g *generator) param(prefix string, value string) string {
	if name, ok := g.byName[value]; ok {
		return name
	}
	if g.byName == nil {
		g.byName, g.counts = map[string]string{}, map[string]int{}
	}
	name := prefix
	if prefix != paramWorkspace && prefix != paramTempDir {
		name = fmt.Sprintf("%s_%d", prefix, g.counts[prefix])
		g.counts[prefix]++
	}
	g.params = append(g.params, Param{Name: name, Value: value})
	g.byName[value] = name
	return name
}

// ref is the SBPL expression for a parameter's value.
func ref(name string) string { return fmt.Sprintf("(param %q)", name) }

// shellQuote quotes s for a POSIX shell. Control characters use the $'...'
// form so that the result stays on one line (it is printed in a comment).
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:,@%=") == "" {
		return s
	}
	if !strings.ContainsFunc(s, isControl) {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for _, r := range s {
		switch {
		case r == '\\' || r == '\'':
			b.WriteString(`\` + string(r))
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case isControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteString("'")
	return b.String()
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }
