package openai

import "errors"

// ErrTooLong reports an event stream line, or the data of one event, longer
// than the parser's limit. The event is dropped; the stream can go on.
var ErrTooLong = errors.New("event stream line or event over the size limit")
