package tools

import (
	"fmt"
	"strings"
)

// MatchError is the error [ReplaceUnique] returns when the text to replace
// does not occur exactly once. Its message tells the model what to do.
type MatchError struct {
	// Matches is how often the text occurs: 0, or more than 1.
	Matches int
}

func (e *MatchError) Error() string {
	if e.Matches == 0 {
		return "old_string was not found in the file; read the file again and copy the text exactly, whitespace included"
	}
	return fmt.Sprintf("old_string occurs %d times in the file; include more of the surrounding lines so that it occurs once", e.Matches)
}

// ReplaceUnique replaces old by new in content, where old must occur
// exactly once: editing the first of several matches would change a place
// the caller did not look at. It returns a *MatchError for no match or
// several, and an *ArgError for an empty old.
func ReplaceUnique(content, old, new string) (string, error) {
	if old == "" {
		return "", &ArgError{Field: "old_string", Reason: "empty; to create or replace a whole file, write it"}
	}
	switch n := strings.Count(content, old); n {
	case 1:
		return strings.Replace(content, old, new, 1), nil
	default:
		return "", &MatchError{Matches: n}
	}
}
