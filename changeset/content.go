package changeset

import (
	"bytes"
	"errors"
	"io"
)

// Content says what a reviewer should know about a file's bytes before
// reading its diff.
type Content struct {
	// Binary: the file holds a NUL byte, anywhere in it.
	Binary bool
	// Unprintable: the file holds characters other than printable ones,
	// tabs and line ends (an escape sequence, a carriage return that is not
	// part of CRLF, a bidirectional override, bytes that are not UTF-8).
	// Diff shows them escaped.
	Unprintable bool
}

// readContent reads all of the file at p. Every byte counts: a file that
// begins as text and hides NULs or escape sequences further on is judged by
// them.
func readContent(p string) (Content, error) {
	f, err := openFile(p)
	if err != nil {
		return Content{}, err
	}
	defer f.Close()
	return scanContent(f)
}

func scanContent(r io.Reader) (Content, error) {
	var c Content
	buf := make([]byte, 64<<10)
	carry := 0
	for {
		n, err := io.ReadFull(r, buf[carry:])
		n += carry
		last := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !last {
			return c, err
		}
		b := buf[:n]
		if bytes.IndexByte(b, 0) >= 0 {
			c.Binary = true
			return c, nil // binary files are not shown line by line
		}
		ok, rest := printable(b, last)
		c.Unprintable = c.Unprintable || !ok
		if last {
			return c, nil
		}
		carry = copy(buf, b[rest:])
	}
}
