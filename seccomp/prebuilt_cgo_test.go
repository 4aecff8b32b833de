//go:build linux && cgo && libseccomp

package seccomp

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	libseccomp "github.com/seccomp/libseccomp-golang"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

var update = flag.Bool("update", false, "regenerate the programs in prebuilt/")

// TestPrebuilt regenerates prebuilt/ with -update (go generate), and
// otherwise checks that what it holds is the policy: every system call of
// each architecture, with and without the arguments a rule matches, gets
// from the program what Policy says, run through a BPF simulator.
func TestPrebuilt(t *testing.T) {
	if *update {
		writePrebuilt(t)
	}
	for _, goarch := range prebuiltArchs {
		for _, o := range allOptions() {
			t.Run(goarch+"/"+o.name(), func(t *testing.T) {
				b, err := prebuiltFS.ReadFile(prebuiltPath(goarch, o))
				require.NoError(t, err, "run go generate ./seccomp")
				prog, err := decode(b)
				require.NoError(t, err)
				checkProgram(t, goarch, prog, Policy(o))
			})
		}
	}
}

func writePrebuilt(t *testing.T) {
	for _, goarch := range prebuiltArchs {
		dir := filepath.Join("prebuilt", goarch)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		for _, o := range allOptions() {
			b, err := compileFor(goarch, Policy(o))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, o.name()+".bpf"), b, 0o644))
		}
	}
	require.NoError(t, os.WriteFile(compilerFile, []byte(compilerVersion()+"\n"), 0o644))
	// The embedded copies are the ones read before this run: check those
	// written on the next.
	t.Log("prebuilt/ regenerated: run the tests again to check it")
}

// checkProgram runs prog on every call number the architecture knows.
func checkProgram(t *testing.T, goarch string, prog []unix.SockFilter, rules []Rule) {
	arch := scmpArchs[goarch]
	byName := map[string][]Rule{}
	for _, r := range rules {
		byName[r.Syscall] = append(byName[r.Syscall], r)
	}
	run := func(d seccompData) uint32 {
		d.arch = auditArch[goarch]
		ret, err := simulate(prog, d)
		require.NoError(t, err)
		return ret
	}
	seen := map[string]bool{}
	for nr := int32(0); nr < 1024; nr++ {
		name, err := libseccomp.ScmpSyscall(nr).GetNameByArch(arch)
		if err != nil {
			assert.Equal(t, uint32(retAllow), run(seccompData{nr: nr}), "unnamed call %d", nr)
			continue
		}
		seen[name] = true
		rs := byName[name]
		if len(rs) == 1 && rs[0].Arg == nil {
			assert.Equal(t, retErrno|uint32(rs[0].Errno), run(seccompData{nr: nr}), "%s", name)
			continue
		}
		assert.Equal(t, uint32(retAllow), run(seccompData{nr: nr}), "%s with zero arguments", name)
		for _, r := range rs {
			require.NotNil(t, r.Arg, "%s: a call is either always or conditionally refused", name)
			var d seccompData
			d.nr = nr
			d.args[r.Arg.Index] = r.Arg.Value
			if r.And != nil {
				d.args[r.And.Index] = r.And.Value
			}
			assert.Equal(t, retErrno|uint32(r.Errno), run(d), "%s: %s", name, r.Reason)
			// Bits outside the mask do not let a call slip past.
			d.args[r.Arg.Index] |= ^r.Arg.Mask
			if r.And != nil {
				d.args[r.And.Index] |= ^r.And.Mask
			}
			assert.Equal(t, retErrno|uint32(r.Errno), run(d), "%s with more bits set", name)
			if r.And != nil {
				// The first argument alone does not refuse the call.
				d.args[r.And.Index] = 0
				assert.Equal(t, uint32(retAllow), run(d), "%s with only its first argument matching", name)
			}
		}
	}
	for name := range byName {
		assert.True(t, seen[name], "%s is not a call on %s", name, goarch)
	}
	if goarch == "amd64" {
		// So do the x32 ABI's (call numbers with bit 30 set).
		assert.Equal(t, uint32(retKillProcess), run(seccompData{nr: 0x4000_0000 + 165}), "x32 mount")
	}
	// Any other architecture's entry points kill.
	for other, token := range auditArch {
		if other != goarch {
			ret, err := simulate(prog, seccompData{arch: token})
			require.NoError(t, err)
			assert.Equal(t, uint32(retKillProcess), ret, "%s call on %s", other, goarch)
		}
	}
}

func TestAllOptions(t *testing.T) {
	// A new option needs its programs generated: allOptions and name must
	// know it.
	assert.Equal(t, 4, reflect.TypeOf(Options{}).NumField())
	names := map[string]bool{}
	for _, o := range allOptions() {
		names[o.name()] = true
	}
	assert.Len(t, names, 12)
}
