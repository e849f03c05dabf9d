// Package bus connects D-6a to the NATS JetStream bus (CONTRACT §3): it owns
// the stream, the six durable pull consumers, publishing, replay and the
// dead-letter stream, and runs the consumption loop that hands decoded events
// to a Handler.
package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	neturl "net/url"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/formigueiro/d6a/internal/config"
	"github.com/formigueiro/d6a/internal/evento"
)

// DLQStream is the dead-letter stream (CONTRACT §3).
const DLQStream = "D6A_DLQ"

// AckWaitPadrao is the durable's default AckWait: a message the server
// handed out and never heard back about (its pull request died with a
// connection or a server, or the delivery was lost as the consumer's leader
// moved) is delivered again only after it. It is sized to the batch, not to
// the whole of its handling: every message held here, waiting in a batch or
// in the handler, is marked in progress every AckWait/3, so AckWait only
// has to outlast one missed signal. At 30 s a delivery lost in a consumer
// leader change held the colony's catch-up for 15 s after the last
// step-down of make test-cluster (issue 38, docs/reliability.md).
const AckWaitPadrao = 5 * time.Second

// Config holds the bus settings of CONTRACT §2; the zero value of a field
// means its default. Environment parsing is done by the caller.
type Config struct {
	// URL of an external NATS cluster (D6A_NATS_URL); empty starts an
	// embedded server.
	URL string
	// EmbeddedAddr is where the embedded server listens
	// (D6A_NATS_EMBEDDED_ADDR, default 127.0.0.1:4222; port -1 or 0 picks a
	// free one).
	EmbeddedAddr string
	// DataDir is D6A_DATA_DIR (default ./.data); the embedded JetStream store
	// lives in DataDir/nats.
	DataDir string
	// Stream is the bus stream (D6A_STREAM, default EVENTOS).
	Stream string
	// Prefix is the subject prefix (D6A_SUBJECT_PREFIX, default eventos).
	Prefix string
	// MaxEntregas is the number of deliveries of one message before it is
	// dead-lettered (D6A_MAX_ENTREGAS, default 5).
	MaxEntregas int
	// Backoff is the delay before redelivering a message whose handler
	// failed, indexed by delivery count (the last value repeats). Default
	// 1s, 2s, 5s, 10s, 30s.
	Backoff []time.Duration
	// AckWait is how long a delivered message may stay unacknowledged before
	// the server redelivers it (default AckWaitPadrao).
	AckWait time.Duration
	// Lote is the largest batch fetched at once (default 256).
	Lote int
	// Espera is how long an open pull request waits for messages (default
	// 1s); it bounds how late a replay is noticed and how long stopping
	// waits for the open request to end.
	Espera time.Duration
	// Drenagem is how long, after Consumir's context is cancelled, the
	// handler call in progress may still run before its own context is
	// cancelled (default 25s).
	Drenagem time.Duration
	// Pulsacao, when set, is the heartbeat asked of each waiting pull
	// request (at most Espera/2, as nats.go requires): a request the server
	// forgot (its consumer leader stepped down, its server died) is noticed
	// after two missed heartbeats, at Espera, instead of nats.go's idle
	// timeout of Espera + 1 s. Off by default: nats.go gives up on a
	// request whose heartbeats are merely late, and what the server still
	// delivers to it is lost until AckWait and then applied after later
	// messages. Under -race on a loaded machine, with a 100 ms fetch wait,
	// that broke TestDeterminismoDoBarramento; a leader change is noticed
	// anyway by the new leader's 409 (issue 38, docs/reliability.md).
	Pulsacao time.Duration
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// AoMorrer, when set, is called after each message copied to the
	// dead-letter stream (metrics).
	AoMorrer func(tipo evento.Tipo)
	// AoReceber, when set, is called with the time from a message's
	// storage in the stream to its first delivery here (metrics).
	AoReceber func(atraso time.Duration)
	// AoLerLacuna, when set, is called with the number of consumed
	// messages read from the stream because their deliveries went missing
	// (lacuna; metrics).
	AoLerLacuna func(mensagens int)
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.EmbeddedAddr == "" {
		c.EmbeddedAddr = "127.0.0.1:4222"
	}
	if c.DataDir == "" {
		c.DataDir = "./.data"
	}
	if c.Stream == "" {
		c.Stream = "EVENTOS"
	}
	if c.Prefix == "" {
		c.Prefix = "eventos"
	}
	if c.MaxEntregas <= 0 {
		c.MaxEntregas = 5
	}
	if len(c.Backoff) == 0 {
		c.Backoff = []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second}
	}
	if c.AckWait <= 0 {
		c.AckWait = AckWaitPadrao
	}
	if c.Lote <= 0 {
		// The executor's batch bound: one fetch can fill a batch.
		c.Lote = 256
	}
	if c.Espera <= 0 {
		c.Espera = time.Second
	}
	if c.Drenagem <= 0 {
		c.Drenagem = 25 * time.Second
	}
	if c.Pulsacao > c.Espera/2 {
		c.Pulsacao = c.Espera / 2
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// espera returns the redelivery delay after the n-th delivery failed.
func (c Config) espera(n uint64) time.Duration {
	i := int(min(n, uint64(len(c.Backoff)))) - 1
	return c.Backoff[max(i, 0)]
}

// Bus is a connection to the JetStream bus.
type Bus struct {
	cfg Config
	log *slog.Logger
	nc  *nats.Conn
	js  jetstream.JetStream
	// srv is the embedded server when this Bus started it.
	srv    *server.Server
	closed chan struct{}

	mu     sync.Mutex
	stream jetstream.Stream

	// progresso is when the durable last showed it is not stalled for this
	// instance (Unix ns): a delivery, or a pull request the server itself
	// ended (filled, expired, nothing pending). Zero before consumption
	// starts. SemEntrega reads it.
	progresso atomic.Int64
	// cheio: the consumption loop holds all the batches ahead it may and
	// asks for nothing; the durable is not stalled meanwhile.
	cheio atomic.Bool
	// ultimaLida is the bus stream's last sequence as MsgsEntre last read
	// it: a run that ends at or before it needs no stream info first.
	ultimaLida atomic.Uint64

	// acks are the reply subjects of the acknowledgements sent without
	// confirmation in the last janelaReconfirmacao, oldest first, so they
	// can be sent again to a new consumer leader (reconfirmarAcks).
	acksMu       sync.Mutex
	acks         []ackEnviado
	reconfirmado time.Time
}

// ackEnviado is one unconfirmed acknowledgement.
type ackEnviado struct {
	reply string
	em    time.Time
}

// Connect connects to cfg.URL, or starts an embedded server when it is empty.
// The connection reconnects forever, so a NATS restart is survived.
func Connect(ctx context.Context, cfg Config) (*Bus, error) {
	cfg = cfg.WithDefaults()
	b := &Bus{cfg: cfg, log: cfg.Logger.With("componente", "bus"), closed: make(chan struct{})}
	url := cfg.URL
	if url == "" {
		srv, err := startEmbedded(cfg.EmbeddedAddr, filepath.Join(cfg.DataDir, "nats"), cfg.Logger)
		if err != nil {
			return nil, err
		}
		b.srv = srv
		url = srv.ClientURL()
		b.log.Info("servidor NATS embutido iniciado", "url", url, "store_dir", filepath.Join(cfg.DataDir, "nats"))
	}
	if err := ctx.Err(); err != nil {
		b.shutdownServer()
		return nil, err
	}
	nc, err := nats.Connect(url,
		nats.Name("d6a"),
		nats.MaxReconnects(-1),
		nats.CustomReconnectDelay(esperaReconexao),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				b.log.Warn("NATS desconectado", "erro", err)
			}
		}),
		nats.ReconnectHandler(func(c *nats.Conn) {
			// Redacted keeps a token@; SemCredenciais drops it too.
			b.log.Info("NATS reconectado", "url", config.SemCredenciais(c.ConnectedUrl()))
		}),
		nats.ErrorHandler(func(_ *nats.Conn, s *nats.Subscription, err error) {
			subj := ""
			if s != nil {
				subj = s.Subject
			}
			b.log.Error("erro assíncrono do NATS", "subject", subj, "erro", err)
		}),
		nats.ClosedHandler(func(*nats.Conn) { close(b.closed) }),
	)
	if err != nil {
		b.shutdownServer()
		return nil, fmt.Errorf("connecting to NATS at %s (D6A_NATS_URL): %w", semSenha(url), err)
	}
	b.nc = nc
	// The timeout bounds PublishAsync's pending acks, which a plain context
	// never would; nothing else publishes asynchronously.
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(ackAsyncTimeout))
	if err != nil {
		nc.Close()
		b.shutdownServer()
		return nil, fmt.Errorf("creating JetStream context: %w", err)
	}
	b.js = js
	return b, nil
}

