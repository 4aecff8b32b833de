package config

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/corralhq/corral"
)

// Secret is one entry of secrets: a credential the sandbox's commands use
// without holding it (corral.Config.Secrets).
type Secret struct {
	Name    string
	Domains []string
	// From is where the value is read: "env:NAME" (the default, with the
	// entry's own name) or "file:/path" (one trailing newline dropped).
	From string
	Body bool `json:",omitempty"`
	// Value is what From gave when the file was read. It is never part of
	// a sandbox's hash, nor printed.
	Value string `json:"-"`
}

// secretDoc is one entry of secrets as the file holds it.
type secretDoc struct {
	Name    *string  `toml:"name"`
	Domains []string `toml:"domains"`
	From    *string  `toml:"from"`
	Body    *bool    `toml:"body"`
}

// secretKeys are the keys of a secrets entry, beside sandboxKeys.
var secretKeys = map[string]string{
	"secrets":           "an array of tables",
	"secrets[]":         "a table",
	"secrets[].name":    "a string",
	"secrets[].domains": "an array of strings",
	"secrets[].from":    "a string",
	"secrets[].body":    "a boolean",
}

// secrets resolves secrets entries, reading each value: a missing
// variable or file is an error naming the entry, never showing a value.
func (r *resolver) secrets(key string, ds []secretDoc) ([]Secret, error) {
	var out []Secret
	for i, d := range ds {
		k := fmt.Sprintf("%s[%d]", key, i)
		if d.Name == nil || *d.Name == "" || len(d.Domains) == 0 {
			return nil, r.errorf(k, "want name and domains")
		}
		x := Secret{Name: *d.Name, Domains: slices.Clone(d.Domains), From: "env:" + *d.Name, Body: d.Body != nil && *d.Body}
		if d.From != nil {
			x.From = *d.From
		}
		v, err := secretValue(x.From)
		if err != nil {
			return nil, r.errorf(k+".from", "%s", err)
		}
		x.Value = v
		out = append(out, x)
	}
	return out, nil
}

// secretValue reads the value from says where to.
func secretValue(from string) (string, error) {
	switch {
	case strings.HasPrefix(from, "env:"):
		name := strings.TrimPrefix(from, "env:")
		v := os.Getenv(name)
		if v == "" {
			return "", fmt.Errorf("%q: the variable %s is empty or unset", from, name)
		}
		return v, nil
	case strings.HasPrefix(from, "file:"):
		b, err := os.ReadFile(strings.TrimPrefix(from, "file:"))
		if err != nil {
			return "", fmt.Errorf("%q: cannot read the file", from)
		}
		v := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
		if v == "" {
			return "", fmt.Errorf("%q: the file is empty", from)
		}
		return v, nil
	}
	return "", fmt.Errorf("%q: want \"env:NAME\" or \"file:/path\"", from)
}

// corralSecrets are s's secrets as corral.Config takes them.
func corralSecrets(ss []Secret) []corral.Secret {
	var out []corral.Secret
	for _, x := range ss {
		out = append(out, corral.Secret{Name: x.Name, Domains: slices.Clone(x.Domains), Value: x.Value, Body: x.Body})
	}
	return out
}
