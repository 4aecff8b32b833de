//go:build !unix

package agent

const noFollow = 0
