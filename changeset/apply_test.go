package changeset

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestApply(t *testing.T) {
	tests := []struct {
		name  string
		apply func(t *testing.T, f *fixture)
	}{
		{"create", func(t *testing.T, f *fixture) {
			f.write(t, "new.txt", "new\n")
			f.write(t, "nd/deeper/file", "deep\n")
		}},
		{"modify", func(t *testing.T, f *fixture) { f.write(t, "a.txt", "changed\n") }},
		{"delete", func(t *testing.T, f *fixture) {
			f.whiteout(t, "d/x")
			f.whiteout(t, "e")
		}},
		{"rename", func(t *testing.T, f *fixture) {
			f.write(t, "renamed.txt", "hello\n")
			f.whiteout(t, "a.txt")
		}},
		{"directory replaced", func(t *testing.T, f *fixture) {
			f.replaceDir(t, "d")
			f.write(t, "d/fresh", "f\n")
		}},
		{"directory becomes file", func(t *testing.T, f *fixture) { f.write(t, "dir-to-file", "file\n") }},
		{"file becomes directory", func(t *testing.T, f *fixture) {
			f.write(t, "file-to-dir/", "")
			f.write(t, "file-to-dir/c", "c\n")
		}},
		{"symlinks", func(t *testing.T, f *fixture) {
			f.write(t, "link", "-> d/x")
			f.write(t, "abs", "-> /etc/passwd")
			f.write(t, "a.txt", "-> bin")
		}},
		{"binary", func(t *testing.T, f *fixture) { f.write(t, "bin", "\x00\x01\x02") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, sampleLower)
			tt.apply(t, f)
			want := merged(t, f)
			changes, err := f.cs.List()
			require.NoError(t, err)
			res, err := f.cs.Apply(ApplyOptions{})
			require.NoError(t, err)
			assert.ElementsMatch(t, changes, res.Applied)
			assert.Equal(t, want, readTree(t, f.lower))
			// The changeset goes on, empty, over the new originals.
			left, err := f.cs.List()
			require.NoError(t, err)
			assert.Empty(t, left)
			again, err := f.cs.Apply(ApplyOptions{})
			require.NoError(t, err)
			assert.Empty(t, again.Applied)
		})
	}
}

func TestApplyPermissionsAndTimes(t *testing.T) {
	f := newFixture(t, sampleLower)
	f.write(t, "a.txt", "hello\n")
	f.chmod(t, "a.txt", 0o751)
	f.write(t, "ro/file", "x\n")
	f.chmod(t, "ro", 0o555)
	f.write(t, "suid", "#!/bin/sh\n")
	f.chmod(t, "suid", fs.ModeSetuid|fs.ModeSetgid|0o755)
	f.write(t, "sticky/", "")
	f.chmod(t, "sticky", fs.ModeSticky|0o777)
	when := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	require.NoError(t, os.Chtimes(filepath.Join(f.upper, "a.txt"), when, when))

	_, err := f.cs.Apply(ApplyOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { os.Chmod(filepath.Join(f.lower, "ro"), 0o755) })
	modes := map[string]fs.FileMode{
		"a.txt":       0o751,
		"ro":          fs.ModeDir | 0o555,
		"ro/file":     0o644,
		"suid":        0o755, // setuid and setgid are not applied
		"sticky":      fs.ModeDir | fs.ModeSticky | 0o777,
		"d":           fs.ModeDir | 0o755,
		"file-to-dir": 0o644,
	}
	for name, want := range modes {
		fi, err := os.Lstat(filepath.Join(f.lower, name))
		require.NoError(t, err)
		assert.Equal(t, want, fi.Mode(), name)
	}
	fi, err := os.Lstat(filepath.Join(f.lower, "a.txt"))
	require.NoError(t, err)
	assert.True(t, fi.ModTime().Equal(when), "mtime %v", fi.ModTime())
}

