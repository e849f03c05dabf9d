package main

// The bus check's own rate (`d6a-bench verificar -barramento K`, issue 39):
// K draws whose triggers are on a real JetStream stream (an embedded
// nats-server, one other event between two triggers), written as a tiles
// mirror, verified by transparencia.Cliente in this process with the bus
// (every draw's base and T checked against its trigger) three ways in the
// same run: without the bus (the floor), with one GetMsg per draw (the
// way before, still as many in flight as tiles), and with each tile's
// messages read in runs through one ordered consumer (bus.MsgsEntre).

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/formigueiro/d6a/internal/bus"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/sorteio"
	"github.com/formigueiro/d6a/internal/transparencia"
	"github.com/formigueiro/d6a/internal/verificar/log"
)

// soGetMsg hides bus.Bus's bulk read: the verifier falls back to one
// GetMsg per record, the yardstick.
type soGetMsg struct{ b *bus.Bus }

func (s soGetMsg) MsgPorSequencia(ctx context.Context, seq uint64) ([]byte, string, time.Time, error) {
	return s.b.MsgPorSequencia(ctx, seq)
}

func medirBarramento(ctx context.Context, raiz string, k int) error {
	srv, err := server.NewServer(&server.Options{
		ServerName: "d6a-bench", Host: "127.0.0.1", Port: server.RANDOM_PORT,
		JetStream: true, StoreDir: filepath.Join(raiz, "nats"), NoLog: true, NoSigs: true,
	})
	if err != nil {
		return err
	}
	go srv.Start()
	defer func() { srv.Shutdown(); srv.WaitForShutdown() }()
	if !srv.ReadyForConnections(10 * time.Second) {
		return fmt.Errorf("nats-server did not start")
	}
	b, err := bus.Connect(ctx, bus.Config{URL: srv.ClientURL(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	defer b.Close()
	if err := b.EnsureStream(ctx); err != nil {
		return err
	}
	cfg := b.Config()
	js := b.JetStream()
	// Publish: a trigger, then another event, k times.
	inicio := time.Now()
	var acks []jetstream.PubAckFuture
	ids := make([]string, k)
	for i := range k {
		ids[i] = uuid.NewString()
		for j, subj := range []string{cfg.Prefix + ".agenda.item_disponivel", cfg.Prefix + ".conselheiro.outro"} {
			id := ids[i]
			if j == 1 {
				id = uuid.NewString()
			}
			a, err := js.PublishAsync(subj, []byte(`{"event_id":"`+id+`","tipo":"bench"}`))
			if err != nil {
				return err
			}
			acks = append(acks, a)
		}
		if len(acks) >= 4000 || i == k-1 {
			for _, a := range acks {
				select {
				case <-a.Ok():
				case err := <-a.Err():
					return err
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			acks = acks[:0]
		}
	}
	_, ultima, err := b.Ultima(ctx, cfg.Stream)
	if err != nil {
		return err
	}
	// The triggers' sequences and stored times, as a draw records them.
	type gatilho struct {
		seq int64
		t   string
	}
	porID := make(map[string]gatilho, k)
	if err := b.MsgsEntre(ctx, 1, ultima, func(seq uint64, data []byte, subject string, em time.Time) error {
		if len(data) > 48 {
			porID[string(data[13:49])] = gatilho{int64(seq), sorteio.FormatTimestamp(em)}
		}
		return nil
	}); err != nil {
		return err
	}
	skey, _, err := transparencia.GerarChave(registro.OrigemPadrao)
	if err != nil {
		return err
	}
	chave, err := transparencia.NovaChave(skey)
	if err != nil {
		return err
	}
	dir := filepath.Join(raiz, "espelho-barramento")
	e := &escritorTiles{raiz: filepath.Join(dir, "d6a", "transparencia"), chave: chave}
	if err := os.MkdirAll(e.raiz, 0o755); err != nil {
		return err
	}
	uc := uuid.NewSHA1(uuid.NameSpaceOID, []byte("bench-barramento/uc"))
	eleg := []string{"00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002", "00000000-0000-4000-8000-000000000003"}
	for _, id := range ids {
		g, ok := porID[id]
		if !ok {
			return fmt.Errorf("trigger %s not read back", id)
		}
		res, err := sorteio.Sortear(id, g.t, eleg)
		if err != nil {
			return err
		}
		seq := g.seq
		r, err := registro.NovoRegistro(uuid.New(), uuid.New(), uc, id, &seq, g.t, res, uc, []uuid.UUID{uc}, nil)
		if err != nil {
			return err
		}
		if err := e.anexar(r); err != nil {
			return err
		}
	}
	if _, err := e.publicar(); err != nil {
		return err
	}
	// The log's summary says where the trigger's rule begins: at 0.
	if err := os.WriteFile(filepath.Join(e.raiz, "resumo"), []byte(`{"gatilho_desde":0}`), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "verificar: %d triggers published and their draws written in %.1f s\n", k, time.Since(inicio).Seconds())

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: http.FileServer(http.Dir(dir))}
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()
	url := "http://" + ln.Addr().String()

	rodar := func(bar registro.Barramento) (float64, error) {
		c := &log.Cliente{Base: url, Chave: chave.Verificador, Barramento: bar}
		t0 := time.Now()
		res, _, err := c.VerificarTudo(ctx, nil)
		s := time.Since(t0).Seconds()
		switch {
		case err != nil:
			return s, err
		case res.Falhas != 0:
			return s, fmt.Errorf("%d records failed: %v", res.Falhas, res.Primeira)
		case bar != nil && res.Gatilhos != int64(k):
			return s, fmt.Errorf("%d triggers checked, want %d", res.Gatilhos, k)
		}
		return s, nil
	}
	sem, err := rodar(nil)
	if err != nil {
		return fmt.Errorf("without the bus: %w", err)
	}
	getmsg, err := rodar(soGetMsg{b})
	if err != nil {
		return fmt.Errorf("one GetMsg per draw: %w", err)
	}
	lote, err := rodar(b)
	if err != nil {
		return fmt.Errorf("in bulk: %w", err)
	}
	fmt.Printf("barramento: gatilhos=%d sem_barramento=%.2fs em_lote=%.2fs (%.0f/s) um_getmsg_por_sorteio=%.2fs (%.0f/s) razao=%.1fx\n",
		k, sem, lote, float64(k)/lote, getmsg, float64(k)/getmsg, getmsg/lote)
	return nil
}
