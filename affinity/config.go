package affinity

import (
	"fmt"
	"time"

	"github.com/warmroute/warmroute/api"
)

// Config is serve's `affinity:` section. The zero value keeps ids for
// DefaultMaxAge.
type Config struct {
	// MaxAge is how long a learnt response id is kept. vLLM keeps stored
	// responses until its process ends, so nothing bounds it to derive
	// from: it is how long a client may wait before continuing a
	// conversation by id. After the router has run for MaxAge, an id it
	// does not know is answered 404 as vLLM would. Default DefaultMaxAge.
	MaxAge api.Duration `json:"maxAge,omitempty"`
}

// DefaultMaxAge is Config.MaxAge's default.
const DefaultMaxAge = 24 * time.Hour

// WithDefaults returns a copy of c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.MaxAge == 0 {
		c.MaxAge = api.Duration(DefaultMaxAge)
	}
	return c
}

// Validate reports a problem in c, or nil.
func (c Config) Validate() error {
	if c.MaxAge < 0 {
		return fmt.Errorf("affinity.maxAge must not be negative, got %s", c.MaxAge.D())
	}
	return nil
}

// Limits are fixed bounds, not file settings.
type Limits struct {
	// MaxEntries bounds each pool's table; the oldest id is evicted for a
	// new one (about 120 bytes per entry: 100,000 entries are about 12 MB).
	MaxEntries int
}

// DefaultLimits are the limits serve uses.
var DefaultLimits = Limits{MaxEntries: 100_000}
