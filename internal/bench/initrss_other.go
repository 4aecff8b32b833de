//go:build !linux

package bench

import (
	"context"

	"github.com/corralhq/corral"
)

// initPeakRSS is 0 where sandboxes have no init process of corral's own.
func initPeakRSS(context.Context, *corral.Sandbox) (int64, error) { return 0, nil }

// CheckHeap cannot tell the available memory here; the allocation decides.
func CheckHeap(int64) error { return nil }

// idleInitRSS is 0 where sandboxes have no init process of corral's own.
func idleInitRSS(context.Context, *corral.Sandbox) (int64, int64, int, error) { return 0, 0, 0, nil }
