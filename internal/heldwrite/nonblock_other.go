//go:build !unix

package heldwrite

const nonblock = 0
