package gapsweep

import "errors"

// Sentinel errors, matched with errors.Is.
var (
	// ErrOptions: the options are incomplete or contradictory.
	ErrOptions = errors.New("invalid sweep options")
	// ErrIdentity: a flag tried to change the cache identity (model, LoRA,
	// salt) within one sweep.
	ErrIdentity = errors.New("cache identity must stay fixed within a sweep")
	// ErrBlockSize: the block size is unknown, or the router's differs from
	// the one given or the one the sweep started with.
	ErrBlockSize = errors.New("block size mismatch")
	// ErrNoGaps: no gap could be chosen (no --gaps and no usable TTL report).
	ErrNoGaps = errors.New("no gaps to test")
	// ErrBudget: the planned sweep needs more requests than allowed.
	ErrBudget = errors.New("request budget exceeded")
	// ErrDebug: the router's debug endpoint could not be read.
	ErrDebug = errors.New("reading router debug endpoint")
	// ErrDecisionHeader: the x-warmroute-decision header is malformed.
	ErrDecisionHeader = errors.New("malformed decision header")
	// ErrNoDecision: a successful response carried no decision header, as
	// from a router whose decisionHeader is not client.
	ErrNoDecision = errors.New("responses carry no x-warmroute-decision: validate against a router with decisionHeader: client")
	// ErrStream: a streamed response could not be read.
	ErrStream = errors.New("reading completion stream")
)

// errNotServed: the debug endpoint answered 404 for a path, as a router
// older than the path does.
var errNotServed = errors.New("path not served")
