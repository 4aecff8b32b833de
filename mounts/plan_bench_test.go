package mounts

import (
	"fmt"
	"testing"
)

// protected mirrors the length of corral.ProtectedNames, which every
// sandbox's plan expands in each writable root.
var protected = []string{
	".git/hooks", ".git/config", ".bashrc", ".bash_profile", ".bash_login", ".bash_logout",
	".profile", ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".config/fish",
	".vscode/tasks.json", ".vscode/settings.json", ".idea/workspace.xml", ".envrc",
}

// BenchmarkBuild builds the plan for the common sandbox (a workspace and
// the protected names) and for a large one with many paths of each kind, to
// show how building grows with the configuration. It runs once per
// sandbox, not per spawn.
func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{0, 10, 100} {
		in := Input{Writable: []string{"/home/u/ws"}, Protected: protected}
		for i := range n {
			in.Writable = append(in.Writable, fmt.Sprintf("/srv/w%d/data", i))
			in.ReadOnly = append(in.ReadOnly, fmt.Sprintf("/home/u/ws/ro%d", i))
			in.Hidden = append(in.Hidden, fmt.Sprintf("/home/u/ws/ro%d/secret", i))
		}
		b.Run(fmt.Sprintf("paths=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Build(in)
			}
		})
	}
}
