package corral

// dropper is a process that reports, after Wait, what the command wrote
// under protected names and what of it did not reach the host.
type dropper interface {
	Dropped() []string
}

// Dropped returns, after Wait, what the command wrote under a protected
// name (see [ProtectedNames]) that was not merged back into the host, or
// that was moved into the writable root's .corral-held directory: one
// line each, naming the path and the reason. It is empty when nothing was
// dropped, before Wait, and on backends that stage nothing.
func (c *Cmd) Dropped() []string {
	if d, ok := c.proc.(dropper); ok && c.exited.Load() {
		return d.Dropped()
	}
	return nil
}
