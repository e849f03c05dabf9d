package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/formigueiro/d6a/internal/latency"
)

// The bare loop (issue 11) is the cheapest durable loop shaped like a draw,
// run in the bench process against the same nats-server (sync always) and
// PostgreSQL: one JetStream pull consumer; per message one INSERT; a commit
// per message or per batch of up to `lote` messages; then an async publish
// of a result per message, waiting for every ack; then the ack of the
// inputs. d6a serve's draws/s is measured against it, as the HTTP bench
// measures the situacao route against a bare Fiber handler.

// laco is one bare-loop measurement.
type laco struct {
	Lote int // largest commit: 1 = one commit per message
	M    int
	Taxa float64 // inputs offered per second; 0 = as fast as the bus takes them
	// Lat is publish → the result arriving on a core subscription, as
	// d6a's passes measure it: at light load, the floor under d6a's own.
	Lat     latency.Summary
	Duracao time.Duration // first publish → last result acknowledged by the bus
	// Publicacao is first publish → last publish ack of the inputs: when it
	// is close to Duracao, the publisher bounded the loop.
	Publicacao time.Duration
	CPU        usoCPU // the bench process (loop and publisher) is Eu
	// Fases: the loop's delivery, INSERT with COMMIT (Escrita) and result
	// publish (Publicacao), means per message; WAL over the measurement.
	Fases fases
	WAL   wal
}

func (l laco) Vazao() float64 { return razao(float64(l.M), l.Duracao.Seconds()) }

// medirLaco publishes m demands to laco.in as fast as the bus takes them
// (taxa 0) or at taxa per second while the loop consumes them, committing
// up to lote at a time.
func medirLaco(ctx context.Context, natsURL, dbURL string, ds []*demanda, lote int, taxa float64, medidos processosMedidos) (laco, error) {
	l := laco{Lote: lote, M: len(ds), Taxa: taxa}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return l, err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `DROP TABLE IF EXISTS laco; CREATE TABLE laco (id bigint PRIMARY KEY, dados bytea NOT NULL)`); err != nil {
		return l, err
	}
	nc, err := nats.Connect(natsURL, nats.Name("d6a-bench-laco"))
	if err != nil {
		return l, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(1024))
	if err != nil {
		return l, err
	}
	nome := "LACO" + strconv.Itoa(lote)
	entrada, saida := nome+".laco.in", nome+".laco.out"
	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: nome, Subjects: []string{entrada, saida}, Storage: jetstream.FileStorage})
	if err != nil {
		return l, err
	}
	defer func() { _ = js.DeleteStream(context.Background(), nome) }()
	c, err := s.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "laco", FilterSubject: entrada, AckPolicy: jetstream.AckExplicitPolicy, MaxAckPending: 4096})
	if err != nil {
		return l, err
	}
	pub, err := conectar(natsURL, saida)
	if err != nil {
		return l, err
	}
	defer pub.Close()
	pub.registrar(ds)

	walAntes, err := lerWAL(ctx, conn)
	if err != nil {
		return l, err
	}
	antes := amostrar(medidos)
	erroPub := make(chan error, 1)
	var publicacao time.Duration // read only after erroPub delivered
	go func(erroPub chan<- error) {
		var err error
		publicacao, err = pub.publicar(ctx, entrada, ds, taxa, func(int) {})
		erroPub <- err
	}(erroPub)
	feitos, seq, ocioso := 0, int64(0), true
	for feitos < len(ds) {
		if ctx.Err() != nil {
			return l, ctx.Err()
		}
		select { // the publisher sends once: erroPub is then nil, and never ready
		case err := <-erroPub:
			if err != nil {
				return l, err
			}
			erroPub = nil
		default:
		}
		var b jetstream.MessageBatch
		if ocioso {
			b, err = c.Fetch(1, jetstream.FetchMaxWait(time.Second))
		} else {
			b, err = c.FetchNoWait(max(lote, 64))
		}
		if err != nil {
			return l, err
		}
		var msgs []jetstream.Msg
		for m := range b.Messages() {
			msgs = append(msgs, m)
		}
		if err := b.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, nats.ErrTimeout) {
			return l, err
		}
		ocioso = len(msgs) == 0
		recebidas := time.Now()
		for _, m := range msgs {
			if meta, err := m.Metadata(); err == nil {
				l.Fases.Entrega += recebidas.Sub(meta.Timestamp)
			}
		}
		for len(msgs) > 0 {
			inicio := time.Now()
			n := min(lote, len(msgs))
			parte := msgs[:n]
			msgs = msgs[n:]
			// One pipelined round trip: its statements run in one implicit
			// transaction, committed (and flushed) once.
			var lb pgx.Batch
			for _, m := range parte {
				seq++
				lb.Queue(`INSERT INTO laco (id, dados) VALUES ($1, $2)`, seq, m.Data())
			}
			if err := conn.SendBatch(ctx, &lb).Close(); err != nil {
				return l, err
			}
			gravadas := time.Now()
			l.Fases.Escrita += time.Duration(n) * gravadas.Sub(inicio)
			futuros := make([]jetstream.PubAckFuture, 0, n)
			for _, m := range parte {
				meta, _ := m.Metadata()
				f, err := js.PublishAsync(saida, m.Data(), jetstream.WithMsgID(fmt.Sprint("r", meta.Sequence.Stream)))
				if err != nil {
					return l, err
				}
				futuros = append(futuros, f)
			}
			for _, f := range futuros {
				select {
				case <-f.Ok():
				case err := <-f.Err():
					return l, fmt.Errorf("result not acknowledged: %w", err)
				case <-time.After(30 * time.Second):
					return l, errors.New("result ack not received in 30 s")
				}
			}
			l.Fases.Publicacao += time.Duration(n) * time.Since(gravadas)
			for _, m := range parte {
				if err := m.Ack(); err != nil {
					return l, err
				}
			}
			feitos += n
		}
	}
	fim := time.Now()
	l.CPU = calcularUso(antes, amostrar(medidos), len(ds))
	time.Sleep(esperaEstatisticas)
	walDepois, err := lerWAL(ctx, conn)
	if err != nil {
		return l, err
	}
	l.WAL = walDepois.menos(walAntes)
	for _, f := range []*time.Duration{&l.Fases.Entrega, &l.Fases.Escrita, &l.Fases.Publicacao} {
		*f /= time.Duration(len(ds))
	}
	if erroPub != nil {
		if err := <-erroPub; err != nil {
			return l, err
		}
	}
	l.Duracao, l.Publicacao = fim.Sub(ds[0].pub), publicacao
	pub.esperar(ctx, ds, 5*time.Second, func(int) {})
	r := resumir(ds, taxa, publicacao)
	l.Lat, l.Fases.Total = r.Lat, r.Fases.Total
	return l, nil
}
