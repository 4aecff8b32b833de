package changeset

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sshArchive is an archive that names a second root, a stand-in for
// ~/.ssh, and plants authorized_keys in it.
func sshArchive(t *testing.T, ws, ssh string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	roots, err := json.Marshal([]string{"/src/ws", ssh})
	require.NoError(t, err)
	require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header",
		PAXRecords: map[string]string{rootsRecord: string(roots)}}))
	key := "ssh-ed25519 AAAA attacker\n"
	name := strings.TrimPrefix(ssh, "/") + "/authorized_keys"
	require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o600, Size: int64(len(key))}))
	_, err = tw.Write([]byte(key))
	require.NoError(t, err)
	require.NoError(t, tw.Close())
	return buf.Bytes()
}

// TestImportUnmappedRoot: an archive cannot choose a directory to write to.
// Accepted explicitly, the same archive does write authorized_keys, which
// shows what the refusal prevents.
func TestImportUnmappedRoot(t *testing.T) {
	ws := t.TempDir()
	ssh := filepath.Join(t.TempDir(), ".ssh")
	require.NoError(t, os.Mkdir(ssh, 0o700))
	archive := sshArchive(t, ws, ssh)

	dir := filepath.Join(t.TempDir(), "cs")
	_, err := Import(dir, ws, bytes.NewReader(archive), ImportOptions{})
	var ue *UnmappedRootError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, ssh, ue.Root)
	assert.Contains(t, err.Error(), ssh)
	assert.NotContains(t, err.Error(), "\n")
	_, err = os.Stat(dir)
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing imported")

	// Control: the user maps the root, knowingly.
	cs, err := Import(dir, ws, bytes.NewReader(archive), ImportOptions{Roots: map[string]string{ssh: ssh}})
	require.NoError(t, err)
	_, err = cs.Apply(ApplyOptions{})
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(ssh, "authorized_keys"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "attacker")
}

// TestImportHostileEntries: entries Export never writes, which would reach
// past the upper directory, plant something privileged or fill the disk.
func TestImportHostileEntries(t *testing.T) {
	tests := []struct {
		name    string
		entries []tar.Header
		data    string // written after the last entry
		want    string
	}{
		{"dot dot inside", []tar.Header{{Name: "a/../../escape", Typeflag: tar.TypeReg}}, "", "leaves the directory"},
		{"dot slash dot dot", []tar.Header{{Name: "./../escape", Typeflag: tar.TypeReg}}, "", "leaves the directory"},
		{"write through a symlink dir", []tar.Header{
			{Name: "d", Typeflag: tar.TypeSymlink, Linkname: "/"},
			{Name: "d/etc/evil", Typeflag: tar.TypeReg},
		}, "", "not a directory"},
		{"write through a file", []tar.Header{
			{Name: "f", Typeflag: tar.TypeReg},
			{Name: "f/x", Typeflag: tar.TypeReg},
		}, "", "not a directory"},
		{"hard link out", []tar.Header{{Name: "h", Typeflag: tar.TypeLink, Linkname: "/etc/shadow"}}, "", "hard link"},
		{"character device", []tar.Header{{Name: "mem", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 1}}, "", "character device"},
		{"block device", []tar.Header{{Name: "sda", Typeflag: tar.TypeBlock, Devmajor: 8}}, "", "block device"},
		{"fifo", []tar.Header{{Name: "p", Typeflag: tar.TypeFifo}}, "", "fifo"},
		{"whiteout of the parent", []tar.Header{{Name: "a/.wh..", Typeflag: tar.TypeReg}}, "", "names no entry"},
		{"size beyond the data", []tar.Header{{Name: "huge", Typeflag: tar.TypeReg, Size: 1 << 40}}, "abc", "EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			tw := tar.NewWriter(&buf)
			for _, h := range tt.entries {
				h.Mode = 0o644
				require.NoError(t, tw.WriteHeader(&h))
			}
			if tt.data != "" {
				buf.WriteString(tt.data) // a truncated archive: no Close
			} else {
				require.NoError(t, tw.Close())
			}
			lower := t.TempDir()
			dir := filepath.Join(t.TempDir(), "cs")
			_, err := Import(dir, lower, &buf, ImportOptions{})
			require.ErrorContains(t, err, tt.want)
			_, err = os.Stat(dir)
			assert.ErrorIs(t, err, os.ErrNotExist, "a failed import leaves nothing")
			_, err = os.Lstat("/etc/evil")
			assert.ErrorIs(t, err, os.ErrNotExist)
		})
	}
}

