// Package bustest starts real embedded NATS JetStream servers for tests and
// offers small helpers to publish envelopes and read streams back.
package bustest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/formigueiro/d6a/internal/evento"
)

// Start starts an embedded NATS server with JetStream on a free loopback port,
// storing in t.TempDir(), and shuts it down at cleanup. It returns the client
// URL and the server (to restart or inspect it).
func Start(t testing.TB) (string, *server.Server) {
	t.Helper()
	return StartDir(t, t.TempDir())
}

// StartDir is Start with a given store directory, for tests that restart a
// server on the same data.
func StartDir(t testing.TB, dir string) (string, *server.Server) {
	t.Helper()
	opts := &server.Options{
		ServerName: "d6a-test",
		Host:       "127.0.0.1",
		Port:       server.RANDOM_PORT,
		JetStream:  true,
		StoreDir:   dir,
		NoLog:      true,
		NoSigs:     true,
	}
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatalf("bustest: %v", err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		t.Fatal("bustest: NATS server did not start")
	}
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	return s.ClientURL(), s
}

// Connect returns a JetStream context on url, closed at cleanup.
func Connect(t testing.TB, url string) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatalf("bustest: connect: %v", err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("bustest: %v", err)
	}
	return js
}

// Envelope returns a valid envelope of tipo (CONTRACT §3) around payload,
// with a fresh event_id, as a map the test may change before publishing.
func Envelope(tipo evento.Tipo, payload any) map[string]any {
	versao := "1.0.0"
	if tipo == evento.ConselheiroCadastrado || tipo == evento.AtribuicaoRecusada {
		versao = "1.1.0"
	}
	return map[string]any{
		"event_id":      uuid.NewString(),
		"tipo":          string(tipo),
		"origem":        "teste",
		"versao_schema": versao,
		"correlacao_id": nil,
		"timestamp":     time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
		"payload":       payload,
	}
}

// Publicar publishes envelope on subject with Nats-Msg-Id set to its
// event_id and returns the stream sequence. envelope may be raw bytes
// ([]byte or json.RawMessage, published as is) or any value encoding to a
// JSON object.
func Publicar(t testing.TB, js jetstream.JetStream, subject string, envelope any) uint64 {
	t.Helper()
	var data []byte
	switch v := envelope.(type) {
	case []byte:
		data = v
	case json.RawMessage:
		data = v
	default:
		var err error
		if data, err = json.Marshal(v); err != nil {
			t.Fatalf("bustest: encoding envelope: %v", err)
		}
	}
	var opts []jetstream.PublishOpt
	var campos struct {
		EventID string `json:"event_id"`
	}
	if json.Unmarshal(data, &campos) == nil && campos.EventID != "" {
		opts = append(opts, jetstream.WithMsgID(campos.EventID))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ack, err := js.Publish(ctx, subject, data, opts...)
	if err != nil {
		t.Fatalf("bustest: publishing on %s: %v", subject, err)
	}
	return ack.Sequence
}

// Ler returns the bodies of every message of subject (wildcards allowed) in
// stream, in order.
func Ler(t testing.TB, js jetstream.JetStream, stream, subject string) [][]byte {
	t.Helper()
	var out [][]byte
	for _, m := range LerMsgs(t, js, stream, subject) {
		out = append(out, m.Data)
	}
	return out
}

// LerMsgs returns every message of subject in stream, with headers, in order.
func LerMsgs(t testing.TB, js jetstream.JetStream, stream, subject string) []*jetstream.RawStreamMsg {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatalf("bustest: stream %s: %v", stream, err)
	}
	var out []*jetstream.RawStreamMsg
	for seq := uint64(1); ; {
		m, err := s.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return out
		}
		if err != nil {
			t.Fatalf("bustest: reading %s from %s: %v", subject, stream, err)
		}
		out = append(out, m)
		seq = m.Sequence + 1
	}
}
