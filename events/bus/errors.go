package bus

import "errors"

// ErrInvalidConfig reports a connection or stream option that cannot work.
// Callers match it with errors.Is.
var ErrInvalidConfig = errors.New("invalid nats configuration")
