package agent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSanitizeName(t *testing.T) {
	for in, want := range map[string]string{
		"photo.jpg":        "photo.jpg",
		"my photo (1).jpg": "my_photo__1_.jpg",
		".bashrc":          "bashrc",
		"..":               "file",
		"":                 "file",
		"ümlaut.png":       "_mlaut.png",
		"a\nb":             "a_b",
	} {
		assert.Equal(t, want, sanitizeName(in), "%q", in)
	}
	long := sanitizeName(string(repeat('a', 300)) + ".tar")
	assert.Len(t, long, maxMediaName)
	assert.Equal(t, ".tar", filepath.Ext(long))
}

func repeat(c byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = c
	}
	return b
}

// StageMedia copies into the workspace's media/inbound, resolves name
// collisions, returns the in-sandbox path, and takes files from the media
// directory only.
func TestStageMedia(t *testing.T) {
	s := newScene(t)
	media := filepath.Join(s.dir, "media")
	require.NoError(t, os.Mkdir(media, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(media, "cat photo.jpg"), []byte("jpeg"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(s.outside, "secret"), []byte("s3cr3t"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(s.outside, "secret"), filepath.Join(media, "link")))
	doc := "[[agents]]\nid = \"a\"\n[agents.sandbox]\nworkspace_access = \"ro\"\nmedia_dir = \"" + media + "\"\n"
	sess := session(t, s.runtime(t, doc), "a", "chat")

	p, err := sess.StageMedia(filepath.Join(media, "cat photo.jpg"))
	require.NoError(t, err)
	assert.Equal(t, "/workspace/media/inbound/cat_photo.jpg", p)
	p2, err := sess.StageMedia(filepath.Join(media, "cat photo.jpg"))
	require.NoError(t, err)
	assert.Equal(t, "/workspace/media/inbound/cat_photo-1.jpg", p2, "a taken name gets a suffix")
	r := run(t, sess.Sandbox, "cat /workspace/media/inbound/cat_photo.jpg /workspace/media/inbound/cat_photo-1.jpg")
	require.Equal(t, 0, r.code, r.stdout)
	assert.Equal(t, "jpegjpeg", r.stdout, "the command reads it at the path returned")

	for _, src := range []string{filepath.Join(s.outside, "secret"), filepath.Join(media, "link"), filepath.Join(media, "..", "outside", "secret"), media} {
		_, err := sess.StageMedia(src)
		assert.Error(t, err, src)
	}
	_, err = sess.StageMedia(filepath.Join(s.outside, "secret"))
	assert.ErrorIs(t, err, ErrOutsideMedia)
	// Control: the file is readable, only its place is refused.
	_, err = os.ReadFile(filepath.Join(s.outside, "secret"))
	require.NoError(t, err)

	none := session(t, s.runtime(t, "[[agents]]\nid = \"b\"\n"), "b", "chat")
	_, err = none.StageMedia(filepath.Join(media, "cat photo.jpg"))
	assert.ErrorContains(t, err, "no media_dir")
}

// A command that replaced media/inbound with a symlink cannot make the
// copy land outside the workspace.
func TestStageMediaPlantedSymlink(t *testing.T) {
	s := newScene(t)
	media := filepath.Join(s.dir, "media")
	require.NoError(t, os.Mkdir(media, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(media, "f.txt"), []byte("x"), 0o644))
	sess := session(t, s.runtime(t, "[[agents]]\nid = \"a\"\n[agents.sandbox]\nmedia_dir = \""+media+"\"\n"), "a", "chat")
	require.NoError(t, os.MkdirAll(filepath.Join(s.ws, "media"), 0o755))
	require.NoError(t, os.Symlink(s.outside, filepath.Join(s.ws, "media", "inbound")))
	_, err := sess.StageMedia(filepath.Join(media, "f.txt"))
	assert.Error(t, err)
	assert.NoFileExists(t, filepath.Join(s.outside, "f.txt"))
}
