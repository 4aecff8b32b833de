package nsjail

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/corralhq/corral/limits"
	"github.com/corralhq/corral/mounts"
	"github.com/corralhq/corral/seccomp"
)

// The listener stops reads only for a report that asks for them of a
// sandbox that hides something, and execs only for a memory limit.
func TestAlsoOf(t *testing.T) {
	hidden := mounts.Input{Hidden: []string{"/home/u/.ssh"}}
	cases := []struct {
		name   string
		s      setup
		report bool
		want   seccomp.Also
	}{
		{"nothing", setup{reportReads: true}, true, seccomp.Also{}},
		{"hidden, reads", setup{Paths: hidden, reportReads: true}, true, seccomp.Also{Reads: true}},
		{"hidden, writes only", setup{Paths: hidden}, true, seccomp.Also{}},
		{"hidden, no report", setup{Paths: hidden, reportReads: true}, false, seccomp.Also{}},
		{"memory", setup{Limits: limits.Set{Memory: 32 << 20}}, false, seccomp.Also{Execs: true}},
		{"both", setup{Paths: hidden, reportReads: true, Limits: limits.Set{Memory: 32 << 20}}, true, seccomp.Also{Reads: true, Execs: true}},
		{"other limits", setup{Limits: limits.Set{OpenFiles: 64}}, true, seccomp.Also{}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, alsoOf(&c.s, c.report), c.name)
	}
}

// The init keeps the memory limit off itself only when its listener sets
// it on the command.
func TestLimitsOfInit(t *testing.T) {
	s := setup{Limits: limits.Set{Memory: 32 << 20, OpenFiles: 64}}
	assert.Equal(t, s.Limits, limitsOfInit(&s), "no listener: the init applies it to itself")
	s.listener = &listener{limit: &execLimit{memory: s.Limits.Memory}}
	assert.Equal(t, limits.Set{OpenFiles: 64}, limitsOfInit(&s))
}
