package store_test

// The unique violations the handlers rely on (duplicate events and the
// "1 conselheiro = 1 demanda ativa" invariant): each must surface through
// store.UniqueViolation with the constraint or index name the handlers map.

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// violates asserts err is a unique violation of constraint.
func violates(t *testing.T, what string, err error, constraint string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: accepted, want a unique violation of %s", what, constraint)
	}
	got, ok := store.UniqueViolation(err)
	if !ok {
		t.Fatalf("%s: %v is not a unique violation (want %s)", what, err, constraint)
	}
	if got != constraint {
		t.Fatalf("%s: violated %q, want %q", what, got, constraint)
	}
}

func count(t *testing.T, q store.Tx, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	check(t, store.Conexao(q).QueryRow(t.Context(), sql, args...).Scan(&n))
	return n
}

func TestUniqueViolationNaoConfundeOutrosErros(t *testing.T) {
	t.Parallel()
	if c, ok := store.UniqueViolation(nil); ok || c != "" {
		t.Fatalf("UniqueViolation(nil) = %q, %v", c, ok)
	}
	ctx, st, q := open(t)
	// Another database error (division by zero, 22012) is not a unique
	// violation.
	_ = q
	_, err := st.Pool.Exec(ctx, "SELECT 1/0")
	if code := pgCode(err); code != "22012" {
		t.Fatalf("SELECT 1/0: %v (SQLSTATE %q), want 22012", err, code)
	}
	if c, ok := store.UniqueViolation(err); ok {
		t.Fatalf("UniqueViolation(22012) = %q, true", c)
	}
}

func TestUniqueCadastroDuplicado(t *testing.T) {
	t.Parallel()
	ctx, _, q := open(t)
	p := conselheiroParams(uuid.New(), "disponivel")
	check(t, store.Consultas(q).InserirConselheiro(ctx, p))

	// Unified identity (id = cidadao_id): ANY second registration of the
	// citizen collides on the primary key, which PostgreSQL checks before
	// the (cidadao, UC, nivel) constraint, so even an exact duplicate (a
	// redelivered event) reports conselheiros_pkey, never
	// conselheiros_cidadao_id_unidade_civica_id_nivel_atuacao_key.
	dup := p
	dup.EventID, dup.Agora = uuid.New(), at(time.Hour)
	violates(t, "same (cidadao, UC, nivel)", store.Consultas(q).InserirConselheiro(ctx, dup), "conselheiros_pkey")
	outraUC := p
	outraUC.UnidadeCivicaID, outraUC.EventID = uuid.New(), uuid.New()
	violates(t, "same cidadao, other UC", store.Consultas(q).InserirConselheiro(ctx, outraUC), "conselheiros_pkey")
	outroNivel := p
	outroNivel.NivelAtuacao, outroNivel.EventID = 2, uuid.New()
	violates(t, "same cidadao, other nivel", store.Consultas(q).InserirConselheiro(ctx, outroNivel), "conselheiros_pkey")

	// The (cidadao, UC, nivel) constraint exists under the spec's name; only
	// a row whose id differs from cidadao_id (which InserirConselheiro
	// cannot write) reaches it.
	_, err := store.Conexao(q).Exec(ctx, `INSERT INTO d6a.conselheiros
		(id, cidadao_id, unidade_civica_id, nivel_atuacao, event_id_cadastro, event_id_ultima_alteracao)
		VALUES (gen_random_uuid(), $1, $2, $3, gen_random_uuid(), gen_random_uuid())`,
		p.CidadaoID, p.UnidadeCivicaID, p.NivelAtuacao)
	violates(t, "raw insert with id != cidadao_id", err, "conselheiros_cidadao_id_unidade_civica_id_nivel_atuacao_key")

	if n := count(t, q, `SELECT count(*) FROM d6a.conselheiros WHERE cidadao_id = $1`, p.CidadaoID); n != 1 {
		t.Fatalf("%d rows for the citizen, want 1", n)
	}
	got := val(store.Consultas(q).BuscarConselheiroPorId(ctx, p.CidadaoID)).must(t)
	if got.EventIDCadastro != p.EventID || got.UnidadeCivicaID != p.UnidadeCivicaID {
		t.Fatalf("the refused registrations changed the row: %+v", got)
	}
}

