package extproc

import "fmt"

// DecisionHeaderMode says where the x-warmroute-decision header goes. The
// header names the chosen endpoint's address and how many of the prompt's
// blocks it holds, so on a client response it answers "is this prefix cached
// anywhere?" for anyone's prompt: a cross-user oracle. The upstream engine
// may see it; clients see it only when an operator opts in for debugging.
type DecisionHeaderMode string

// Decision header modes. The zero value means DecisionHeaderUpstream.
const (
	// DecisionHeaderUpstream adds the header to the request sent to the
	// engine only.
	DecisionHeaderUpstream DecisionHeaderMode = "upstream"
	// DecisionHeaderClient also copies it into the client's response
	// headers: for debugging, never on a shared deployment.
	DecisionHeaderClient DecisionHeaderMode = "client"
	// DecisionHeaderOff adds it nowhere.
	DecisionHeaderOff DecisionHeaderMode = "off"
)

// MarshalText and UnmarshalText let flag.TextVar bind a mode; Validate
// checks the value.
func (m DecisionHeaderMode) MarshalText() ([]byte, error) { return []byte(m), nil }

// UnmarshalText sets m to the text as given.
func (m *DecisionHeaderMode) UnmarshalText(b []byte) error { *m = DecisionHeaderMode(b); return nil }

// onRequest reports whether the header goes on the request to the engine.
func (m DecisionHeaderMode) onRequest() bool { return m != DecisionHeaderOff }

// onResponse reports whether the header is copied into the client response.
func (m DecisionHeaderMode) onResponse() bool { return m == DecisionHeaderClient }

func (m DecisionHeaderMode) validate() error {
	switch m {
	case "", DecisionHeaderUpstream, DecisionHeaderClient, DecisionHeaderOff:
		return nil
	}
	return fmt.Errorf("decisionHeader must be upstream, client or off, got %q", string(m))
}
