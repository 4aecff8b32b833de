// Package ladder is the rung ladder of corral's sandboxes: what the host
// offers, found by a probe once per process, and which rung a sandbox runs
// on there ([Choose]), with the reason for every layer it goes without;
// and, per rung, which resource limits it enforces and how
// ([LimitHost.Enforces]). Choose is pure: tests give it any [Host].
//
// The Linux backend (package nsjail) gives the verdicts on the namespace
// features and their reasons, packages landlock and seccomp theirs, and
// package seatbelt whether sandbox-exec applies a profile; this package
// names them as layers. It imports nothing of the root package: corral
// calls its types by their public names (corral.Rung, corral.Layer,
// corral.LayerStatus, corral.Fallback, each constant documented there),
// and reports a [Refusal] as a corral.SetupError of the missing layer.
// docs/layers.md says what each rung guarantees.
package ladder
