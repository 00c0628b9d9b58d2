package api

import (
	"encoding/json"
	"fmt"
	"time"
)

// Duration is a time.Duration that reads and writes as a Go duration string
// ("250ms", "2s") in JSON and YAML, and also accepts a number of seconds.
// The zero value means "use the default".
type Duration time.Duration

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// MarshalJSON writes the duration as a string such as "1.5s".
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads "1.5s" or a plain number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("decoding duration: %w", err)
	}
	switch x := v.(type) {
	case float64:
		*d = Duration(x * float64(time.Second))
	case string:
		p, err := time.ParseDuration(x)
		if err != nil {
			return fmt.Errorf("decoding duration %q: %w", x, err)
		}
		*d = Duration(p)
	default:
		return fmt.Errorf("decoding duration: want a string like \"2s\" or seconds, got %s", b)
	}
	return nil
}

// MarshalText writes the duration as time.Duration.String does, so that
// flag.TextVar can bind a Duration.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads a Go duration string ("250ms").
func (d *Duration) UnmarshalText(b []byte) error {
	p, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(p)
	return nil
}