// esperaReconexao backs off exponentially from 250ms to 5s, with jitter so a
// fleet does not reconnect in lockstep after a NATS restart.
func esperaReconexao(tentativas int) time.Duration {
	d := min(250*time.Millisecond<<min(max(tentativas-1, 0), 5), 5*time.Second)
	return d/2 + rand.N(d/2+1)
}

// semSenha hides the user info of a NATS URL, which may carry a password or
// a token.
func semSenha(u string) string {
	p, err := neturl.Parse(u)
	if err != nil {
		return "(invalid URL)"
	}
	if p.User != nil {
		p.User = neturl.User("***")
	}
	return p.String()
}

// Conn returns the underlying NATS connection.
func (b *Bus) Conn() *nats.Conn { return b.nc }

// JetStream returns the JetStream context.
func (b *Bus) JetStream() jetstream.JetStream { return b.js }

// Config returns the configuration in use, defaults applied.
func (b *Bus) Config() Config { return b.cfg }

// Server returns the embedded server, or nil when connected to an external one.
func (b *Bus) Server() *server.Server { return b.srv }

// Close drains the connection (pending acks and publishes are flushed) and
// shuts an embedded server down.
func (b *Bus) Close() error {
	var err error
	if b.nc != nil && !b.nc.IsClosed() {
		if err = b.nc.Drain(); err != nil {
			b.nc.Close()
		}
		select {
		case <-b.closed:
		case <-time.After(10 * time.Second):
			b.nc.Close()
		}
	}
	b.shutdownServer()
	return err
}

