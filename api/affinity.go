package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Router replicas share the Responses response ids they learn on
//
//	warmroute.affinity.v1.<pool>.<replica>   one AffinityMessage per stored response
//
// <pool> and <replica> are made by EncodeToken, like prediction subjects.
const AffinitySubjectPrefix = "warmroute.affinity.v1"

// AffinitySubject is the subject on which replica publishes pool's ids.
func AffinitySubject(pool, replica string) (string, error) {
	if replica == "" {
		return "", fmt.Errorf("building affinity subject: empty replica: %w", ErrBadSubject)
	}
	return subject(AffinitySubjectPrefix, pool, replica)
}

// AffinityWildcard matches every replica's ids for every pool.
const AffinityWildcard = AffinitySubjectPrefix + ".*.*"

// ErrBadAffinity reports an affinity message that is not well-formed JSON of
// the shape below or whose fields are out of range.
var ErrBadAffinity = errors.New("malformed affinity message")

// MaxAffinityString bounds each string of an AffinityMessage.
const MaxAffinityString = 1024

// AffinityMessage says that Endpoint of Pool stored the Responses response
// ID at At (the learning replica's clock). JSON, version 1:
//
//	{"v":1,"replica":"...","pool":"...","id":"resp_...","endpoint":"ip:port","at":<unix ns>}
//
// Response ids are random handles chosen by the engine, not prompt content;
// they still stay out of metric labels and logs above debug.
type AffinityMessage struct {
	V        int    `json:"v"`
	Replica  string `json:"replica"`
	Pool     string `json:"pool"`
	ID       string `json:"id"`
	Endpoint string `json:"endpoint"`
	At       int64  `json:"at"`
}

// Time returns At as a time.
func (m *AffinityMessage) Time() time.Time { return time.Unix(0, m.At) }

// Validate reports every problem in m, joined and wrapping ErrBadAffinity.
func (m *AffinityMessage) Validate() error {
	var errs []error
	if m.V != 1 {
		errs = append(errs, fmt.Errorf("version %d, want 1", m.V))
	}
	for _, f := range []struct{ name, v string }{{"replica", m.Replica}, {"pool", m.Pool}, {"id", m.ID}, {"endpoint", m.Endpoint}} {
		if f.v == "" {
			errs = append(errs, fmt.Errorf("%s is required", f.name))
		}
		if len(f.v) > MaxAffinityString {
			errs = append(errs, fmt.Errorf("%s of %d bytes exceeds %d", f.name, len(f.v), MaxAffinityString))
		}
	}
	if m.At <= 0 {
		errs = append(errs, fmt.Errorf("at %d is not a time", m.At))
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrBadAffinity, errors.Join(errs...))
}

// Marshal validates m and encodes it.
func (m *AffinityMessage) Marshal() ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("encoding affinity message: %w", err)
	}
	return json.Marshal(m)
}

// Unmarshal decodes and validates data into m.
func (m *AffinityMessage) Unmarshal(data []byte) error {
	*m = AffinityMessage{}
	if err := json.Unmarshal(data, m); err != nil {
		return fmt.Errorf("decoding affinity message: %w: %v", ErrBadAffinity, err)
	}
	if err := m.Validate(); err != nil {
		return fmt.Errorf("decoding affinity message: %w", err)
	}
	return nil
}
