//go:build !unix

package corral

import "os"

// extraLinks is unix-only: elsewhere no sandbox runs.
func extraLinks(string, os.FileInfo) bool { return false }
