package bus

import (
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

// Monitor follows one NATS connection's state: it keeps Metrics, logs every
// change of state or of the reason it is down (with the server's or the
// socket's own words), and answers Down for readiness checks. Build it with
// NewMonitor, add Options to the connection's options, then Start it on the
// connection. Its methods are safe for concurrent use.
type Monitor struct {
	m   *Metrics
	log *slog.Logger
	now func() time.Time
	// inProcess is the embedded server's client URL when the connection is
	// in-process: nats.go then reports its default URL, not the server's.
	inProcess string

	mu     sync.Mutex
	up     bool
	since  time.Time // when the current state began
	reason Reason    // why it is down; empty while up
	err    string    // the last error's text, for Down

	stop    chan struct{}
	done    chan struct{}
	closing atomic.Bool // Close was called: the connection's close is ours
}

// NewMonitor returns a Monitor feeding m (nil: unregistered metrics) and
// logging on log (nil: discarded). It starts in the down state: a
// connection is not up until it says so.
func NewMonitor(m *Metrics, log *slog.Logger) *Monitor {
	if m == nil {
		m, _ = NewMetrics(nil) // nothing to register, so no error
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Monitor{m: m, log: log, now: time.Now, since: time.Now(), reason: "connecting"}
}

// Options are the connection callbacks that feed the monitor.
func (mo *Monitor) Options() []nats.Option {
	return []nats.Option{
		nats.ConnectHandler(func(nc *nats.Conn) { mo.markUp(nc, "NATS connected") }),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			mo.m.reconnects.Inc()
			mo.markUp(nc, "NATS reconnected")
		}),
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			if err == nil {
				err = nc.LastError()
			}
			r := ReasonOf(err)
			if err == nil {
				r = ReasonIO
			}
			mo.m.disconnects.WithLabelValues(string(r)).Inc()
			mo.markDown(r, err)
		}),
		nats.ReconnectErrHandler(func(_ *nats.Conn, err error) { mo.refused(err) }),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { mo.refused(err) }),
		nats.ClosedHandler(func(nc *nats.Conn) {
			if mo.closing.Load() {
				mo.m.connected.Set(0)
				return // shutting down, not a failure
			}
			err := nc.LastError()
			if err == nil {
				err = nats.ErrConnectionClosed
			}
			mo.markDown(ReasonClosed, err)
		}),
	}
}

// refused counts an error the server or the socket reported. A permission
// violation does not take the connection down; anything else while down
// refines why it is down.
func (mo *Monitor) refused(err error) {
	if err == nil {
		return
	}
	r := ReasonOf(err)
	mo.m.errors.WithLabelValues(string(r)).Inc()
	if r == ReasonPermission {
		mo.mu.Lock()
		first := mo.err != err.Error()
		mo.err = err.Error()
		mo.mu.Unlock()
		if first {
			mo.log.Warn("NATS refused an operation", "reason", r, "err", err)
		}
		return
	}
	mo.mu.Lock()
	up := mo.up
	mo.mu.Unlock()
	if !up {
		mo.markDown(r, err)
	}
}

func (mo *Monitor) markUp(nc *nats.Conn, msg string) {
	mo.mu.Lock()
	was, since := mo.up, mo.since
	if !was {
		mo.up, mo.since, mo.reason, mo.err = true, mo.now(), "", ""
	}
	mo.mu.Unlock()
	mo.m.connected.Set(1)
	if !was {
		where := []any{"url", nc.ConnectedUrlRedacted()}
		if mo.inProcess != "" {
			where = []any{"url", mo.inProcess, "in_process", true}
		}
		mo.log.Info(msg, append(where, "down_for", mo.now().Sub(since).Round(time.Millisecond))...)
	}
}

// markDown records that the connection is down for r; it logs when the
// state or the reason changes, so a refusal repeated on every attempt is
// one line.
func (mo *Monitor) markDown(r Reason, err error) {
	text := ""
	if err != nil {
		text = err.Error()
	}
	mo.mu.Lock()
	changed := mo.up || mo.reason != r
	if mo.up {
		mo.since = mo.now()
	}
	mo.up, mo.reason, mo.err = false, r, text
	since := mo.since
	mo.mu.Unlock()
	mo.m.connected.Set(0)
	if changed {
		mo.log.Warn("NATS connection down", "reason", r, "err", text, "down_for",
			mo.now().Sub(since).Round(time.Millisecond))
	}
}

// Down reports how long the connection has been down and why (a
// *DownError), or a nil error while it is up.
func (mo *Monitor) Down() (time.Duration, error) {
	mo.mu.Lock()
	defer mo.mu.Unlock()
	if mo.up {
		return 0, nil
	}
	return mo.now().Sub(mo.since), &DownError{Reason: mo.reason, Text: mo.err}
}

// DownError says why a connection is down.
type DownError struct {
	Reason Reason
	Text   string // the last error's text, empty when none
}

func (e *DownError) Error() string {
	if e.Text == "" {
		return "nats " + string(e.Reason)
	}
	return "nats " + string(e.Reason) + ": " + e.Text
}

// Start begins watching nc for what its callbacks do not report (a failed
// TLS handshake or a refused CONNECT while reconnecting surface only as
// nc.LastError), until Close. Call it once, after connecting.
func (mo *Monitor) Start(nc *nats.Conn) {
	mo.stop, mo.done = make(chan struct{}), make(chan struct{})
	if nc.IsConnected() {
		mo.markUp(nc, "NATS connected")
	}
	go func() {
		defer close(mo.done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-mo.stop:
				return
			case <-tick.C:
				mo.poll(nc)
			}
		}
	}()
}

func (mo *Monitor) poll(nc *nats.Conn) {
	if nc.IsConnected() {
		return
	}
	err := nc.LastError()
	if err == nil || errors.Is(err, nats.ErrConnectionClosed) && nc.IsClosed() {
		return
	}
	r := ReasonOf(err)
	mo.mu.Lock()
	same := !mo.up && mo.err == err.Error()
	mo.mu.Unlock()
	if !same {
		mo.m.errors.WithLabelValues(string(r)).Inc()
		mo.markDown(r, err)
	}
}

// Close stops Start's goroutine and waits for it; close the connection
// after it, so that its closing is not reported as a failure. It is safe
// without Start and idempotent.
func (mo *Monitor) Close() {
	mo.closing.Store(true)
	if mo.stop == nil {
		return
	}
	select {
	case <-mo.stop:
	default:
		close(mo.stop)
	}
	<-mo.done
}
