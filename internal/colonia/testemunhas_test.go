package colonia_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/formigueiro/d6a/internal/equidade"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/testemunha"
	"github.com/formigueiro/d6a/internal/verificar/log"
)

// CONTRACT §7 "Witnesses" (issue 23), with two real witnesses
// (litewitness): cosignatures arrive and verify; with one witness gone a
// quorum of 1 still passes and a quorum of 2 does not; the witness that was
// down catches up; a forked checkpoint (same size, another root, signed
// with the operator's own key) is refused by the witness, so a reader
// requiring 2 cosignatures rejects it.
func TestTestemunhasCossinam(t *testing.T) {
	t.Parallel()
	c := novaColonia(t, opcoes{})
	skey, vkey := c.chaveDoLog()
	ws := c.comTestemunhas(vkey, "tce.example/w1", "mp.example/w2")
	w1, w2 := ws[0], ws[1]
	c.iniciar()
	// Catch-up is driven by the submitter's timer when nothing else wakes it.
	c.w.Testemunhas.Intervalo = 200 * time.Millisecond

	bairro := c.novaUC()
	for range 8 {
		c.novoConselheiro(bairro)
	}
	sortear := func(n int) {
		for range n {
			_, s := c.novaDemanda(bairro)
			must(t, s != uuid.Nil, "no draw")
		}
	}
	cli := &log.Cliente{Base: "http://" + c.w.Addr.String(), Chave: vkey}
	ambas := []string{w1.vkey, w2.vkey}
	quorum := func(chaves []string, k int, espera time.Duration) (log.Testemunhado, error) {
		return cli.VerificarTestemunhas(context.Background(), chaves, k, espera)
	}

	sortear(2)
	tt, err := quorum(ambas, 2, 20*time.Second)
	must(t, err == nil, "quorum 2 with both witnesses up: %v", err)
	must(t, len(tt.Cossinaturas) == 2 && tt.Checkpoint.Tamanho == c.tamanhoLog(), "cosignatures %+v of checkpoint %d", tt.Cossinaturas, tt.Checkpoint.Tamanho)
	for _, cs := range tt.Cossinaturas {
		must(t, time.Since(cs.Em) < time.Minute, "cosigned at %s", cs.Em)
	}
	r := c.http(http.MethodGet, "/metrics", "", nil)
	for _, w := range []*litewitness{w1, w2} {
		must(t, strings.Contains(string(r.body), `d6a_testemunha_cossinatura_idade_segundos{testemunha="`+w.nome+`"}`), "/metrics lacks the age of %s", w.nome)
	}

	// One witness gone: the log goes on, quorum 1 holds, quorum 2 does not.
	w2.parar()
	sortear(2)
	tt, err = quorum([]string{w1.vkey}, 1, 20*time.Second)
	must(t, err == nil && tt.Checkpoint.Tamanho == c.tamanhoLog(), "quorum 1 with one witness gone: %v (checkpoint %d)", err, tt.Checkpoint.Tamanho)
	_, err = quorum(ambas, 2, time.Second)
	must(t, errors.Is(err, registro.ErrQuorum), "quorum 2 with one witness gone: %v, want ErrQuorum", err)

	// Back: it catches up from the size it cosigned last (2) to 4.
	w2.iniciar()
	tt, err = quorum(ambas, 2, 20*time.Second)
	must(t, err == nil && tt.Checkpoint.Tamanho == c.tamanhoLog(), "quorum 2 after the witness came back: %v (checkpoint %d)", err, tt.Checkpoint.Tamanho)

	// A fork: the operator's key signs another root for the same size.
	signer, err := note.NewSigner(skey)
	must(t, err == nil, "%v", err)
	falsa := tlog.Hash(sha256.Sum256([]byte("outra história")))
	n := c.tamanhoLog()
	bifurcado, err := note.Sign(&note.Note{Text: registro.Checkpoint{Origem: c.cfg.LogOrigin, Tamanho: n, Raiz: falsa}.Texto()}, signer)
	must(t, err == nil, "%v", err)
	for _, w := range []*litewitness{w1, w2} {
		res, err := http.Post(w.url()+"add-checkpoint", "text/plain", bytes.NewReader(append([]byte(fmt.Sprintf("old %d\n\n", n)), bifurcado...)))
		must(t, err == nil, "%v", err)
		res.Body.Close()
		must(t, res.StatusCode == http.StatusUnprocessableEntity, "witness %s answered %d to a fork, want 422", w.nome, res.StatusCode)
	}
	// The fork served with the honest checkpoint's cosignatures fails their
	// check; served with none, it lacks the quorum.
	var linhas string
	for _, cs := range tt.Cossinaturas {
		linhas += cs.Linha
	}
	_, _, err = registro.Cossinaturas(append(bifurcado, linhas...), vkey, ambas)
	must(t, err != nil, "a fork carrying the honest cosignatures verified")
	_, cs, err := registro.Cossinaturas(bifurcado, vkey, ambas)
	must(t, err == nil && errors.Is(registro.ConferirQuorum(cs, 2), registro.ErrQuorum), "a fork without cosignatures passed quorum 2: %v", err)
	// And the honest log still gets cosigned after the fork attempt.
	sortear(1)
	_, err = quorum(ambas, 2, 20*time.Second)
	must(t, err == nil, "quorum 2 after the fork attempt: %v", err)
}

