package nsjail

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestIDMappings(t *testing.T) {
	all := []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
	tests := []struct {
		name     string
		euid, id int
		want     []syscall.SysProcIDMap
	}{
		{"root maps every id", 0, 0, all},
		{"root with another group maps every id", 0, 27, all},
		{"a user maps its own id only", 1000, 1000, []syscall.SysProcIDMap{{ContainerID: 1000, HostID: 1000, Size: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, uidMappings(tt.euid, tt.id))
			assert.Equal(t, tt.want, gidMappings(tt.euid, tt.id))
		})
	}
}
