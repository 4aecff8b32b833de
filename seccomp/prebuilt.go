package seccomp

import (
	"bytes"
	"embed"
	"fmt"
	"runtime"
	"strings"
)

// The programs for every Options, generated ahead for the architectures in
// prebuiltArchs by `go generate` (TestPrebuilt with -update, which needs
// cgo, libseccomp-dev and the libseccomp build tag). Every build therefore
// filters alike without linking libseccomp, and no sandbox pays for
// compiling.
//
//go:generate go test -tags libseccomp -run TestPrebuilt -update .
//go:embed prebuilt
var prebuiltFS embed.FS

// prebuiltArchs are the architectures with programs in prebuilt/.
var prebuiltArchs = []string{"amd64", "arm64"}

// compilerFile names the libseccomp that generated prebuilt/.
const compilerFile = "prebuilt/compiler"

// Filter returns the program for o on this architecture: the one generated
// ahead where there is one, else compiled now, which needs a build with cgo
// and the libseccomp tag.
func Filter(o Options) ([]byte, error) {
	if b, err := prebuiltFS.ReadFile(prebuiltPath(runtime.GOARCH, o)); err == nil {
		return b, nil
	}
	return Compile(Policy(o))
}

// Available reports whether this build and this kernel can filter; when
// not, why.
func Available() (bool, string) {
	if err := KernelSupport(); err != nil {
		return false, err.Error()
	}
	if hasPrebuilt() {
		return true, ""
	}
	return compiler()
}

// Version describes where this build's programs come from.
func Version() string {
	if hasPrebuilt() {
		b, _ := prebuiltFS.ReadFile(compilerFile)
		return "generated ahead by " + strings.TrimSpace(string(b))
	}
	return compilerVersion()
}

func hasPrebuilt() bool {
	_, err := prebuiltFS.ReadFile(prebuiltPath(runtime.GOARCH, Options{}))
	return err == nil
}

func prebuiltPath(goarch string, o Options) string {
	return "prebuilt/" + goarch + "/" + o.name() + ".bpf"
}

// name is o's file name in prebuilt/: the options set, or "default".
func (o Options) name() string {
	var set []string
	if o.AllowPtrace {
		set = append(set, "allow-ptrace")
	}
	if o.AllowUnixSockets {
		set = append(set, "allow-unix-sockets")
	}
	if o.DenyInet {
		set = append(set, "deny-inet")
	}
	if o.TCPOnly && !o.DenyInet {
		set = append(set, "tcp-only")
	}
	if len(set) == 0 {
		return "default"
	}
	return strings.Join(set, "+")
}

// PrebuiltName returns the name of the program generated ahead for this
// architecture that is byte for byte prog, if there is one. A process that
// embeds the same programs can then load it by that name
// ([PrebuiltProgram]) instead of receiving it.
func PrebuiltName(prog []byte) (string, bool) {
	dir := "prebuilt/" + runtime.GOARCH
	entries, err := prebuiltFS.ReadDir(dir)
	if err != nil {
		return "", false
	}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".bpf")
		if !ok {
			continue
		}
		if b, err := prebuiltFS.ReadFile(dir + "/" + e.Name()); err == nil && bytes.Equal(b, prog) {
			return name, true
		}
	}
	return "", false
}

// PrebuiltProgram returns the program generated ahead for this
// architecture under name (see [PrebuiltName]).
func PrebuiltProgram(name string) ([]byte, error) {
	if name == "" || strings.ContainsAny(name, "/.") {
		return nil, fmt.Errorf("no program generated ahead is named %q", name)
	}
	b, err := prebuiltFS.ReadFile("prebuilt/" + runtime.GOARCH + "/" + name + ".bpf")
	if err != nil {
		return nil, fmt.Errorf("no program generated ahead is named %q for %s", name, runtime.GOARCH)
	}
	return b, nil
}
