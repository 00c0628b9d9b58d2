package bus

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// ErrInsecureListen refuses an embedded server that anyone reaching a
// non-loopback address could publish to without credentials.
var ErrInsecureListen = errors.New("embedded NATS on a non-loopback address needs authentication " +
	"(events.server.config) or events.server.insecure")

// serverOptions builds the server's options from o's configuration file,
// and the connect options this process uses to reach the server over an
// in-process connection (an NKey user added for it when the file lists
// users, the file's token or single user otherwise).
func (o EmbeddedOptions) serverOptions() (*server.Options, []nats.Option, error) {
	opts := &server.Options{}
	if o.ConfigFile != "" {
		var err error
		if opts, err = server.ProcessConfigFile(o.ConfigFile); err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", o.ConfigFile, err)
		}
		if len(opts.Accounts) > 0 || len(opts.TrustedOperators) > 0 || len(opts.TrustedKeys) > 0 ||
			opts.AuthCallout != nil {
			return nil, nil, fmt.Errorf("reading %s: accounts, operators and auth callout need an external "+
				"nats-server (events.url): %w", o.ConfigFile, ErrInvalidConfig)
		}
	}
	if !isLoopback(o.Host) && !authenticates(opts) && !o.Insecure {
		return nil, nil, fmt.Errorf("listening on %q: %w", o.Host, ErrInsecureListen)
	}
	opts.NoLog, opts.NoSigs, opts.MaxPayload = true, true, 8<<20
	opts.JetStream, opts.StoreDir = o.JetStreamDir != "", o.JetStreamDir
	internal, err := internalIdentity(opts)
	return opts, internal, err
}

// authenticates reports whether every client must prove who it is: a
// credential the file defines, or a verified client certificate.
func authenticates(o *server.Options) bool {
	if o.NoAuthUser != "" {
		return false // clients without credentials become that user
	}
	return len(o.Users) > 0 || len(o.Nkeys) > 0 || o.Authorization != "" || o.Username != "" ||
		(o.TLSConfig != nil && (o.TLSConfig.ClientAuth == tls.RequireAndVerifyClientCert || o.TLSMap))
}

// internalIdentity returns how this process authenticates over its
// in-process connection, which skips TLS: with users or NKeys in the file,
// a fresh NKey user with every permission is added to them; with a token or
// a single user (which the server checks after the lists), those are used.
func internalIdentity(o *server.Options) ([]nats.Option, error) {
	switch {
	case o.Authorization != "":
		return []nats.Option{nats.Token(o.Authorization)}, nil
	case o.Username != "" && len(o.Users) == 0 && len(o.Nkeys) == 0:
		return []nats.Option{nats.UserInfo(o.Username, o.Password)}, nil
	case len(o.Users) == 0 && len(o.Nkeys) == 0:
		return nil, nil
	}
	kp, err := nkeys.CreateUser()
	if err != nil {
		return nil, fmt.Errorf("creating the router's own NATS user: %w", err)
	}
	pub, err := kp.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("creating the router's own NATS user: %w", err)
	}
	o.Nkeys = append(o.Nkeys, &server.NkeyUser{Nkey: pub})
	return []nats.Option{nats.Nkey(pub, kp.Sign)}, nil
}

// isLoopback reports whether host (an IP or "localhost") only accepts
// connections from this machine; "" and 0.0.0.0 listen everywhere.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// InProcessOptions are the options that connect this process to the
// embedded server without a socket, authenticated as the server expects.
func (e *EmbeddedServer) InProcessOptions() []nats.Option {
	return append([]nats.Option{nats.InProcessServer(e.srv)}, e.internal...)
}
