package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/corralhq/corral"
)

// parseSecrets reads --secret NAME@DOMAIN[,DOMAIN...] values: each value is
// the caller's variable NAME, read by corral.New.
func parseSecrets(values []string) ([]corral.Secret, error) {
	var out []corral.Secret
	for _, v := range values {
		name, domains, ok := strings.Cut(v, "@")
		if !ok || name == "" || domains == "" {
			return nil, usageError("--secret %q: want NAME@DOMAIN[,DOMAIN...]", v)
		}
		var ds []string
		for _, d := range strings.Split(domains, ",") {
			if d = strings.TrimSpace(d); d == "" {
				return nil, usageError("--secret %q: an empty domain", v)
			}
			ds = append(ds, d)
		}
		out = append(out, corral.Secret{Name: name, Domains: ds})
	}
	return out, nil
}

// printSecrets prints each secret's name and domains, never its value.
func printSecrets(w io.Writer, prefix string, secrets []corral.Secret) {
	if len(secrets) == 0 {
		return
	}
	fmt.Fprintf(w, "%s  secrets (the command holds a placeholder; the proxy adds the value for these domains only, terminating TLS to them with a CA made for the sandbox):\n", prefix)
	for _, x := range secrets {
		body := ""
		if x.Body {
			body = " (request bodies too)"
		}
		fmt.Fprintf(w, "%s    %s: %s%s\n", prefix, x.Name, strings.Join(x.Domains, ", "), body)
	}
}
