package extproc

import "github.com/warmroute/warmroute/scorer"

// Lifecycle lets external tests see the calls a stream makes on a decision.
type Lifecycle = lifecycle

// TrackDecisions makes s drive every decision through f(d).
func TrackDecisions(s *Server, f func(*scorer.Decision) Lifecycle) { s.track = f }

// BufferedBytes is the request body bytes s's streams hold now.
func BufferedBytes(s *Server) int64 { return s.bufferedBytes() }
