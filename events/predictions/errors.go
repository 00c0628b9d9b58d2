package predictions

import "errors"

// ErrInvalidConfig reports a prediction-share option that cannot work.
// Callers match it with errors.Is.
var ErrInvalidConfig = errors.New("invalid prediction share configuration")
