package main

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/corralhq/corral"
	"github.com/corralhq/corral/hooks"
	"github.com/corralhq/corral/internal/sandboxtest"
)

func TestMain(m *testing.M) {
	if corral.Init() {
		return
	}
	os.Exit(m.Run())
}

func TestAgentRun(t *testing.T) {
	sandboxtest.Require(t, corral.Config{})
	var log bytes.Buffer
	tr, err := run(context.Background(), &log)
	require.NoError(t, err)
	require.Len(t, tr.Turns, 7, "the run ends at the leak, before the last scripted call")

	assert.Contains(t, tr.Turns[0].Result, "Exit code: 0")
	assert.Contains(t, tr.Turns[0].Result, "6 notes.md", "the tools bin program ran")
	assert.Contains(t, tr.Turns[1].Result, "outside the workspace")
	assert.Contains(t, tr.Turns[2].Result, "Read-only file system")
	assert.Contains(t, tr.Turns[3].Result, "Read-only file system")
	assert.Contains(t, tr.Turns[4].Result, "env LD_PRELOAD: refused")
	assert.Equal(t, hooks.Skip, tr.Turns[5].Action)
	assert.Equal(t, hooks.Terminate, tr.Turns[6].Action)
	assert.Empty(t, tr.Turns[6].Result, "the leaked output never reaches the model")
	assert.Contains(t, tr.Terminated, "contains a secret")

	assert.NotContains(t, log.String(), fakeKey, "the log never shows the key")
	for _, turn := range tr.Turns {
		assert.NotContains(t, turn.Result, fakeKey)
	}
}

func TestSessions(t *testing.T) {
	sandboxtest.Require(t, corral.Config{})
	var log bytes.Buffer
	rep, err := runSessions(context.Background(), &log)
	require.NoError(t, err, log.String())
	assert.False(t, rep.MainSandboxed, "the main session runs on the host")
	assert.True(t, rep.ChatSandboxed)
	assert.True(t, rep.ChatReadOnly)
	assert.Contains(t, rep.MainOut, "/helper/workspace")
	assert.Equal(t, "/workspace\n- answer the chat\n/agent is read-only\n", rep.ChatOut)
	assert.Equal(t, "scratch\ndraft\n", rep.ChatAgain)
	assert.Equal(t, "- answer the chat\n", rep.ChatFileRead, "the file tool reads /agent as the shell does")
	assert.Equal(t, "write /agent/TODO.md: read-only file system", rep.ChatFileWrite)
	assert.Contains(t, log.String(), "persistent sandbox helper/chat-42")
}
