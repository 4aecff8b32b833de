package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/corralhq/corral"
)

// configNames says, for each corral.Config field a run can set, which flag
// sets it and which key of a --config file: the library's errors name
// fields, the CLI's name what the user typed.
var configNames = map[string]struct{ flag, key string }{
	"Mode":             {"", "mode"},
	"Workspace":        {"--workspace", "workspace"},
	"WritablePaths":    {"--writable", "writable_paths"},
	"ReadOnlyPaths":    {"--read-only", "read_only_paths"},
	"HiddenPaths":      {"--hide", "hidden_paths"},
	"Network":          {"--net", "network"},
	"AllowedDomains":   {"--allow-domain", "allowed_domains"},
	"DeniedDomains":    {"--deny-domain", "denied_domains"},
	"AllowedIPs":       {"--allow-ip", "allowed_ips"},
	"ProxyConnections": {"--proxy-connections", "proxy_connections"},
	"HostPorts":        {"--allow-host-port", "host_ports"},
	"Publish":          {"--publish", "publish"},
	"Secrets":          {"--secret", "secrets"},
	"Fallback":         {"--fallback", "fallback"},
	"Env":              {"--env", "env"},
	"AllowPlanting":    {"", "allow_planting"},
	"Changeset":        {"--changeset", "changeset"},
	"ChangesetPaths":   {"--changeset-writable", "changeset_paths"},
	"AllowUnixSockets": {"--allow-unix-sockets", "allow_unix_sockets"},
	"AllowHome":        {"--allow-home", "allow_home"},
	"Reveal":           {"--reveal", "reveal"},
	"Protect":          {"--protect", "protect"},
	"PolicyFiles":      {"--config", ""},
	"Limits.Memory":    {"--memory", "limits.memory"},
	"Limits.Pids":      {"--pids", "limits.pids"},
	"Limits.CPUs":      {"--cpus", "limits.cpus"},
	"Limits.TmpSize":   {"--tmp-size", "limits.tmp_size"},
	"Limits.FileSize":  {"--file-size", "limits.file_size"},
	"Limits.OpenFiles": {"--open-files", "limits.open_files"},
	"Limits.CPUTime":   {"--cpu-time", "limits.cpu_time"},
}

// configFailure turns an error of corral.New or Config.Resolved into the
// CLI's terms: a *corral.ConfigError is a usage error (2) naming the flag,
// or the --config file's key where the value came from the file; anything
// else is a sandbox that could not be set up (125).
func (f *runFlags) configFailure(err error) *exitError {
	var ce *corral.ConfigError
	if !errors.As(err, &ce) {
		return &exitError{code: exitSetup, msg: err.Error()}
	}
	if ce.Field == "Helper" {
		// Not the user's input: the corral-init found beside corral.
		return &exitError{code: exitSetup, msg: "init binary " + ce.Value + ": " + ce.Reason}
	}
	what := f.nameOf(ce)
	if ce.Value != "" {
		what += " " + ce.Value
	}
	if ce.Field == "Workspace" && !f.given("workspace") && f.configFile == "" {
		what += " (the current directory)"
	}
	if errors.Is(err, corral.ErrWritableHome) {
		return &exitError{code: exitUsage, msg: what + " is your home directory or holds it: " +
			"a command could plant code that runs at your next login; work in a project directory, or pass --allow-home"}
	}
	return &exitError{code: exitUsage, msg: what + ": " + f.speak(ce)}
}

// libraryTerms are the library's words in ConfigError reasons, each with
// the flag and the config file's key that say the same to the CLI's user.
var libraryTerms = []struct{ lib, flag, key string }{
	{`needs Network "allow"`, "needs --net allow", `needs network = "allow"`},
	{`needs Network "none" or "allow": with "host"`, "needs --net none or allow: with --net host", `needs network = "none" or "allow": with network = "host"`},
	{"PublishAny (--publish-any) allows it", "--publish-any allows it", "publish_any = true allows it"},
	{"needs Changeset", "needs --changeset", "needs changeset"},
	{"needs Mode enabled", "needs the sandbox", `needs mode = "enabled"`},
	{"which Mode disables", "which the mode disables", "which mode disables"},
	{"(see corral.CredentialStores)", "(see 'corral profile')", "(see 'corral profile')"},
	{"not one of corral.ProtectedNames()", "not a protected name (see 'corral profile')", "not a protected name (see 'corral profile')"},
	{"AllowPlanting lists it too", "allow_planting lists it too", "allow_planting lists it too"},
	{"with NoWorkspace", "without a workspace", "without a workspace"},
}

