// Package agent is the layer above one sandbox that an agent platform
// needs: which of an agent's sessions run sandboxed, which persistent
// sandbox each uses, what it sees of the agent's workspace, and when the
// sandboxes are cleaned up. Everything goes through corral.Sandbox; there
// are no containers.
//
// # Policy
//
// The policy is the config file's (package config): [defaults.sandbox]
// under each agent's [agents.sandbox]. mode says who is sandboxed ("off",
// "non-main": every session but the agent's main_session, "all"); scope
// which sessions share a sandbox ("session", "agent", "shared": the
// [ScopeKey]); workspace_access what of the agent's workspace it sees
// ("rw": it is the workspace; "ro": the sandbox's own workspace at
// /workspace, the agent's read-only at /agent; "none": only its own).
//
//	rt, err := agent.New(cfg, agent.Options{})
//	s, err := rt.Session("coder", "chat-42")
//	out, err := s.Sandbox.Command(ctx, "go", "build", "./...").CombinedOutput()
//
// # Persistent state
//
// A sandbox's state lies in <state>/sandboxes/<slug> ([DefaultStateDir] is
// $XDG_STATE_HOME/corral): its own workspace, the changes to its layered
// home (corral.Config.PersistHome: the host's home is the read-only lower
// layer and is never written; the credential stores stay hidden) and its
// /tmp (corral.Config.PersistTmp). Caches such as ~/.cache, ~/go or ~/.npm
// therefore work and last for the scope's lifetime, per scope. The whole
// state directory is hidden from every sandbox. Commands of one scope run
// one at a time (overlayfs allows one live mount of an upper directory).
//
// # Registry, config hash, prune
//
// A [Registry] (JSON, written whole under a lock: safe for concurrent
// corral processes) records each sandbox: its key, agent, creation, last
// use and [ConfigHash]. When the hash changes, a sandbox used within
// [HotFor] keeps its state and is marked stale; an idle one is recreated
// (its home and /tmp discarded) on its next use. [Runtime.Prune] removes
// sandboxes idle longer than prune_idle or older than prune_max_age, with
// their state; [Runtime.Session] prunes at most every [PruneEvery].
//
// # Limitations
//
// Persistent sandboxes, like mount destinations, need the full rung (a
// mount namespace): on the landlock and seatbelt rungs Session fails,
// naming the layer. A hot sandbox whose configuration changed in another
// process is rebuilt from the new configuration here, over the old state.
// The scope "shared" is one sandbox built from whichever agent resolves
// it: agents with different tables recreate it in turn.
package agent
