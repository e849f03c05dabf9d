//go:build faults

package faults

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/verificar/log"
)

// TestPublicadoSoAssinado: CONTRACT §7 "Published only once signed" (issue
// 21). A citizen who sees a conselheiro.sorteado on the bus and fetches its
// record at once gets 200 with a valid inclusion proof under a signed
// checkpoint, never the 404 that would be the evidence of a dropped draw:
// for a burst of 500 demands, with a kill -9 of the service in the middle
// (results the outbox relay republishes after it included).
func TestPublicadoSoAssinado(t *testing.T) {
	dbURL := novoBanco(t, "assinado")
	srv := novoNATS(t, "assinado")
	cli := conectar(t, srv.URL())
	m := novoModelo(par.seed+7, 1000)
	ctx := context.Background()
	pool := poolComHierarquia(t, ctx, dbURL, m)
	i := novaInstancia(t, "assinado", map[string]string{
		"D6A_DATABASE_URL": dbURL, "D6A_NATS_URL": srv.URL(), "D6A_JWT_SECRET": segredo,
		"D6A_LOG_LEVEL": "info", "D6A_OUTBOX_POLL": "200ms", "D6A_FETCH_TIMEOUT": "250ms",
		"D6A_TRANSPARENCIA_POR_MINUTO": "0",
	})
	if err := i.pronta(120 * time.Second); err != nil {
		t.Fatal(err)
	}
	pubCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	publicar := cli.publicarNoModelo(t, pubCtx, m)
	for range 400 {
		publicar(m.cadastro())
	}
	qctx, cancelQ := context.WithTimeout(ctx, 2*time.Minute)
	esperar(qctx, func() bool { ok, _ := quiescente(qctx, pool, cli, m); return ok })
	cancelQ()

	// The key, pinned before the burst: a restart keeps it (D6A_DATA_DIR).
	res, err := http.Get(i.base() + "/d6a/transparencia/chave")
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := io.ReadAll(res.Body)
	res.Body.Close()
	leitor := &log.Cliente{Base: i.base(), Chave: strings.TrimSpace(string(kb))}

	// The citizens: every result, fetched as soon as it is seen.
	var (
		vistos, conferidos atomic.Int64
		mu                 sync.Mutex
		falhas             []string
	)
	fila := make(chan string, 4096)
	segCtx, pararSeg := context.WithCancel(ctx)
	defer pararSeg()
	segFim := make(chan struct{})
	go func() {
		defer close(segFim)
		cli.seguirSorteados(segCtx, func(eventID string, p payloadSorteado) {
			m.aprender(eventID, p)
			vistos.Add(1)
			fila <- eventID
		})
	}()
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range fila {
				err := conferirJa(ctx, leitor, uuid.MustParse(id))
				if err != nil {
					mu.Lock()
					falhas = append(falhas, id+": "+err.Error())
					mu.Unlock()
					continue
				}
				conferidos.Add(1)
			}
		}()
	}

	const n = 500
	for k := range n {
		publicar(m.agenda())
		if k == n/2 {
			if !i.matar() {
				t.Fatal("kill -9: no instance running")
			}
		}
	}
	if err := i.pronta(120 * time.Second); err != nil {
		t.Fatal(err)
	}
	qctx, cancelQ = context.WithTimeout(ctx, 3*time.Minute)
	defer cancelQ()
	if !esperar(qctx, func() bool { ok, _ := quiescente(qctx, pool, cli, m); return ok }) {
		_, estado := quiescente(ctx, pool, cli, m)
		t.Fatalf("not quiescent after the burst: %s", estado)
	}
	var sorteados int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM d6a.outbox WHERE tipo = 'conselheiro.sorteado'`).Scan(&sorteados); err != nil {
		t.Fatal(err)
	}
	esperar(qctx, func() bool { return vistos.Load() >= sorteados })
	pararSeg()
	<-segFim // the follower sends no more: fila can close
	close(fila)
	wg.Wait()

	for k, f := range falhas {
		if k < 10 {
			t.Errorf("a result on the bus whose record is not served signed: %s", f)
		}
	}
	if len(falhas) > 0 || vistos.Load() != sorteados || conferidos.Load() != sorteados || sorteados < n/2 {
		t.Fatalf("%d draws committed, %d seen on the bus, %d fetched at once with a valid proof, %d failures", sorteados, vistos.Load(), conferidos.Load(), len(falhas))
	}
	t.Logf("%d draws, every one fetched at once with a valid inclusion proof (kill -9 after demand %d)", sorteados, n/2)
}

// conferirJa fetches and verifies a draw's record at once. Only a server
// that does not answer (the killed instance, before its restart) is waited
// for (no answer, or 503 while it boots); any other answer but a verified
// 200, a 404 above all, is a failure.
func conferirJa(ctx context.Context, c *log.Cliente, id uuid.UUID) error {
	fim := time.Now().Add(60 * time.Second)
	for {
		_, err := c.VerificarSorteio(ctx, id)
		var h *log.ErrHTTP
		espera := !errors.As(err, &h) || h.Status == http.StatusServiceUnavailable
		if err == nil || !espera || time.Now().After(fim) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}
