package harness

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
)

// NATSProxy is a TCP proxy between NATS clients and a server that injects
// network faults: Block stops moving bytes both ways with the connections
// left open (a partition: the client notices nothing until its pings time
// out), Cut closes every connection and refuses new ones (a dead server or
// link), and DropNext loses one published message on a subject (a batch lost
// on the way). It reads the client's protocol only to find PUB and HPUB
// frames; everything else passes byte for byte. Make it with StartNATSProxy;
// its methods are safe for concurrent use.
type NATSProxy struct {
	Addr   string // clients connect here
	target string
	ln     net.Listener

	mu      sync.Mutex
	cond    *sync.Cond
	blocked bool
	cut     bool
	drop    map[string]int // subject prefix -> messages still to drop
	dropped int
	conns   map[net.Conn]struct{}
	wg      sync.WaitGroup
}

// StartNATSProxy listens on a free loopback port and forwards to target
// ("127.0.0.1:port").
func StartNATSProxy(target string) (*NATSProxy, error) {
	ports, err := FreePorts(1)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", Addr(ports[0]))
	if err != nil {
		return nil, fmt.Errorf("starting nats proxy: %w", err)
	}
	p := &NATSProxy{Addr: ln.Addr().String(), target: target, ln: ln, drop: map[string]int{},
		conns: map[net.Conn]struct{}{}}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Go(p.accept)
	return p, nil
}

// URL is the client URL through the proxy.
func (p *NATSProxy) URL() string { return "nats://" + p.Addr }

// Block stops (true) or resumes (false) forwarding on every connection.
func (p *NATSProxy) Block(on bool) {
	p.mu.Lock()
	p.blocked = on
	p.cond.Broadcast()
	p.mu.Unlock()
}

// Cut closes every connection and refuses new ones until Restore.
func (p *NATSProxy) Cut() {
	p.mu.Lock()
	p.cut = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.cond.Broadcast()
	p.mu.Unlock()
}

// Restore accepts connections again after Cut.
func (p *NATSProxy) Restore() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}

// DropNext loses the next n messages clients publish on subjects starting
// with prefix.
func (p *NATSProxy) DropNext(prefix string, n int) {
	p.mu.Lock()
	p.drop[prefix] += n
	p.mu.Unlock()
}

// Dropped counts the messages DropNext has lost so far.
func (p *NATSProxy) Dropped() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dropped
}

// Close stops the proxy and its connections and waits for its goroutines.
func (p *NATSProxy) Close() error {
	err := p.ln.Close()
	p.Cut()
	p.wg.Wait()
	return err
}

func (p *NATSProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refused := p.cut
		p.mu.Unlock()
		if refused {
			_ = c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.track(c, s)
		p.wg.Go(func() { p.clientToServer(c, s) })
		p.wg.Go(func() { p.serverToClient(c, s) })
	}
}

func (p *NATSProxy) track(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
}

func (p *NATSProxy) closePair(c, s net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, s)
	p.mu.Unlock()
	_ = c.Close()
	_ = s.Close()
}

// pass waits while blocked; false once the proxy cut its connections.
func (p *NATSProxy) pass() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.blocked && !p.cut {
		p.cond.Wait()
	}
	return !p.cut
}

func (p *NATSProxy) serverToClient(c, s net.Conn) {
	defer p.closePair(c, s)
	buf := make([]byte, 32<<10)
	for {
		n, err := s.Read(buf)
		if n > 0 {
			if !p.pass() {
				return
			}
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *NATSProxy) clientToServer(c, s net.Conn) {
	defer p.closePair(c, s)
	r := bufio.NewReaderSize(c, 64<<10)
	for {
		frame, subject, err := readClientFrame(r)
		if err != nil {
			return
		}
		if !p.pass() {
			return
		}
		if subject != "" && p.dropping(subject) {
			continue
		}
		if _, err := s.Write(frame); err != nil {
			return
		}
	}
}

func (p *NATSProxy) dropping(subject string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for prefix, n := range p.drop {
		if n > 0 && strings.HasPrefix(subject, prefix) {
			p.drop[prefix]--
			p.dropped++
			return true
		}
	}
	return false
}

// readClientFrame reads one client protocol operation: a control line, or
// a PUB/HPUB line with its payload (whose subject it returns).
func readClientFrame(r *bufio.Reader) (frame []byte, subject string, err error) {
	line, err := r.ReadBytes('\n')
	if err != nil {
		return nil, "", err
	}
	fields := strings.Fields(string(line))
	if len(fields) < 3 {
		return line, "", nil
	}
	op := strings.ToUpper(fields[0])
	if op != "PUB" && op != "HPUB" {
		return line, "", nil
	}
	size, err := strconv.Atoi(fields[len(fields)-1])
	if err != nil || size < 0 {
		return nil, "", errors.New("nats proxy: bad payload size in " + strings.TrimSpace(string(line)))
	}
	payload := make([]byte, size+2) // payload and its CRLF
	if _, err := io.ReadFull(r, payload); err != nil {
		return nil, "", err
	}
	return append(line, payload...), fields[1], nil
}
