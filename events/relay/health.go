package relay

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/go-zeromq/zmq4"
)

// Connected means proven: the relay reports its engine connected only on
// evidence that the engine is there, never because a socket is bound. In
// the dial topology a successful dial (the engine's socket accepted) is
// evidence; in the listen topology it takes a frame from the engine or a
// successful exchange with its replay socket. With HealthURL set, the
// engine's health endpoint must answer 200 as well: a killed engine leaves a
// listening relay nothing else to notice.

// startupGrace is how many heartbeat intervals an engine never seen may
// take to come up before the relay reports it down (20 s at the default 2 s).
const startupGrace = 10

// engineState combines the socket evidence and the health probe into the
// connected flag heartbeats carry. Safe for concurrent use.
type engineState struct {
	mu       sync.Mutex
	sockUp   bool        // evidence from the engine's sockets
	known    bool        // sockUp rests on evidence (a dial, a frame, a replay, a failure)
	healthy  bool        // the health probe's last verdict; true without a probe
	probed   bool        // a verdict has come in
	everUp   bool        // the engine has been seen (a connection or a healthy probe)
	recheck  bool        // the socket was closed on purpose, to check the engine again
	lostAt   time.Time   // the last recheck made because socket evidence was lost
	timeouts int         // health probes in a row that timed out
	started  time.Time   // when the relay started, for the start-up grace
	shown    bool        // the connected flag last exported
	sock     zmq4.Socket // the open events socket, closed to force a recheck
}

// setSocket records evidence (or its loss) from the engine's sockets.
func (r *Relay) setSocket(up bool) {
	r.engine.mu.Lock()
	defer r.engine.mu.Unlock()
	r.engine.sockUp, r.engine.known = up, true
	r.engine.everUp = r.engine.everUp || up
	r.exportConnected()
}

// engineReport is what heartbeats say of the engine: connected, or not
// connected and whether that is known (a failed dial or probe) or only the
// absence of evidence yet.
func (r *Relay) engineReport() (connected, unknown bool) {
	r.engine.mu.Lock()
	defer r.engine.mu.Unlock()
	if !r.engine.everUp {
		// An engine not seen yet may still be starting: unknown, not down,
		// until the start-up grace has passed.
		return false, time.Since(r.engine.started) < startupGrace*r.cfg.HeartbeatInterval
	}
	if r.engine.probed && !r.engine.healthy {
		return false, false
	}
	if !r.engine.known {
		return false, true
	}
	return r.engine.sockUp && r.engine.healthy, false
}

// setHealthy records a health verdict. When the engine comes back healthy
// the events socket is closed, so the engine loop reconnects and checks the
// engine behind it against the last forwarded batch (an engine that
// restarted while down starts its stream over): a listening socket never
// fails by itself when its peer restarts.
func (r *Relay) setHealthy(ok bool) {
	r.engine.mu.Lock()
	// Back after being seen and then failing; not an engine coming up.
	back := ok && r.engine.probed && !r.engine.healthy && r.engine.everUp
	r.engine.healthy, r.engine.probed = ok, true
	r.engine.everUp = r.engine.everUp || ok
	sock := r.engine.sock
	if back && sock != nil {
		r.engine.recheck = true
	}
	r.exportConnected()
	r.engine.mu.Unlock()
	if back && sock != nil {
		r.log.Info("engine healthy again; checking it is the engine it was")
		_ = sock.Close()
	}
}

// lostRecheckEvery spaces the rechecks recheckLost makes, in heartbeat
// intervals: one after every heartbeat would redial a dead replay socket
// four times a second at the e2e suite's interval.
const lostRecheckEvery = 4

// recheckLost closes the events socket for a recheck when, in the listen
// topology, the evidence for the engine was lost and the check made on the
// reconnect found no engine (its replay socket refused), yet the engine is
// healthy now (or no probe is configured). That is an engine that came back
// between two health probes (so setHealthy never saw it fail): an idle one
// sends nothing that would prove it, and without this it stayed
// disconnected for good. The recheck repeats, spaced, until the engine's
// replay socket answers. Called once per heartbeat.
func (r *Relay) recheckLost() {
	if !r.cfg.ListenEvents || r.cfg.ReplayEndpoint == "" {
		return
	}
	r.engine.mu.Lock()
	sock := r.engine.sock
	due := sock != nil && r.engine.everUp && r.engine.known && !r.engine.sockUp &&
		r.engine.healthy && !r.engine.recheck &&
		time.Since(r.engine.lostAt) >= lostRecheckEvery*r.cfg.HeartbeatInterval
	if due {
		r.engine.recheck, r.engine.lostAt = true, time.Now()
	}
	r.engine.mu.Unlock()
	if due {
		r.log.Debug("engine socket evidence lost; checking the engine's replay socket again")
		_ = sock.Close()
	}
}

// socketClosedOnPurpose reports, and clears, whether the last socket was
// closed for a recheck rather than failing.
func (r *Relay) socketClosedOnPurpose() bool {
	r.engine.mu.Lock()
	defer r.engine.mu.Unlock()
	was := r.engine.recheck
	r.engine.recheck = false
	return was
}

func (r *Relay) holdSocket(s zmq4.Socket) {
	r.engine.mu.Lock()
	r.engine.sock = s
	r.engine.mu.Unlock()
}

// exportConnected sets the connected gauge; r.engine.mu must be held. It
// agrees with engineReport: an engine is connected while proven and healthy.
// A change is heartbeated at once rather than at the next tick, so routers
// learn of a dead engine within the time the relay takes to notice it.
func (r *Relay) exportConnected() {
	up := r.engine.sockUp && r.engine.healthy
	r.metrics.engineUp.Set(b2f(up))
	if up != r.engine.shown {
		r.engine.shown = up
		select {
		case r.beatNow <- struct{}{}:
		default:
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// probeHealth asks the engine's health endpoint once (vLLM and SGLang answer
// GET /health with 200 when they can serve).
func (r *Relay) probeHealth(ctx context.Context, client *http.Client) error {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.HeartbeatInterval)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.cfg.HealthURL, nil)
	if err != nil {
		return err
	}
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("engine health: status %d", res.StatusCode)
	}
	return nil
}

// healthTimeoutsDown is how many probes in a row must time out before the
// engine counts as down. A refused connection or an answer other than 200 is
// proof at once; a probe that only ran out of time is not: a busy engine, or
// a loaded node, answers late (in the e2e fault suite a single late answer
// under load once took a live engine out of routing for 1.4 s).
const healthTimeoutsDown = 3

// checkHealth probes once and records the verdict, counting failures. A
// timeout short of healthTimeoutsDown in a row keeps the last verdict.
func (r *Relay) checkHealth(ctx context.Context, client *http.Client) {
	err := r.probeHealth(ctx, client)
	if err != nil {
		r.metrics.healthFailures.Inc()
		r.log.Debug("engine health probe failed", "url", r.cfg.HealthURL, "err", err)
	}
	r.engine.mu.Lock()
	if err != nil && isTimeout(err) {
		r.engine.timeouts++
	} else {
		r.engine.timeouts = 0
	}
	late := r.engine.timeouts > 0 && r.engine.timeouts < healthTimeoutsDown
	r.engine.mu.Unlock()
	if late && ctx.Err() == nil {
		return
	}
	r.setHealthy(err == nil)
}

// isTimeout reports whether a probe failed only by running out of time.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}
