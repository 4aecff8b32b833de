package corral

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/corralhq/corral/internal/pathtree"
)

// credentialStore is one well-known credential store: Path is relative to
// each home directory of the caller, or absolute for a system path; What
// says whose secrets it holds.
type credentialStore struct{ Path, What string }

// credentialStoreList is the one list of well-known credential stores.
// docs/layers.md lists the same paths.
//
// Browser profiles are hidden whole, not only their saved logins: a
// profile's cookies are live sessions for every site (as good as a
// password, and no second factor asked), the saved logins' key lies beside
// them (Firefox's key4.db opens logins.json without a primary password by
// default; Chromium's on Linux without a keyring is a fixed one), and a
// browser run inside (corral browser) uses a profile of its own.
var credentialStoreList = []credentialStore{
	{".ssh", "ssh: private keys, agent sockets"},
	{".gnupg", "GnuPG: private keys"},
	{".password-store", "pass: the encrypted store"},
	{".local/share/keyrings", "GNOME keyring"},
	{".aws", "AWS CLI and SDKs: access keys"},
	{".azure", "Azure CLI: tokens"},
	{".config/gcloud", "Google Cloud SDK: tokens"},
	{".kube", "kubectl: cluster credentials"},
	{".oci", "Oracle Cloud: API keys"},
	{".docker/config.json", "Docker: registry logins"},
	{".config/containers/auth.json", "Podman, Buildah, Skopeo: registry logins"},
	{".config/gh", "GitHub CLI: OAuth token"},
	{".config/hub", "hub: OAuth token"},
	{".git-credentials", "git credential-store"},
	{".config/git/credentials", "git credential-store"},
	{".netrc", "curl, git, ftp: logins"},
	{".npmrc", "npm: registry tokens"},
	{".yarnrc.yml", "yarn 2+: registry tokens"},
	{".pypirc", "twine: PyPI tokens"},
	{".gem/credentials", "RubyGems: API key"},
	{".cargo/credentials", "cargo: crates.io token"},
	{".cargo/credentials.toml", "cargo: crates.io token"},
	{".terraform.d/credentials.tfrc.json", "Terraform: cloud tokens"},
	{".vault-token", "Vault: token"},
	{".pgpass", "PostgreSQL clients: passwords"},
	{".my.cnf", "MySQL clients: a password"},
	{".config/rclone/rclone.conf", "rclone: every remote's tokens and keys"},
	{".s3cfg", "s3cmd: access keys"},
	// The agents' own: a prompt-injected command's first try.
	{".claude/.credentials.json", "Claude Code: OAuth token"},
	{".codex/auth.json", "Codex CLI: OAuth token or API key"},
	{".gemini/oauth_creds.json", "Gemini CLI: OAuth token"},
	{".config/github-copilot", "GitHub Copilot (editors, CLI): OAuth token"},
	{".local/share/opencode/auth.json", "opencode: provider keys"},
	// Browsers and mail: whole profiles, as said above.
	{".mozilla", "Firefox: profiles (saved logins, cookies)"},
	{"snap/firefox/common/.mozilla", "Firefox (snap): profiles"},
	{".var/app/org.mozilla.firefox/.mozilla", "Firefox (flatpak): profiles"},
	{".thunderbird", "Thunderbird: profiles (saved mail logins)"},
	{".config/google-chrome", "Chrome: profiles (saved logins, cookies)"},
	{".config/google-chrome-beta", "Chrome beta: profiles"},
	{".config/google-chrome-unstable", "Chrome dev: profiles"},
	{".var/app/com.google.Chrome/config/google-chrome", "Chrome (flatpak): profiles"},
	{".config/chromium", "Chromium: profiles (saved logins, cookies)"},
	{"snap/chromium/common/chromium", "Chromium (snap): profiles"},
	{".var/app/org.chromium.Chromium/config/chromium", "Chromium (flatpak): profiles"},
	{".config/BraveSoftware", "Brave: profiles"},
	{".config/microsoft-edge", "Edge: profiles"},
	{"Library/Keychains", "macOS keychains"},
	{"/etc/shadow", "password hashes"},
	{"/etc/shadow-", "password hashes (backup)"},
	{"/etc/gshadow", "group password hashes"},
	{"/etc/gshadow-", "group password hashes (backup)"},
	{"/etc/security/opasswd", "old password hashes"},
	{"/etc/ssh/ssh_host_rsa_key", "the host's SSH key"},
	{"/etc/ssh/ssh_host_ecdsa_key", "the host's SSH key"},
	{"/etc/ssh/ssh_host_ed25519_key", "the host's SSH key"},
	{"/etc/ssh/ssh_host_dsa_key", "the host's SSH key"},
}

