package nsjail

import (
	"encoding/json"
	"testing"

	"github.com/corralhq/corral/mounts"
	"github.com/corralhq/corral/seccomp"
)

// BenchmarkSetup is what one sandbox's setup costs on the wire, both
// ways, with the seccomp filter carried and with it named, against
// encoding/json (which the protocol used before). Both are measured in a
// warm process: a fresh init also pays json's per-type reflection once.
func BenchmarkSetup(b *testing.B) {
	prog, err := seccomp.Filter(seccomp.Options{})
	if err != nil {
		b.Skip(err)
	}
	o := Options{Workspace: "/home/u/ws", Writable: []string{"/home/u/.cache"}, Protected: []string{".git", ".vscode"}, Seccomp: prog}
	in := o.Input()
	carried := setup{Plan: mounts.Build(in), Paths: in, Workspace: o.Workspace, Seccomp: prog}
	named := carried
	nameSeccomp(&named)
	codecs := []struct {
		name      string
		marshal   func(any) ([]byte, error)
		unmarshal func([]byte, any) error
	}{{"wire", marshal, unmarshal}, {"json", json.Marshal, json.Unmarshal}}
	for _, bc := range []struct {
		name string
		s    setup
	}{{"carried", carried}, {"named", named}} {
		for _, c := range codecs {
			b.Run(bc.name+"/"+c.name, func(b *testing.B) { benchSetup(b, bc.s, c.marshal, c.unmarshal) })
		}
	}
}

func benchSetup(b *testing.B, s setup, marshal func(any) ([]byte, error), unmarshal func([]byte, any) error) {
	for b.Loop() {
		msg, err := marshal(&s)
		if err != nil {
			b.Fatal(err)
		}
		var got setup
		if err := unmarshal(msg, &got); err != nil {
			b.Fatal(err)
		}
		if err := resolveSeccomp(&got); err != nil {
			b.Fatal(err.err())
		}
	}
}
