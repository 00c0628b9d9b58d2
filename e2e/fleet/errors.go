package fleet

import "errors"

// ErrUnknown is returned for a regime or policy name that does not exist.
var ErrUnknown = errors.New("unknown name")
