// Package cli holds the command-line conventions every warmroute subcommand
// follows: usage errors and exit statuses (0 success or help, 2 usage, 1
// runtime failure), flag parsing that rejects stray arguments, and the
// --log-format and --log-level flags.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// Exit statuses: 0 for success and for help, 2 when the command line is wrong
// (the user can fix it by changing the arguments), 1 for every failure found
// while running, including a configuration file that cannot be read or does
// not validate.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// ErrHelp is returned after usage was printed on request (-h, --help, help).
var ErrHelp = flag.ErrHelp

// UsageError is a problem with the command line: an unknown subcommand or
// flag, a flag value that does not parse, a missing required flag or a
// stray argument.
type UsageError struct{ err error }

func (e *UsageError) Error() string { return e.err.Error() }
func (e *UsageError) Unwrap() error { return e.err }

func Usagef(format string, args ...any) error {
	return &UsageError{fmt.Errorf(format, args...)}
}

// asUsage marks err as a usage error (nil stays nil).
func AsUsage(err error) error {
	if err == nil {
		return nil
	}
	return &UsageError{err}
}

// parseFlags parses args into fs and rejects positional arguments. The flag
// package has already printed the problem and the usage to fs.Output.
func ParseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ErrHelp
		}
		return AsUsage(err)
	}
	if fs.NArg() > 0 {
		return Usagef("%s: unexpected arguments %q", fs.Name(), fs.Args())
	}
	return nil
}

// exitCode maps run's error to the process exit status, printing the error
// on stderr unless it is the help request (whose usage is already printed).
func ExitCode(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	fmt.Fprintln(stderr, "warmroute:", err)
	var ue *UsageError
	if errors.As(err, &ue) {
		return ExitUsage
	}
	return ExitFailure
}