func TestApplyConflicts(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, f *fixture)
		host   func(t *testing.T, lower string)
		want   []Conflict
	}{
		{"edited on the host", func(t *testing.T, f *fixture) {
			f.write(t, "a.txt", "sandbox\n")
		}, func(t *testing.T, lower string) {
			appendFile(t, filepath.Join(lower, "a.txt"), "host\n")
		}, []Conflict{{Path: "a.txt", Reason: "changed on the host"}}},
		{"same size and mtime, other content", func(t *testing.T, f *fixture) {
			f.write(t, "a.txt", "sandbox\n")
		}, func(t *testing.T, lower string) {
			p := filepath.Join(lower, "a.txt")
			fi, err := os.Stat(p)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p, []byte("HELLO\n"), 0o644))
			require.NoError(t, os.Chtimes(p, fi.ModTime(), fi.ModTime()))
		}, []Conflict{{Path: "a.txt", Reason: "changed on the host"}}},
		{"deleted on the host", func(t *testing.T, f *fixture) {
			f.write(t, "d/x", "sandbox\n")
		}, func(t *testing.T, lower string) {
			require.NoError(t, os.Remove(filepath.Join(lower, "d/x")))
		}, []Conflict{{Path: "d/x", Reason: "deleted on the host"}}},
		{"created on the host", func(t *testing.T, f *fixture) {
			f.write(t, "new", "sandbox\n")
		}, func(t *testing.T, lower string) {
			require.NoError(t, os.WriteFile(filepath.Join(lower, "new"), []byte("host\n"), 0o644))
		}, []Conflict{{Path: "new", Reason: "created on the host"}}},
		{"created inside a directory the sandbox replaced", func(t *testing.T, f *fixture) {
			f.replaceDir(t, "d")
		}, func(t *testing.T, lower string) {
			require.NoError(t, os.WriteFile(filepath.Join(lower, "d/host"), []byte("host\n"), 0o644))
		}, []Conflict{{Path: "d/host", Reason: "created on the host"}}},
		{"edited where the sandbox deleted", func(t *testing.T, f *fixture) {
			f.whiteout(t, "d/y")
		}, func(t *testing.T, lower string) {
			appendFile(t, filepath.Join(lower, "d/y"), "host\n")
		}, []Conflict{{Path: "d/y", Reason: "changed on the host"}}},
		{"directory gone", func(t *testing.T, f *fixture) {
			f.write(t, "e/deep/new", "n\n")
		}, func(t *testing.T, lower string) {
			require.NoError(t, os.RemoveAll(filepath.Join(lower, "e/deep")))
		}, []Conflict{{Path: "e/deep", Reason: "deleted on the host"}}},
		{"symlink retargeted on the host", func(t *testing.T, f *fixture) {
			f.write(t, "link", "-> d/x")
		}, func(t *testing.T, lower string) {
			p := filepath.Join(lower, "link")
			require.NoError(t, os.Remove(p))
			require.NoError(t, os.Symlink("d/y", p))
		}, []Conflict{{Path: "link", Reason: "changed on the host"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, sampleLower)
			f.write(t, "unrelated", "u\n")
			tt.change(t, f)
			afterTick(t, f.lower)
			tt.host(t, f.lower)
			before := readTree(t, f.lower)
			res, err := f.cs.Apply(ApplyOptions{})
			var ce *ConflictError
			require.ErrorAs(t, err, &ce)
			assert.Nil(t, res)
			for i := range tt.want {
				tt.want[i].Root = f.lower
			}
			assert.Equal(t, tt.want, ce.Conflicts)
			assert.Contains(t, err.Error(), tt.want[0].Path)
			assert.Equal(t, before, readTree(t, f.lower), "nothing applied")

			res, err = f.cs.Apply(ApplyOptions{Force: true})
			require.NoError(t, err)
			assert.NotEmpty(t, res.Applied)
			_, err = os.Lstat(filepath.Join(f.lower, "unrelated"))
			assert.NoError(t, err)
		})
	}
}

