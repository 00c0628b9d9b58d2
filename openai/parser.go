package openai

import "bytes"

// DefaultLimit bounds a line and an event's data when the caller does not:
// OpenAI stream chunks are a few hundred bytes, so a longer line means a
// broken stream rather than a big token.
const DefaultLimit = 1 << 20

// EventParser splits a server-sent event stream, fed in chunks split
// anywhere, into events. It holds at most about twice its limit: the
// unfinished line and the open event's data. An event read whole from one
// chunk is handed over without a copy.
//
// Make it with NewEventParser; the zero value is not usable. Not safe for
// concurrent use.
type EventParser struct {
	limit   int
	onEvent func(data []byte)

	line []byte // the unfinished line, when it spans chunks
	skip bool   // the unfinished line passed the limit and is being skipped

	data    []byte // the open event's data: buf, or a slice of the current chunk
	buf     []byte // storage for data that outlives a chunk
	hasData bool   // the open event has a data field (its data may be empty)
	aliased bool   // data points into the chunk being fed
	drop    bool   // the open event had a line over the limit

	overflowed bool // some line or event passed the limit since the start
}

// NewEventParser returns a parser that calls onEvent with the data of every
// event. data is valid only during the call. limit bounds a line and an
// event's data; zero means DefaultLimit.
func NewEventParser(limit int, onEvent func(data []byte)) *EventParser {
	if limit <= 0 {
		limit = DefaultLimit
	}
	return &EventParser{limit: limit, onEvent: onEvent}
}

// Feed parses the next chunk of the stream, calling onEvent for every event
// it completes. It returns ErrTooLong when a line or an event passed the
// limit (that event is dropped); feeding may go on.
func (p *EventParser) Feed(chunk []byte) error {
	var err error
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			err = firstErr(err, p.hold(chunk))
			break
		}
		if len(p.line) == 0 && !p.skip {
			// The common case: a whole line inside one chunk, read in place.
			err = firstErr(err, p.lineEnd(chunk[:i], true))
		} else {
			err = firstErr(err, p.hold(chunk[:i]))
			if !p.skip {
				err = firstErr(err, p.lineEnd(p.line, false))
			}
			p.line, p.skip = p.line[:0], false
		}
		chunk = chunk[i+1:]
	}
	p.own()
	return err
}

// End ends the stream: a last line without its line end is read, and an
// event still open is delivered. It returns ErrTooLong when that last line
// is over the limit (its event is dropped). The parser is then ready for a
// new stream.
func (p *EventParser) End() error {
	var err error
	if len(p.line) > 0 && !p.skip {
		err = p.lineEnd(p.line, false)
	}
	p.line, p.skip = p.line[:0], false
	p.dispatch()
	return err
}

// hold keeps part of an unfinished line.
func (p *EventParser) hold(b []byte) error {
	if p.skip || len(b) == 0 {
		return nil
	}
	// One byte over is kept: it may be the CR of a CRLF, which lineEnd
	// trims before it checks the limit, as it does for a line read in place.
	if len(p.line)+len(b) > p.limit+1 {
		p.line, p.skip = p.line[:0], true
		return p.tooLong()
	}
	p.line = appendBounded(p.line, p.limit+1, b)
	return nil
}

// lineEnd reads one complete line; inChunk says l is part of the chunk being
// fed (and may be kept without a copy until Feed returns).
func (p *EventParser) lineEnd(l []byte, inChunk bool) error {
	l = bytes.TrimSuffix(l, []byte{'\r'})
	if len(l) > p.limit {
		return p.tooLong()
	}
	if len(l) == 0 {
		p.dispatch()
		return nil
	}
	// Only the data field matters: comments (":...") and other fields
	// ("event:", "id:", "retry:", and names that merely start with "data")
	// are skipped.
	value, ok := bytes.CutPrefix(l, []byte("data"))
	if !ok || len(value) > 0 && value[0] != ':' {
		return nil
	}
	if len(value) > 0 {
		value = bytes.TrimPrefix(value[1:], []byte{' '})
	}
	return p.addData(value, inChunk)
}

func (p *EventParser) addData(value []byte, inChunk bool) error {
	if p.drop {
		return nil
	}
	if !p.hasData {
		p.hasData = true
		if inChunk {
			p.data, p.aliased = value, true
			return nil
		}
		p.buf = appendBounded(p.buf[:0], p.limit, value)
		p.data = p.buf
		return nil
	}
	if len(p.data)+1+len(value) > p.limit {
		return p.tooLong()
	}
	p.own()
	p.buf = appendBounded(appendBounded(p.buf, p.limit, []byte{'\n'}), p.limit, value)
	p.data = p.buf
	return nil
}

// tooLong drops the open event.
func (p *EventParser) tooLong() error {
	p.drop, p.overflowed = true, true
	return ErrTooLong
}

// own copies data that points into the chunk, before the chunk goes away.
func (p *EventParser) own() {
	if !p.aliased {
		return
	}
	p.buf = appendBounded(p.buf[:0], p.limit, p.data)
	p.data, p.aliased = p.buf, false
}

// dispatch delivers the open event, if it has data and was not dropped, and
// starts the next.
func (p *EventParser) dispatch() {
	if p.hasData && !p.drop {
		p.onEvent(p.data)
	}
	p.data, p.hasData, p.aliased, p.drop = nil, false, false, false
}

// appendBounded appends b to dst, growing it by hand: append's doubling
// could pass the limit. The caller has checked that the result fits.
func appendBounded(dst []byte, limit int, b []byte) []byte {
	need := len(dst) + len(b)
	if need > cap(dst) {
		grown := make([]byte, len(dst), min(max(2*need, 256), max(limit, need)))
		copy(grown, dst)
		dst = grown
	}
	return append(dst, b...)
}

func firstErr(err, next error) error {
	if err != nil {
		return err
	}
	return next
}

// IsDone reports whether an event's data is the "[DONE]" that ends an
// OpenAI stream.
func IsDone(data []byte) bool { return string(data) == "[DONE]" }
