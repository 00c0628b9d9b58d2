package main

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
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// errHelp is returned after usage was printed on request (-h, --help, help).
var errHelp = flag.ErrHelp

// usageError is a problem with the command line: an unknown subcommand or
// flag, a flag value that does not parse, a missing required flag or a
// stray argument.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// asUsage marks err as a usage error (nil stays nil).
func asUsage(err error) error {
	if err == nil {
		return nil
	}
	return &usageError{err}
}

// parseFlags parses args into fs and rejects positional arguments. The flag
// package has already printed the problem and the usage to fs.Output.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return asUsage(err)
	}
	if fs.NArg() > 0 {
		return usageErrorf("%s: unexpected arguments %q", fs.Name(), fs.Args())
	}
	return nil
}

// exitCode maps run's error to the process exit status, printing the error
// on stderr unless it is the help request (whose usage is already printed).
func exitCode(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	fmt.Fprintln(stderr, "warmroute:", err)
	var ue *usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitFailure
}
