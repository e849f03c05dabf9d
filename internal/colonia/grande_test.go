package colonia_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/equidade"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/tiles"
	"github.com/formigueiro/d6a/internal/verificar/log"
)

// CONTRACT §7, issue 50 item 1: a draw among any number of eligible
// counsellors leaves every record within a C2SP entry's 65,535 bytes. Draws
// among 900 and 5,000 counsellors of one unit: every tile of the log
// answers 200, `verify --url --all --replay` finds no failure and no
// divergence, and `--event-id` alone checks the full list.
func TestSorteioGrande(t *testing.T) {
	t.Parallel()
	c := novaColonia(t, opcoes{})
	ucs := map[int]uuid.UUID{900: c.novaUC(), 5000: c.novaUC()}
	c.iniciar()
	// Registrations published in bulk, awaited once: the worker batches
	// them.
	inicio := time.Now()
	total := 0
	for _, n := range []int{900, 5000} {
		for range n {
			c.publicar(evento.ConselheiroCadastrado, "1.1.0", cadastro(uuid.New(), ucs[n]))
		}
		total += n
	}
	c.eventuallyEm(5*time.Minute, fmt.Sprintf("%d registrations", total), func() bool {
		return c.contar(`SELECT count(*) FROM d6a.conselheiros`) == total
	})
	t.Logf("%d registrations in %v", total, time.Since(inicio))
	base := "http://" + c.w.Addr.String()
	cli := &log.Cliente{Base: base, Barramento: c.w.Bus}
	for _, n := range []int{900, 5000} {
		demanda, sorteado := c.novaDemanda(ucs[n])
		must(t, sorteado != uuid.Nil, "n=%d: no draw", n)
		var ev uuid.UUID
		if err := c.pool.QueryRow(context.Background(), `SELECT event_id_sorteio FROM d6a.atribuicoes WHERE demanda_id = $1`, demanda).Scan(&ev); err != nil {
			t.Fatal(err)
		}
		s, err := cli.VerificarSorteio(t.Context(), ev)
		must(t, err == nil, "n=%d: --event-id: %v", n, err)
		partes := (n + registro.ElegiveisPorParte - 1) / registro.ElegiveisPorParte
		must(t, s.Partes == partes && len(s.Registro.ElegiveisEntrada) == n && s.Gatilho,
			"n=%d: --event-id checked %d list records and %d ids (trigger %v), want %d and %d", n, s.Partes, len(s.Registro.ElegiveisEntrada), s.Gatilho, partes, n)
	}
	tamanho := c.tamanhoLog()
	c.eventually("the log signed", func() bool {
		cp, _, err := cli.Checkpoint(t.Context())
		return err == nil && cp.Tamanho == tamanho
	})
	for tl := range tiles.All(tamanho) {
		res, err := http.Get(base + "/d6a/transparencia/" + tiles.Path(tl))
		must(t, err == nil, "%s: %v", tiles.Path(tl), err)
		res.Body.Close()
		must(t, res.StatusCode == http.StatusOK, "%s: %d", tiles.Path(tl), res.StatusCode)
	}
	res, err := cli.Reproduzir(t.Context(), uuid.Nil, nil)
	must(t, err == nil && res.Primeira == nil && res.Falhas == 0, "replay: %v / %v", err, res.Primeira)
	must(t, len(res.Replay.Divergencias) == 0, "an honest log diverges: %v", res.Replay.Divergencias)
	must(t, res.Replay.Desconhecidos() == 0 && res.Replay.Decisoes == 2, "%d unknown counsellors, %d decisions", res.Replay.Desconhecidos(), res.Replay.Decisoes)
	t.Logf("log of %d records: %s", tamanho, res.Linha())
	// The fairness statistics count both draws, each for every one of its
	// eligible counsellors, and `--estatisticas` recomputes them from the
	// list records.
	var r equidade.Resultado
	c.eventually("statistics over the 2 draws", func() bool {
		res := c.http(http.MethodGet, "/d6a/transparencia/estatisticas", "", nil)
		return res.status == 200 && json.Unmarshal(res.body, &r) == nil && r.Registros == tamanho
	})
	must(t, r.Sorteios == 2 && len(r.Conselheiros) == total, "served %d draws over %d counsellors, want 2 over %d", r.Sorteios, len(r.Conselheiros), total)
	var obs int64
	for _, cs := range r.Conselheiros {
		must(t, cs.SorteiosElegivel == 1, "counsellor %s eligible in %d draws, want 1", cs.ID, cs.SorteiosElegivel)
		obs += cs.Observado
	}
	must(t, obs == 2, "%d wins, want 2", obs)
	recomputado, resumo, err := cli.VerificarEstatisticas(t.Context(), nil)
	must(t, err == nil && resumo.Primeira == nil, "verify --estatisticas: %v %v", err, resumo.Primeira)
	must(t, recomputado.Sorteios == 2 && len(recomputado.Conselheiros) == total, "recomputed %d draws over %d counsellors", recomputado.Sorteios, len(recomputado.Conselheiros))
}
