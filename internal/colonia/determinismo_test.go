package colonia_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/formigueiro/d6a/internal/bus"
	"github.com/formigueiro/d6a/internal/estatisticas"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/pgtest"
	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/verificar/log"
)

// Issue 22, "determinism from the bus": a decision is a function of the
// bus's prefix up to its trigger. A colony runs a random sequence of the
// consumed types (registrations in every state, agenda items, cycle ends
// and refusals, right and wrong, aggregations, starts, eligibility
// updates) published in bursts; then a second d6a on a fresh database
// consumes the same stream from sequence 1. Every table, every published
// envelope (the outbox) and the log's root come out identical, bit for
// bit. The service's clock is held still in both runs: it still stamps
// bookkeeping columns (and data_sorteio), which is what the test fixes;
// the seeds, T, ids and outcomes come from the bus (docs/decisions.md,
// "Determinism from the bus").
func TestDeterminismoDoBarramento(t *testing.T) {
	t.Parallel()
	determinismo(t, false)
}

// TestDeterminismoDoBarramentoComPortoes is TestDeterminismoDoBarramento
// with both phase-2 gates on (CONTRACT §8): the gates' record, the gated
// eligibility and the phase-2 inputs come out identical too.
func TestDeterminismoDoBarramentoComPortoes(t *testing.T) {
	t.Parallel()
	determinismo(t, true)
}

