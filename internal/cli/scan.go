package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/corralhq/corral/hooks"
)

// exitFound is the status of `corral scan` when it found a secret, as grep
// uses 1 for a match. Errors are exitUsage (2).
const exitFound = 1

func newScanCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "scan [FILE]",
		Short: "Scan stdin or FILE for leaked secrets",
		Long: `Scan FILE, or stdin when FILE is absent or "-", for API keys, tokens and
private keys, in plain text and URL-encoded, base64 or hex. Each finding is
printed on one line with its line number, pattern, encoding, byte offset and
a redacted form; the secret itself is never printed.

Exit status: 0 nothing found; 1 a secret was found; 2 error.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return scanInput(cmd.InOrStdin(), cmd.OutOrStdout(), args)
		},
	}
}

// scanInput scans stdin or the file named in args and prints one line per
// finding, "NAME:LINE: PATTERN (ENCODING) REDACTED at offset N".
func scanInput(stdin io.Reader, out io.Writer, args []string) error {
	name, data, err := readScanInput(stdin, args)
	if err != nil {
		return &exitError{code: exitUsage, msg: "scan: " + err.Error()}
	}
	found := hooks.Scan(data)
	for _, f := range found {
		fmt.Fprintf(out, "%s:%d: %s (%s) %s at offset %d\n", name, f.Line, f.Pattern, f.Encoding, f.Redacted, f.Offset)
	}
	if len(found) > 0 {
		return &exitError{code: exitFound}
	}
	return nil
}

// readScanInput reads the whole input: findings carry line numbers and
// offsets, and encoded secrets may span lines.
func readScanInput(stdin io.Reader, args []string) (string, []byte, error) {
	if len(args) == 0 || args[0] == "-" {
		data, err := io.ReadAll(stdin)
		if err != nil {
			return "", nil, fmt.Errorf("read stdin: %w", err)
		}
		return "stdin", data, nil
	}
	data, err := os.ReadFile(args[0])
	return args[0], data, err
}
