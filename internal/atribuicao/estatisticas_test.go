package atribuicao_test

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/atribuicaotest"
	"github.com/formigueiro/d6a/internal/entradas"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/hierarquia"
	"github.com/formigueiro/d6a/internal/manutencao"
	"github.com/formigueiro/d6a/internal/pgtest"
	"github.com/formigueiro/d6a/internal/store"
)

// tabelasD6a are the tables the draw path reads; autovacuum is kept off
// them so no statistics appear behind the test's back.
var tabelasD6a = []string{
	"conselheiros", "atribuicoes", "fila_pendentes", "contador_recusas",
	"auditoria_sorteios", "outbox", "eventos_processados", "consumer_offset",
}

// The draw path and the relay cost the same whether or not PostgreSQL has
// statistics (issue 11, CONTRACT §5): generic plans built while every table
// was empty, tables analyzed while empty, and tables bulk-loaded and never
// analyzed all read about as many rows per event as an analyzed database,
// in a country whose city and state levels are dense. The bound is on rows
// read (pg_stat counters), which a wrong plan multiplies by the size of a
// table; the time per event is logged.
func TestCustoSemEstatisticas(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 20,000 counsellors four times")
	}
	t.Parallel()
	leituras := map[string]float64{}
	for _, cond := range []struct {
		nome                                string
		analisarVazio, depois, ativasDepois bool
	}{
		{nome: "sem estatísticas, planos de tabelas vazias"},
		{nome: "analisadas vazias", analisarVazio: true},
		{nome: "analisadas depois da carga", depois: true},
		// A burst after a quiet night: analyzed with no active assignment,
		// the plans refitted then, thousands active a moment later.
		{nome: "analisadas sem atribuições ativas", depois: true, ativasDepois: true},
	} {
		por, dur := custoPorEvento(t, cond.analisarVazio, cond.depois, cond.ativasDepois)
		leituras[cond.nome] = por
		t.Logf("%-45s %7.1f linhas lidas por evento, %6.2f ms por evento", cond.nome, por, dur.Seconds()*1000/float64(eventosMedidos))
	}
	ref := leituras["analisadas depois da carga"]
	for nome, por := range leituras {
		// One winning step is ~90 counsellors, each with its probe; a plan
		// that scans a table or walks every active assignment per probe
		// reads tens of thousands.
		if por > 1000 {
			t.Errorf("%s: %.0f rows read per event; the plan depends on statistics", nome, por)
		}
		if por > 1.5*ref+50 {
			t.Errorf("%s: %.0f rows read per event against %.0f when analyzed", nome, por, ref)
		}
	}
}

const eventosMedidos = 200

