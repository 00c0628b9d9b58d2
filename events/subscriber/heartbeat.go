package subscriber

import (
	"encoding/json"
	"fmt"

	"github.com/warmroute/warmroute/api"
	"github.com/warmroute/warmroute/events/wire"
)

// decodeHeartbeat parses and validates a heartbeat body.
func decodeHeartbeat(body []byte) (api.Heartbeat, error) {
	var h api.Heartbeat
	if err := json.Unmarshal(body, &h); err != nil {
		return h, fmt.Errorf("decoding heartbeat: %w: %w", wire.ErrMalformed, err)
	}
	if err := h.Validate(); err != nil {
		return h, fmt.Errorf("decoding heartbeat: %w: %w", wire.ErrMalformed, err)
	}
	return h, nil
}
