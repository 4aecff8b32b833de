package learn

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Event is one refusal a learning run saw, as corral.Violation reports it.
type Event struct {
	Kind    string // "write", "read", "plant", "network", "syscall", "limit"
	Target  string
	Rule    string
	Process string
	Count   int
	Probe   bool
}

// Connection is a destination the learning run's proxy reached.
type Connection struct {
	Host string // the name (or address) asked for
	Port int
	// Blocked says why the address it was dialled at lies in a range the
	// proxy refuses unless allowed_ips lists it ("loopback"); "" for a
	// public address.
	Blocked string
	Addr    string // the address dialled, when known
	Count   int
}

// Seen is what a learning run saw and the policy it ran under.
type Seen struct {
	// Home is the caller's home, layered during the run; HomeWrites are
	// the host paths of what the command wrote there, in the order found.
	Home       string
	HomeWrites []string
	Events     []Event
	// Connections are what the proxy reached; Reached tells that the run
	// reached destinations at all (else every one was refused and is an
	// Event).
	Connections []Connection
	// Writable are the paths already writable (the workspace among them);
	// Network is the network the policy had ("host", "none", "allow").
	Writable []string
	Network  string
	Domains  []string // allowed_domains already in force
	// CredentialStores are the paths hidden by default; Protected the
	// names guarded in every writable root (corral.ProtectedNames).
	CredentialStores []string
	Protected        []string
	// Exists tells whether a host path exists; nil uses the host's.
	Exists func(string) bool
	// Given are the settings the run was given (on the command line),
	// written first so that the config stands on its own.
	Given []Entry
}

// Entry is one key, or one element of a list key, of the learned config.
type Entry struct {
	// Key is the key in [agents.sandbox] ("writable_paths"), or
	// "limits.NAME" in its limits table.
	Key string
	// Value is the TOML value: a list element for list keys, else the
	// whole value ("true", "\"allow\"", "1024").
	Value string
	// Why is the first path or call that needed it, and the count.
	Why string
	// Weakens, when set, says which protection the entry would lift: it
	// is written commented out.
	Weakens string
	// Warning is written beside an entry that is in force but costs
	// something (an address range opened).
	Warning string
	// Given marks a setting the run was given rather than learned.
	Given bool
}

// IsList tells whether Key holds a list.
func (e Entry) IsList() bool { return listKeys[e.Key] }

var listKeys = map[string]bool{
	"writable_paths": true, "allowed_domains": true, "allowed_ips": true,
	"reveal": true, "allow_planting": true, "read_only_paths": true, "hidden_paths": true,
	"denied_domains": true,
}

// Policy is what a learning run found the command needs.
type Policy struct {
	Entries []Entry
	// Notes are things no key allows, said in words.
	Notes []string
}

// Active returns the entries in force (not commented out) of key.
func (p *Policy) Active(key string) []Entry {
	var out []Entry
	for _, e := range p.Entries {
		if e.Key == key && e.Weakens == "" {
			out = append(out, e)
		}
	}
	return out
}

// Build decides the policy from s.
func Build(s Seen) *Policy {
	b := &builder{s: s, p: &Policy{}}
	for _, e := range s.Given {
		e.Given = true
		b.p.Entries = append(b.p.Entries, e)
	}
	if b.s.Exists == nil {
		b.s.Exists = exists
	}
	b.writes()
	b.network()
	b.others()
	return b.p
}

type builder struct {
	s Seen
	p *Policy
}

func (b *builder) add(e Entry) {
	for i, o := range b.p.Entries {
		if o.Key == e.Key && o.Value == e.Value {
			if o.Weakens != "" && e.Weakens == "" {
				b.p.Entries[i] = e
			}
			return
		}
	}
	b.p.Entries = append(b.p.Entries, e)
}

func (b *builder) note(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	if !slices.Contains(b.p.Notes, s) {
		b.p.Notes = append(b.p.Notes, s)
	}
}

