package store_test

// The generated queries and the store's reads and writes over them, run
// against a real PostgreSQL (one fresh database per test) with their
// results asserted: values, ordering, counts and rows affected. Lock
// behaviour lives in locks_test.go, the unique violations the handlers map
// in unique_test.go.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/fila"
	"github.com/formigueiro/d6a/internal/pgtest"
	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// ---------------------------------------------------------------- helpers

// base is the fixed clock of these tests.
var base = time.Date(2026, time.March, 2, 9, 30, 0, 0, time.UTC)

// at returns base+d at the precision of the TIMESTAMPTZ(2) columns (10 ms).
func at(d time.Duration) time.Time { return base.Add(d).Truncate(10 * time.Millisecond) }

func ptr[T any](v T) *T { return &v }

// open gives the test its own migrated database.
func open(t *testing.T) (context.Context, *store.Store, store.Tx) {
	t.Helper()
	s := pgtest.New(t)
	return t.Context(), s, s.Read()
}

// result carries a (value, error) pair so val(q.X(ctx)).must(t) reads in
// one line.
type result[T any] struct {
	v   T
	err error
}

func val[T any](v T, err error) result[T] { return result[T]{v, err} }

func (r result[T]) must(t *testing.T) T {
	t.Helper()
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.v
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// affected asserts an :execrows result.
func affected(t *testing.T, what string, n int64, err error, want int64) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if n != want {
		t.Fatalf("%s: %d rows affected, want %d", what, n, want)
	}
}

// absent asserts a :one query found no row (pgx.ErrNoRows, as store.Found
// sees it).
func absent(t *testing.T, what string, err error) {
	t.Helper()
	found, ferr := store.Found(err)
	if ferr != nil {
		t.Fatalf("%s: %v", what, ferr)
	}
	if found {
		t.Fatalf("%s: found a row, want none", what)
	}
}

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

func cmpUUID(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) }

// sorted returns ids in PostgreSQL's uuid order (byte order).
func sorted(ids ...uuid.UUID) []uuid.UUID {
	s := slices.Clone(ids)
	slices.SortFunc(s, cmpUUID)
	return s
}

func ids[T any](rows []T, id func(T) uuid.UUID) []uuid.UUID {
	out := make([]uuid.UUID, 0, len(rows))
	for _, r := range rows {
		out = append(out, id(r))
	}
	return out
}

func conselheiroID(c dbsqlc.D6aConselheiro) uuid.UUID { return c.ID }
func demandaID(p dbsqlc.D6aFilaPendente) uuid.UUID    { return p.DemandaID }

func equalIDs(t *testing.T, what string, got, want []uuid.UUID) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s:\n got %v\nwant %v", what, got, want)
	}
}

func utc(p *time.Time) *time.Time {
	if p == nil {
		return nil
	}
	return ptr(p.UTC())
}

// Rows come back in the session time zone; these put them in UTC so rows
// compare with reflect.DeepEqual against values built from base.
func normConselheiro(c dbsqlc.D6aConselheiro) dbsqlc.D6aConselheiro {
	c.DataCadastro = c.DataCadastro.UTC()
	c.AtualizadoEm = c.AtualizadoEm.UTC()
	c.DataUltimaAtribuicao = utc(c.DataUltimaAtribuicao)
	c.DataSuspensaoAte = utc(c.DataSuspensaoAte)
	return c
}

func normAtribuicao(a dbsqlc.D6aAtribuico) dbsqlc.D6aAtribuico {
	a.DataSorteio = a.DataSorteio.UTC()
	a.CriadoEm = a.CriadoEm.UTC()
	return a
}

func normPendente(p dbsqlc.D6aFilaPendente) dbsqlc.D6aFilaPendente {
	p.DataEntrada = p.DataEntrada.UTC()
	return p
}

func normAuditoria(a dbsqlc.D6aAuditoriaSorteio) dbsqlc.D6aAuditoriaSorteio {
	a.CriadoEm = a.CriadoEm.UTC()
	return a
}

