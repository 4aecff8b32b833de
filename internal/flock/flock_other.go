//go:build !unix

package flock

import "os"

func lock(*os.File) error { return nil }

func tryLock(*os.File) (bool, error) { return false, nil }