// credentialStoreNames splits credentialStoreList into the paths relative
// to each home directory of the caller and the system paths.
func credentialStoreNames() (inHome, system []string) {
	for _, st := range credentialStoreList {
		if filepath.IsAbs(st.Path) {
			system = append(system, st.Path)
		} else {
			inHome = append(inHome, st.Path)
		}
	}
	return inHome, system
}

// rootHome is hidden whole when it is not the caller's own home and
// nothing configured lies in it; the caller's homes keep what they need
// visible and have their stores hidden one by one.
const rootHome = "/root"

// CredentialStores returns the well-known places credentials are kept, for
// the calling user: each home directory's (those of $HOME and of the
// passwd entry) .ssh, .gnupg, .aws, .config/gh, .netrc, .docker/config.json,
// .kube and the others docs/layers.md lists, /etc/shadow and its kin, the
// host's SSH keys, and /root when it is not the caller's home. A sandbox
// hides those that exist and that the caller can read when it is built,
// unless Config.Reveal names them. The paths are absolute, with the home
// directories free of symlinks; a fresh slice on every call.
func CredentialStores() []string {
	inHome, system := credentialStoreNames()
	homes := callerHomes()
	var out []string
	for _, h := range homes {
		for _, n := range inHome {
			out = append(out, filepath.Join(h, n))
		}
	}
	out = append(out, system...)
	if !slices.Contains(homes, rootHome) {
		out = append(out, rootHome)
	}
	return out
}

// resolveCredentialStores hides every credential store that exists, that
// the caller could read and that reveal does not name. A store that holds a
// configured path is refused, since hiding it would hide that path too, and
// showing it would show the credentials: the caller reveals it explicitly.
func (s *spec) resolveCredentialStores(reveal []string) error {
	stores, err := hiddenByDefault(reveal)
	if err != nil {
		return err
	}
	for _, st := range stores {
		if slices.ContainsFunc(s.Hidden, func(h string) bool { return s.hides(h, st.real) }) {
			continue // hidden already
		}
		if skip, err := s.storeConflict(st); skip || err != nil {
			return err
		}
		s.DefaultHidden = append(s.DefaultHidden, st.real)
	}
	s.Hidden = s.outermost(append(s.Hidden, s.DefaultHidden...))
	s.Policy = slices.DeleteFunc(s.Policy, func(p string) bool {
		return slices.ContainsFunc(s.Hidden, func(h string) bool { return s.hides(h, p) })
	})
	for _, p := range s.Policy {
		if !slices.Contains(s.ReadOnly, p) {
			s.ReadOnly = append(s.ReadOnly, p)
		}
	}
	return nil
}

// storeConflict refuses a configured path inside the store st. /root only
// stays visible instead: a root user's workspace may well lie there.
func (s *spec) storeConflict(st store) (skip bool, err error) {
	for _, r := range s.roles() {
		if !pathtree.Within(r.path, st.real) {
			continue
		}
		if st.name == rootHome {
			return true, nil
		}
		return true, &ConfigError{Field: r.field, Value: r.path, Err: ErrRefusedPath, Reason: "lies in " + st.name +
			", a credential store hidden by default; add it to Reveal (--reveal " + st.name + ") to use it"}
	}
	return false, nil
}

