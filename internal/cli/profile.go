package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/internal/guard"
	"github.com/corralhq/corral/preflight"
)

func newProfileCmd() *cobra.Command {
	var f runFlags
	var platform string
	cmd := &cobra.Command{
		Use:   "profile [--platform linux|darwin] [run flags] [-- CMD [ARG...]]",
		Short: "Print the sandbox run would build, without running anything",
		Long: `Print what 'corral run' with the same flags would build: for linux the
protection layers and the mount plan, for darwin the Seatbelt profile and the
parameters sandbox-exec gets. Paths are resolved on this machine, as run
resolves them. Nothing is started, so this works on any OS. A command after
-- is accepted and ignored, so a run command line can be pasted as it is.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && cmd.ArgsLenAtDash() != 0 {
				return usageError("unexpected argument %q: a command goes after --", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printProfile(cmd.OutOrStdout(), platform, &f)
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&platform, "platform", runtime.GOOS, "print for `OS`: linux or darwin")
	return cmd
}

func printProfile(w io.Writer, platform string, f *runFlags) error {
	if platform != "linux" && platform != "darwin" {
		return usageError("--platform %q: want linux or darwin", platform)
	}
	if err := f.validate(); err != nil {
		return err
	}
	cfg, err := f.config()
	var ee *exitError
	if errors.As(err, &ee) {
		return err // a --config file that does not load: a usage error, as for run
	}
	if err != nil {
		return &exitError{code: exitSetup, msg: err.Error()}
	}
	if err := f.needsChangeset(cfg); err != nil {
		return err
	}
	hidden, err := cfg.DefaultHidden()
	if err != nil {
		return f.configFailure(err)
	}
	plan, err := cfg.MountPlan()
	if err != nil {
		return f.configFailure(err)
	}
	if cfg, err = cfg.Resolved(); err != nil {
		return f.configFailure(err)
	}
	if platform == "darwin" {
		if cfg.Changeset != "" {
			return &exitError{code: exitSetup, msg: "--changeset needs overlayfs, which only Linux has"}
		}
		printPrimitives(w, "; ", preflight.PrimitivesOf(cfg, platform))
		return printSeatbelt(w, cfg, hidden)
	}
	printPrimitives(w, "", preflight.PrimitivesOf(cfg, platform))
	printLinux(w, cfg, hidden, plan)
	return printLimits(w, cfg.Limits)
}

// printLimits lists the limits in force: what run asks the host for.
func printLimits(w io.Writer, l corral.Limits) error {
	values, err := l.Values()
	if err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	fmt.Fprintln(w, "\nlimits (those the host cannot enforce: see 'corral doctor'):")
	for _, v := range values {
		def := ""
		if v.Default {
			def = " (default)"
		}
		fmt.Fprintf(w, "  %-11s %s%s\n", v.Name, v.Value, def)
	}
	return nil
}

// printPrimitives prints the five settings of a spawn, each independent of
// the others.
func printPrimitives(w io.Writer, prefix string, p preflight.Primitives) {
	fmt.Fprintf(w, "%sprimitives:\n", prefix)
	for _, l := range p.Lines() {
		fmt.Fprintf(w, "%s  %s\n", prefix, l)
	}
	fmt.Fprintln(w, strings.TrimSpace(prefix))
}

// printHidden lists the credential stores hidden without being asked.
func printHidden(w io.Writer, prefix string, hidden []string) {
	fmt.Fprintf(w, "%scredential stores hidden by default (--reveal PATH shows one):", prefix)
	if len(hidden) == 0 {
		fmt.Fprint(w, " none here")
	}
	fmt.Fprintln(w)
	for _, h := range hidden {
		fmt.Fprintf(w, "%s  %s\n", prefix, h)
	}
}

// layer is one protection of the Linux backend, as profile lists it, under
// its corral.Layer name.
type layer struct {
	name corral.Layer
	what string
	when func(corral.Config) bool // nil: always
}

// linuxLayers are the Linux backend's layers, outermost first.
var linuxLayers = []layer{
	{name: corral.LayerUserNS, what: "runs as the caller's uid, no capabilities on the host"},
	{name: corral.LayerMountNS, what: "read-only host root, private /tmp, minimal /dev, the mounts below"},
	{name: corral.LayerPIDNS, what: "host processes invisible; everything ends with the command"},
	{name: corral.LayerKernelNS, what: "no host System V IPC or POSIX message queues, own host name and cgroup view"},
	{name: corral.LayerProc, what: "a fresh /proc for the sandbox's processes only"},
	{name: corral.LayerNetNS, what: "loopback only, no route out (--net none)",
		when: func(c corral.Config) bool { return c.Network == corral.NetworkNone }},
	{name: corral.LayerNetNS, what: "loopback only; the only way out is corral's proxy, served from outside (--net allow)",
		when: func(c corral.Config) bool { return c.Network == corral.NetworkAllow }},
	{name: corral.LayerOverlay, what: "workspace writes kept in the changeset (--changeset), and those to --changeset-writable paths",
		when: func(c corral.Config) bool { return c.Changeset != "" }},
	{name: corral.LayerLandlock, what: "writes only where the mounts allow; signals and abstract sockets stay inside"},
	{name: corral.LayerSeccomp, what: "no mount, namespace, keyring, bpf, ptrace or io_uring calls, no TIOCSTI, no unix sockets unless allowed"},
}

// printLinux prints the Linux backend's layers and plan, the mounts
// corral.Config.MountPlan says the backend makes.
func printLinux(w io.Writer, cfg corral.Config, hidden, plan []string) {
	fmt.Fprintln(w, "layers:")
	for _, l := range linuxLayers {
		if l.when == nil || l.when(cfg) {
			fmt.Fprintf(w, "  %-18s %s\n", l.name, l.what)
		}
	}
	fmt.Fprintln(w)
	printNetwork(w, "", cfg)
	fmt.Fprintln(w)
	printHidden(w, "", hidden)
	if len(cfg.PolicyFiles) > 0 {
		fmt.Fprintln(w, "\npolicy files, read-only to the command:")
		for _, p := range cfg.PolicyFiles {
			fmt.Fprintf(w, "  %s\n", p)
		}
	}
	fmt.Fprintln(w, "\nmounts, in order (pin: only if the path exists when the command starts):")
	for _, m := range plan {
		fmt.Fprintf(w, "  %s\n", m)
	}
	printProtected(w, cfg)
}

// printProtected lists the protected names in force: git directories
// (bare repositories among them) are staged and merged back through an
// allowlist, a new HEAD staged, the others bound read-only, and new ones
// held when the command exits.
func printProtected(w io.Writer, cfg corral.Config) {
	fmt.Fprintln(w, "\nprotected in every writable root (.git, and every directory whose HEAD git takes:")
	fmt.Fprintln(w, "staged, merged back through an allowlist; a new HEAD: staged, no repository to the host")
	fmt.Fprintln(w, "until the command exits; others: read-only; new or replaced ones: moved to .corral-held")
	fmt.Fprintln(w, "when the command exits):")
	in := cfg.Protected()
	for _, e := range guard.List() {
		if !slices.Contains(in, e.Name) {
			continue
		}
		where := "at the top"
		if e.Anywhere {
			where = "at any depth"
		}
		fmt.Fprintf(w, "  %-22s %-13s %s\n", e.Name, where, e.What)
	}
	for _, n := range cfg.Protect {
		e := guard.UserEntry(n)
		where := "at the top"
		if e.Anywhere {
			where = "at any depth"
		}
		fmt.Fprintf(w, "  %-22s %-13s %s\n", n, where, e.What)
	}
	if len(cfg.AllowPlanting) > 0 {
		fmt.Fprintf(w, "  left writable as is (allow_planting): %s\n", strings.Join(cfg.AllowPlanting, ", "))
	}
}

func printSeatbelt(w io.Writer, cfg corral.Config, hidden []string) error {
	p, err := cfg.SeatbeltProfile(filepath.Join(tempDir(), "corral-*"))
	if err != nil {
		return &exitError{code: exitSetup, msg: err.Error()}
	}
	fmt.Fprintln(w, "; corral profile for darwin. TMPDIR stands for the private directory")
	fmt.Fprintln(w, "; made for each command under the caller's temporary directory.")
	printNetwork(w, "; ", cfg)
	printHidden(w, "; ", hidden)
	fmt.Fprint(w, p)
	return nil
}

// tempDir is where run makes each command's temporary directory.
func tempDir() string {
	if d, err := filepath.EvalSymlinks(os.TempDir()); err == nil {
		return d
	}
	return os.TempDir()
}

// proxyPlaceholder stands for the proxy's two ports in a printed Seatbelt
// profile.
func proxyPlaceholder(cfg corral.Config) []int {
	if cfg.Network != corral.NetworkAllow {
		return nil
	}
	return []int{0, 0}
}

// printNetwork prints the network policy: with --net allow, the lists the
// proxy enforces.
func printNetwork(w io.Writer, prefix string, cfg corral.Config) {
	switch cfg.Network {
	case corral.NetworkAllow:
	case corral.NetworkNone:
		fmt.Fprintf(w, "%snetwork: none (loopback only)\n", prefix)
		printHostNet(w, prefix, cfg)
		return
	default:
		fmt.Fprintf(w, "%snetwork: host (the host's network, unfiltered)\n", prefix)
		return
	}
	fmt.Fprintf(w, "%snetwork: allow, through corral's HTTP and SOCKS5 proxy (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY name it)\n", prefix)
	list := func(what string, entries []string, none string) {
		if len(entries) == 0 {
			fmt.Fprintf(w, "%s  %s: %s\n", prefix, what, none)
			return
		}
		fmt.Fprintf(w, "%s  %s: %s\n", prefix, what, strings.Join(entries, ", "))
	}
	list("allowed domains", cfg.AllowedDomains, "none: nothing is reachable")
	list("denied domains (win over allowed)", cfg.DeniedDomains, "none")
	list("allowed IP ranges", cfg.AllowedIPs, "none: private, loopback, link-local, CGNAT and metadata addresses are refused")
	if n := cfg.ProxyConnections; n > 0 {
		fmt.Fprintf(w, "%s  connections through the proxy: at most %d open at once, more are refused\n", prefix, n)
	} else if n == corral.NoLimit {
		fmt.Fprintf(w, "%s  connections through the proxy: no limit\n", prefix)
	}
	printHostNet(w, prefix, cfg)
	printSecrets(w, prefix, cfg.Secrets)
}

// printHostNet prints the host ports and published ports of a network of
// the sandbox's own.
func printHostNet(w io.Writer, prefix string, cfg corral.Config) {
	ports := make([]string, len(cfg.HostPorts))
	for i, p := range cfg.HostPorts {
		ports[i] = strconv.Itoa(p)
	}
	if len(ports) == 0 {
		fmt.Fprintf(w, "%s  host ports: none (localhost is the sandbox's own loopback)\n", prefix)
	} else {
		fmt.Fprintf(w, "%s  host ports (localhost:PORT reaches the host's loopback, TCP only): %s\n", prefix, strings.Join(ports, ", "))
	}
	for _, e := range cfg.Publish {
		host, port, err := corral.ParsePublish(e)
		if err != nil {
			continue // New refuses it
		}
		fmt.Fprintf(w, "%s  published: http://%s on the host reaches port %d inside, while the command runs\n", prefix, host, port)
	}
}