func (b *Bus) shutdownServer() {
	if b.srv != nil {
		b.srv.Shutdown()
		b.srv.WaitForShutdown()
		b.srv = nil
	}
}

// StartEmbedded starts an in-process NATS server with JetStream storing in
// storeDir and listening on addr (port -1 or 0: a free port), and waits until
// it accepts connections. The caller shuts it down.
func StartEmbedded(addr, storeDir string) (*server.Server, error) {
	return startEmbedded(addr, storeDir, slog.Default())
}

func startEmbedded(addr, storeDir string, log *slog.Logger) (*server.Server, error) {
	host, porta, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("D6A_NATS_EMBEDDED_ADDR %q: %w", addr, err)
	}
	port, err := strconv.Atoi(porta)
	if err != nil || port < -1 || port > 65535 {
		return nil, fmt.Errorf("D6A_NATS_EMBEDDED_ADDR %q: bad port", addr)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	opts := &server.Options{
		ServerName: "d6a",
		Host:       host,
		Port:       port,
		JetStream:  true,
		StoreDir:   storeDir,
		// CONTRACT §3: fsync before acknowledging, so an acknowledged
		// publish survives power loss (the default syncs every 2 minutes).
		SyncAlways: true,
		NoSigs:     true,
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("embedded NATS server: %w", err)
	}
	s.SetLoggerV2(slogNATS{log.With("componente", "nats-server")}, false, false, false)
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		s.WaitForShutdown()
		return nil, fmt.Errorf("embedded NATS server did not start on %s (D6A_NATS_EMBEDDED_ADDR: is the port in use?)", addr)
	}
	if !s.JetStreamEnabled() {
		s.Shutdown()
		s.WaitForShutdown()
		return nil, fmt.Errorf("embedded NATS server: JetStream did not start with store %s (D6A_DATA_DIR)", storeDir)
	}
	return s, nil
}

// slogNATS routes the embedded server's log through log/slog. Notices (the
// start-up banner) go to debug: Connect logs one line of its own.
type slogNATS struct{ l *slog.Logger }

func (s slogNATS) Noticef(f string, v ...any) { s.l.Debug(fmt.Sprintf(f, v...)) }
func (s slogNATS) Warnf(f string, v ...any)   { s.l.Warn(fmt.Sprintf(f, v...)) }
func (s slogNATS) Fatalf(f string, v ...any)  { s.l.Error(fmt.Sprintf(f, v...)) }
func (s slogNATS) Errorf(f string, v ...any)  { s.l.Error(fmt.Sprintf(f, v...)) }
func (s slogNATS) Debugf(f string, v ...any)  { s.l.Debug(fmt.Sprintf(f, v...)) }
func (s slogNATS) Tracef(string, ...any)      {}

// ErrVazio is returned by LastEventID when the stream is empty or its last
// message carries no usable event_id.
var ErrVazio = errors.New("bus: no event_id at the end of the stream")