// network learns allowed_domains and allowed_ips, and the network itself.
func (b *builder) network() {
	type dest struct {
		entry string
		first string
		count int
	}
	var dests []*dest
	addDest := func(name string, port int, count int) {
		e := domainEntry(name, port)
		if slices.Contains(b.s.Domains, e) || slices.Contains(b.s.Domains, name) {
			return
		}
		for _, d := range dests {
			if d.entry == e {
				d.count += count
				return
			}
		}
		dests = append(dests, &dest{entry: e, first: name + ":" + strconv.Itoa(port), count: count})
	}
	for _, c := range b.s.Connections {
		if isAddr(c.Host) {
			b.add(ipEntry(c.Host, c.Blocked, "an address asked for by number, "+c.Host+":"+strconv.Itoa(c.Port), c.Count))
			continue
		}
		addDest(c.Host, c.Port, max(c.Count, 1))
		if c.Blocked != "" && c.Addr != "" {
			b.add(ipEntry(c.Addr, c.Blocked, fmt.Sprintf("%s:%d resolved to %s", c.Host, c.Port, c.Addr), c.Count))
		}
	}
	for _, ev := range b.s.Events {
		if ev.Kind != "network" || ev.Target == "" {
			continue
		}
		host, port := splitHostPort(ev.Target)
		switch {
		case strings.HasPrefix(ev.Rule, "not in allowed domains"):
			addDest(host, port, max(ev.Count, 1))
		case strings.HasPrefix(ev.Rule, "an IP address not in allowed IPs"):
			b.add(ipEntry(host, "asked for by number", "an address asked for by number, "+ev.Target, ev.Count))
		case strings.HasPrefix(ev.Rule, "resolves to "):
			addr, _, _ := strings.Cut(strings.TrimPrefix(ev.Rule, "resolves to "), ",")
			b.add(ipEntry(addr, ev.Rule, ev.Target+" "+ev.Rule, ev.Count))
		case strings.HasPrefix(ev.Rule, "in denied domains"):
			b.note("%s was refused (%s): taking it out of denied_domains allows it", ev.Target, ev.Rule)
		default:
			b.note("%s was refused (%s): no key of an agent config allows it", ev.Target, ev.Rule)
		}
	}
	for _, d := range dests {
		b.add(Entry{Key: "allowed_domains", Value: Quote(d.entry), Why: why("first "+d.first, d.count, "connection")})
	}
	lists := slices.ContainsFunc(b.s.Given, func(e Entry) bool {
		return e.Key == "allowed_domains" || e.Key == "denied_domains" || e.Key == "allowed_ips"
	})
	if len(dests) > 0 || len(b.p.Active("allowed_ips")) > 0 || len(b.s.Domains) > 0 || lists {
		b.add(Entry{Key: "network", Value: Quote("allow"), Why: "the destinations allowed, through corral's proxy"})
	} else if b.s.Network == "host" {
		b.add(Entry{Key: "network", Value: Quote("none"), Why: "no destination was reached or asked for"})
	}
}

// ipEntry allows one address, warning of what it opens.
func ipEntry(addr, blocked, first string, count int) Entry {
	warn := "opens " + addr + " itself to the command"
	if blocked != "" {
		warn = fmt.Sprintf("opens %s (%s) to every allowed name", addr, blocked)
	}
	if strings.HasPrefix(addr, "127.") || addr == "::1" {
		warn += ": every service on the host's loopback at that address"
	}
	return Entry{Key: "allowed_ips", Value: Quote(addr), Why: why(first, count, "connection"), Warning: warn}
}

// domainEntry is name as allowed_domains lists it: with its port unless
// that is 80 or 443, the ports of the web.
func domainEntry(name string, port int) string {
	if port == 80 || port == 443 || port == 0 {
		return name
	}
	return name + ":" + strconv.Itoa(port)
}

func splitHostPort(t string) (string, int) {
	i := strings.LastIndexByte(t, ':')
	if i < 0 {
		return t, 0
	}
	p, _ := strconv.Atoi(t[i+1:])
	return strings.Trim(t[:i], "[]"), p
}

func isAddr(h string) bool {
	h = strings.Trim(h, "[]")
	if strings.Contains(h, ":") {
		return true
	}
	parts := strings.Split(h, ".")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		if _, err := strconv.Atoi(p); err != nil {
			return false
		}
	}
	return true
}

