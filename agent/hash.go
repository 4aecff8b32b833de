package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/corralhq/corral/config"
)

// ConfigHash is the hash of everything that shapes an agent's persistent
// sandbox: its resolved [agents.sandbox] table and its workspace. What only
// decides when the sandbox is pruned, where media come from or which file
// the table was read from is left out, so changing it recreates nothing.
func ConfigHash(s config.Sandbox, workspace string) string {
	s.ConfigFile, s.PruneIdle, s.PruneMaxAge, s.MediaDir, s.StateDir = "", 0, 0, "", ""
	data, err := json.Marshal(struct {
		Sandbox   config.Sandbox
		Workspace string
	}{s, workspace})
	if err != nil {
		panic("agent: config hash: " + err.Error()) // plain data always encodes
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:12])
}
