package mounts

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOverlayOptions(t *testing.T) {
	tests := []struct {
		lower, upper, work, want string
	}{
		{"/ws", "/cs/upper", "/cs/work", "lowerdir=/ws,upperdir=/cs/upper,workdir=/cs/work,userxattr"},
		{"/a,b", "/c:d", `/e\f`, `lowerdir=/a\,b,upperdir=/c\:d,workdir=/e\\f,userxattr`},
		{"/x,upperdir=/etc", "/u", "/w", `lowerdir=/x\,upperdir=/etc,upperdir=/u,workdir=/w,userxattr`},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, overlayOptions(tt.lower, tt.upper, tt.work))
	}
}
