package sbplcheck

import (
	"fmt"
	"regexp"
	"slices"
)

var (
	operationRE = regexp.MustCompile(`^[a-z][a-z0-9-]*\*?$`)
	paramNameRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
)

// Check parses src, checks the shape of every form and that the parameters
// src refers to are exactly params: none undefined, none unused.
func Check(src string, params []string) error {
	forms, err := Parse(src)
	if err != nil {
		return err
	}
	if err := checkForms(forms); err != nil {
		return err
	}
	refs, err := ParamRefs(forms)
	if err != nil {
		return err
	}
	return checkParams(refs, params)
}

func checkForms(forms []Node) error {
	if len(forms) < 2 || forms[0].String() != "(version 1)" || forms[1].String() != "(deny default)" {
		return fmt.Errorf("profile must start with (version 1) (deny default)")
	}
	for _, f := range forms[2:] {
		if err := checkRule(f); err != nil {
			return err
		}
	}
	return nil
}

// checkRule checks (allow|deny OPERATION... FILTER...).
func checkRule(f Node) error {
	if h := f.Head(); h != "allow" && h != "deny" {
		return fmt.Errorf("line %d: want (allow ...) or (deny ...), got %s", f.Line, f)
	}
	ops, filters := 0, false
	for _, c := range f.List[1:] {
		switch {
		case c.IsList:
			filters = true
			if err := checkFilter(c); err != nil {
				return err
			}
		case c.IsStr || filters || !operationRE.MatchString(c.Atom):
			return fmt.Errorf("line %d: %s is not an operation in place", c.Line, c)
		default:
			ops++
		}
	}
	if ops == 0 {
		return fmt.Errorf("line %d: rule without an operation", f.Line)
	}
	return nil
}

// checkFilter checks that a filter is a list headed by a symbol, all the way
// down.
func checkFilter(f Node) error {
	if f.Head() == "" {
		return fmt.Errorf("line %d: filter %s does not start with a name", f.Line, f)
	}
	for _, c := range f.List[1:] {
		if c.IsList {
			if err := checkFilter(c); err != nil {
				return err
			}
		}
	}
	return nil
}

// ParamRefs returns the name of every (param "NAME") in forms, in order.
func ParamRefs(forms []Node) ([]string, error) {
	var refs []string
	var walk func(n Node) error
	walk = func(n Node) error {
		if n.Head() == "param" {
			if len(n.List) != 2 || !n.List[1].IsStr || n.List[1].Regex || !paramNameRE.MatchString(n.List[1].Str) {
				return fmt.Errorf("line %d: want (param \"NAME\"), got %s", n.Line, n)
			}
			refs = append(refs, n.List[1].Str)
			return nil
		}
		for _, c := range n.List {
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	for _, f := range forms {
		if err := walk(f); err != nil {
			return nil, err
		}
	}
	return refs, nil
}

func checkParams(refs, defined []string) error {
	for i, d := range defined {
		if slices.Contains(defined[:i], d) {
			return fmt.Errorf("parameter %s defined twice", d)
		}
		if !slices.Contains(refs, d) {
			return fmt.Errorf("parameter %s defined but never referenced", d)
		}
	}
	for _, r := range refs {
		if !slices.Contains(defined, r) {
			return fmt.Errorf("parameter %s referenced but not defined", r)
		}
	}
	return nil
}

// Strings returns the value of every string in forms, parameter names
// included, in order.
func Strings(forms []Node) []string {
	var out []string
	var walk func(n Node)
	walk = func(n Node) {
		if n.IsStr {
			out = append(out, n.Str)
		}
		for _, c := range n.List {
			walk(c)
		}
	}
	for _, f := range forms {
		walk(f)
	}
	return out
}
