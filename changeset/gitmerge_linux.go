package changeset

import "github.com/corralhq/corral/internal/guard"

// mergeGit lands what upper changed in the git directory host through the
// guard's allowlist, as a command's staged git directory lands, and returns
// what it left out, one line each.
func mergeGit(upper, host string, roots []string) []string {
	return guard.Merge(upper, host, host, roots, nil)
}

// canMergeGit says whether mergeGit exists here.
const canMergeGit = true
