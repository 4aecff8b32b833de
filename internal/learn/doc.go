// Package learn turns what one run of a command was refused, and what it
// wrote and reached while nothing it did could land, into the smallest
// agent config (the TOML corral's --config reads) that lets the command run
// with no refusal. It decides and writes text only: running the command is
// corral.Learn's (the module root), which hands in what it saw as a [Seen].
//
// Each [Entry] says why it is there: the first path or destination that
// needed it and how many times. An entry that would lift one of corral's
// protections (the home writable, a protected name, a credential store) is
// kept, marked with the reason, and written commented out: it is never
// applied silently.
package learn
