package tools

import (
	"mime"
	"net/http"
	"path/filepath"
)

// MaxSendFileBytes is the largest file SendFile attaches: 25 MiB.
const MaxSendFileBytes = 25 << 20

// Attachment is a file read by SendFile, ready to send.
type Attachment struct {
	Name        string // the file's base name
	Path        string // canonical path inside the workspace
	ContentType string
	Data        []byte
}

// SendFile reads files from a workspace to send them as attachments. Like
// File it works in the calling process and enforces the workspace boundary
// itself, so it cannot be used to send a file from elsewhere on the host.
type SendFile struct{ ws workspace }

// NewSendFile returns a SendFile confined to the workspace dir.
func NewSendFile(dir string) (*SendFile, error) {
	ws, err := newWorkspace(dir)
	if err != nil {
		return nil, err
	}
	return &SendFile{ws: ws}, nil
}

// NewSendFileAt returns a SendFile confined to the workspace dir, which
// the model sees at view inside the sandbox (see [NewFileAt]).
func NewSendFileAt(dir, view string) (*SendFile, error) {
	s, err := NewSendFile(dir)
	if err != nil {
		return nil, err
	}
	if s.ws, err = s.ws.withView(view); err != nil {
		return nil, err
	}
	return s, nil
}

// SendFileArgs are the arguments of a send_file tool call.
type SendFileArgs struct {
	// FilePath is absolute or relative to the workspace.
	FilePath string `json:"file_path"`
}

// Load reads the regular file at args.FilePath, which must resolve inside
// the workspace, not be a symlink and be at most MaxSendFileBytes.
func (s *SendFile) Load(args SendFileArgs) (*Attachment, error) {
	const op = "send_file"
	r, err := s.ws.resolve(op, args.FilePath)
	if err != nil {
		return nil, err
	}
	data, err := readRegular(r, op, args.FilePath, MaxSendFileBytes)
	if err != nil {
		return nil, err
	}
	return &Attachment{
		Name:        filepath.Base(r.abs),
		Path:        r.abs,
		ContentType: contentType(r.abs, data),
		Data:        data,
	}, nil
}

func contentType(name string, data []byte) string {
	if t := mime.TypeByExtension(filepath.Ext(name)); t != "" {
		return t
	}
	return http.DetectContentType(data)
}