func deepEqual[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

// conselheiroParams is a registration of a fresh citizen in uc.
func conselheiroParams(uc uuid.UUID, status string) dbsqlc.InserirConselheiroParams {
	return dbsqlc.InserirConselheiroParams{
		CidadaoID:            uuid.New(),
		UnidadeCivicaID:      uc,
		NivelAtuacao:         1,
		Status:               status,
		CapacitacaoConcluida: true,
		Agora:                at(0),
		EventID:              uuid.New(),
	}
}

// novoConselheiro registers a fresh citizen in uc and returns its id.
func novoConselheiro(t *testing.T, q store.Tx, uc uuid.UUID, status string) uuid.UUID {
	t.Helper()
	p := conselheiroParams(uc, status)
	check(t, store.Consultas(q).InserirConselheiro(t.Context(), p))
	return p.CidadaoID
}

// atribuicaoParams is an assignment of demanda to conselheiro drawn at
// quando, with a full demand snapshot.
func atribuicaoParams(conselheiro, demanda, uc uuid.UUID, quando time.Time) dbsqlc.InserirAtribuicaoParams {
	return dbsqlc.InserirAtribuicaoParams{
		ConselheiroID:      conselheiro,
		DemandaID:          demanda,
		UnidadeCivicaID:    uc,
		SeedPublico:        "seed-" + demanda.String(),
		PosicaoSorteada:    2,
		TotalElegiveis:     5,
		ListaElegiveisHash: ptr(strings.Repeat("ab", 32)),
		DataSorteio:        quando,
		EventIDSorteio:     uuid.New(),
		ScoreFinal:         87.25,
		CategoriaID:        "C2",
		NivelPrecedencia:   3,
		GrupoID:            ptr(uuid.New()),
	}
}

// novaAtribuicao inserts an active assignment and returns its id.
func novaAtribuicao(t *testing.T, q store.Tx, conselheiro, demanda, uc uuid.UUID, quando time.Time) uuid.UUID {
	t.Helper()
	return val(store.Consultas(q).InserirAtribuicao(t.Context(), atribuicaoParams(conselheiro, demanda, uc, quando))).must(t)
}

// encerrar closes an active assignment with status and returns the closing
// event id.
func encerrar(t *testing.T, q store.Tx, id uuid.UUID, status string) uuid.UUID {
	t.Helper()
	ev := uuid.New()
	n, err := store.Consultas(q).AtualizarStatusAtribuicao(t.Context(), dbsqlc.AtualizarStatusAtribuicaoParams{Status: status, EventID: &ev, ID: id})
	affected(t, "AtualizarStatusAtribuicao "+status, n, err, 1)
	return ev
}

// linhaPendente is a demand entering the pending queue as a batch hands
// it to GravarPendentes (atribuicao's lote.go writes the same JSON).
type linhaPendente struct {
	DemandaID        uuid.UUID  `json:"demanda_id"`
	UnidadeCivicaID  uuid.UUID  `json:"unidade_civica_id"`
	CategoriaID      string     `json:"categoria_id"`
	NivelPrecedencia int32      `json:"nivel_precedencia"`
	ScoreFinal       float64    `json:"score_final"`
	GrupoID          *uuid.UUID `json:"grupo_id"`
	Agora            time.Time  `json:"agora"`
	EventIDOrigem    uuid.UUID  `json:"event_id_origem"`
	Tentativas       int32      `json:"tentativas"`
}

// novoPendente is a pending demand of uc entered at quando after its first
// failed draw.
func novoPendente(uc uuid.UUID, quando time.Time) linhaPendente {
	return linhaPendente{
		DemandaID:        uuid.New(),
		UnidadeCivicaID:  uc,
		CategoriaID:      "C1",
		NivelPrecedencia: 2,
		ScoreFinal:       42.5,
		Agora:            quando,
		EventIDOrigem:    uuid.New(),
		Tentativas:       1,
	}
}

// enfileirar writes ps, in their order, through the executor's write of
// the queue.
func enfileirar(t *testing.T, q store.Tx, ps ...linhaPendente) {
	t.Helper()
	linhas, err := json.Marshal(ps)
	check(t, err)
	check(t, q.GravarPendentes(t.Context(), linhas))
}

// ----------------------------------------------------------- conselheiros

func TestConselheiroInserirEBuscar(t *testing.T) {
	t.Parallel()
	ctx, s, q := open(t)

	p := conselheiroParams(uuid.New(), "disponivel")
	p.NivelAtuacao = 2
	check(t, store.Consultas(q).InserirConselheiro(ctx, p))
	outro := novoConselheiro(t, q, p.UnidadeCivicaID, "disponivel")

	// Unified identity (spec 3.10 step 3): id = cidadao_id. Nothing set
	// yet for the assignment and suspension dates; the registration event is
	// also the last change; data_cadastro = atualizado_em = agora.
	want := dbsqlc.D6aConselheiro{
		ID:                     p.CidadaoID,
		CidadaoID:              p.CidadaoID,
		UnidadeCivicaID:        p.UnidadeCivicaID,
		NivelAtuacao:           2,
		Status:                 "disponivel",
		CapacitacaoConcluida:   true,
		DataCadastro:           p.Agora,
		DataUltimaAtribuicao:   nil,
		DataSuspensaoAte:       nil,
		EventIDCadastro:        p.EventID,
		EventIDUltimaAlteracao: p.EventID,
		AtualizadoEm:           p.Agora,
	}

	got := val(store.Consultas(q).BuscarConselheiroPorId(ctx, p.CidadaoID)).must(t)
	deepEqual(t, "BuscarConselheiroPorId", normConselheiro(got), want)

	got = val(store.Consultas(q).BuscarConselheiroPorEventIdCadastro(ctx, p.EventID)).must(t)
	deepEqual(t, "BuscarConselheiroPorEventIdCadastro", normConselheiro(got), want)

	check(t, s.InTx(ctx, func(tx store.Tx) error {
		got, err := store.Consultas(tx).BuscarConselheiroPorIdParaAtualizar(ctx, p.CidadaoID)
		if err != nil {
			return err
		}
		deepEqual(t, "BuscarConselheiroPorIdParaAtualizar", normConselheiro(got), want)
		return nil
	}))

	// The look-up by citizen (GET /d6a/conselheiros/me/situacao).
	sit, achou, err := q.SituacaoDoCidadao(ctx, p.CidadaoID)
	check(t, err)
	if !achou || sit.ID != p.CidadaoID || sit.UC != p.UnidadeCivicaID || sit.NivelAtuacao != 2 || sit.Status != "disponivel" ||
		!sit.CapacitacaoConcluida || sit.SuspensaoAte != nil || sit.NivelProgressao != nil || sit.Atribuicao != nil {
		t.Fatalf("SituacaoDoCidadao = %+v, %v", sit, achou)
	}

	if got := val(store.Consultas(q).BuscarConselheiroPorId(ctx, outro)).must(t); got.ID != outro || got.CidadaoID != outro {
		t.Fatalf("second counsellor: id %v cidadao %v, want both %v", got.ID, got.CidadaoID, outro)
	}

	// Unknown keys.
	_, err = store.Consultas(q).BuscarConselheiroPorId(ctx, uuid.New())
	absent(t, "BuscarConselheiroPorId(unknown)", err)
	_, err = store.Consultas(q).BuscarConselheiroPorEventIdCadastro(ctx, uuid.New())
	absent(t, "BuscarConselheiroPorEventIdCadastro(unknown)", err)
	err = s.InTx(ctx, func(tx store.Tx) error {
		_, err := store.Consultas(tx).BuscarConselheiroPorIdParaAtualizar(ctx, uuid.New())
		return err
	})
	absent(t, "BuscarConselheiroPorIdParaAtualizar(unknown)", err)
	if _, achou, err := q.SituacaoDoCidadao(ctx, uuid.New()); err != nil || achou {
		t.Fatalf("SituacaoDoCidadao(unknown) = found %v, %v; want not found", achou, err)
	}
}

func TestConselheirosPorUcsEStatus(t *testing.T) {
	t.Parallel()
	ctx, _, q := open(t)
	ucA, ucB, ucC := uuid.New(), uuid.New(), uuid.New()

	a1 := novoConselheiro(t, q, ucA, "disponivel")
	a2 := novoConselheiro(t, q, ucA, "disponivel")
	a3 := novoConselheiro(t, q, ucA, "suspenso")
	a4 := novoConselheiro(t, q, ucA, "ocupado")
	b1 := novoConselheiro(t, q, ucB, "disponivel")
	b2 := novoConselheiro(t, q, ucB, "ocupado")
	c1 := novoConselheiro(t, q, ucC, "disponivel")

	// The counsellors registered over a set of units (the console's count).
	for _, c := range []struct {
		ucs  []uuid.UUID
		want int64
	}{
		{[]uuid.UUID{ucA, ucB}, 6},
		{[]uuid.UUID{ucA}, 4},
		{[]uuid.UUID{ucC}, 1},
		{[]uuid.UUID{ucA, ucB, ucC}, 7},
		{[]uuid.UUID{uuid.New()}, 0},
		{nil, 0},
	} {
		if n := val(q.ExclusoesNasUcs(ctx, c.ucs, at(0), false, false)).must(t).Cadastrados; n != c.want {
			t.Fatalf("ExclusoesNasUcs(%v).Cadastrados = %d, want %d", c.ucs, n, c.want)
		}
	}

	porStatus := func(status string) []uuid.UUID {
		t.Helper()
		return ids(val(store.Consultas(q).BuscarConselheirosPorStatus(ctx, status)).must(t), conselheiroID)
	}
	equalIDs(t, "BuscarConselheirosPorStatus disponivel", porStatus("disponivel"), sorted(a1, a2, b1, c1))
	equalIDs(t, "BuscarConselheirosPorStatus ocupado", porStatus("ocupado"), sorted(a4, b2))
	equalIDs(t, "BuscarConselheirosPorStatus suspenso", porStatus("suspenso"), []uuid.UUID{a3})
	equalIDs(t, "BuscarConselheirosPorStatus inativo", porStatus("inativo"), []uuid.UUID{})

	deepEqual(t, "ContarConselheirosPorStatus", val(store.Consultas(q).ContarConselheirosPorStatus(ctx)).must(t), []dbsqlc.ContarConselheirosPorStatusRow{
		{Status: "disponivel", Total: 4},
		{Status: "ocupado", Total: 2},
		{Status: "suspenso", Total: 1},
	})
}

func TestContarConselheirosPorStatusVazio(t *testing.T) {
	t.Parallel()
	ctx, _, q := open(t)
	if got := val(store.Consultas(q).ContarConselheirosPorStatus(ctx)).must(t); len(got) != 0 {
		t.Fatalf("ContarConselheirosPorStatus on an empty table = %+v, want none", got)
	}
}

func TestCandidatosEOcupadosPorUcs(t *testing.T) {
	t.Parallel()
	ctx, _, q := open(t)
	ucA, ucB, fora := uuid.New(), uuid.New(), uuid.New()

	// ativo: an active assignment (and an older concluded one: still one
	// counsellor in the distinct count).
	ativo := novoConselheiro(t, q, ucA, "ocupado")
	encerrar(t, q, novaAtribuicao(t, q, ativo, uuid.New(), ucA, at(0)), "concluida")
	novaAtribuicao(t, q, ativo, uuid.New(), ucA, at(time.Hour))
	// concluiu / recusou: only closed assignments, not occupied.
	concluiu := novoConselheiro(t, q, ucA, "disponivel")
	encerrar(t, q, novaAtribuicao(t, q, concluiu, uuid.New(), ucA, at(0)), "concluida")
	recusou := novoConselheiro(t, q, ucA, "disponivel")
	encerrar(t, q, novaAtribuicao(t, q, recusou, uuid.New(), ucA, at(0)), "recusada")
	// soStatus: status 'ocupado' without an assignment is not occupied
	// (spec 4.3: occupied = holding an active assignment).
	soStatus := novoConselheiro(t, q, ucB, "ocupado")
	// suspenso: carries its suspension date and no training.
	sp := conselheiroParams(ucB, "disponivel")
	sp.CapacitacaoConcluida = false
	check(t, store.Consultas(q).InserirConselheiro(ctx, sp))
	suspenso := sp.CidadaoID
	n, err := store.Consultas(q).SuspenderConselheiro(ctx, dbsqlc.SuspenderConselheiroParams{Ate: ptr(at(48 * time.Hour)), EventID: uuid.New(), Agora: at(time.Minute), ID: suspenso})
	affected(t, "SuspenderConselheiro", n, err, 1)
	// foraDaCadeia: occupied but in a UC outside the chain.
	foraDaCadeia := novoConselheiro(t, q, fora, "ocupado")
	novaAtribuicao(t, q, foraDaCadeia, uuid.New(), fora, at(0))

	// The draw's read of the chain A, B: each step with its counsellors.
	cadeia := []uuid.UUID{ucA, ucB}
	degrau := func(desde int) elegibilidade.Degrau {
		t.Helper()
		d := val(q.LerDegrau(ctx, cadeia, desde, elegibilidade.Portoes{})).must(t)
		slices.SortFunc(d.Candidatos, func(a, b elegibilidade.Candidato) int { return cmpUUID(a.ID, b.ID) })
		for i := range d.Candidatos {
			d.Candidatos[i].SuspensaoAte = utc(d.Candidatos[i].SuspensaoAte)
		}
		return d
	}
	porID := func(cs ...elegibilidade.Candidato) []elegibilidade.Candidato {
		slices.SortFunc(cs, func(a, b elegibilidade.Candidato) int { return cmpUUID(a.ID, b.ID) })
		return cs
	}
	deepEqual(t, "LerDegrau(A)", degrau(0), elegibilidade.Degrau{Posicao: 0, Candidatos: porID(
		elegibilidade.Candidato{ID: ativo, UC: ucA, Status: "ocupado", Capacitacao: true, Ocupado: true},
		elegibilidade.Candidato{ID: concluiu, UC: ucA, Status: "disponivel", Capacitacao: true},
		elegibilidade.Candidato{ID: recusou, UC: ucA, Status: "disponivel", Capacitacao: true},
	)})
	deepEqual(t, "LerDegrau(B)", degrau(1), elegibilidade.Degrau{Posicao: 1, Candidatos: porID(
		elegibilidade.Candidato{ID: soStatus, UC: ucB, Status: "ocupado", Capacitacao: true},
		elegibilidade.Candidato{ID: suspenso, UC: ucB, Status: "suspenso", SuspensaoAte: ptr(at(48 * time.Hour))},
	)})
	if got := val(q.LerDegrau(ctx, []uuid.UUID{uuid.New()}, 0, elegibilidade.Portoes{})).must(t); got.Posicao != 1 || len(got.Candidatos) != 0 {
		t.Fatalf("LerDegrau(unknown UC) = %+v, want no step", got)
	}

	for _, c := range []struct {
		name string
		ucs  []uuid.UUID
		want int64
	}{
		{"A+B", []uuid.UUID{ucA, ucB}, 1},
		{"A", []uuid.UUID{ucA}, 1},
		{"B", []uuid.UUID{ucB}, 0},
		{"A+B+fora", []uuid.UUID{ucA, ucB, fora}, 2},
		{"none", nil, 0},
	} {
		if n := val(q.ExclusoesNasUcs(ctx, c.ucs, at(0), false, false)).must(t).Ocupados; n != c.want {
			t.Fatalf("ExclusoesNasUcs(%s).Ocupados = %d, want %d", c.name, n, c.want)
		}
	}
}

func TestBuscarSuspensosComPrazoVencido(t *testing.T) {
	t.Parallel()
	ctx, _, q := open(t)
	uc := uuid.New()
	agora := at(time.Hour)

	suspender := func(id uuid.UUID, ate time.Time) {
		t.Helper()
		n, err := store.Consultas(q).SuspenderConselheiro(ctx, dbsqlc.SuspenderConselheiroParams{Ate: &ate, EventID: uuid.New(), Agora: at(0), ID: id})
		affected(t, "SuspenderConselheiro", n, err, 1)
	}
	vencido := novoConselheiro(t, q, uc, "disponivel")
	suspender(vencido, at(30*time.Minute))
	muitoVencido := novoConselheiro(t, q, uc, "disponivel")
	suspender(muitoVencido, at(-24*time.Hour))
	venceAgora := novoConselheiro(t, q, uc, "disponivel") // date == agora: not yet past
	suspender(venceAgora, agora)
	futuro := novoConselheiro(t, q, uc, "disponivel")
	suspender(futuro, at(2*time.Hour))
	novoConselheiro(t, q, uc, "suspenso") // suspended without a date
	reativado := novoConselheiro(t, q, uc, "disponivel")
	suspender(reativado, at(10*time.Minute))
	n, err := store.Consultas(q).AtualizarStatusConselheiro(ctx, dbsqlc.AtualizarStatusConselheiroParams{Status: "disponivel", EventID: uuid.New(), Agora: at(20 * time.Minute), ID: reativado})
	affected(t, "AtualizarStatusConselheiro", n, err, 1)
	novoConselheiro(t, q, uc, "disponivel")

	got := val(store.Consultas(q).BuscarSuspensosComPrazoVencido(ctx, agora)).must(t)
	equalIDs(t, "BuscarSuspensosComPrazoVencido", ids(got, conselheiroID), sorted(vencido, muitoVencido))
	for _, c := range got {
		if c.Status != "suspenso" || c.DataSuspensaoAte == nil || !c.DataSuspensaoAte.Before(agora) {
			t.Fatalf("returned %+v: want status suspenso with a date before %v", c, agora)
		}
	}

	// Later on every dated suspension is past.
	depois := at(3 * time.Hour)
	equalIDs(t, "later", ids(val(store.Consultas(q).BuscarSuspensosComPrazoVencido(ctx, depois)).must(t), conselheiroID), sorted(vencido, muitoVencido, venceAgora, futuro))

	// The generated parameter is *time.Time (the column is nullable): nil
	// matches nothing rather than everything.
}

func TestAtualizacoesDeConselheiro(t *testing.T) {
	t.Parallel()
	ctx, _, q := open(t)
	p := conselheiroParams(uuid.New(), "disponivel")
	check(t, store.Consultas(q).InserirConselheiro(ctx, p))
	id := p.CidadaoID
	want := dbsqlc.D6aConselheiro{
		ID: id, CidadaoID: id, UnidadeCivicaID: p.UnidadeCivicaID, NivelAtuacao: 1,
		Status: "disponivel", CapacitacaoConcluida: true, DataCadastro: p.Agora,
		EventIDCadastro: p.EventID, EventIDUltimaAlteracao: p.EventID, AtualizadoEm: p.Agora,
	}
	reler := func(what string) {
		t.Helper()
		deepEqual(t, what, normConselheiro(val(store.Consultas(q).BuscarConselheiroPorId(ctx, id)).must(t)), want)
	}

	// MarcarConselheiroOcupado sets data_ultima_atribuicao.
	ev := uuid.New()
	n, err := store.Consultas(q).MarcarConselheiroOcupado(ctx, dbsqlc.MarcarConselheiroOcupadoParams{Agora: at(time.Hour), EventID: ev, ID: id})
	affected(t, "MarcarConselheiroOcupado", n, err, 1)
	want.Status, want.DataUltimaAtribuicao, want.EventIDUltimaAlteracao, want.AtualizadoEm = "ocupado", ptr(at(time.Hour)), ev, at(time.Hour)
	reler("after MarcarConselheiroOcupado")

	// AtualizarStatusConselheiro touches status, event and atualizado_em
	// only (data_ultima_atribuicao stays).
	ev = uuid.New()
	n, err = store.Consultas(q).AtualizarStatusConselheiro(ctx, dbsqlc.AtualizarStatusConselheiroParams{Status: "disponivel", EventID: ev, Agora: at(2 * time.Hour), ID: id})
	affected(t, "AtualizarStatusConselheiro", n, err, 1)
	want.Status, want.EventIDUltimaAlteracao, want.AtualizadoEm = "disponivel", ev, at(2*time.Hour)
	reler("after AtualizarStatusConselheiro")

	// SuspenderConselheiro sets the suspension date.
	ev = uuid.New()
	n, err = store.Consultas(q).SuspenderConselheiro(ctx, dbsqlc.SuspenderConselheiroParams{Ate: ptr(at(72 * time.Hour)), EventID: ev, Agora: at(3 * time.Hour), ID: id})
	affected(t, "SuspenderConselheiro", n, err, 1)
	want.Status, want.DataSuspensaoAte, want.EventIDUltimaAlteracao, want.AtualizadoEm = "suspenso", ptr(at(72*time.Hour)), ev, at(3*time.Hour)
	reler("after SuspenderConselheiro")

	// Reactivation through AtualizarStatusConselheiro leaves the old
	// suspension date in place (callers must look at status, not the date).
	ev = uuid.New()
	n, err = store.Consultas(q).AtualizarStatusConselheiro(ctx, dbsqlc.AtualizarStatusConselheiroParams{Status: "disponivel", EventID: ev, Agora: at(73 * time.Hour), ID: id})
	affected(t, "AtualizarStatusConselheiro (reactivate)", n, err, 1)
	want.Status, want.EventIDUltimaAlteracao, want.AtualizadoEm = "disponivel", ev, at(73*time.Hour)
	reler("after reactivation")

	// Unknown ids affect nothing.
	n, err = store.Consultas(q).AtualizarStatusConselheiro(ctx, dbsqlc.AtualizarStatusConselheiroParams{Status: "disponivel", EventID: uuid.New(), Agora: at(0), ID: uuid.New()})
	affected(t, "AtualizarStatusConselheiro(unknown)", n, err, 0)
	n, err = store.Consultas(q).MarcarConselheiroOcupado(ctx, dbsqlc.MarcarConselheiroOcupadoParams{Agora: at(0), EventID: uuid.New(), ID: uuid.New()})
	affected(t, "MarcarConselheiroOcupado(unknown)", n, err, 0)
	n, err = store.Consultas(q).SuspenderConselheiro(ctx, dbsqlc.SuspenderConselheiroParams{Ate: ptr(at(0)), EventID: uuid.New(), Agora: at(0), ID: uuid.New()})
	affected(t, "SuspenderConselheiro(unknown)", n, err, 0)
	reler("after updates of unknown ids")
}

// ------------------------------------------------------------ atribuicoes

func TestAtribuicaoInserirEBuscar(t *testing.T) {
	t.Parallel()
	ctx, _, q := open(t)
	conselheiro, demanda, uc := uuid.New(), uuid.New(), uuid.New()

	p := atribuicaoParams(conselheiro, demanda, uc, at(time.Hour))
	id := val(store.Consultas(q).InserirAtribuicao(ctx, p)).must(t)
	if id == uuid.Nil {
		t.Fatal("InserirAtribuicao returned the nil uuid")
	}
	want := dbsqlc.D6aAtribuico{
		ID:                  id,
		ConselheiroID:       conselheiro,
		DemandaID:           demanda,
		UnidadeCivicaID:     uc,
		SeedPublico:         p.SeedPublico,
		MetodoSorteio:       "fisher_yates",
		PosicaoSorteada:     2,
		TotalElegiveis:      5,
		ListaElegiveisHash:  p.ListaElegiveisHash,
		Status:              "ativa",
		DataSorteio:         at(time.Hour),
		EventIDSorteio:      p.EventIDSorteio,
		EventIDEncerramento: nil,
		CriadoEm:            at(time.Hour), // criado_em = data_sorteio
		ScoreFinal:          87.25,
		CategoriaID:         "C2",
		NivelPrecedencia:    3,
		GrupoID:             p.GrupoID,
	}

	deepEqual(t, "BuscarAtribuicaoPorEventIdSorteio", normAtribuicao(val(store.Consultas(q).BuscarAtribuicaoPorEventIdSorteio(ctx, p.EventIDSorteio)).must(t)), want)
	deepEqual(t, "BuscarAtribuicaoAtivaPorDemanda", normAtribuicao(val(store.Consultas(q).BuscarAtribuicaoAtivaPorDemanda(ctx, demanda)).must(t)), want)
	deepEqual(t, "BuscarAtribuicaoAtivaPorConselheiro", normAtribuicao(val(store.Consultas(q).BuscarAtribuicaoAtivaPorConselheiro(ctx, conselheiro)).must(t)), want)
	deepEqual(t, "BuscarAtribuicaoAtivaPorConselheiroEDemanda", normAtribuicao(val(store.Consultas(q).BuscarAtribuicaoAtivaPorConselheiroEDemanda(ctx,
		dbsqlc.BuscarAtribuicaoAtivaPorConselheiroEDemandaParams{ConselheiroID: conselheiro, DemandaID: demanda})).must(t)), want)

	// A snapshot without hash nor group keeps the NULLs; numeric keeps its
	// two decimals.
	p2 := atribuicaoParams(uuid.New(), uuid.New(), uc, at(2*time.Hour))
	p2.ListaElegiveisHash, p2.GrupoID, p2.ScoreFinal, p2.CategoriaID, p2.NivelPrecedencia = nil, nil, 1234567890.99, "C10", 1
	id2 := val(store.Consultas(q).InserirAtribuicao(ctx, p2)).must(t)
	got2 := val(store.Consultas(q).BuscarAtribuicaoPorEventIdSorteio(ctx, p2.EventIDSorteio)).must(t)
	if got2.ID != id2 || got2.ListaElegiveisHash != nil || got2.GrupoID != nil || got2.ScoreFinal != 1234567890.99 || got2.CategoriaID != "C10" || got2.NivelPrecedencia != 1 {
		t.Fatalf("second snapshot = %+v", got2)
	}

	// Lookups that must not match.
	_, err := store.Consultas(q).BuscarAtribuicaoAtivaPorConselheiroEDemanda(ctx, dbsqlc.BuscarAtribuicaoAtivaPorConselheiroEDemandaParams{ConselheiroID: conselheiro, DemandaID: p2.DemandaID})
	absent(t, "BuscarAtribuicaoAtivaPorConselheiroEDemanda(mismatched pair)", err)
	_, err = store.Consultas(q).BuscarAtribuicaoPorEventIdSorteio(ctx, uuid.New())
	absent(t, "BuscarAtribuicaoPorEventIdSorteio(unknown)", err)
	_, err = store.Consultas(q).BuscarAtribuicaoPorEventIdEncerramento(ctx, ptr(uuid.New()))
	absent(t, "BuscarAtribuicaoPorEventIdEncerramento(unknown)", err)
	_, err = store.Consultas(q).BuscarAtribuicaoPorEventIdEncerramento(ctx, nil)
	absent(t, "BuscarAtribuicaoPorEventIdEncerramento(nil) must not match open rows", err)

	// Closing: only an active row closes; the second close affects nothing
	// and keeps the first status and event.
	evFim := uuid.New()
	n, err := store.Consultas(q).AtualizarStatusAtribuicao(ctx, dbsqlc.AtualizarStatusAtribuicaoParams{Status: "concluida", EventID: &evFim, ID: id})
	affected(t, "AtualizarStatusAtribuicao (first close)", n, err, 1)
	n, err = store.Consultas(q).AtualizarStatusAtribuicao(ctx, dbsqlc.AtualizarStatusAtribuicaoParams{Status: "recusada", EventID: ptr(uuid.New()), ID: id})
	affected(t, "AtualizarStatusAtribuicao (second close)", n, err, 0)
	n, err = store.Consultas(q).AtualizarStatusAtribuicao(ctx, dbsqlc.AtualizarStatusAtribuicaoParams{Status: "concluida", EventID: ptr(uuid.New()), ID: uuid.New()})
	affected(t, "AtualizarStatusAtribuicao (unknown id)", n, err, 0)

	want.Status, want.EventIDEncerramento = "concluida", &evFim
	deepEqual(t, "BuscarAtribuicaoPorEventIdEncerramento", normAtribuicao(val(store.Consultas(q).BuscarAtribuicaoPorEventIdEncerramento(ctx, &evFim)).must(t)), want)
	deepEqual(t, "closed row by event_id_sorteio", normAtribuicao(val(store.Consultas(q).BuscarAtribuicaoPorEventIdSorteio(ctx, p.EventIDSorteio)).must(t)), want)

	_, err = store.Consultas(q).BuscarAtribuicaoAtivaPorDemanda(ctx, demanda)
	absent(t, "BuscarAtribuicaoAtivaPorDemanda after close", err)
	_, err = store.Consultas(q).BuscarAtribuicaoAtivaPorConselheiro(ctx, conselheiro)
	absent(t, "BuscarAtribuicaoAtivaPorConselheiro after close", err)
	_, err = store.Consultas(q).BuscarAtribuicaoAtivaPorConselheiroEDemanda(ctx, dbsqlc.BuscarAtribuicaoAtivaPorConselheiroEDemandaParams{ConselheiroID: conselheiro, DemandaID: demanda})
	absent(t, "BuscarAtribuicaoAtivaPorConselheiroEDemanda after close", err)
}

func TestBuscarUltimaAceitacao(t *testing.T) {
	t.Parallel()
	ctx, _, q := open(t)
	uc, c, outro := uuid.New(), uuid.New(), uuid.New()

	// "Never accepted" is no row (pgx.ErrNoRows), which the refusal
	// handler turns into desde = nil through store.Found.
	semAceitacao := func(what string) {
		t.Helper()
		_, err := store.Consultas(q).BuscarUltimaAceitacao(ctx, c)
		absent(t, "BuscarUltimaAceitacao: "+what, err)
	}
	semAceitacao("no assignment at all")

	// Active and refused assignments are not acceptances.
	encerrar(t, q, novaAtribuicao(t, q, c, uuid.New(), uc, at(time.Hour)), "recusada")
	ativa := novaAtribuicao(t, q, c, uuid.New(), uc, at(2*time.Hour))
	semAceitacao("only refused and active assignments")
	encerrar(t, q, ativa, "concluida")

	encerrar(t, q, novaAtribuicao(t, q, c, uuid.New(), uc, at(3*time.Hour)), "concluida")
	encerrar(t, q, novaAtribuicao(t, q, c, uuid.New(), uc, at(5*time.Hour)), "recusada")
	novaAtribuicao(t, q, c, uuid.New(), uc, at(6*time.Hour)) // active, later
	// Another counsellor's later acceptance does not count.
	encerrar(t, q, novaAtribuicao(t, q, outro, uuid.New(), uc, at(9*time.Hour)), "concluida")

	if got := val(store.Consultas(q).BuscarUltimaAceitacao(ctx, c)).must(t); !got.Equal(at(3 * time.Hour)) {
		t.Fatalf("BuscarUltimaAceitacao = %v, want %v (max data_sorteio over 'concluida')", got, at(3*time.Hour))
	}
	if got := val(store.Consultas(q).BuscarUltimaAceitacao(ctx, outro)).must(t); !got.Equal(at(9 * time.Hour)) {
		t.Fatalf("BuscarUltimaAceitacao(outro) = %v, want %v", got, at(9*time.Hour))
	}
}

// --------------------------------------------------------- fila_pendentes

func TestFilaPendente(t *testing.T) {
	t.Parallel()
	ctx, _, q := open(t)
	p := novoPendente(uuid.New(), at(time.Minute))
	p.GrupoID = ptr(uuid.New())
	enfileirar(t, q, p)

	got := normPendente(val(store.Consultas(q).BuscarFilaPendentePorDemandaId(ctx, p.DemandaID)).must(t))
	if got.ID == uuid.Nil || got.OrdemEntrada < 1 {
		t.Fatalf("generated id %v / ordem_entrada %d", got.ID, got.OrdemEntrada)
	}
	want := dbsqlc.D6aFilaPendente{
		ID:                got.ID,
		DemandaID:         p.DemandaID,
		UnidadeCivicaID:   p.UnidadeCivicaID,
		CategoriaID:       "C1",
		NivelPrecedencia:  2,
		ScoreFinal:        42.5,
		GrupoID:           p.GrupoID,
		DataEntrada:       at(time.Minute),
		EventIDOrigem:     p.EventIDOrigem,
		TentativasSorteio: 1, // the first draw already failed
		OrdemEntrada:      got.OrdemEntrada,
	}
	deepEqual(t, "BuscarFilaPendentePorDemandaId", got, want)
	if n := val(store.Consultas(q).ContarPendentes(ctx)).must(t); n != 1 {
		t.Fatalf("ContarPendentes = %d, want 1", n)
	}

	// A demand already queued only counts its failed attempts (T35): its
	// place, entry time and origin stay.
	for i := range 2 {
		again := p
		again.Agora, again.EventIDOrigem = at(time.Duration(2+i)*time.Hour), uuid.New()
		enfileirar(t, q, again)
		want.TentativasSorteio = int32(2 + i)
		deepEqual(t, "queued again", normPendente(val(store.Consultas(q).BuscarFilaPendentePorDemandaId(ctx, p.DemandaID)).must(t)), want)
	}
	if n := val(store.Consultas(q).ContarPendentes(ctx)).must(t); n != 1 {
		t.Fatalf("ContarPendentes after queueing again = %d, want 1", n)
	}

	n, err := store.Consultas(q).RemoverFilaPendentePorDemanda(ctx, p.DemandaID)
	affected(t, "RemoverFilaPendentePorDemanda", n, err, 1)
	n, err = store.Consultas(q).RemoverFilaPendentePorDemanda(ctx, p.DemandaID)
	affected(t, "RemoverFilaPendentePorDemanda (again)", n, err, 0)
	if n := val(store.Consultas(q).ContarPendentes(ctx)).must(t); n != 0 {
		t.Fatalf("ContarPendentes after removal = %d, want 0", n)
	}
	_, err = store.Consultas(q).BuscarFilaPendentePorDemandaId(ctx, p.DemandaID)
	absent(t, "BuscarFilaPendentePorDemandaId after removal", err)
}

func TestFilaPendenteFIFO(t *testing.T) {
	t.Parallel()
	ctx, _, q := open(t)
	ucA, ucB, fora := uuid.New(), uuid.New(), uuid.New()

	inserir := func(uc uuid.UUID, quando time.Time) uuid.UUID {
		t.Helper()
		p := novoPendente(uc, quando)
		enfileirar(t, q, p)
		return p.DemandaID
	}
	// Entered later but arrived first: data_entrada wins over arrival.
	tardio := inserir(ucA, at(time.Hour))
	// Five with the SAME data_entrada, alternating UCs: arrival order
	// (ordem_entrada) breaks the tie, whatever the random ids are.
	var mesmos []uuid.UUID
	for i := range 5 {
		mesmos = append(mesmos, inserir([]uuid.UUID{ucA, ucB}[i%2], at(0)))
	}
	// Earliest of all, but in a UC outside the chain.
	foraDaCadeia := inserir(fora, at(-time.Hour))

	todos := val(store.Consultas(q).BuscarTodosPendentes(ctx)).must(t)
	equalIDs(t, "BuscarTodosPendentes", ids(todos, demandaID), append(append([]uuid.UUID{foraDaCadeia}, mesmos...), tardio))
	for i := 2; i < 6; i++ {
		if todos[i].OrdemEntrada <= todos[i-1].OrdemEntrada {
			t.Fatalf("ordem_entrada not increasing with arrival: %d then %d", todos[i-1].OrdemEntrada, todos[i].OrdemEntrada)
		}
	}
	if n := val(store.Consultas(q).ContarPendentes(ctx)).must(t); n != 7 {
		t.Fatalf("ContarPendentes = %d, want 7", n)
	}

	primeiro := func(ucs ...uuid.UUID) (uuid.UUID, bool) {
		t.Helper()
		// The heads read, the FIFO rule the executor and the replay run.
		cabecas := val(q.CabecasDaFila(ctx, ucs)).must(t)
		if len(cabecas) > len(ucs) {
			t.Fatalf("CabecasDaFila = %d rows for %d units", len(cabecas), len(ucs))
		}
		esperas := make([]fila.Espera, len(cabecas))
		for i, c := range cabecas {
			esperas[i] = c.Espera()
		}
		i := fila.Devida(esperas)
		if i < 0 {
			return uuid.Nil, false
		}
		return cabecas[i].DemandaID, true
	}
	if got, _ := primeiro(ucB); got != mesmos[1] {
		t.Fatalf("first of B = %v, want the 2nd arrival %v", got, mesmos[1])
	}
	if _, ok := primeiro(uuid.New()); ok {
		t.Fatal("BuscarCabecasDaFilaPorUcs + fila.Devida(unknown UC) found a row")
	}
	if _, ok := primeiro(); ok {
		t.Fatal("BuscarCabecasDaFilaPorUcs + fila.Devida(no UC) found a row")
	}

	// Draining A+B yields arrival order for the tie, then the later entry;
	// the other UC's older row is never served.
	for _, want := range append(slices.Clone(mesmos), tardio) {
		got, ok := primeiro(ucA, ucB)
		if !ok || got != want {
			t.Fatalf("BuscarCabecasDaFilaPorUcs + fila.Devida(A,B) = %v (found %v), want %v", got, ok, want)
		}
		n, err := store.Consultas(q).RemoverFilaPendentePorDemanda(ctx, got)
		affected(t, "RemoverFilaPendentePorDemanda", n, err, 1)
	}
	if got, ok := primeiro(ucA, ucB); ok {
		t.Fatalf("A+B drained but got %v", got)
	}
	if got, _ := primeiro(fora, ucA); got != foraDaCadeia {
		t.Fatalf("first of fora = %v, want %v", got, foraDaCadeia)
	}
	if n := val(store.Consultas(q).ContarPendentes(ctx)).must(t); n != 1 {
		t.Fatalf("ContarPendentes after draining = %d, want 1", n)
	}
}

// ------------------------------------------------------- contador_recusas

func TestRecusas(t *testing.T) {
	t.Parallel()
	ctx, _, q := open(t)
	c, outro := uuid.New(), uuid.New()

	recusa := func(conselheiro uuid.UUID, quando time.Time) dbsqlc.InserirRecusaParams {
		t.Helper()
		p := dbsqlc.InserirRecusaParams{ConselheiroID: conselheiro, RecusasConsecutivas: 1, Agora: quando, DemandaIDRecusada: uuid.New(), EventoIDRecusa: uuid.New()}
		check(t, store.Consultas(q).InserirRecusa(ctx, p))
		return p
	}
	recusa(c, at(time.Hour))
	r2 := recusa(c, at(2*time.Hour))
	r2b := dbsqlc.InserirRecusaParams{ConselheiroID: c, RecusasConsecutivas: 3, Agora: at(3 * time.Hour), DemandaIDRecusada: uuid.New(), EventoIDRecusa: uuid.New()}
	check(t, store.Consultas(q).InserirRecusa(ctx, r2b))
	recusa(outro, at(4*time.Hour))

	got := val(store.Consultas(q).BuscarRecusaPorEventoId(ctx, r2b.EventoIDRecusa)).must(t)
	got.DataUltimaRecusa = got.DataUltimaRecusa.UTC()
	if got.ID == uuid.Nil {
		t.Fatal("generated id is nil")
	}
	deepEqual(t, "BuscarRecusaPorEventoId", got, dbsqlc.D6aContadorRecusa{
		ID: got.ID, ConselheiroID: c, RecusasConsecutivas: 3, DataUltimaRecusa: at(3 * time.Hour),
		DemandaIDRecusada: r2b.DemandaIDRecusada, EventoIDRecusa: r2b.EventoIDRecusa,
	})
	if got := val(store.Consultas(q).BuscarRecusaPorEventoId(ctx, r2.EventoIDRecusa)).must(t); got.DemandaIDRecusada != r2.DemandaIDRecusada {
		t.Fatalf("BuscarRecusaPorEventoId(r2) = %+v", got)
	}
	_, err := store.Consultas(q).BuscarRecusaPorEventoId(ctx, uuid.New())
	absent(t, "BuscarRecusaPorEventoId(unknown)", err)

	for _, tc := range []struct {
		name        string
		conselheiro uuid.UUID
		desde       *time.Time
		want        int64
	}{
		{"never accepted: all", c, nil, 3},
		{"before every refusal", c, ptr(at(0)), 3},
		{"between 1st and 2nd", c, ptr(at(90 * time.Minute)), 2},
		{"exactly at the 2nd (strictly later only)", c, ptr(at(2 * time.Hour)), 1},
		{"after all", c, ptr(at(4 * time.Hour)), 0},
		{"other counsellor", outro, nil, 1},
		{"unknown counsellor", uuid.New(), nil, 0},
	} {
		n := val(store.Consultas(q).ContarRecusasDesdeData(ctx, dbsqlc.ContarRecusasDesdeDataParams{ConselheiroID: tc.conselheiro, Desde: tc.desde})).must(t)
		if n != tc.want {
			t.Fatalf("ContarRecusasDesdeData(%s) = %d, want %d", tc.name, n, tc.want)
		}
	}
}

// -------------------------------------------------------- consumer_offset

func TestOffsets(t *testing.T) {
	t.Parallel()
	ctx, s, q := open(t)
	type off struct {
		tipo string
		seq  int64
		em   time.Time
	}
	todos := func() []off {
		t.Helper()
		rows, err := s.Pool.Query(ctx, `SELECT tipo_evento, last_sequence, updated_at FROM d6a.consumer_offset ORDER BY tipo_evento`)
		check(t, err)
		var out []off
		for rows.Next() {
			var o off
			check(t, rows.Scan(&o.tipo, &o.seq, &o.em))
			o.em = o.em.UTC()
			out = append(out, o)
		}
		check(t, rows.Err())
		return out
	}
	if got := todos(); len(got) != 0 {
		t.Fatalf("consumer_offset on an empty table = %+v", got)
	}

	check(t, store.Consultas(q).SeedOffset(ctx, dbsqlc.SeedOffsetParams{TipoEvento: "demanda.criada", LastSequence: 10, Agora: at(0)}))
	// A second seed never overwrites, neither sequence nor time.
	check(t, store.Consultas(q).SeedOffset(ctx, dbsqlc.SeedOffsetParams{TipoEvento: "demanda.criada", LastSequence: 99, Agora: at(time.Hour)}))
	check(t, store.Consultas(q).SeedOffset(ctx, dbsqlc.SeedOffsetParams{TipoEvento: "conselheiro.cadastrado", LastSequence: 7, Agora: at(0)}))
	deepEqual(t, "after seeds", todos(), []off{
		{"conselheiro.cadastrado", 7, at(0)},
		{"demanda.criada", 10, at(0)},
	})

	// A processed batch overwrites an existing row with its type's last
	// input and inserts a new one.
	check(t, q.RegistrarEntradas(ctx, []store.Processamento{
		{EventID: uuid.New(), Tipo: "demanda.criada", Seq: 15, Agora: at(time.Hour)},
		{EventID: uuid.New(), Tipo: "demanda.criada", Seq: 20, Agora: at(2 * time.Hour)},
		{EventID: uuid.New(), Tipo: "atribuicao.recusada", Seq: 5, Agora: at(3 * time.Hour)},
	}))
	// Seeding after that still changes nothing.
	check(t, store.Consultas(q).SeedOffset(ctx, dbsqlc.SeedOffsetParams{TipoEvento: "atribuicao.recusada", LastSequence: 1, Agora: at(4 * time.Hour)}))
	deepEqual(t, "after a processed batch", todos(), []off{
		{"atribuicao.recusada", 5, at(3 * time.Hour)},
		{"conselheiro.cadastrado", 7, at(0)},
		{"demanda.criada", 20, at(2 * time.Hour)},
	})
}

func TestEventosProcessados(t *testing.T) {
	t.Parallel()
	ctx, _, q := open(t)
	ev, outro := uuid.New(), uuid.New()

	if val(store.Consultas(q).EventoJaProcessado(ctx, ev)).must(t) {
		t.Fatal("EventoJaProcessado before registering = true")
	}
	n, err := store.Consultas(q).RegistrarEventoProcessado(ctx, dbsqlc.RegistrarEventoProcessadoParams{EventID: ev, TipoEvento: "demanda.criada", Sequence: 11, Agora: at(0)})
	affected(t, "RegistrarEventoProcessado", n, err, 1)
	// A replay registers nothing and keeps the first record.
	n, err = store.Consultas(q).RegistrarEventoProcessado(ctx, dbsqlc.RegistrarEventoProcessadoParams{EventID: ev, TipoEvento: "outro.tipo", Sequence: 99, Agora: at(time.Hour)})
	affected(t, "RegistrarEventoProcessado (replay)", n, err, 0)
	n, err = store.Consultas(q).RegistrarEventoProcessado(ctx, dbsqlc.RegistrarEventoProcessadoParams{EventID: outro, TipoEvento: "atribuicao.recusada", Sequence: 12, Agora: at(time.Minute)})
	affected(t, "RegistrarEventoProcessado (other event)", n, err, 1)

	if !val(store.Consultas(q).EventoJaProcessado(ctx, ev)).must(t) || !val(store.Consultas(q).EventoJaProcessado(ctx, outro)).must(t) {
		t.Fatal("EventoJaProcessado after registering = false")
	}
	if val(store.Consultas(q).EventoJaProcessado(ctx, uuid.New())).must(t) {
		t.Fatal("EventoJaProcessado(unknown) = true")
	}

	var tipo string
	var seq int64
	var em time.Time
	check(t, store.Conexao(q).QueryRow(ctx, `SELECT tipo_evento, sequence, processado_em FROM d6a.eventos_processados WHERE event_id = $1`, ev).Scan(&tipo, &seq, &em))
	if tipo != "demanda.criada" || seq != 11 || !em.Equal(at(0)) {
		t.Fatalf("record after replay = (%s, %d, %v), want the first (demanda.criada, 11, %v)", tipo, seq, em, at(0))
	}
	var total int
	check(t, store.Conexao(q).QueryRow(ctx, `SELECT count(*) FROM d6a.eventos_processados`).Scan(&total))
	if total != 2 {
		t.Fatalf("%d processed events recorded, want 2", total)
	}
}

// -------------------------------------------------------------- auditoria

// auditoria is an audit record of a draw, every column set.
type auditoria struct {
	EventIDSorteio, AtribuicaoID, DemandaID, UnidadeCivicaID, ConselheiroID uuid.UUID
	Base                                                                    string
	BaseFallback                                                            bool
	BaseSequence                                                            *int64
	TimestampSorteio, Seed                                                  string
	ElegiveisEntrada, Ordenados                                             []string
	Selecionado                                                             uuid.UUID
	ListaElegiveisHash                                                      string
	Degrau                                                                  uuid.UUID
	Cadeia                                                                  []string
	Excluido                                                                *uuid.UUID
	CriadoEm                                                                time.Time
}

func auditoriaParams(criado time.Time) auditoria {
	sel, degrau := uuid.New(), uuid.New()
	return auditoria{
		EventIDSorteio:     uuid.New(),
		AtribuicaoID:       uuid.New(),
		DemandaID:          uuid.New(),
		UnidadeCivicaID:    degrau,
		ConselheiroID:      sel,
		Base:               "0123456789abcdef",
		BaseFallback:       false,
		BaseSequence:       ptr(int64(4242)),
		TimestampSorteio:   "2026-03-02T09:30:00.000Z",
		Seed:               strings.Repeat("cd", 32),
		ElegiveisEntrada:   []string{"zz-" + sel.String(), "aa", "mm"},
		Ordenados:          []string{"mm", "zz-" + sel.String(), "aa"},
		Selecionado:        sel,
		ListaElegiveisHash: strings.Repeat("ef", 32),
		Degrau:             degrau,
		Cadeia:             []string{degrau.String(), "pai", "avo"},
		Excluido:           nil,
		CriadoEm:           criado,
	}
}

// inserirAuditoria writes a by hand: the draw writes its audit record
// with its assignment (GravarSorteios), never alone, and always with
// base_fallback false.
func inserirAuditoria(ctx context.Context, s *store.Store, a auditoria) error {
	_, err := s.Pool.Exec(ctx, `INSERT INTO d6a.auditoria_sorteios (
		event_id_sorteio, atribuicao_id, demanda_id, unidade_civica_id, conselheiro_id,
		base, base_fallback, base_sequence, timestamp_sorteio, seed, elegiveis_entrada,
		ordenados, selecionado, lista_elegiveis_hash, degrau, cadeia, excluido, criado_em
	) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
		a.EventIDSorteio, a.AtribuicaoID, a.DemandaID, a.UnidadeCivicaID, a.ConselheiroID,
		a.Base, a.BaseFallback, a.BaseSequence, a.TimestampSorteio, a.Seed, a.ElegiveisEntrada,
		a.Ordenados, a.Selecionado, a.ListaElegiveisHash, a.Degrau, a.Cadeia, a.Excluido, a.CriadoEm)
	return err
}

func TestAuditoria(t *testing.T) {
	t.Parallel()
	ctx, s, q := open(t)

	// Microsecond column (plain TIMESTAMPTZ): keep sub-10ms precision.
	a := auditoriaParams(base.Add(1234 * time.Microsecond))
	check(t, inserirAuditoria(ctx, s, a))
	b := auditoriaParams(base.Add(-time.Hour))
	b.BaseFallback, b.BaseSequence, b.Excluido = true, nil, ptr(uuid.New())
	b.ElegiveisEntrada, b.Ordenados, b.Cadeia = []string{"only"}, []string{"only"}, []string{"a", "b", "c", "d"}
	check(t, inserirAuditoria(ctx, s, b))

	toRow := func(p auditoria) dbsqlc.D6aAuditoriaSorteio {
		return dbsqlc.D6aAuditoriaSorteio{
			EventIDSorteio: p.EventIDSorteio, AtribuicaoID: p.AtribuicaoID, DemandaID: p.DemandaID,
			UnidadeCivicaID: p.UnidadeCivicaID, ConselheiroID: p.ConselheiroID, Base: p.Base,
			BaseFallback: p.BaseFallback, BaseSequence: p.BaseSequence, TimestampSorteio: p.TimestampSorteio,
			Seed: p.Seed, ElegiveisEntrada: p.ElegiveisEntrada, Ordenados: p.Ordenados, Selecionado: p.Selecionado,
			ListaElegiveisHash: p.ListaElegiveisHash, Degrau: p.Degrau, Cadeia: p.Cadeia, Excluido: p.Excluido,
			CriadoEm: p.CriadoEm,
		}
	}
	deepEqual(t, "BuscarAuditoria(a)", normAuditoria(val(store.Consultas(q).BuscarAuditoria(ctx, a.EventIDSorteio)).must(t)), toRow(a))
	deepEqual(t, "BuscarAuditoria(b)", normAuditoria(val(store.Consultas(q).BuscarAuditoria(ctx, b.EventIDSorteio)).must(t)), toRow(b))
	_, err := store.Consultas(q).BuscarAuditoria(ctx, uuid.New())
	absent(t, "BuscarAuditoria(unknown)", err)
}

// ----------------------------------------------------------------- outbox

// linhaOutbox is an outbox row as a batch hands it to GravarOutbox
// (atribuicao's lote.go writes the same JSON).
type linhaOutbox struct {
	EventID      uuid.UUID       `json:"event_id"`
	Tipo         string          `json:"tipo"`
	Subject      string          `json:"subject"`
	CorrelacaoID *string         `json:"correlacao_id"`
	Envelope     json.RawMessage `json:"envelope"`
	CriadoEm     time.Time       `json:"criado_em"`
}

func outboxParams(tipo string, correlacao *string, quando time.Time) linhaOutbox {
	ev := uuid.New()
	return linhaOutbox{
		EventID:      ev,
		Tipo:         tipo,
		Subject:      "d6a." + tipo,
		CorrelacaoID: correlacao,
		Envelope:     json.RawMessage(`{"event_id":"` + ev.String() + `","tipo":"` + tipo + `","payload":{"n":[3,1,2]}}`),
		CriadoEm:     quando,
	}
}

// gravarOutbox writes es, in their order, through the executor's write of
// the outbox.
func gravarOutbox(t *testing.T, q store.Tx, es ...linhaOutbox) error {
	t.Helper()
	linhas, err := json.Marshal(es)
	check(t, err)
	return q.GravarOutbox(t.Context(), linhas)
}

func sameJSON(t *testing.T, what string, got, want []byte) {
	t.Helper()
	var g, w any
	check(t, json.Unmarshal(got, &g))
	check(t, json.Unmarshal(want, &w))
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s: envelope %s, want %s", what, got, want)
	}
}

func TestOutbox(t *testing.T) {
	t.Parallel()
	ctx, s, q := open(t)

	// Inserted in this order (ids ascend with it), with criado_em NOT in
	// that order: "oldest first" is by id.
	e1 := outboxParams("atribuicao.criada", ptr("corr-0"), at(time.Hour))
	e2 := outboxParams("sorteio.sem_candidatos", ptr("corr-1"), at(0))
	e3 := outboxParams("atribuicao.criada", nil, at(2*time.Hour))
	e4 := outboxParams("sorteio.sem_candidatos", ptr("corr-2"), at(-time.Hour))
	for _, e := range []linhaOutbox{e1, e2, e3, e4} {
		check(t, gravarOutbox(t, q, e))
	}

	for _, c := range []struct {
		tipo string
		corr *string
		want bool
	}{
		{"sorteio.sem_candidatos", ptr("corr-1"), true},
		{"sorteio.sem_candidatos", ptr("corr-2"), true},
		{"sorteio.sem_candidatos", ptr("corr-0"), false}, // other type holds corr-0
		{"atribuicao.criada", ptr("corr-1"), false},
		{"sorteio.sem_candidatos", ptr("corr-9"), false},
		{"atribuicao.criada", nil, false}, // NULL never matches
	} {
		if got := val(store.Consultas(q).ExisteOutboxPorTipoCorrelacao(ctx, dbsqlc.ExisteOutboxPorTipoCorrelacaoParams{Tipo: c.tipo, CorrelacaoID: c.corr})).must(t); got != c.want {
			t.Fatalf("ExisteOutboxPorTipoCorrelacao(%s, %v) = %v, want %v", c.tipo, c.corr, got, c.want)
		}
	}

	row := func(e linhaOutbox) dbsqlc.D6aOutbox {
		t.Helper()
		r := val(store.Consultas(q).BuscarOutboxPorEventId(ctx, e.EventID)).must(t)
		r.CriadoEm = r.CriadoEm.UTC()
		r.PublicadoEm = utc(r.PublicadoEm)
		return r
	}
	r1 := row(e1)
	sameJSON(t, "BuscarOutboxPorEventId", r1.Envelope, e1.Envelope)
	if r1.ID < 1 || r1.EventID != e1.EventID || r1.Tipo != e1.Tipo || r1.Subject != e1.Subject || *r1.CorrelacaoID != "corr-0" ||
		!r1.CriadoEm.Equal(at(time.Hour)) || r1.PublicadoEm != nil || r1.Sequence != nil {
		t.Fatalf("BuscarOutboxPorEventId = %+v", r1)
	}
	if r3 := row(e3); r3.CorrelacaoID != nil || r3.ID <= r1.ID {
		t.Fatalf("e3 = %+v (id must follow %d)", r3, r1.ID)
	}
	_, err := store.Consultas(q).BuscarOutboxPorEventId(ctx, uuid.New())
	absent(t, "BuscarOutboxPorEventId(unknown)", err)
	if n := val(store.Consultas(q).ContarOutboxPendentes(ctx)).must(t); n != 4 {
		t.Fatalf("ContarOutboxPendentes = %d, want 4", n)
	}

	pendentes := func(limite int32) (out []uuid.UUID) {
		t.Helper()
		check(t, s.InTx(ctx, func(tx store.Tx) error {
			rows, err := store.Consultas(tx).BuscarOutboxPendentes(ctx, limite)
			for i, r := range rows {
				if i > 0 && r.ID <= rows[i-1].ID {
					t.Errorf("BuscarOutboxPendentes not in id order: %d then %d", rows[i-1].ID, r.ID)
				}
				out = append(out, r.EventID)
			}
			return err
		}))
		return out
	}
	equalIDs(t, "BuscarOutboxPendentes(2)", pendentes(2), []uuid.UUID{e1.EventID, e2.EventID})
	equalIDs(t, "BuscarOutboxPendentes(10)", pendentes(10), []uuid.UUID{e1.EventID, e2.EventID, e3.EventID, e4.EventID})

	// The relay's cycle: take, publish, mark, in one transaction.
	check(t, s.InTx(ctx, func(tx store.Tx) error {
		rows, err := store.Consultas(tx).BuscarOutboxPendentes(ctx, 1)
		if err != nil {
			return err
		}
		if len(rows) != 1 || rows[0].EventID != e1.EventID || rows[0].Subject != e1.Subject {
			t.Fatalf("BuscarOutboxPendentes(1) = %+v", rows)
		}
		sameJSON(t, "BuscarOutboxPendentes", rows[0].Envelope, e1.Envelope)
		return store.Consultas(tx).MarcarOutboxPublicados(ctx, dbsqlc.MarcarOutboxPublicadosParams{Agora: at(3 * time.Hour), Ids: []int64{rows[0].ID}, Sequences: []int64{101}})
	}))
	if r := row(e1); r.PublicadoEm == nil || !r.PublicadoEm.Equal(at(3*time.Hour)) || r.Sequence == nil || *r.Sequence != 101 {
		t.Fatalf("after MarcarOutboxPublicados: publicado_em %v sequence %v", r.PublicadoEm, r.Sequence)
	}
	if r := row(e2); r.PublicadoEm != nil || r.Sequence != nil {
		t.Fatalf("MarcarOutboxPublicados touched another row: %+v", r)
	}
	if n := val(store.Consultas(q).ContarOutboxPendentes(ctx)).must(t); n != 3 {
		t.Fatalf("ContarOutboxPendentes after one publication = %d, want 3", n)
	}
	equalIDs(t, "BuscarOutboxPendentes excludes published", pendentes(10), []uuid.UUID{e2.EventID, e3.EventID, e4.EventID})

	// Published rows stay queryable (ExisteOutbox guards by type+correlation
	// whether published or not).
	check(t, store.Consultas(q).MarcarOutboxPublicados(ctx, dbsqlc.MarcarOutboxPublicadosParams{Agora: at(4 * time.Hour), Ids: []int64{row(e2).ID}, Sequences: []int64{102}}))
	if !val(store.Consultas(q).ExisteOutboxPorTipoCorrelacao(ctx, dbsqlc.ExisteOutboxPorTipoCorrelacaoParams{Tipo: "sorteio.sem_candidatos", CorrelacaoID: ptr("corr-1")})).must(t) {
		t.Fatal("ExisteOutboxPorTipoCorrelacao must still see a published row")
	}
	if n := val(store.Consultas(q).ContarOutboxPendentes(ctx)).must(t); n != 2 {
		t.Fatalf("ContarOutboxPendentes = %d, want 2", n)
	}

	// One statement marks a whole pass, each row with its own sequence; a
	// row already published keeps its first mark.
	check(t, store.Consultas(q).MarcarOutboxPublicados(ctx, dbsqlc.MarcarOutboxPublicadosParams{
		Agora: at(5 * time.Hour), Ids: []int64{row(e1).ID, row(e3).ID, row(e4).ID}, Sequences: []int64{999, 103, 104},
	}))
	for _, c := range []struct {
		e   linhaOutbox
		seq int64
		em  time.Duration
	}{{e1, 101, 3 * time.Hour}, {e3, 103, 5 * time.Hour}, {e4, 104, 5 * time.Hour}} {
		if r := row(c.e); r.Sequence == nil || *r.Sequence != c.seq || r.PublicadoEm == nil || !r.PublicadoEm.Equal(at(c.em)) {
			t.Fatalf("after MarcarOutboxPublicados of a pass: %s has sequence %v publicado_em %v, want %d %v", c.e.EventID, r.Sequence, r.PublicadoEm, c.seq, at(c.em))
		}
	}
	if n := val(store.Consultas(q).ContarOutboxPendentes(ctx)).must(t); n != 0 {
		t.Fatalf("ContarOutboxPendentes = %d, want 0", n)
	}
}

// ------------------------------------------------------------- hierarquia

func TestBuscarTodasHierarquias(t *testing.T) {
	t.Parallel()
	ctx, s, q := open(t)
	if got := val(store.Consultas(q).BuscarTodasHierarquias(ctx)).must(t); len(got) != 0 {
		t.Fatalf("BuscarTodasHierarquias on an empty table = %+v", got)
	}

	raiz, filho, neto, outraRaiz := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	want := []dbsqlc.CoreUcPolygon{
		{ID: raiz, ParentUcID: nil},
		{ID: filho, ParentUcID: &raiz},
		{ID: neto, ParentUcID: &filho},
		{ID: outraRaiz, ParentUcID: nil},
	}
	for _, uc := range want {
		_, err := s.Pool.Exec(ctx, `INSERT INTO core.uc_polygons (id, parent_uc_id) VALUES ($1, $2)`, uc.ID, uc.ParentUcID)
		check(t, err)
	}
	got := val(store.Consultas(q).BuscarTodasHierarquias(ctx)).must(t)
	// The query has no ORDER BY: compare as sets.
	byID := func(a, b dbsqlc.CoreUcPolygon) int { return cmpUUID(a.ID, b.ID) }
	slices.SortFunc(got, byID)
	slices.SortFunc(want, byID)
	deepEqual(t, "BuscarTodasHierarquias", got, want)
}

func TestBuscarTodasHierarquiasSemTabela(t *testing.T) {
	t.Parallel()
	ctx, s, q := open(t)
	// Warm the connection's statement cache first: the error must not
	// depend on whether the statement was prepared before the drop.
	val(store.Consultas(q).BuscarTodasHierarquias(ctx)).must(t)
	_, err := s.Pool.Exec(ctx, `DROP TABLE core.uc_polygons`)
	check(t, err)

	for i := range 2 {
		rows, err := store.Consultas(q).BuscarTodasHierarquias(ctx)
		if err == nil {
			t.Fatalf("call %d: BuscarTodasHierarquias without core.uc_polygons = %+v, want an error", i, rows)
		}
		if code := pgCode(err); code != "42P01" {
			t.Fatalf("call %d: error %v has SQLSTATE %q, want 42P01 (undefined_table)", i, err, code)
		}
	}
}

func TestBuscarTodasHierarquiasSemSchema(t *testing.T) {
	t.Parallel()
	ctx, s, q := open(t)
	_, err := s.Pool.Exec(ctx, `DROP SCHEMA core CASCADE`)
	check(t, err)
	_, err = store.Consultas(q).BuscarTodasHierarquias(ctx)
	// Without the whole schema PostgreSQL still reports undefined_table for
	// a schema-qualified relation in a query.
	if code := pgCode(err); code != "42P01" {
		t.Fatalf("error %v has SQLSTATE %q, want 42P01", err, code)
	}
}