func determinismo(t *testing.T, portoes bool) {
	c1 := novaColonia(t, opcoes{nRecusas: 2})
	c1.cfg.CapacitacaoExterna, c1.cfg.ExigirVinculo = portoes, portoes
	c1.clock.parado = true
	r := rand.New(rand.NewPCG(22, 2026))
	// A small country: a root, two cities, four neighbourhoods.
	raiz := c1.novaUC()
	var ucs = []uuid.UUID{raiz}
	for range 2 {
		cidade := uuid.New()
		uc(c1, cidade, raiz)
		ucs = append(ucs, cidade)
		for range 2 {
			bairro := uuid.New()
			uc(c1, bairro, cidade)
			ucs = append(ucs, bairro)
		}
	}
	c1.iniciar()

	var conselheiros, demandas []uuid.UUID
	ativas := func() [][2]uuid.UUID {
		rows, err := c1.pool.Query(t.Context(), `SELECT conselheiro_id, demanda_id FROM d6a.atribuicoes WHERE status = 'ativa' ORDER BY conselheiro_id`)
		must(t, err == nil, "%v", err)
		defer rows.Close()
		var out [][2]uuid.UUID
		for rows.Next() {
			var p [2]uuid.UUID
			must(t, rows.Scan(&p[0], &p[1]) == nil, "scan")
			out = append(out, p)
		}
		return out
	}
	escolher := func(ids []uuid.UUID) uuid.UUID {
		if len(ids) == 0 || r.IntN(8) == 0 {
			return uuid.New() // unknown: the handlers' no-ops
		}
		return ids[r.IntN(len(ids))]
	}
	var ultimo uuid.UUID
	for rajada := range 14 {
		pares := ativas()
		for range 6 + r.IntN(6) {
			uc := ucs[r.IntN(len(ucs))]
			switch k := r.IntN(10); {
			case k < 3 || rajada == 0:
				id := uuid.New()
				p := cadastro(id, uc)
				switch r.IntN(6) {
				case 0:
					p["capacitacao_concluida"] = false
				case 1:
					p["status"] = "inativo"
				}
				conselheiros = append(conselheiros, id)
				ultimo, _ = c1.publicar(evento.ConselheiroCadastrado, "1.1.0", p)
				if portoes && r.IntN(4) != 0 { // most get what the gates ask for
					c1.publicar(evento.CapacitacaoConcluida, "1.0.0", capacitacao(id))
					ultimo, _ = c1.publicar(evento.VinculoValidado, "1.0.0", vinculo(id, uc, true))
				}
			case k < 6:
				d := uuid.New()
				demandas = append(demandas, d)
				ultimo, _ = c1.publicar(evento.AgendaItemDisponivel, "1.0.0", agenda(d, uc))
			case k < 7 && len(pares) > 0:
				p := pares[r.IntN(len(pares))]
				ultimo, _ = c1.publicar(evento.CicloConcluido, "1.0.0", ciclo(p[0], p[1], uc))
			case k < 8 && len(pares) > 0:
				p := pares[r.IntN(len(pares))]
				motivo := []string{"risco_pessoal", "recusa_explicita", "fora_do_territorio", ""}[r.IntN(4)]
				ultimo, _ = c1.publicar(evento.AtribuicaoRecusada, "1.1.0", recusa(p[0], p[1], uc, motivo))
			case k < 9:
				switch r.IntN(6) {
				case 0:
					ultimo, _ = c1.publicar(evento.CicloConcluido, "1.0.0", ciclo(escolher(conselheiros), escolher(demandas), uc))
				case 1:
					ultimo, _ = c1.publicar(evento.DemandaIniciada, "1.0.0", map[string]any{"conselheiro_id": escolher(conselheiros), "demanda_id": escolher(demandas)})
				case 2:
					ultimo, _ = c1.publicar(evento.ElegibilidadeAtualizada, "1.0.0", map[string]any{"unidade_civica_id": uc, "versao_parametros": fmt.Sprint("v", rajada)})
				// The phase-2 inputs (CONTRACT §8), right and wrong.
				case 3:
					ultimo, _ = c1.publicar(evento.CapacitacaoConcluida, "1.0.0", capacitacao(escolher(conselheiros)))
				case 4:
					ultimo, _ = c1.publicar(evento.VinculoValidado, "1.0.0", vinculo(escolher(conselheiros), uc, r.IntN(3) != 0))
				default:
					ultimo, _ = c1.publicar(evento.ProgressaoHabilitada, "1.0.0", progressao(escolher(conselheiros), ucs[r.IntN(3)], 5))
				}
			default:
				membros := []map[string]any{{"demanda_id": escolher(demandas)}, {"demanda_id": escolher(demandas)}}
				ultimo, _ = c1.publicar(evento.DuplicidadeAgregada, "1.0.0", map[string]any{
					"agregado_id": uuid.New(), "representante_demanda_id": escolher(demandas), "membros": membros,
				})
			}
		}
		c1.esperarProcessado(ultimo)
	}
	// Whatever the bursts left, a refusal that takes effect and a queue:
	// two demands where nobody is registered.
	if pares := ativas(); len(pares) > 0 {
		c1.processar(evento.AtribuicaoRecusada, "1.1.0", recusa(pares[0][0], pares[0][1], raiz, "recusa_explicita"))
	}
	vazia := uuid.New()
	uc(c1, vazia, uuid.Nil)
	ucs = append(ucs, vazia)
	c1.publicar(evento.AgendaItemDisponivel, "1.0.0", agenda(uuid.New(), vazia))
	c1.processar(evento.AgendaItemDisponivel, "1.0.0", agenda(uuid.New(), vazia))
	c1.esperarOutboxVazio()
	must(t, c1.contar(`SELECT count(*) FROM d6a.transparencia_registros`) > 40, "too little happened")
	must(t, c1.contar(`SELECT count(*) FROM d6a.contador_recusas`) > 0, "no refusal took effect")
	// The bursts' own log replays clean with the bus: every chain follows
	// the recorded hierarchy, every sweep served the demand due, every
	// consumed input has its record (CONTRACT §7).
	res, err := (&log.Cliente{Base: "http://" + c1.w.Addr.String(), Barramento: c1.w.Bus}).Reproduzir(t.Context(), uuid.Nil, nil)
	must(t, err == nil && res.Primeira == nil && res.Barramento && len(res.Replay.Divergencias) == 0,
		"replay of the bursts' log: %v / %v / %v", err, res.Primeira, res.Replay.Divergencias)
	c1.parar()
	antes := fotografar(t, c1.pool)

	// The same stream into a fresh database: the durable rewound to 1.
	c2 := &harness{t: t, dbURL: pgtest.URL(t), natsDir: c1.natsDir, natsAddr: c1.natsAddr, srv: c1.srv,
		clock: &relogio{t: c1.clock.t, parado: true}, cfg: c1.cfg, opcoes: c1.opcoes}
	c2.cfg.DatabaseURL = c2.dbURL
	c2.pool, err = pgxpool.New(context.Background(), c2.dbURL)
	must(t, err == nil, "%v", err)
	t.Cleanup(c2.pool.Close)
	t.Cleanup(c2.parar)
	_, err = c2.pool.Exec(t.Context(), `INSERT INTO core.uc_polygons (id, parent_uc_id) SELECT * FROM unnest($1::uuid[], $2::uuid[])`,
		ucs, []any{nil, raiz, ucs[1], ucs[1], raiz, ucs[4], ucs[4], nil})
	must(t, err == nil, "hierarchy: %v", err)
	b, err := bus.Connect(t.Context(), bus.Config{URL: c1.cfg.NATSURL, Stream: c1.cfg.Stream, Prefix: c1.cfg.SubjectPrefix})
	must(t, err == nil, "%v", err)
	_, _, err = b.Replay(t.Context(), 1)
	_ = b.Close()
	must(t, err == nil, "replay: %v", err)
	c2.iniciar()
	c2.eventually("the stream consumed again", func() bool {
		n, err := c2.w.Bus.Pending(context.Background())
		return err == nil && n == 0
	})
	c2.esperarOutboxVazio()
	c2.parar()
	depois := fotografar(t, c2.pool)

	must(t, len(antes) >= 18 && len(antes["outbox"]) > 20 && len(antes["atribuicoes"]) > 5 && len(antes["fila_pendentes"]) > 0,
		"compared %d tables, %d outbox rows, %d assignments, %d pending", len(antes), len(antes["outbox"]), len(antes["atribuicoes"]), len(antes["fila_pendentes"]))
	for _, tabela := range slices.Sorted(mapKeys(antes)) {
		a, d := antes[tabela], depois[tabela]
		if slices.Equal(a, d) {
			continue
		}
		for i := range max(len(a), len(d)) {
			var x, y string
			if i < len(a) {
				x = a[i]
			}
			if i < len(d) {
				y = d[i]
			}
			if x != y {
				t.Errorf("%s differs (%d rows, then %d); first at row %d:\n first run  %s\n second run %s", tabela, len(a), len(d), i, x, y)
				break
			}
		}
	}
	c1.semDLQ()
}