func TestUniqueEventIdSorteio(t *testing.T) {
	t.Parallel()
	ctx, _, q := open(t)
	uc := uuid.New()
	p := atribuicaoParams(uuid.New(), uuid.New(), uc, at(0))
	first := val(store.Consultas(q).InserirAtribuicao(ctx, p)).must(t)

	dup := atribuicaoParams(uuid.New(), uuid.New(), uc, at(time.Hour))
	dup.EventIDSorteio = p.EventIDSorteio
	_, err := store.Consultas(q).InserirAtribuicao(ctx, dup)
	violates(t, "duplicate event_id_sorteio", err, "atribuicoes_event_id_sorteio_key")

	if got := val(store.Consultas(q).BuscarAtribuicaoPorEventIdSorteio(ctx, p.EventIDSorteio)).must(t); got.ID != first || got.DemandaID != p.DemandaID {
		t.Fatalf("event id now points at %+v", got)
	}
	if n := count(t, q, `SELECT count(*) FROM d6a.atribuicoes`); n != 1 {
		t.Fatalf("%d assignments, want 1", n)
	}
}

func TestUniqueFilaPendenteDemanda(t *testing.T) {
	t.Parallel()
	ctx, st, q := open(t)
	p := novoPendente(uuid.New(), at(0))
	enfileirar(t, q, p)

	// The row id is a function of the demand (GravarPendentes takes it
	// from md5 of the demand), so a second row of the demand meets the
	// primary key first; the unique key on demanda_id still stands for a
	// row with any other id. GravarPendentes itself counts an attempt
	// instead (TestFilaPendente).
	inserir := func(id string) error {
		_, err := st.Pool.Exec(ctx, `INSERT INTO d6a.fila_pendentes (id, demanda_id, unidade_civica_id, categoria_id, nivel_precedencia, score_final, data_entrada, event_id_origem, tentativas_sorteio)
			VALUES (`+id+`, $1, $2, 'x', 1, 1, now(), gen_random_uuid(), 1)`, p.DemandaID, uuid.New())
		return err
	}
	violates(t, "duplicate pending demand", inserir(`md5('d6a.fila_pendentes|' || ($1::uuid)::text)::uuid`), "fila_pendentes_pkey")
	violates(t, "duplicate pending demand under another id", inserir(`gen_random_uuid()`), "fila_pendentes_demanda_id_key")

	if n := val(store.Consultas(q).ContarPendentes(ctx)).must(t); n != 1 {
		t.Fatalf("ContarPendentes = %d, want 1", n)
	}
	if got := val(store.Consultas(q).BuscarFilaPendentePorDemandaId(ctx, p.DemandaID)).must(t); got.EventIDOrigem != p.EventIDOrigem || got.TentativasSorteio != 1 {
		t.Fatalf("pending row changed: %+v", got)
	}
}

func TestUniqueRecusaEvento(t *testing.T) {
	t.Parallel()
	ctx, st, q := open(t)
	c := uuid.New()
	p := dbsqlc.InserirRecusaParams{ConselheiroID: c, RecusasConsecutivas: 1, Agora: at(0), DemandaIDRecusada: uuid.New(), EventoIDRecusa: uuid.New()}
	check(t, store.Consultas(q).InserirRecusa(ctx, p))

	dup := p
	dup.Agora, dup.DemandaIDRecusada, dup.RecusasConsecutivas = at(time.Hour), uuid.New(), 2
	// As for the queue: the id comes from the refusal event.
	violates(t, "duplicate refusal event", store.Consultas(q).InserirRecusa(ctx, dup), "contador_recusas_pkey")
	_, err := st.Pool.Exec(ctx, `INSERT INTO d6a.contador_recusas (id, conselheiro_id, recusas_consecutivas, data_ultima_recusa, demanda_id_recusada, evento_id_recusa)
		VALUES (gen_random_uuid(), $1, 2, now(), gen_random_uuid(), $2)`, c, p.EventoIDRecusa)
	violates(t, "duplicate refusal event under another id", err, "contador_recusas_evento_id_recusa_key")

	if n := val(store.Consultas(q).ContarRecusasDesdeData(ctx, dbsqlc.ContarRecusasDesdeDataParams{ConselheiroID: c})).must(t); n != 1 {
		t.Fatalf("ContarRecusasDesdeData = %d, want 1 (the duplicate must not count)", n)
	}
}

