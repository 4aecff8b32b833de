package config

import "slices"

// mergeSandbox is an agent's [agents.sandbox] over [defaults.sandbox]:
// each key the agent sets wins over the default (each limit of the limits
// table too); env, the path lists and the network lists are the defaults'
// followed by the agent's.
func mergeSandbox(def, agent *sandboxDoc) *sandboxDoc {
	if def == nil {
		return agent
	}
	if agent == nil {
		c := *def
		return &c
	}
	m := *agent
	for _, f := range []struct{ dst, src **string }{
		{&m.Mode, &def.Mode}, {&m.Workspace, &def.Workspace}, {&m.Network, &def.Network},
		{&m.Fallback, &def.Fallback}, {&m.Changeset, &def.Changeset}, {&m.Scope, &def.Scope},
		{&m.WorkspaceAccess, &def.WorkspaceAccess}, {&m.StateDir, &def.StateDir},
		{&m.PruneIdle, &def.PruneIdle}, {&m.PruneMaxAge, &def.PruneMaxAge}, {&m.MediaDir, &def.MediaDir},
	} {
		if *f.dst == nil {
			*f.dst = *f.src
		}
	}
	for _, f := range []struct{ dst, src **bool }{
		{&m.AllowHome, &def.AllowHome}, {&m.AllowUnixSockets, &def.AllowUnixSockets},
		{&m.AllowPtrace, &def.AllowPtrace}, {&m.PersistHome, &def.PersistHome}, {&m.RealPaths, &def.RealPaths},
		{&m.PublishAny, &def.PublishAny},
	} {
		if *f.dst == nil {
			*f.dst = *f.src
		}
	}
	for _, f := range []struct{ dst, src *[]string }{
		{&m.WritablePaths, &def.WritablePaths}, {&m.ReadOnlyPaths, &def.ReadOnlyPaths},
		{&m.HiddenPaths, &def.HiddenPaths}, {&m.Env, &def.Env}, {&m.AllowPlanting, &def.AllowPlanting},
		{&m.Protect, &def.Protect},
		{&m.Reveal, &def.Reveal}, {&m.ChangesetPaths, &def.ChangesetPaths}, {&m.Bootstrap, &def.Bootstrap},
		{&m.AllowedDomains, &def.AllowedDomains}, {&m.DeniedDomains, &def.DeniedDomains},
		{&m.AllowedIPs, &def.AllowedIPs}, {&m.Publish, &def.Publish},
	} {
		if *f.src != nil {
			*f.dst = slices.Concat(*f.src, *f.dst)
		}
	}
	if def.HostPorts != nil {
		m.HostPorts = slices.Concat(def.HostPorts, m.HostPorts)
	}
	if m.ProxyConnections == nil {
		m.ProxyConnections = def.ProxyConnections
	}
	if def.Binds != nil {
		m.Binds = slices.Concat(def.Binds, m.Binds)
	}
	if def.Secrets != nil {
		m.Secrets = slices.Concat(def.Secrets, m.Secrets)
	}
	if m.Zones == nil {
		m.Zones = def.Zones // a declaration is replaced whole, never merged
	}
	m.Limits = mergeLimits(def.Limits, m.Limits)
	return &m
}

// mergeLimits is an agent's limits table over the defaults': each limit
// the agent sets wins.
func mergeLimits(def, agent *limitsDoc) *limitsDoc {
	if def == nil {
		return agent
	}
	if agent == nil {
		c := *def
		return &c
	}
	m := *agent
	for _, f := range []struct{ dst, src *any }{
		{&m.Memory, &def.Memory}, {&m.Pids, &def.Pids}, {&m.CPUs, &def.CPUs}, {&m.TmpSize, &def.TmpSize},
		{&m.FileSize, &def.FileSize}, {&m.OpenFiles, &def.OpenFiles}, {&m.CPUTime, &def.CPUTime},
	} {
		if *f.dst == nil {
			*f.dst = *f.src
		}
	}
	return &m
}
