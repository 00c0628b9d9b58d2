package api

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// NATS subjects for KV events and heartbeats. One subject per model and
// endpoint lets a router subscribe to the models it serves with a wildcard
// and lets NATS keep each endpoint's batches in publication order.
//
//	warmroute.kv.v1.<model>.<endpoint>   engine batches and endpoint resets
//	warmroute.hb.v1.<model>.<endpoint>   relay heartbeats (JSON Heartbeat)
//
// <model> and <endpoint> are tokens made by EncodeToken, because model names
// contain '/' and '.' and endpoints contain '.' and ':', while a NATS token
// must be non-empty and free of '.', '*', '>' and whitespace.
const (
	EventSubjectPrefix     = "warmroute.kv.v1"
	HeartbeatSubjectPrefix = "warmroute.hb.v1"
)

// ErrBadSubject reports a subject or token that does not follow the scheme.
var ErrBadSubject = errors.New("malformed warmroute subject")

// EventSubject is the subject on which a relay publishes model's batches
// from endpoint.
func EventSubject(model, endpoint string) (string, error) {
	return subject(EventSubjectPrefix, model, endpoint)
}

// HeartbeatSubject is the subject of a relay's heartbeats for endpoint.
func HeartbeatSubject(model, endpoint string) (string, error) {
	return subject(HeartbeatSubjectPrefix, model, endpoint)
}

// EventWildcard matches every endpoint's batches for model.
func EventWildcard(model string) (string, error) { return subject(EventSubjectPrefix, model, "") }

// HeartbeatWildcard matches every endpoint's heartbeats for model.
func HeartbeatWildcard(model string) (string, error) {
	return subject(HeartbeatSubjectPrefix, model, "")
}

func subject(prefix, model, endpoint string) (string, error) {
	if model == "" {
		return "", fmt.Errorf("building subject: empty model: %w", ErrBadSubject)
	}
	ep := "*"
	if endpoint != "" {
		ep = EncodeToken(endpoint)
	}
	return prefix + "." + EncodeToken(model) + "." + ep, nil
}

// ParseSubject splits an event or heartbeat subject into its decoded model
// and endpoint. prefix is EventSubjectPrefix or HeartbeatSubjectPrefix.
func ParseSubject(prefix, subj string) (model, endpoint string, err error) {
	rest, ok := strings.CutPrefix(subj, prefix+".")
	if !ok {
		return "", "", fmt.Errorf("parsing subject %q: want prefix %q: %w", subj, prefix, ErrBadSubject)
	}
	m, e, ok := strings.Cut(rest, ".")
	if !ok || strings.Contains(e, ".") {
		return "", "", fmt.Errorf("parsing subject %q: want two tokens after the prefix: %w", subj, ErrBadSubject)
	}
	if model, err = DecodeToken(m); err != nil {
		return "", "", fmt.Errorf("parsing subject model: %w", err)
	}
	if endpoint, err = DecodeToken(e); err != nil {
		return "", "", fmt.Errorf("parsing subject endpoint: %w", err)
	}
	return model, endpoint, nil
}

// EncodeToken makes s safe as one NATS subject token, reversibly: ASCII
// letters, digits, '-' and '_' stay; every other byte becomes %XX (upper-case
// hex), like URL percent-encoding. The empty string encodes as "%" so the
// token is never empty.
func EncodeToken(s string) string {
	if s == "" {
		return "%"
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if tokenSafe(c) {
			b.WriteByte(c)
			continue
		}
		const hex = "0123456789ABCDEF"
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&0x0f])
	}
	return b.String()
}

func tokenSafe(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// DecodeToken reverses EncodeToken. It rejects anything EncodeToken could
// not have produced, so every token has exactly one meaning.
func DecodeToken(t string) (string, error) {
	if t == "%" {
		return "", nil
	}
	if t == "" {
		return "", fmt.Errorf("decoding subject token: empty: %w", ErrBadSubject)
	}
	out := make([]byte, 0, len(t))
	for i := 0; i < len(t); i++ {
		c := t[i]
		if tokenSafe(c) {
			out = append(out, c)
			continue
		}
		v, ok := unhex(t, i)
		if c != '%' || !ok || tokenSafe(v) {
			return "", fmt.Errorf("decoding subject token %q at byte %d: %w", t, i, ErrBadSubject)
		}
		out = append(out, v)
		i += 2
	}
	return string(out), nil
}

// unhex reads the upper-case hex pair after the '%' at t[i].
func unhex(t string, i int) (byte, bool) {
	if i+2 >= len(t) {
		return 0, false
	}
	hi, ok1 := hexVal(t[i+1])
	lo, ok2 := hexVal(t[i+2])
	return hi<<4 | lo, ok1 && ok2
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// SnapshotSubjectPrefix starts the request/reply subjects on which relays
// answer snapshot requests from their mirror of the engine's blocks:
//
//	warmroute.snap.v1.<model>.<endpoint>.<dp rank>
//
// A router publishes a request there with a reply inbox; the relay of that
// endpoint and rank answers with a sequence of chunks (events/snapshot).
const SnapshotSubjectPrefix = "warmroute.snap.v1"

// SnapshotSubject is the subject a router requests endpoint's rank's
// snapshot on.
func SnapshotSubject(model, endpoint string, rank int) (string, error) {
	if rank < 0 {
		return "", fmt.Errorf("building snapshot subject: negative rank %d: %w", rank, ErrBadSubject)
	}
	s, err := subject(SnapshotSubjectPrefix, model, endpoint)
	if err != nil {
		return "", err
	}
	return s + "." + strconv.Itoa(rank), nil
}

// SnapshotWildcard matches every rank's snapshot subject of endpoint: a
// relay subscribes to it and answers only its current rank, which may
// change when the engine's payload names another than configured.
func SnapshotWildcard(model, endpoint string) (string, error) {
	s, err := subject(SnapshotSubjectPrefix, model, endpoint)
	if err != nil {
		return "", err
	}
	return s + ".*", nil
}

// ParseSnapshotRank reads the rank token at the end of a snapshot subject.
func ParseSnapshotRank(subj string) (int, error) {
	i := strings.LastIndexByte(subj, '.')
	if !strings.HasPrefix(subj, SnapshotSubjectPrefix+".") || i < 0 {
		return 0, fmt.Errorf("parsing snapshot subject %q: %w", subj, ErrBadSubject)
	}
	rank, err := strconv.Atoi(subj[i+1:])
	if err != nil || rank < 0 {
		return 0, fmt.Errorf("parsing snapshot subject %q rank: %w", subj, ErrBadSubject)
	}
	return rank, nil
}