// The fairness statistics on the route equal their recomputation from the
// proved records (`d6a verify --url --estatisticas`), once the service's
// pass has caught up with the signed log.
func TestEstatisticasNaRota(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	c.sortearEmCiclos(bairro, 5, 12)
	cli := &log.Cliente{Base: "http://" + c.w.Addr.String()}
	var r equidade.Resultado
	c.eventually("statistics over the 12 draws", func() bool {
		res := c.http(http.MethodGet, "/d6a/transparencia/estatisticas", "", nil)
		// The last cycle's releases may still be on their way (each input
		// waits for its beacon round): the statistics catch up with them.
		return res.status == 200 && json.Unmarshal(res.body, &r) == nil && r.Sorteios == 12 && r.Registros == c.tamanhoLog()
	})
	must(t, r.Registros == c.tamanhoLog() && len(r.Conselheiros) == 5 && r.Metodo == equidade.Metodo, "served %+v", r)
	var soma float64
	var obs int64
	for _, cs := range r.Conselheiros {
		soma += cs.Esperado
		obs += cs.Observado
	}
	must(t, obs == 12 && soma > 11.999 && soma < 12.001, "observado %d, esperado %.4f: want 12 each", obs, soma)
	recomputado, res, err := cli.VerificarEstatisticas(context.Background(), nil)
	must(t, err == nil && res.Primeira == nil, "verify --estatisticas: %v %v", err, res.Primeira)
	must(t, recomputado.Sorteios == 12, "recomputed %d draws", recomputado.Sorteios)
	// A served figure that differs is named.
	r.Conselheiros[0].Observado++
	err = log.DiferencaEstatisticas(r, recomputado)
	must(t, err != nil && strings.Contains(err.Error(), r.Conselheiros[0].ID), "a changed count not named: %v", err)
}

// TestMedirRodadaTestemunha measures a witness round: from a draw's
// commit to the witness's cosignature stored, and litewitness's CPU per
// round (/proc). A measurement, not a check: it runs only with
// D6A_MEDIR_TESTEMUNHA=1.
//
//	D6A_MEDIR_TESTEMUNHA=1 go test -count=1 -run TestMedirRodadaTestemunha -v ./internal/colonia
func TestMedirRodadaTestemunha(t *testing.T) {
	if os.Getenv("D6A_MEDIR_TESTEMUNHA") == "" {
		t.Skip("a measurement: set D6A_MEDIR_TESTEMUNHA=1")
	}
	c := novaColonia(t, opcoes{})
	_, vkey := c.chaveDoLog()
	w := c.comTestemunhas(vkey, "tce.example/w1")[0]
	c.iniciar()
	bairro := c.novaUC()
	for range 5 {
		c.novoConselheiro(bairro)
	}
	cpu := func() time.Duration {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", w.cmd.Process.Pid))
		must(t, err == nil, "%v", err)
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		return time.Duration(u+s) * time.Second / 100 // USER_HZ
	}
	const n = 100
	var total time.Duration
	var lat []time.Duration
	cpu0 := cpu()
	for range n {
		d, s := c.novaDemanda(bairro)
		must(t, s != uuid.Nil, "no draw")
		inicio := time.Now()
		tam := int64(c.contar(`SELECT count(*) FROM d6a.transparencia_registros`))
		for {
			k, _, err := testemunha.UltimaCossinatura(t.Context(), c.pool, w.vkey)
			must(t, err == nil, "%v", err)
			if k >= tam {
				break
			}
			time.Sleep(200 * time.Microsecond)
		}
		lat = append(lat, time.Since(inicio))
		total += lat[len(lat)-1]
		c.processar(evento.CicloConcluido, "1.0.0", ciclo(s, d, bairro))
	}
	slices.Sort(lat)
	t.Logf("witness round, %d rounds: from the draw seen committed to its cosignature stored p50 %s, p90 %s, max %s, mean %s; litewitness CPU %s per round",
		n, lat[n/2], lat[n*9/10], lat[n-1], total/n, (cpu()-cpu0)/n)
}

// sortearEmCiclos registers k counsellors in uc, then draws n demands
// there one at a time, each followed by its cycle end, so every draw has
// the whole unit to choose from.
func (c *harness) sortearEmCiclos(uc uuid.UUID, k, n int) {
	c.t.Helper()
	for range k {
		c.novoConselheiro(uc)
	}
	for range n {
		d, s := c.novaDemanda(uc)
		must(c.t, s != uuid.Nil, "no draw")
		c.processar(evento.CicloConcluido, "1.0.0", ciclo(s, d, uc))
	}
}
