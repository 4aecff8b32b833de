// Package preflight decides, before an agent starts, whether it can run as
// configured: pass or fail, with every reason, and no degraded mode.
//
//	r := preflight.Run(ctx, preflight.Spec{
//		Config: cfg,            // the sandbox its commands run in
//		Access: access,         // the zones it reaches
//		Checks: []preflight.Check{
//			preflight.SandboxCommand("aws", cfg, "aws", "sts", "get-caller-identity"),
//		},
//	})
//	if err := r.Err(); err != nil {
//		return err // to the parent; the agent never starts
//	}
//
// # Checks
//
//   - config: the sandbox's corral.Config resolves as corral.New would
//     resolve it.
//   - layers: this host gives every layer that config needs, by
//     corral.Doctor with the fallback refused: a policy that would run
//     weaker fails here.
//   - paths: the workspace, each writable, read-only and zone path exists
//     and the caller may read it, and write it where it is to write.
//   - the caller's checks, concurrently, each within its timeout.
//
// Every check runs whatever the others found, so one preflight lists
// everything to fix.
//
// # The five primitives
//
// [Primitives] names the spawn's five independent settings (changeset,
// platform, isolation, outputs, software), as `corral profile` prints
// them.
//
// # Limitations
//
// A preflight describes the host at the moment it ran: a path removed
// after it passed still fails the spawn, later, with corral's own error.
// Allowed network names are not resolved yet.
package preflight
