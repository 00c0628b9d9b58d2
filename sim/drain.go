package sim

import (
	"net/http"
	"sync"

	"github.com/warmroute/warmroute/api"
)

// handlerGroup counts running handlers so Serve can wait for them:
// http.Server.Close closes connections but does not wait for handlers, and a
// handler that outlived Serve would still hold an engine slot. Unlike a
// WaitGroup it refuses entries once draining starts, so there is no Add
// racing Wait. The zero value is ready to use and safe for concurrent use.
type handlerGroup struct {
	mu       sync.Mutex
	running  int
	draining bool
	idle     chan struct{} // closed when running reaches zero while draining
}

// wrap runs h inside the group, answering 503 once the group drains.
func (g *handlerGroup) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.enter() {
			writeJSON(w, http.StatusServiceUnavailable, api.ErrorResponse{Error: api.ErrorDetail{
				Message: "simulator is shutting down", Type: api.ErrTypeUnavailable, Code: http.StatusServiceUnavailable}})
			return
		}
		defer g.leave()
		h.ServeHTTP(w, r)
	})
}

func (g *handlerGroup) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.draining {
		return false
	}
	g.running++
	return true
}

func (g *handlerGroup) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.running--
	if g.draining && g.running == 0 {
		close(g.idle)
	}
}

// drain refuses new handlers and waits for the running ones to return.
func (g *handlerGroup) drain() {
	g.mu.Lock()
	g.draining = true
	g.idle = make(chan struct{})
	if g.running == 0 {
		close(g.idle)
	}
	idle := g.idle
	g.mu.Unlock()
	<-idle
}
