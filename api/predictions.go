package api

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Router replicas share their speculative predictions on
//
//	warmroute.spec.v1.<model>.<replica>   one PredictionMessage per committed decision
//
// <model> is the decision's pool and <replica> the deciding replica, both
// made by EncodeToken. The subject is apart from the KV event subjects, so a
// JetStream stream retaining predictions never captures engine batches.
const PredictionSubjectPrefix = "warmroute.spec.v1"

// PredictionSubject is the subject on which replica publishes predictions
// for model.
func PredictionSubject(model, replica string) (string, error) {
	if replica == "" {
		return "", fmt.Errorf("building prediction subject: empty replica: %w", ErrBadSubject)
	}
	return subject(PredictionSubjectPrefix, model, replica)
}

// PredictionWildcard matches every replica's predictions for model, or for
// every model when model is empty.
func PredictionWildcard(model string) string {
	if model == "" {
		return PredictionSubjectPrefix + ".*.*"
	}
	s, _ := subject(PredictionSubjectPrefix, model, "")
	return s
}

// ErrBadPrediction reports a prediction message that does not follow the
// wire format below, or whose fields are out of range.
var ErrBadPrediction = errors.New("malformed prediction message")

// Limits of a PredictionMessage, so a decoder never allocates more than the
// message could need and a bad peer cannot make it.
const (
	MaxPredictionKeys   = 1 << 17 // 2M tokens at block size 16; NATS payloads are smaller
	MaxPredictionString = 1024
	predictionVersion   = 1
)

// PredictionMessage is one routing decision's prediction as sent between
// router replicas: Endpoint is expected to hold Keys from DecidedAt until
// ExpiresAt, by the deciding replica's clock. Receivers apply it with the
// same absolute expiry, capped by their own maximum stale window.
//
// Keys are the router's own 64-bit block keys (package index), not engine
// hashes. They are derived from the prompt, so they never go into logs
// above debug or into metric labels.
//
// Wire format, version 1 (integers big-endian unless said):
//
//	byte     version (1)
//	string   replica, endpoint, model: each a uvarint length then bytes
//	uint64   decision id
//	int64    decidedAt, expiresAt: Unix nanoseconds
//	uvarint  key count, then each key as 8 bytes little-endian
//
// A PredictionMessage is not safe for concurrent use; the zero value is an
// empty message that does not validate.
type PredictionMessage struct {
	Replica              string
	Endpoint, Model      string
	Decision             uint64
	DecidedAt, ExpiresAt time.Time
	Keys                 []uint64
}

// Validate reports every problem in m, joined and wrapping ErrBadPrediction.
func (m *PredictionMessage) Validate() error {
	var errs []error
	for _, f := range []struct{ name, v string }{{"replica", m.Replica}, {"endpoint", m.Endpoint}} {
		if f.v == "" {
			errs = append(errs, fmt.Errorf("%s is required", f.name))
		}
	}
	for _, v := range []string{m.Replica, m.Endpoint, m.Model} {
		if len(v) > MaxPredictionString {
			errs = append(errs, fmt.Errorf("string of %d bytes exceeds %d", len(v), MaxPredictionString))
		}
	}
	if !m.ExpiresAt.After(m.DecidedAt) {
		errs = append(errs, fmt.Errorf("expiry %s is not after the decision %s", m.ExpiresAt, m.DecidedAt))
	}
	if len(m.Keys) > MaxPredictionKeys {
		errs = append(errs, fmt.Errorf("%d keys exceed %d", len(m.Keys), MaxPredictionKeys))
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrBadPrediction, errors.Join(errs...))
}

// AppendBinary validates m and appends its wire form to b.
func (m *PredictionMessage) AppendBinary(b []byte) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return b, fmt.Errorf("encoding prediction: %w", err)
	}
	b = append(b, predictionVersion)
	for _, s := range []string{m.Replica, m.Endpoint, m.Model} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.BigEndian.AppendUint64(b, m.Decision)
	b = binary.BigEndian.AppendUint64(b, uint64(m.DecidedAt.UnixNano()))
	b = binary.BigEndian.AppendUint64(b, uint64(m.ExpiresAt.UnixNano()))
	b = binary.AppendUvarint(b, uint64(len(m.Keys)))
	for _, k := range m.Keys {
		b = binary.LittleEndian.AppendUint64(b, k)
	}
	return b, nil
}

// UnmarshalBinary decodes data into m, reusing m.Keys' storage. It rejects
// an unknown version, truncated or trailing bytes, and values out of range.
func (m *PredictionMessage) UnmarshalBinary(data []byte) error {
	r := predictionReader{b: data}
	if v := r.byte(); v != predictionVersion && r.err == nil {
		return fmt.Errorf("decoding prediction: version %d, want %d: %w", v, predictionVersion, ErrBadPrediction)
	}
	m.Replica, m.Endpoint, m.Model = r.string(), r.string(), r.string()
	m.Decision = r.uint64()
	m.DecidedAt, m.ExpiresAt = time.Unix(0, int64(r.uint64())), time.Unix(0, int64(r.uint64()))
	m.Keys = r.keys(m.Keys[:0])
	if r.err == nil && len(r.b) > 0 {
		r.err = fmt.Errorf("%d trailing bytes", len(r.b))
	}
	if r.err != nil {
		return fmt.Errorf("decoding prediction: %w: %w", ErrBadPrediction, r.err)
	}
	if err := m.Validate(); err != nil {
		return fmt.Errorf("decoding prediction: %w", err)
	}
	return nil
}

// predictionReader consumes a message; the first error sticks and later
// reads return zero values.
type predictionReader struct {
	b   []byte
	err error
}

func (r *predictionReader) take(n int, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.err = fmt.Errorf("truncated %s: want %d bytes, have %d", what, n, len(r.b))
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *predictionReader) byte() byte {
	if b := r.take(1, "version"); b != nil {
		return b[0]
	}
	return 0
}

func (r *predictionReader) uvarint(what string, limit uint64) int {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	switch {
	case n <= 0 || n != len(binary.AppendUvarint(nil, v)):
		// Non-minimal varints are refused so a message has one encoding.
		r.err = fmt.Errorf("bad %s length", what)
		return 0
	case v > limit:
		r.err = fmt.Errorf("%s length %d exceeds %d", what, v, limit)
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}

func (r *predictionReader) string() string {
	return strings.Clone(string(r.take(r.uvarint("string", MaxPredictionString), "string")))
}

func (r *predictionReader) uint64() uint64 {
	if b := r.take(8, "integer"); b != nil {
		return binary.BigEndian.Uint64(b)
	}
	return 0
}

func (r *predictionReader) keys(dst []uint64) []uint64 {
	n := r.uvarint("key count", MaxPredictionKeys)
	b := r.take(8*n, "keys")
	if b == nil {
		return dst
	}
	for i := 0; i < n; i++ {
		dst = append(dst, binary.LittleEndian.Uint64(b[8*i:]))
	}
	return dst
}
