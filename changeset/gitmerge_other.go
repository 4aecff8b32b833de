//go:build !linux

package changeset

// mergeGit exists on Linux only: elsewhere a changed git directory is held
// as a whole.
func mergeGit(_, host string, _ []string) []string {
	return []string{host + ": all changes (no merge here)"}
}

const canMergeGit = false
