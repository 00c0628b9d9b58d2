package cli

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
)

// LogFlags are --log-format and --log-level, which every subcommand takes.
// Both are checked while the flags are parsed, so a bad value is a usage
// error like any other bad flag.
type LogFlags struct {
	format logFormat
	level  slog.Level
}

// addLogFlags adds --log-format and --log-level to fs.
func AddLogFlags(fs *flag.FlagSet) *LogFlags {
	l := &LogFlags{format: "text", level: slog.LevelInfo}
	fs.Var(&l.format, "log-format", "log format: text or json")
	fs.TextVar(&l.level, "log-level", slog.LevelInfo, "log level: debug, info, warn, error")
	return l
}

// Logger builds the slog.Logger the flags ask for, writing to w.
func (l *LogFlags) Logger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: l.level}
	if l.format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// logFormat is the value of --log-format.
type logFormat string

func (f *logFormat) String() string { return string(*f) }

func (f *logFormat) Set(v string) error {
	switch v {
	case "text", "json":
		*f = logFormat(v)
		return nil
	}
	return fmt.Errorf("want text or json, got %q", v)
}
