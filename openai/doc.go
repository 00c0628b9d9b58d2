// Package openai reads the parts of the OpenAI HTTP wire format that
// warmroute and its tools look at: the usage object of a response, the
// chunks of a streamed completion or chat completion, and the server-sent
// event stream that carries them.
//
// It imports only the standard library and registers no metrics, so the
// router (extproc), the validation tool and the end-to-end harnesses share
// one reading of the format.
//
// # Event streams
//
// EventParser is fed a stream in chunks split anywhere (as Envoy hands a
// response body to the router) and calls a function for every event's data;
// EventReader pulls events from an io.Reader; ReadEvents reads a whole
// stream. All three are the same parser: "data:" lines (one leading space
// dropped, several lines of one event joined with "\n"), a blank line ends
// an event, comments and other fields are ignored, lines end in LF or CRLF.
// A line or an event's data longer than the limit is an ErrTooLong; its
// event is dropped and the stream goes on. At the end of input, an event
// whose blank line never came is still delivered: callers that need a
// complete stream look for the "[DONE]" event (IsDone).
//
// # Usage
//
// DecodeUsage reads the top-level usage of one JSON object (a response body
// or one event's data). Its fields are pointers because absent and null say
// something different from zero: a missing cached_tokens means the engine
// did not report the cache, not that nothing was cached. Usage.CachedPrompt
// returns the numbers only when both are reported and consistent.
//
// # Concurrency
//
// Parsers and readers are not safe for concurrent use; the decoded types are
// plain values.
package openai
