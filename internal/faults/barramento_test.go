//go:build faults

package faults

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const (
	streamBus = "EVENTOS"
	prefixo   = "eventos"
)

// cliente is the test's own connection to the bus: it plays the producers
// (D-5, D-1a, D-6b, D-12) and the readers of what d6a publishes.
type cliente struct {
	nc *nats.Conn
	js jetstream.JetStream
}

func conectar(t *testing.T, url string) *cliente {
	t.Helper()
	nc, err := nats.Connect(url, nats.Name("faults"), nats.MaxReconnects(-1),
		nats.ReconnectWait(100*time.Millisecond), nats.RetryOnFailedConnect(true),
		nats.ReconnectBufSize(-1))
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return &cliente{nc: nc, js: js}
}

// publicar publishes data on subject with header Nats-Msg-Id = msgID
// (CONTRACT §3: producers set it to the event_id), retrying through NATS
// outages until ctx ends. A retry of a publish the server had already stored
// is dropped by the stream's duplicate window and answers with the original
// sequence.
func (c *cliente) publicar(ctx context.Context, subject, msgID string, data []byte) (uint64, error) {
	var ultimo error
	for tentativa := 0; ; tentativa++ {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		m := nats.NewMsg(subject)
		m.Data = data
		ack, err := c.js.PublishMsg(actx, m, jetstream.WithMsgID(msgID), jetstream.WithExpectStream(streamBus))
		cancel()
		if err == nil {
			return ack.Sequence, nil
		}
		ultimo = err
		if errors.Is(err, nats.ErrMaxPayload) {
			return 0, err
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("publish %s after %d attempts: %w (ctx: %v)", subject, tentativa+1, ultimo, ctx.Err())
		case <-time.After(150 * time.Millisecond):
		}
	}
}

// msgLida is one stored message of a stream.
type msgLida struct {
	Seq     uint64
	Subject string
	Header  nats.Header
	Data    []byte
}

// lerStream reads every message of stream, in order, with an ordered
// consumer (retrying the whole read if the connection drops).
// publicarNoModelo returns a function that publishes a model's message and
// records its stream sequence in the model, failing the test when the bus
// refuses it.
func (c *cliente) publicarNoModelo(t *testing.T, ctx context.Context, m *modelo) func(mensagem) {
	return func(msg mensagem) {
		t.Helper()
		seq, err := c.publicar(ctx, msg.subject, msg.msgID, msg.data)
		if err != nil {
			t.Fatalf("publishing %s: %v", msg.nome, err)
		}
		m.registrar(msg, seq)
	}
}

func (c *cliente) lerStream(ctx context.Context, stream string) ([]msgLida, error) {
	var ultimoErr error
	for tentativa := 0; tentativa < 5 && ctx.Err() == nil; tentativa++ {
		out, err := c.lerStreamUmaVez(ctx, stream)
		if err == nil {
			return out, nil
		}
		ultimoErr = err
		time.Sleep(500 * time.Millisecond)
	}
	return nil, ultimoErr
}

func (c *cliente) lerStreamUmaVez(ctx context.Context, stream string) ([]msgLida, error) {
	s, err := c.js.Stream(ctx, stream)
	if err != nil {
		return nil, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return nil, err
	}
	if info.State.Msgs == 0 {
		return nil, nil
	}
	last := info.State.LastSeq
	cons, err := c.js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return nil, err
	}
	out := make([]msgLida, 0, info.State.Msgs)
	for {
		lote, err := cons.Fetch(256, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			return nil, err
		}
		n := 0
		for m := range lote.Messages() {
			n++
			md, err := m.Metadata()
			if err != nil {
				return nil, err
			}
			out = append(out, msgLida{Seq: md.Sequence.Stream, Subject: m.Subject(), Header: m.Headers(), Data: m.Data()})
			if md.Sequence.Stream >= last {
				return out, nil
			}
		}
		if err := lote.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, jetstream.ErrNoMessages) {
			return nil, err
		}
		if n == 0 {
			return nil, fmt.Errorf("stream %s: read stalled at %d of last %d", stream, len(out), last)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
}

