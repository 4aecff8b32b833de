package browser

import (
	"errors"
	"fmt"
	"strings"

	"os/exec"
)

// Names are the executables Find looks for on PATH, in order.
var Names = []string{"chromium", "chromium-browser", "google-chrome-stable", "google-chrome"}

// ErrNotFound is returned by Find when no Chromium is on PATH.
var ErrNotFound = errors.New("no Chromium on PATH")

// Find returns the path of the first of Names on PATH.
func Find() (string, error) {
	for _, n := range Names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w (looked for %s): install it, e.g. apt-get install chromium", ErrNotFound, strings.Join(Names, ", "))
}