// others learns what reads, planted names, system calls and limits need.
func (b *builder) others() {
	for _, ev := range b.s.Events {
		if ev.Probe {
			continue
		}
		first := ev.Target
		if ev.Process != "" {
			first += " by " + ev.Process
		}
		switch ev.Kind {
		case "read":
			b.read(ev, first)
		case "plant":
			name := strings.TrimPrefix(ev.Rule, "protected: ")
			if strings.HasPrefix(name, ".git/") {
				name = ".git"
			}
			b.add(Entry{Key: "allow_planting", Value: Quote(name), Why: why("first "+first, ev.Count, "write"),
				Weakens: "a protected name: programs on the host run code from " + name})
		case "syscall":
			b.syscall(ev, first)
		case "limit":
			b.limit(ev)
		case "write":
			if r, ok := strings.CutPrefix(ev.Rule, "read-only by --read-only "); ok {
				b.note("%s was written, which read_only_paths keeps read-only (%s): take %s out of read_only_paths to allow it", ev.Target, r, r)
			}
		}
	}
}

func (b *builder) read(ev Event, first string) {
	switch {
	case strings.HasPrefix(ev.Rule, "hidden credential store "):
		store := strings.TrimPrefix(ev.Rule, "hidden credential store ")
		if rest, ok := strings.CutPrefix(store, "~/"); ok && b.s.Home != "" {
			store = b.s.Home + "/" + rest
		}
		b.add(Entry{Key: "reveal", Value: Quote(store), Why: why("first "+first, ev.Count, "read"),
			Weakens: "a credential store: the command could read and send its secrets"})
	case strings.HasPrefix(ev.Rule, "hidden by --hide "):
		b.note("%s was read, which hidden_paths hides (%s): take it out of hidden_paths to allow it", ev.Target, strings.TrimPrefix(ev.Rule, "hidden by --hide "))
	}
}

func (b *builder) syscall(ev Event, first string) {
	switch {
	case strings.HasPrefix(ev.Target, "socket(AF_UNIX)") || strings.HasPrefix(ev.Target, "socketpair(AF_UNIX)"):
		b.add(Entry{Key: "allow_unix_sockets", Value: "true", Why: why("first "+first, ev.Count, "call")})
	case ev.Target == "ptrace" || ev.Target == "pidfd_getfd":
		b.add(Entry{Key: "allow_ptrace", Value: "true", Why: why("first "+first, ev.Count, "call"),
			Warning: "the command can trace its own processes, and read their memory"})
	default:
		b.note("%s was refused (%s): no key allows it", ev.Target, ev.Rule)
	}
}

// limit raises a limit the command hit to twice its bound.
func (b *builder) limit(ev Event) {
	// "--pids 512", "--pids 4096 (the default)", "--memory 1GiB (came near it)"
	fields := strings.Fields(ev.Rule)
	if len(fields) < 2 {
		return
	}
	v, ok := double(fields[1])
	if !ok {
		b.note("the %s limit was hit (%s)", ev.Target, ev.Rule)
		return
	}
	key := strings.ReplaceAll(ev.Target, "-", "_")
	what := "hit"
	if strings.HasSuffix(ev.Rule, "(came near it)") {
		what = "came within a fifth of"
	}
	why := what + " " + fields[0] + " " + fields[1]
	if rest := strings.TrimSpace(strings.TrimSuffix(strings.Join(fields[2:], " "), "(came near it)")); rest != "" {
		why += " " + rest
	}
	b.add(Entry{Key: "limits." + key, Value: v, Why: why + "; twice that"})
}

// double is twice a limit's value as the flag takes it: "512" "1024",
// "1G" "2G", "30s" "1m0s".
func double(v string) (string, bool) {
	i := 0
	for i < len(v) && (v[i] >= '0' && v[i] <= '9' || v[i] == '.') {
		i++
	}
	n, err := strconv.ParseFloat(v[:i], 64)
	if err != nil || i == 0 {
		return "", false
	}
	num := strconv.FormatFloat(2*n, 'f', -1, 64)
	if i == len(v) {
		return num, true
	}
	return Quote(num + v[i:]), true
}

func why(first string, count int, noun string) string {
	if count <= 1 {
		return first
	}
	return fmt.Sprintf("%s; %d %ss", first, count, noun)
}
