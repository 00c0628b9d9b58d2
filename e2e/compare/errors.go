package main

import (
	"errors"
	"fmt"
)

// Sentinel errors; callers match them with errors.Is.
var (
	errBadStatus       = errors.New("unexpected http status")
	errStreamCut       = errors.New("stream ended before [DONE] (message_stop)")
	errStreamError     = errors.New("stream carried an error event")
	errNoUsage         = errors.New("stream carried no usage")
	errBadUsage        = errors.New("stream carried negative usage")
	errNoTokens        = errors.New("stream carried no text")
	errNotFailed       = errors.New("injected prefill failure answered 200")
	errUnknownScenario = errors.New("unknown scenario")
	errUnknownPolicy   = errors.New("unknown policy")
	errBadFlag         = errors.New("invalid flag")
	errDeadline        = errors.New("total deadline reached")
	errTooManyFailures = errors.New("too many failed requests")
)

// statusError is an HTTP answer other than 200; it matches errBadStatus.
type statusError struct {
	Code int
	Body string // the start of the body, for the message
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%v: status %d: %s", errBadStatus, e.Code, e.Body)
}

func (e *statusError) Is(target error) bool { return target == errBadStatus }
