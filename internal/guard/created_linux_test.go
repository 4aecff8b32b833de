package guard

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestProtects(t *testing.T) {
	s := &Session{roots: []root{{path: "/ws"}, {path: "/ws/sub"}}, names: Names()}
	cases := []struct {
		dir, name string
		want      bool
	}{
		{"/ws", ".vscode", true},
		{"/ws/a/b", ".envrc", true},
		{"/ws", ".bashrc", true},
		{"/ws/a", ".bashrc", false},
		{"/ws/.config", "fish", true},
		{"/ws/a/.config", "fish", false},
		{"/ws/sub", ".bashrc", true}, // the top of the innermost root
		{"/ws", "notes.txt", false},
		{"/other", ".vscode", false},
		{"/ws", ".", false},
		{"", ".vscode", true}, // a directory too deep to name: fail closed
		{"", ".bashrc", false},
	}
	for _, c := range cases {
		_, got := s.Protects(c.dir, c.name)
		assert.Equal(t, c.want, got, "%s / %s", c.dir, c.name)
	}
	_, got := s.HoldsProtected("/ws", ".config")
	assert.True(t, got, "a directory renamed to .config brings .config/fish with it")
	_, got = s.HoldsProtected("/ws/a", ".config")
	assert.False(t, got)

	allowed := &Session{roots: []root{{path: "/ws"}}, names: []string{".envrc"}}
	_, got = allowed.Protects("/ws", ".vscode")
	assert.False(t, got, "a name AllowPlanting lists is not protected")
}