// hides reports whether hiding h leaves nothing of p to show: p lies in
// h, and not in the source of a destination that lies in h, which shows
// it again at the destination (a bind's source, or a workspace shown at
// WorkspaceDest, may lie in a hidden path; a path hidden inside it must
// stay hidden there).
func (s *spec) hides(h, p string) bool {
	if !pathtree.Within(p, h) {
		return false
	}
	return !slices.ContainsFunc(s.pathMap(), func(b Bind) bool {
		return pathtree.Within(p, b.Source) && pathtree.Within(b.Source, h)
	})
}

// store is a credential store as named and as it resolves.
type store struct{ name, real string }

// hiddenByDefault returns the credential stores that exist, that the
// caller can read and that reveal does not name. An entry of reveal that
// names none of CredentialStores is an error: a typo would leave hidden
// what the caller meant to show.
func hiddenByDefault(reveal []string) ([]store, error) {
	names := CredentialStores()
	var shown []string
	for _, r := range reveal {
		forms, err := revealForms(r)
		if err != nil {
			return nil, err
		}
		covers := false
		for _, n := range names {
			real := resolveStore(n)
			for _, f := range forms {
				covers = covers || pathtree.Within(n, f) || real != "" && pathtree.Within(real, f)
			}
		}
		if !covers {
			return nil, &ConfigError{Field: "Reveal", Value: r, Reason: "covers none of the credential stores hidden by default (see corral.CredentialStores)"}
		}
		shown = append(shown, forms...)
	}
	var out []store
	for _, n := range names {
		real := resolveStore(n)
		if real == "" || !readable(real) {
			continue // missing, or the host already keeps it from the caller
		}
		if slices.ContainsFunc(shown, func(f string) bool { return pathtree.Within(n, f) || pathtree.Within(real, f) }) {
			continue
		}
		if !slices.ContainsFunc(out, func(o store) bool { return o.real == real }) {
			out = append(out, store{name: n, real: real})
		}
	}
	return out, nil
}

// resolveStore is the store n with its symlinks resolved, or "" when it
// cannot be resolved. Most stores are missing: one lstat says so, where
// resolving would lstat every directory above the name first (for each
// store of each home, hundreds of calls in every New).
func resolveStore(n string) string {
	if _, err := os.Lstat(n); errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	real, err := filepath.EvalSymlinks(n)
	if err != nil {
		return ""
	}
	return real
}

// revealForms is an entry of Reveal as written (made absolute) and, when it
// exists, with its symlinks resolved.
func revealForms(r string) ([]string, error) {
	abs, err := filepath.Abs(r)
	if r == "" || err != nil {
		return nil, &ConfigError{Field: "Reveal", Value: r, Reason: "want a path"}
	}
	forms := []string{abs}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		forms = append(forms, real)
	}
	return forms, nil
}

// readable reports whether the caller can open p: a store the host already
// keeps from it needs no mount (and, on the landlock rung, costs no carving
// of its parent).
func readable(p string) bool {
	fi, err := os.Stat(p)
	if err != nil {
		return false
	}
	if !fi.Mode().IsRegular() && !fi.IsDir() {
		return true // a socket or fifo: hide it without opening it
	}
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// outermost drops every path that hiding another of ps hides already: a
// hidden directory shows nothing beneath it to hide again.
func (s *spec) outermost(ps []string) []string {
	var out []string
	for _, p := range ps {
		inside := slices.ContainsFunc(ps, func(q string) bool { return q != p && s.hides(q, p) })
		if !inside && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// DefaultHidden returns the credential stores a sandbox built from c now
// would hide without c listing them: CredentialStores that exist, that
// the caller can read, and that neither Reveal nor HiddenPaths covers.
func (c Config) DefaultHidden() ([]string, error) {
	s, err := c.resolve()
	if err != nil {
		return nil, err
	}
	return s.DefaultHidden, nil
}
