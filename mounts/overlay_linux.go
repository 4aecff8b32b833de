package mounts

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// mountOverlay mounts overlayfs at target with the host's m.Path (or
// m.Source, for a destination) as the only lower layer. userxattr keeps overlayfs's own bookkeeping (opaque
// directories) in the user.overlay.* namespace, the only one a user
// namespace may write; whiteouts are 0/0 character devices, which the
// kernel lets anyone create.
func mountOverlay(m Mount, target string) error {
	lower := m.Path
	if m.Source != "" {
		lower = m.Source // a destination: the host's directory lies elsewhere
	}
	if m.MakeTarget {
		if err := makeMountPoint(oldRoot+lower, target); err != nil {
			return err
		}
	}
	opts := overlayOptions(oldRoot+lower, oldRoot+m.Upper, oldRoot+m.Work)
	if len(opts) >= unix.Getpagesize() {
		return errors.New("overlayfs options too long: shorten the workspace or changeset path")
	}
	if err := unix.Mount("overlay", target, "overlay", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("mount overlayfs with upper %s: %w", m.Upper, err)
	}
	return nil
}

func overlayOptions(lower, upper, work string) string {
	return "lowerdir=" + escapeOverlay(lower) + ",upperdir=" + escapeOverlay(upper) +
		",workdir=" + escapeOverlay(work) + ",userxattr"
}

// escapeOverlay protects the characters overlayfs splits its options on: a
// comma ends an option, a colon separates lower layers, and a backslash
// escapes either.
var escapeOverlay = strings.NewReplacer(`\`, `\\`, `,`, `\,`, `:`, `\:`).Replace