// leituras are the tables whose rows are read differently: what a
// transport or the database's own counters stamp, not a decision.
//   - consumer_offset: the per-type bookkeeping of how far the consumer
//     got, which follows how deliveries were batched;
//   - transparencia_checkpoints: one per commit, so as many as the batches
//     were; the latest one (same size, same root, same signature) is
//     compared apart;
//   - transparencia_regras: the time the migration ran;
//   - fila_pendentes: ordem_entrada is an identity, which PostgreSQL also
//     advances on an insert that meets a conflict; its order is the FIFO's
//     tie-break (a decision) and is compared as a rank.
var leituras = map[string]string{
	"consumer_offset":           "",
	"transparencia_checkpoints": "",
	"transparencia_regras":      `SELECT (to_jsonb(x) - 'registrada_em')::text FROM d6a.transparencia_regras x`,
	"fila_pendentes": `SELECT (to_jsonb(x) - 'ordem_entrada' || jsonb_build_object('ordem', dense_rank() OVER (ORDER BY ordem_entrada)))::text
		FROM d6a.fila_pendentes x`,
}

// fotografar reads every table of schema d6a, each row as JSON text,
// sorted: what two runs must agree on.
func fotografar(t *testing.T, pool *pgxpool.Pool) map[string][]string {
	t.Helper()
	ctx := t.Context()
	// The fairness statistics fold the signed records in the background:
	// fold what the stopped colony left, so both runs are read complete.
	for {
		n, err := estatisticas.Apurar(ctx, &store.Store{Pool: pool}, 0)
		must(t, err == nil, "statistics: %v", err)
		if n == 0 {
			break
		}
	}
	rows, err := pool.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'd6a' AND table_type = 'BASE TABLE'`)
	must(t, err == nil, "%v", err)
	var tabelas []string
	for rows.Next() {
		var n string
		must(t, rows.Scan(&n) == nil, "scan")
		tabelas = append(tabelas, n)
	}
	rows.Close()
	out := map[string][]string{}
	tabelas = append(tabelas, "checkpoint mais recente")
	leituras["checkpoint mais recente"] = `SELECT to_jsonb(x)::text FROM (SELECT tamanho, raiz, nota FROM d6a.transparencia_checkpoints ORDER BY tamanho DESC LIMIT 1) x`
	for _, n := range tabelas {
		q, ok := leituras[n]
		if !ok {
			q = fmt.Sprintf(`SELECT to_jsonb(x)::text FROM d6a.%q x`, n)
		} else if q == "" {
			continue
		}
		rs, err := pool.Query(ctx, q)
		must(t, err == nil, "%s: %v", q, err)
		var linhas []string
		for rs.Next() {
			var l string
			must(t, rs.Scan(&l) == nil, "scan")
			linhas = append(linhas, l)
		}
		rs.Close()
		slices.Sort(linhas)
		out[n] = linhas
	}
	return out
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