// contarStream returns the number of messages in stream.
func (c *cliente) contarStream(ctx context.Context, stream string) (uint64, error) {
	s, err := c.js.Stream(ctx, stream)
	if err != nil {
		return 0, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, err
	}
	return info.State.Msgs, nil
}

// pendentesConsumidores returns, per d6a durable, the messages not yet
// acknowledged (never delivered plus awaiting ack).
func (c *cliente) pendentesConsumidores(ctx context.Context) (map[string]uint64, error) {
	out := map[string]uint64{}
	s, err := c.js.Stream(ctx, streamBus)
	if err != nil {
		return nil, err
	}
	lister := s.ListConsumers(ctx)
	for info := range lister.Info() {
		out[info.Name] = info.NumPending + uint64(max(info.NumAckPending, 0))
	}
	return out, lister.Err()
}

// envelopeLido is the part of a published envelope the checks read.
type envelopeLido struct {
	EventID      string          `json:"event_id"`
	Tipo         string          `json:"tipo"`
	Origem       string          `json:"origem"`
	VersaoSchema string          `json:"versao_schema"`
	CorrelacaoID *string         `json:"correlacao_id"`
	Timestamp    string          `json:"timestamp"`
	Payload      json.RawMessage `json:"payload"`
}

type payloadSorteado struct {
	ConselheiroID      string `json:"conselheiro_id"`
	DemandaID          string `json:"demanda_id"`
	UnidadeCivicaID    string `json:"unidade_civica_id"`
	MetodoSorteio      string `json:"metodo_sorteio"`
	SeedPublico        string `json:"seed_publico"`
	ListaElegiveisHash string `json:"lista_elegiveis_hash"`
	PosicaoSorteada    int    `json:"posicao_sorteada"`
	TotalElegiveis     int    `json:"total_elegiveis"`
	Timestamp          string `json:"timestamp"`
}

type payloadSemCandidatos struct {
	DemandaID       string `json:"demanda_id"`
	UnidadeCivicaID string `json:"unidade_civica_id"`
	TotalElegiveis  int    `json:"total_elegiveis"`
	Motivo          string `json:"motivo"`
}

// seguidor follows conselheiro.sorteado on the bus as D-6b would, handing
// each new draw to aprender, and survives NATS restarts by recreating its
// ordered consumer after the last sequence seen.
type seguidor struct {
	mu     sync.Mutex
	ultimo uint64
	vistos map[string]bool
}

func (c *cliente) seguirSorteados(ctx context.Context, aprender func(eventID string, p payloadSorteado)) {
	s := &seguidor{vistos: map[string]bool{}}
	subject := prefixo + ".conselheiro.sorteado"
	for ctx.Err() == nil {
		cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}}
		s.mu.Lock()
		if s.ultimo > 0 {
			cfg.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
			cfg.OptStartSeq = s.ultimo + 1
		}
		s.mu.Unlock()
		cons, err := c.js.OrderedConsumer(ctx, streamBus, cfg)
		if err != nil {
			pausa(ctx, 300*time.Millisecond)
			continue
		}
		it, err := cons.Messages()
		if err != nil {
			pausa(ctx, 300*time.Millisecond)
			continue
		}
		parar := context.AfterFunc(ctx, it.Stop)
		for {
			m, err := it.Next()
			if err != nil {
				break
			}
			md, err := m.Metadata()
			if err != nil {
				continue
			}
			var env envelopeLido
			var p payloadSorteado
			if json.Unmarshal(m.Data(), &env) == nil && json.Unmarshal(env.Payload, &p) == nil {
				s.mu.Lock()
				novo := !s.vistos[env.EventID]
				s.vistos[env.EventID] = true
				s.mu.Unlock()
				if novo {
					aprender(env.EventID, p)
				}
			}
			s.mu.Lock()
			s.ultimo = md.Sequence.Stream
			s.mu.Unlock()
		}
		parar()
		it.Stop()
		pausa(ctx, 200*time.Millisecond)
	}
}

func pausa(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
