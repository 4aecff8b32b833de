package preflight

import (
	"fmt"
	"runtime"

	"github.com/corralhq/corral"
)

// Primitives are the five independent settings of a spawn: each one is set
// by its own part of a corral.Config (or the host), and none constrains
// another.
type Primitives struct {
	// Changeset: where the workspace's writes go: "none" (written
	// directly) or "overlay DIR" (kept for review), from Config.Changeset.
	Changeset string `json:"changeset"`
	// Platform: where the agent's commands run. Only "local" (this host)
	// exists.
	Platform string `json:"platform"`
	// Isolation: "kernel sandbox" with what happens when the host lacks a
	// layer (Config.Fallback), or "none" (Config.Mode disabled).
	Isolation string `json:"isolation"`
	// Outputs: what the network lets commands reach: "host" or "none",
	// from Config.Network.
	Outputs string `json:"outputs"`
	// Software: the operating system commands run on: the one profile
	// prints for (GOOS/GOARCH on this host).
	Software string `json:"software"`
}

// PrimitivesOf returns c's five primitives for commands run on os ("linux"
// or "darwin").
func PrimitivesOf(c corral.Config, os string) Primitives {
	p := Primitives{Changeset: "none", Platform: "local", Outputs: string(c.Network), Software: os}
	if c.Changeset != "" {
		p.Changeset = "overlay " + c.Changeset
	}
	if p.Outputs == "" {
		p.Outputs = string(corral.NetworkHost)
	}
	if os == runtime.GOOS {
		p.Software = os + "/" + runtime.GOARCH
	}
	fallback := c.Fallback
	if fallback == "" {
		fallback = corral.FallbackFail
	}
	switch {
	case c.Mode == corral.ModeDisabled:
		p.Isolation = "none (mode disabled)"
	case os == "darwin":
		p.Isolation = fmt.Sprintf("kernel sandbox: seatbelt (fallback %s)", fallback)
	default:
		p.Isolation = fmt.Sprintf("kernel sandbox: namespaces, landlock, seccomp (fallback %s)", fallback)
	}
	return p
}

// Lines returns the primitives as "name  value" lines, in the spec's
// order.
func (p Primitives) Lines() []string {
	return []string{
		"changeset  " + p.Changeset,
		"platform   " + p.Platform,
		"isolation  " + p.Isolation,
		"outputs    " + p.Outputs,
		"software   " + p.Software,
	}
}
