package openai

import (
	"errors"
	"fmt"
	"io"
)

// readSize is how much EventReader asks its source for at a time.
const readSize = 4096

// EventReader reads the events of a server-sent event stream from an
// io.Reader. Make it with NewEventReader. Not safe for concurrent use.
type EventReader struct {
	src    io.Reader
	parser *EventParser
	limit  int
	buf    []byte
	queue  [][]byte // events parsed but not yet returned
	err    error    // returned once the queue is empty
}

// NewEventReader reads events from src; limit bounds a line and an event's
// data (zero means DefaultLimit).
func NewEventReader(src io.Reader, limit int) *EventReader {
	r := &EventReader{src: src, buf: make([]byte, readSize)}
	r.parser = NewEventParser(limit, func(data []byte) {
		if r.parser.overflowed {
			return // the stream ends with the error, not after it
		}
		r.queue = append(r.queue, append([]byte{}, data...))
	})
	r.limit = r.parser.limit
	return r
}

// Next returns the data of the next event. At the end of the stream it
// returns io.EOF; a line or event over the limit ends it with an error
// matching ErrTooLong; a failing source ends it with the source's error,
// wrapped.
func (r *EventReader) Next() ([]byte, error) {
	for len(r.queue) == 0 {
		if r.err != nil {
			return nil, r.err
		}
		r.fill()
	}
	data := r.queue[0]
	r.queue = r.queue[1:]
	return data, nil
}

// fill reads once from the source and parses what came.
func (r *EventReader) fill() {
	n, err := r.src.Read(r.buf)
	if perr := r.parser.Feed(r.buf[:n]); perr != nil {
		r.err = fmt.Errorf("reading event stream: %w (limit %d bytes)", perr, r.limit)
		return
	}
	switch {
	case errors.Is(err, io.EOF):
		r.err = io.EOF
		if perr := r.parser.End(); perr != nil {
			r.err = fmt.Errorf("reading event stream: %w (limit %d bytes)", perr, r.limit)
		}
	case err != nil:
		r.err = fmt.Errorf("reading event stream: %w", err)
	}
}

// ReadEvents reads a whole stream and returns the data of each event in
// order, with DefaultLimit. On error it returns the events read before it.
func ReadEvents(src io.Reader) ([][]byte, error) {
	r := NewEventReader(src, 0)
	var events [][]byte
	for {
		data, err := r.Next()
		if errors.Is(err, io.EOF) {
			return events, nil
		}
		if err != nil {
			return events, err
		}
		events = append(events, data)
	}
}
