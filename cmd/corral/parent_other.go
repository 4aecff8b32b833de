//go:build !linux

package main

import (
	"context"
	"errors"
	"os"
	"time"
)

// launcher is the process that started the CLI, read as early as Go allows.
var launcher = os.Getppid()

var errParentDied = errors.New("the process that started corral exited")

// withParent returns a context cancelled, with cause errParentDied, once the
// process that started the CLI has exited. Without pidfds it notices the
// CLI being re-parented, checking every 100ms.
func withParent(ctx context.Context) (context.Context, context.CancelFunc, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	if launcher <= 1 {
		return ctx, func() { cancel(nil) }, nil
	}
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			if os.Getppid() != launcher {
				cancel(errParentDied)
				return
			}
			select {
			case <-t.C:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ctx, func() { cancel(nil) }, nil
}

// closeInherited closes nothing here: the descriptors the CLI inherited
// reach only the commands it starts unsandboxed or under Seatbelt, which
// this build does not police.
func closeInherited() {}
