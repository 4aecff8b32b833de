package nsjail

import (
	"encoding/json"
	"testing"

	"github.com/corralhq/corral/mounts"
	"github.com/corralhq/corral/seccomp"
)

// BenchmarkSetupJSON is what one sandbox's setup costs in JSON, both
// ways, with the seccomp filter carried and with it named.
func BenchmarkSetupJSON(b *testing.B) {
	prog, err := seccomp.Filter(seccomp.Options{})
	if err != nil {
		b.Skip(err)
	}
	o := Options{Workspace: "/home/u/ws", Writable: []string{"/home/u/.cache"}, Protected: []string{".git", ".vscode"}, Seccomp: prog}
	in := o.Input()
	carried := setup{Plan: mounts.Build(in), Paths: in, Workspace: o.Workspace, Seccomp: prog}
	named := carried
	nameSeccomp(&named)
	for _, bc := range []struct {
		name string
		s    setup
	}{{"carried", carried}, {"named", named}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				msg, err := json.Marshal(&bc.s)
				if err != nil {
					b.Fatal(err)
				}
				var got setup
				if err := json.Unmarshal(msg, &got); err != nil {
					b.Fatal(err)
				}
				if err := resolveSeccomp(&got); err != nil {
					b.Fatal(err.err())
				}
			}
		})
	}
}
