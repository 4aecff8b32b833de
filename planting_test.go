package corral

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/corralhq/corral/internal/ladder"
)

func TestWithoutPlantingGuard(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rung  Rung
		allow []string
		want  bool
	}{
		{"full rung guards", RungFull, nil, false},
		{"landlock rung cannot", RungLandlock, nil, true},
		{"landlock rung, one name allowed", RungLandlock, []string{".git"}, true},
		{"landlock rung, nothing to guard", RungLandlock, ProtectedNames(), false},
		{"none says every layer already", RungNone, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &ladder.Plan{Rung: tc.rung}
			withoutPlantingGuard(p, protectedNames(tc.allow, nil))
			var names []Layer
			for _, l := range p.Without {
				names = append(names, l.Name)
			}
			if tc.want {
				assert.Equal(t, []Layer{LayerProtect}, names)
				assert.Contains(t, p.Warning(), "protect (no mount namespace")
			} else {
				assert.Empty(t, names)
			}
		})
	}
}