// speak puts ce's reason in the words the user passed: flags, or the
// --config file's keys for a value read from the file.
func (f *runFlags) speak(ce *corral.ConfigError) string {
	reason := ce.Reason
	for _, t := range libraryTerms {
		to := t.flag
		if f.configFile != "" && !f.fromFlags(ce) {
			to = t.key
		}
		reason = strings.ReplaceAll(reason, t.lib, to)
	}
	return f.namePaths(reason)
}

// alsoConfigured finds the path another setting holds in a reason such as
// "contains /a/b, which is also configured".
var alsoConfigured = regexp.MustCompile(`(contains|overlaps) (\S+), which is also configured`)

// namePaths replaces, in a reason, the canonical path another setting
// holds by that setting as the user passed it: "contains --workspace link
// (/srv/real)".
func (f *runFlags) namePaths(reason string) string {
	m := alsoConfigured.FindStringSubmatchIndex(reason)
	if m == nil {
		return reason
	}
	p := reason[m[4]:m[5]]
	name, ok := f.passedAs(p)
	if !ok {
		return reason
	}
	return reason[:m[4]] + name + reason[m[5]:]
}

// passedAs names the flag and value whose path resolves to p, the
// library's canonical path.
func (f *runFlags) passedAs(p string) (string, bool) {
	ws := f.workspace
	if ws == "" && f.configFile == "" {
		if ws, _ = os.Getwd(); ws == p {
			return "the workspace " + p + " (the current directory)", true
		}
	}
	for _, l := range []struct {
		flag   string
		values []string
	}{{"--workspace", []string{ws}}, {"--writable", f.writable}, {"--read-only", f.readOnly}, {"--hide", f.hidden},
		{"--changeset-writable", f.changesetWritable}} {
		for _, v := range l.values {
			if v == "" {
				continue
			}
			abs, err := filepath.Abs(v)
			if err != nil {
				continue
			}
			if real, err := filepath.EvalSymlinks(abs); err == nil {
				abs = real
			}
			if abs != p {
				continue
			}
			if v == p {
				return l.flag + " " + v, true
			}
			return fmt.Sprintf("%s %s (%s)", l.flag, v, p), true
		}
	}
	return "", false
}

// nameOf names the flag or config file key behind ce's field.
func (f *runFlags) nameOf(ce *corral.ConfigError) string {
	n, ok := configNames[ce.Field]
	switch {
	case !ok:
		return ce.Field
	case n.flag != "" && (f.configFile == "" || f.fromFlags(ce)):
		return n.flag
	case f.configFile != "":
		return fmt.Sprintf("%s: %s", f.configFile, n.key)
	}
	return n.flag
}

// fromFlags reports whether the value ce complains about was given on the
// command line rather than read from the --config file.
func (f *runFlags) fromFlags(ce *corral.ConfigError) bool {
	var given []string
	switch ce.Field {
	case "Workspace":
		// Not given and not in the file: the current directory, the flag's
		// default.
		wd, _ := os.Getwd()
		return f.given("workspace") || f.configFile == "" || ce.Value == wd
	case "WritablePaths":
		given = append(slices.Clone(f.writable), f.changesetWritable...)
	case "ReadOnlyPaths":
		given = f.readOnly
	case "HiddenPaths":
		given = f.hidden
	case "Env":
		given = f.env
	case "ChangesetPaths":
		given = f.changesetWritable
	case "Network":
		return f.given("net")
	case "Fallback":
		return f.given("fallback")
	case "ProxyConnections":
		return f.given("proxy-connections")
	case "Changeset":
		return f.given("changeset")
	case "Reveal":
		given = f.reveal
	case "Protect":
		given = f.protect
	case "AllowedDomains":
		given = f.allowDomain
	case "DeniedDomains":
		given = f.denyDomain
	case "AllowedIPs":
		given = f.allowIP
	case "Publish":
		given = f.publish
	case "HostPorts":
		return slices.Contains(f.hostPorts, ce.Value) || slices.Contains(f.hostPorts, ce.Value+"/tcp")
	}
	if n, ok := strings.CutPrefix(configNames[ce.Field].flag, "--"); ok && strings.HasPrefix(ce.Field, "Limits.") {
		return f.given(n)
	}
	return slices.Contains(given, ce.Value)
}