func TestUniqueOutboxEAuditoria(t *testing.T) {
	t.Parallel()
	ctx, st, q := open(t)
	o := outboxParams("atribuicao.criada", nil, at(0))
	check(t, gravarOutbox(t, q, o))
	dup := outboxParams("sorteio.sem_candidatos", ptr("x"), at(time.Hour))
	dup.EventID = o.EventID
	violates(t, "duplicate outbox event_id", gravarOutbox(t, q, dup), "outbox_event_id_key")
	if n := val(store.Consultas(q).ContarOutboxPendentes(ctx)).must(t); n != 1 {
		t.Fatalf("ContarOutboxPendentes = %d, want 1", n)
	}

	a := auditoriaParams(base)
	check(t, inserirAuditoria(ctx, st, a))
	b := auditoriaParams(base.Add(time.Hour))
	b.EventIDSorteio = a.EventIDSorteio
	violates(t, "duplicate audit", inserirAuditoria(ctx, st, b), "auditoria_sorteios_pkey")
}

func TestUniqueUmaAtivaPorConselheiroEPorDemanda(t *testing.T) {
	t.Parallel()
	ctx, st, q := open(t)
	uc := uuid.New()
	c1, c2, c3 := uuid.New(), uuid.New(), uuid.New()
	d1, d2, d3 := uuid.New(), uuid.New(), uuid.New()

	inserir := func(c, d uuid.UUID, quando time.Duration) (uuid.UUID, error) {
		return store.Consultas(q).InserirAtribuicao(ctx, atribuicaoParams(c, d, uc, at(quando)))
	}

	aceitar := func(c, d uuid.UUID, quando time.Duration) uuid.UUID {
		t.Helper()
		id, err := inserir(c, d, quando)
		check(t, err)
		return id
	}

	a1 := aceitar(c1, d1, 0)

	// One active assignment per counsellor, and per demand.
	_, err := inserir(c1, d2, time.Minute)
	violates(t, "second active assignment of a counsellor", err, "atribuicoes_uma_ativa_por_conselheiro_key")
	_, err = inserir(c2, d1, time.Minute)
	violates(t, "second active assignment of a demand", err, "atribuicoes_uma_ativa_por_demanda_key")
	if n := count(t, q, `SELECT count(*) FROM d6a.atribuicoes`); n != 1 {
		t.Fatalf("%d assignments after the refused inserts, want 1", n)
	}

	// After 'recusada' the demand is re-drawn to another counsellor and the
	// counsellor takes another demand.
	encerrar(t, q, a1, "recusada")
	a2 := aceitar(c2, d1, time.Hour)
	a3 := aceitar(c1, d2, time.Hour)

	// Still one active each: the new rows are guarded in turn.
	_, err = inserir(c3, d1, 2*time.Hour)
	violates(t, "demand active again", err, "atribuicoes_uma_ativa_por_demanda_key")
	_, err = inserir(c1, d3, 2*time.Hour)
	violates(t, "counsellor active again", err, "atribuicoes_uma_ativa_por_conselheiro_key")

	// After 'concluida' the same holds.
	encerrar(t, q, a3, "concluida")
	a4 := aceitar(c1, d3, 3*time.Hour)
	encerrar(t, q, a2, "concluida")
	a5 := aceitar(c3, d1, 3*time.Hour)

	rows, err := st.Pool.Query(ctx, `SELECT id FROM d6a.atribuicoes WHERE status = 'ativa' ORDER BY id`)
	check(t, err)
	ativas, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	check(t, err)
	equalIDs(t, "active assignments", ativas, sorted(a4, a5))
	if n := count(t, q, `SELECT count(*) FROM d6a.atribuicoes WHERE conselheiro_id = $1`, c1); n != 3 {
		t.Fatalf("c1 has %d assignments, want 3 (recusada, concluida, ativa)", n)
	}
	if n := count(t, q, `SELECT count(*) FROM d6a.atribuicoes WHERE demanda_id = $1`, d1); n != 3 {
		t.Fatalf("d1 has %d assignments, want 3 (recusada, concluida, ativa)", n)
	}
	if got := val(store.Consultas(q).BuscarAtribuicaoAtivaPorDemanda(ctx, d1)).must(t); got.ID != a5 || got.ConselheiroID != c3 {
		t.Fatalf("active assignment of d1 = %+v, want %v", got, a5)
	}
}