// custoPorEvento builds a dense country on a fresh database, warms the
// service's plans on empty tables, bulk-loads it by SQL and returns the rows
// read per event (and the wall time) of 150 agenda items and 50 cycles.
func custoPorEvento(t *testing.T, analisarVazio, analisarDepois, ativasDepois bool) (float64, time.Duration) {
	t.Helper()
	ctx := context.Background()
	url := pgtest.URL(t)
	carga := atribuicaotest.AbrirStore(t, url)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := carga.Pool.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	for _, tab := range tabelasD6a {
		exec(`ALTER TABLE d6a.` + tab + ` SET (autovacuum_enabled = false)`)
	}
	// One state, 10 cities, 200 neighbourhoods.
	estado := uuid.New()
	cidades := make([]uuid.UUID, 10)
	bairros := make([]uuid.UUID, 200)
	exec(`INSERT INTO core.uc_polygons (id, parent_uc_id) VALUES ($1, NULL)`, estado)
	for i := range cidades {
		cidades[i] = uuid.New()
		exec(`INSERT INTO core.uc_polygons (id, parent_uc_id) VALUES ($1, $2)`, cidades[i], estado)
	}
	for i := range bairros {
		bairros[i] = uuid.New()
		exec(`INSERT INTO core.uc_polygons (id, parent_uc_id) VALUES ($1, $2)`, bairros[i], cidades[i%len(cidades)])
	}
	if analisarVazio {
		exec(`ANALYZE d6a.conselheiros, d6a.atribuicoes, d6a.fila_pendentes, d6a.outbox, d6a.eventos_processados, d6a.auditoria_sorteios, d6a.contador_recusas`)
	}

	clk := atribuicaotest.NovoRelogio()
	st := atribuicaotest.AbrirStore(t, url)
	hier := hierarquia.New(st.CarregarHierarquia, time.Hour, clk.Now)
	svc := atribuicao.New(atribuicao.Options{
		Store: st, Hierarquia: hier, Entradas: entradas.New(hier),
		Barramento: atribuicaotest.BarramentoFixo{ID: atribuicaotest.BaseFixa, Seq: atribuicaotest.SeqFixa}, SubjectPrefix: "eventos",
		NRecusasSuspensao: 3, TSuspensao: 90 * 24 * time.Hour, Now: clk.Now, Logger: slog.Default(),
	})
	defer svc.Close()
	r := rand.New(rand.NewPCG(7, 7))
	seq := uint64(1)
	rodar := func(evs []evento.Evento) {
		t.Helper()
		seqs := make([]uint64, len(evs))
		for i := range seqs {
			seqs[i] = seq
			seq++
		}
		for i, err := range svc.HandleLote(ctx, evs, seqs) {
			if err != nil {
				t.Fatalf("event %d (%s): %v", i, evs[i].Tipo, err)
			}
		}
	}
	agenda := func(uc uuid.UUID) evento.Evento {
		return evento.Evento{
			Envelope: evento.Envelope{EventID: uuid.New(), Tipo: evento.AgendaItemDisponivel, Origem: "D-5", VersaoSchema: "1.0.0"},
			Payload: evento.AgendaItemDisponivelPayload{
				DemandaID: uuid.New(), UnidadeCivicaID: uc, CategoriaID: "SAU", NivelPrecedencia: 2, ScoreFinal: 50,
			},
		}
	}
	// Plans are built while every table is empty: a draw with nobody
	// registered, one with a counsellor, its cycle, a refusal.
	x := uuid.New()
	exec(`INSERT INTO d6a.conselheiros (id, cidadao_id, unidade_civica_id, nivel_atuacao, status, capacitacao_concluida, data_cadastro, event_id_cadastro, event_id_ultima_alteracao, atualizado_em)
		VALUES ($1, $1, $2, 1, 'disponivel', true, now(), gen_random_uuid(), gen_random_uuid(), now())`, x, bairros[1])
	aquecer := []evento.Evento{agenda(bairros[0]), agenda(bairros[1])}
	rodar(aquecer)
	d := aquecer[1].Payload.(evento.AgendaItemDisponivelPayload).DemandaID
	rodar([]evento.Evento{{
		Envelope: evento.Envelope{EventID: uuid.New(), Tipo: evento.CicloConcluido, Origem: "D-6b", VersaoSchema: "1.0.0"},
		Payload:  evento.ConselheiroCicloConcluidoPayload{ConselheiroID: x, DemandaID: d, MotivoEncerramento: "resolvida"},
	}})

	// The bulk load an operator migrating from the old system does: 20,000
	// counsellors, 1% at state and 9% at city level, 2,000 holding an
	// active assignment, 5,000 past assignments, 1,000 pending demands,
	// 5,000 published outbox rows and an inbox of 4,000 events applied
	// before (small enough for a plan of "= ANY(array)" to prefer reading
	// it whole, at any statistics).
	// 1% are suspended, and 1% were once: the periodic reactivation reads
	// suspensions by their end (spec 4.8).
	exec(`INSERT INTO d6a.conselheiros (id, cidadao_id, unidade_civica_id, nivel_atuacao, status, capacitacao_concluida, data_cadastro, data_suspensao_ate, event_id_cadastro, event_id_ultima_alteracao, atualizado_em)
		SELECT g, g, CASE WHEN i % 100 = 0 THEN $1 WHEN i % 10 = 0 THEN ($2::uuid[])[1 + i % 10] ELSE ($3::uuid[])[1 + i % 200] END,
		       1, CASE WHEN i % 10 = 1 THEN 'ocupado' WHEN i % 100 = 7 THEN 'suspenso' ELSE 'disponivel' END, i % 17 <> 0, now(),
		       CASE WHEN i % 100 = 7 THEN $4::timestamptz + interval '30 days' WHEN i % 100 = 57 THEN $4::timestamptz - interval '30 days' END,
		       gen_random_uuid(), gen_random_uuid(), now()
		FROM (SELECT gen_random_uuid() AS g, i FROM generate_series(1, 20000) i) s`, estado, cidades, bairros, clk.Now())
	carregarAtivas := func() {
		exec(`INSERT INTO d6a.atribuicoes (conselheiro_id, demanda_id, unidade_civica_id, seed_publico, metodo_sorteio, posicao_sorteada, total_elegiveis, status, data_sorteio, event_id_sorteio)
			SELECT id, gen_random_uuid(), unidade_civica_id, 'carga', 'fisher_yates', 0, 1, 'ativa', now(), gen_random_uuid()
			FROM d6a.conselheiros c WHERE status = 'ocupado'
			  AND NOT EXISTS (SELECT 1 FROM d6a.atribuicoes a WHERE a.conselheiro_id = c.id AND a.status = 'ativa')`)
	}
	if !ativasDepois {
		carregarAtivas()
	}
	exec(`INSERT INTO d6a.atribuicoes (conselheiro_id, demanda_id, unidade_civica_id, seed_publico, metodo_sorteio, posicao_sorteada, total_elegiveis, status, data_sorteio, event_id_sorteio)
		SELECT id, gen_random_uuid(), unidade_civica_id, 'carga', 'fisher_yates', 0, 1, 'concluida', now() - interval '30 days', gen_random_uuid()
		FROM d6a.conselheiros WHERE status = 'disponivel' LIMIT 5000`)
	exec(`INSERT INTO d6a.fila_pendentes (demanda_id, unidade_civica_id, categoria_id, nivel_precedencia, score_final, data_entrada, event_id_origem, tentativas_sorteio)
		SELECT gen_random_uuid(), ($1::uuid[])[1 + i % 200], 'SAU', 1, 10, now() - make_interval(secs => i), gen_random_uuid(), 1
		FROM generate_series(1, 1000) i`, bairros)
	exec(`INSERT INTO d6a.outbox (event_id, tipo, subject, correlacao_id, envelope, criado_em, publicado_em, sequence)
		SELECT gen_random_uuid(), 'sorteio.sem_candidatos', 'eventos.sorteio.sem_candidatos', gen_random_uuid()::text, '{}', now(), now(), i
		FROM generate_series(1, 5000) i`)
	exec(`INSERT INTO d6a.eventos_processados (event_id, tipo_evento, processado_em, sequence)
		SELECT gen_random_uuid(), 'agenda.item_disponível', now(), i FROM generate_series(1, 4000) i`)
	if analisarDepois {
		exec(`ANALYZE d6a.conselheiros, d6a.atribuicoes, d6a.fila_pendentes, d6a.outbox, d6a.eventos_processados, d6a.auditoria_sorteios, d6a.contador_recusas`)
	}
	if ativasDepois {
		// The tables grew past double since the warm-up: the service
		// refits its plans on the next draw, which sees no active
		// assignment; the actives arrive after it.
		rodar([]evento.Evento{agenda(bairros[2])})
		carregarAtivas()
	}

	// Cycles free counsellors of the load and sweep their unit's pending
	// queue; agenda items draw in random neighbourhoods.
	var ocupados []struct{ c, d, uc uuid.UUID }
	rows, err := carga.Pool.Query(ctx, `SELECT conselheiro_id, demanda_id, unidade_civica_id FROM d6a.atribuicoes WHERE seed_publico = 'carga' AND status = 'ativa' LIMIT 50`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var o struct{ c, d, uc uuid.UUID }
		if err := rows.Scan(&o.c, &o.d, &o.uc); err != nil {
			t.Fatal(err)
		}
		ocupados = append(ocupados, o)
	}
	if err := rows.Err(); err != nil || len(ocupados) != 50 {
		t.Fatalf("%d loaded assignments, %v", len(ocupados), err)
	}
	evs := make([]evento.Evento, 0, eventosMedidos)
	for i := range eventosMedidos {
		if i%4 == 3 {
			o := ocupados[i/4]
			evs = append(evs, evento.Evento{
				Envelope: evento.Envelope{EventID: uuid.New(), Tipo: evento.CicloConcluido, Origem: "D-6b", VersaoSchema: "1.0.0"},
				Payload:  evento.ConselheiroCicloConcluidoPayload{ConselheiroID: o.c, DemandaID: o.d, MotivoEncerramento: "resolvida", UnidadeCivicaID: &o.uc},
			})
			continue
		}
		evs = append(evs, agenda(bairros[r.IntN(len(bairros))]))
	}

	// The loader's reads are not the service's: they reach the counters
	// before counting starts (a backend flushes them when idle, at most
	// once a second unless asked, or as it exits, after it leaves
	// pg_stat_activity).
	descarregarEstatisticas(t, carga)
	carga.Close()
	admin := atribuicaotest.AbrirStore(t, url)
	antes := leiturasPorRelacao(t, admin)
	inicio := time.Now()
	for i := 0; i < len(evs); i += 50 {
		rodar(evs[i:min(i+50, len(evs))])
		if n, err := manutencao.ReativarVencidos(ctx, svc, slog.Default()); err != nil || n != 0 {
			t.Fatalf("periodic reactivation: %d reactivated (none has expired), %v", n, err)
		}
	}
	// The relay's passes: its read, with nothing marked.
	for range 20 {
		if _, err := st.PublicarPendentes(ctx, 256, time.Now, func(context.Context, []store.LinhaOutbox) (ids, seqs []int64, err error) {
			return nil, nil, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	dur := time.Since(inicio)
	// Closing the service's connections flushes their statistics.
	svc.Close()
	st.Close()
	esperarSoAdmin(t, admin)
	depois := leiturasPorRelacao(t, admin)
	var total int64
	for rel, n := range depois {
		d := n - antes[rel]
		total += d
		if d > 10*eventosMedidos {
			t.Logf("  %s: %.0f por evento", rel, float64(d)/eventosMedidos)
			// A table's count is its rows read by sequential scans: each
			// event reads what it needs through indexes.
			if slices.Contains(tabelasD6a, rel) {
				t.Errorf("d6a.%s read whole: %.0f rows per event", rel, float64(d)/eventosMedidos)
			}
		}
	}
	// Counted after the reads are: admin's own scan of the assignments
	// would otherwise reach the counters when its backend next flushes.
	var sorteados int
	if err := admin.Pool.QueryRow(ctx, `SELECT count(*) FROM d6a.atribuicoes WHERE seed_publico <> 'carga'`).Scan(&sorteados); err != nil {
		t.Fatal(err)
	}
	if sorteados < eventosMedidos/2 {
		t.Fatalf("only %d draws succeeded: the scene does not exercise the draw", sorteados)
	}
	return float64(total) / eventosMedidos, dur
}

// descarregarEstatisticas makes every connection of st flush its pending
// statistics: the flush asked for happens when the backend goes idle, after
// the first statement and before the second answers.
func descarregarEstatisticas(t *testing.T, st *store.Store) {
	t.Helper()
	ctx := context.Background()
	for _, c := range st.Pool.AcquireAllIdle(ctx) {
		for _, sql := range []string{`SELECT pg_stat_force_next_flush()`, `SELECT 1`} {
			if _, err := c.Exec(ctx, sql); err != nil {
				t.Fatal(err)
			}
		}
		c.Release()
	}
}

// esperarSoAdmin waits until admin's is the only session on the database:
// the others have exited and flushed their statistics.
func esperarSoAdmin(t *testing.T, admin *store.Store) {
	t.Helper()
	for range 100 {
		var n int
		if err := admin.Pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("the service's sessions did not end")
}

// leiturasPorRelacao is every row (tables, sequential scans) and index
// entry (indexes) read in schema d6a so far, by relation.
func leiturasPorRelacao(t *testing.T, st *store.Store) map[string]int64 {
	t.Helper()
	rows, err := st.Pool.Query(context.Background(), `
		SELECT relname, coalesce(seq_tup_read, 0) FROM pg_stat_user_tables WHERE schemaname = 'd6a'
		UNION ALL
		SELECT indexrelname, coalesce(idx_tup_read, 0) FROM pg_stat_user_indexes WHERE schemaname = 'd6a'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	m := map[string]int64{}
	for rows.Next() {
		var rel string
		var n int64
		if err := rows.Scan(&rel, &n); err != nil {
			t.Fatal(err)
		}
		m[rel] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}
