package colonia_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/formigueiro/d6a/internal/apispec"
	"github.com/formigueiro/d6a/internal/bus"
)

// Every test of this package holds the two interface documents true
// (CONTRACT §9): each envelope a colony published is checked against its
// channel in schemas/asyncapi.yaml when the test ends, and each HTTP
// exchange with a colony against schemas/openapi.yaml as it happens.

// validarPublicados checks every envelope the colony published (the outbox
// rows the relay marked with their stream sequence) against the payload of
// its channel's send operation in asyncapi.yaml, as read back from the bus.
func (c *harness) validarPublicados() {
	t := c.t
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := c.pool.Query(ctx, `SELECT subject, sequence FROM d6a.outbox WHERE sequence IS NOT NULL ORDER BY sequence`)
	if err != nil {
		t.Logf("asyncapi.yaml: published envelopes not checked: %v", err)
		return
	}
	type publicado struct {
		subject string
		seq     uint64
	}
	var pubs []publicado
	for rows.Next() {
		var p publicado
		if err := rows.Scan(&p.subject, &p.seq); err != nil {
			t.Fatal(err)
		}
		pubs = append(pubs, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Logf("asyncapi.yaml: published envelopes not checked: %v", err)
		return
	}
	s, err := c.js.Stream(ctx, c.cfg.Stream)
	if err != nil {
		// The test left the bus down (an outage scenario).
		t.Logf("asyncapi.yaml: %d published envelopes not checked: stream %s: %v", len(pubs), c.cfg.Stream, err)
		return
	}
	c.validarRecebidos(ctx)
	for _, p := range pubs {
		m, err := s.GetMsg(ctx, p.seq)
		if err != nil {
			t.Logf("asyncapi.yaml: %s at %d not checked: %v", p.subject, p.seq, err)
			continue
		}
		if m.Subject != p.subject {
			t.Errorf("asyncapi.yaml: the outbox says %s at sequence %d, the stream holds %s", p.subject, p.seq, m.Subject)
			continue
		}
		if err := apispec.CheckPublished(m.Subject, m.Data); err != nil {
			t.Errorf("asyncapi.yaml: published envelope at sequence %d: %v\nenvelope: %s", p.seq, err, m.Data)
		}
		h := map[string]string{}
		for k, v := range m.Header {
			h[k] = v[0]
		}
		if err := apispec.CheckPublishedHeaders(m.Subject, h); err != nil {
			t.Errorf("asyncapi.yaml: headers of the envelope at sequence %d: %v", p.seq, err)
		}
		var env struct {
			EventID string `json:"event_id"`
		}
		if json.Unmarshal(m.Data, &env) != nil || h["Nats-Msg-Id"] != env.EventID {
			t.Errorf("asyncapi.yaml: Nats-Msg-Id %q of the envelope at sequence %d is not its event_id %q", h["Nats-Msg-Id"], p.seq, env.EventID)
		}
	}
}

// validarRecebidos checks every message on a consumed subject that did not
// end as a dead letter against its channel's receive operation: what the
// service accepts, the document must accept too.
func (c *harness) validarRecebidos(ctx context.Context) {
	t := c.t
	mortas := map[uint64]bool{}
	for _, m := range c.lerStreamBruto(ctx, bus.DLQStream) {
		if n, err := strconv.ParseUint(m.Header.Get(bus.HeaderSeqOriginal), 10, 64); err == nil {
			mortas[n] = true
		}
	}
	for _, m := range c.lerStreamBruto(ctx, c.cfg.Stream) {
		if mortas[m.Sequence] {
			continue
		}
		if _, err := apispec.CheckReceived(m.Subject, m.Data); err != nil {
			t.Errorf("asyncapi.yaml: consumed message at sequence %d, not a dead letter: %v\nmessage: %s", m.Sequence, err, m.Data)
		}
	}
}

// lerStreamBruto returns every message of a stream, or none when the bus
// is down.
func (c *harness) lerStreamBruto(ctx context.Context, stream string) []*jetstream.RawStreamMsg {
	s, err := c.js.Stream(ctx, stream)
	if err != nil {
		return nil
	}
	info, err := s.Info(ctx)
	if err != nil || info.State.Msgs == 0 {
		return nil
	}
	var out []*jetstream.RawStreamMsg
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		if m, err := s.GetMsg(ctx, seq); err == nil {
			out = append(out, m)
		}
	}
	return out
}

// conferente is http.DefaultTransport checking, on the way back, each
// exchange with a d6a HTTP server on loopback against openapi.yaml. A
// mismatch is the request's error, so the test that made it fails naming
// the route. Requests to the tests' other servers (witnesses, identity
// providers) have paths of their own and are not checked.
type conferente struct{ base http.RoundTripper }

func (c conferente) RoundTrip(req *http.Request) (*http.Response, error) {
	if !daColonia(req) {
		return c.base.RoundTrip(req)
	}
	var corpo []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		corpo = b
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	original := req.Clone(context.Background())
	res, err := c.base.RoundTrip(req)
	if err != nil {
		return res, err
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(b))
	if err != nil {
		// A cut answer is the test's business (fault scenarios).
		return res, nil
	}
	if err := apispec.CheckHTTP(original, corpo, res.StatusCode, res.Header, b); err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	return res, nil
}

// daColonia tells a request to a d6a server: on loopback, at one of the
// service's own path roots.
func daColonia(req *http.Request) bool {
	host := req.URL.Hostname()
	if ip := net.ParseIP(host); (ip == nil || !ip.IsLoopback()) && host != "localhost" {
		return false
	}
	p := req.URL.Path
	return strings.HasPrefix(p, "/d6a/") || p == "/healthz" || p == "/readyz" || p == "/metrics"
}

func init() {
	if _, ok := http.DefaultTransport.(conferente); !ok {
		http.DefaultTransport = conferente{base: http.DefaultTransport}
	}
}