func TestApplyResumes(t *testing.T) {
	f := newFixture(t, sampleLower)
	f.write(t, "a.txt", "new a\n")
	f.write(t, "d/x", "new x\n")
	f.whiteout(t, "d/y")
	want := merged(t, f)
	// An interrupted apply got as far as a.txt and d/y.
	require.NoError(t, os.WriteFile(filepath.Join(f.lower, "a.txt.tmp"), []byte("new a\n"), 0o644))
	require.NoError(t, os.Rename(filepath.Join(f.lower, "a.txt.tmp"), filepath.Join(f.lower, "a.txt")))
	require.NoError(t, os.Remove(filepath.Join(f.lower, "d/y")))

	res, err := f.cs.Apply(ApplyOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"M d/x"}, summary(res.Applied), "the rest is in place")
	assert.Equal(t, want, readTree(t, f.lower))
	// The paths the interrupted apply wrote are the new originals.
	f.write(t, "a.txt", "again\n")
	_, err = f.cs.Apply(ApplyOptions{})
	require.NoError(t, err)
}

func TestApplyStaysInside(t *testing.T) {
	outside := t.TempDir()
	f := newFixture(t, tree{"sub/": ""})
	// The host swapped a directory for a symlink pointing out of the tree
	// since the changeset began; the change beneath it must not follow.
	f.write(t, "sub/file", "x\n")
	require.NoError(t, os.Remove(filepath.Join(f.lower, "sub")))
	require.NoError(t, os.Symlink(outside, filepath.Join(f.lower, "sub")))

	_, err := f.cs.Apply(ApplyOptions{Force: true})
	require.Error(t, err)
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

func TestApplySkipsSpecialFiles(t *testing.T) {
	f := newFixture(t, sampleLower)
	f.write(t, "a.txt", "x\n")
	require.NoError(t, mkfifo(filepath.Join(f.upper, "pipe")))
	res, err := f.cs.Apply(ApplyOptions{})
	require.NoError(t, err)
	require.Len(t, res.Skipped, 1)
	assert.Equal(t, "pipe", res.Skipped[0].Path)
	assert.Equal(t, Fifo, res.Skipped[0].Type)
	_, err = os.Lstat(filepath.Join(f.lower, "pipe"))
	assert.True(t, errors.Is(err, fs.ErrNotExist))
}

func TestLockedChangeset(t *testing.T) {
	f := newFixture(t, sampleLower)
	f.write(t, "a.txt", "x\n")
	unlock, err := f.cs.Lock()
	require.NoError(t, err)
	_, err = f.cs.Lock()
	assert.ErrorIs(t, err, ErrInUse)
	_, err = f.cs.Apply(ApplyOptions{})
	assert.ErrorIs(t, err, ErrInUse)
	assert.ErrorIs(t, f.cs.Discard(), ErrInUse)
	unlock()
	_, err = f.cs.Apply(ApplyOptions{})
	assert.NoError(t, err)
}

func appendFile(t *testing.T, p, s string) {
	t.Helper()
	fl, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = fl.WriteString(s)
	require.NoError(t, err)
	require.NoError(t, fl.Close())
}

// Select applies the picked changes and discards the rest.
func TestApplySelect(t *testing.T) {
	f := newFixture(t, sampleLower)
	f.write(t, "new.txt", "new\n")
	f.write(t, "a.txt", "changed\n")
	f.whiteout(t, "e")
	before := readTree(t, f.lower)
	res, err := f.cs.Apply(ApplyOptions{Select: func(ch Change) bool { return ch.Path == "new.txt" }})
	require.NoError(t, err)
	assert.Equal(t, []string{"A new.txt"}, summary(res.Applied))
	assert.ElementsMatch(t, []string{"M a.txt", "D e/", "D e/deep/", "D e/deep/z"}, summary(res.Discarded))
	want := before
	want["new.txt"] = "new\n"
	assert.Equal(t, want, readTree(t, f.lower), "only the picked change landed")
	left, err := f.cs.List()
	require.NoError(t, err)
	assert.Empty(t, left, "the rest is discarded")
}