// TestImportDropsSetuid: a setuid or setgid file in an archive is imported
// without those bits, so the upper directory never holds a privileged
// executable of whoever imports.
func TestImportDropsSetuid(t *testing.T) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, name := range []string{"suid", "sgid"} {
		mode := int64(0o4755)
		if name == "sgid" {
			mode = 0o2755
		}
		require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: 3}))
		_, err := tw.Write([]byte("x\n\n"))
		require.NoError(t, err)
	}
	require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "sticky", Mode: 0o1644}))
	require.NoError(t, tw.Close())
	cs, err := Import(filepath.Join(t.TempDir(), "cs"), t.TempDir(), &buf, ImportOptions{})
	require.NoError(t, err)
	up := cs.Roots()[0].Upper
	for name, want := range map[string]fs.FileMode{"suid": 0o755, "sgid": 0o755, "sticky": 0o644 | fs.ModeSticky} {
		fi, err := os.Lstat(filepath.Join(up, name))
		require.NoError(t, err)
		assert.Equal(t, want, fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky), name)
	}
}

// TestImportSparse: a sparse entry of a few bytes expands to a terabyte of
// zeros when read; it is refused, as Export never writes one. The archive
// is built by hand: archive/tar does not write sparse files.
func TestImportSparse(t *testing.T) {
	var buf bytes.Buffer
	pax := paxRecord("GNU.sparse.size", "1099511627776") + paxRecord("GNU.sparse.numblocks", "1") +
		paxRecord("GNU.sparse.map", "0,0") + paxRecord("path", "big")
	buf.Write(rawHeader("PaxHeaders/big", tar.TypeXHeader, len(pax)))
	buf.Write(padBlock([]byte(pax)))
	buf.Write(rawHeader("big", tar.TypeReg, 0))
	buf.Write(make([]byte, 1024))

	// The reader does expand it: this is what Import must not write.
	tr := tar.NewReader(bytes.NewReader(buf.Bytes()))
	h, err := tr.Next()
	require.NoError(t, err)
	assert.Equal(t, int64(1)<<40, h.Size)

	dir := filepath.Join(t.TempDir(), "cs")
	_, err = Import(dir, t.TempDir(), &buf, ImportOptions{})
	require.ErrorContains(t, err, "sparse file")
	_, err = os.Stat(dir)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func paxRecord(k, v string) string {
	rec := " " + k + "=" + v + "\n"
	n := len(rec) + 1
	for len(strconv.Itoa(n))+len(rec) != n {
		n++
	}
	return strconv.Itoa(n) + rec
}

func rawHeader(name string, typ byte, size int) []byte {
	b := make([]byte, 512)
	copy(b, name)
	copy(b[100:], "0000644\x00")
	copy(b[108:], "0000000\x00")
	copy(b[116:], "0000000\x00")
	copy(b[124:], fmt.Sprintf("%011o\x00", size))
	copy(b[136:], "00000000000\x00")
	b[156] = typ
	copy(b[257:], "ustar\x0000")
	copy(b[148:], "        ")
	sum := 0
	for _, c := range b {
		sum += int(c)
	}
	copy(b[148:], fmt.Sprintf("%06o\x00 ", sum))
	return b
}

func padBlock(b []byte) []byte {
	return append(b, make([]byte, (512-len(b)%512)%512)...)
}
