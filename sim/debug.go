package sim

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/warmroute/warmroute/api"
)

// debugRoutes are the test harness's handles on the engine: its true cache
// content and the event-pipeline and restart faults. vLLM's own
// POST /reset_prefix_cache is served too, under its real path.
func (s *Server) debugRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /debug/cache", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, s.engine.CacheState())
	})
	mux.HandleFunc("POST /debug/events", s.pauseEvents)
	mux.HandleFunc("POST /debug/restart", func(w http.ResponseWriter, _ *http.Request) {
		s.engine.Restart()
		w.WriteHeader(http.StatusOK)
	})
	mux.HandleFunc("POST /debug/reset_prefix_cache", s.resetPrefixCache)
	mux.HandleFunc("POST /reset_prefix_cache", s.resetPrefixCache)
}

func (s *Server) pauseEvents(w http.ResponseWriter, r *http.Request) {
	paused, err := strconv.ParseBool(r.URL.Query().Get("paused"))
	if err != nil {
		writeError(w, fmt.Errorf("%w: paused must be true or false, got %q", ErrInvalidRequest, r.URL.Query().Get("paused")))
		return
	}
	s.engine.PauseEvents(paused)
	w.WriteHeader(http.StatusOK)
}

func (s *Server) resetPrefixCache(w http.ResponseWriter, _ *http.Request) {
	err := s.engine.ResetPrefixCache()
	if errors.Is(err, ErrCacheInUse) {
		writeJSON(w, http.StatusConflict, api.ErrorResponse{Error: api.ErrorDetail{
			Message: err.Error(), Type: api.ErrTypeInvalidRequest, Code: http.StatusConflict}})
		return
	}
	w.WriteHeader(http.StatusOK)
}
