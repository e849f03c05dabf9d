// Package atribuicaotest is test support, imported by tests only: one
// executor (atribuicao.Servico) on its own fresh PostgreSQL database, with a
// clock that moves only when told and a fixed seed base, and the helpers that
// set a scene (civic units, counsellors, draws) and check what a draw leaves
// behind. atribuicao's own tests, the console's and the maintenance jobs' use
// it, so that each package's tests live beside it.
package atribuicaotest

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/entradas"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/hierarquia"
	"github.com/formigueiro/d6a/internal/pgtest"
	"github.com/formigueiro/d6a/internal/sorteio"
	"github.com/formigueiro/d6a/internal/store"
)

// Main is a test package's TestMain: it silences the default logger and
// runs the tests with pgtest's server, stopped at exit.
func Main(m *testing.M) {
	// The service logs every draw; -v runs stay readable.
	slog.SetDefault(slog.New(slog.DiscardHandler))
	os.Exit(pgtest.Run(m))
}

// Relogio is the injected clock: it moves only when the test says so.
type Relogio struct {
	mu sync.Mutex
	t  time.Time
}

// NovoRelogio starts at a fixed instant with nanoseconds, so a lost
// precision shows.
func NovoRelogio() *Relogio {
	return &Relogio{t: time.Date(2026, 11, 29, 14, 3, 7, 123_456_789, time.UTC)}
}

// Now is the clock's time.
func (r *Relogio) Now() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.t
}

// Avancar moves the clock forward by d.
func (r *Relogio) Avancar(d time.Duration) {
	r.mu.Lock()
	r.t = r.t.Add(d)
	r.mu.Unlock()
}

// BarramentoFixo is the seed base: a fixed last event of the bus.
type BarramentoFixo struct {
	ID  string
	Seq uint64
}

// LastEventID answers ID and Seq.
func (b BarramentoFixo) LastEventID(context.Context) (string, uint64, error) { return b.ID, b.Seq, nil }

// BarramentoAlternavel does not answer until Ligar gives it a base.
type BarramentoAlternavel struct {
	mu sync.Mutex
	b  atribuicao.Barramento
}

// Ligar gives the bus its base.
func (a *BarramentoAlternavel) Ligar(b atribuicao.Barramento) {
	a.mu.Lock()
	a.b = b
	a.mu.Unlock()
}

// LastEventID answers with the base Ligar gave, or an error before.
func (a *BarramentoAlternavel) LastEventID(ctx context.Context) (string, uint64, error) {
	a.mu.Lock()
	b := a.b
	a.mu.Unlock()
	if b == nil {
		return "", 0, errors.New("barramento indisponível")
	}
	return b.LastEventID(ctx)
}

// BaseFixa and SeqFixa are the last event BarramentoFixo reports when a
// test gives no bus.
const (
	BaseFixa = "8d3c2a51-6b0e-4a44-9d0b-6f2a1f3e9c10"
	SeqFixa  = 4242
)

// Ambiente is one service on its own fresh database.
type Ambiente struct {
	T   *testing.T
	Ctx context.Context
	St  *store.Store
	URL string
	Clk *Relogio
	Svc *atribuicao.Servico
	// Opcoes adjusts the Options of every service NovoServico starts.
	Opcoes func(*atribuicao.Options)
	// ProximaSeq is the stream sequence DevolverProprios last gave.
	ProximaSeq uint64
}

// Novo builds a Servico on a fresh migrated database, with the
// hierarchy read from core.uc_polygons through the store, the controlled
// clock and bus b (BarramentoFixo when nil).
func Novo(t *testing.T, b atribuicao.Barramento) *Ambiente {
	t.Helper()
	return NovoCom(t, b, nil)
}

// NovoCom is Novo with opcoes applied to the service's
// Options.
func NovoCom(t *testing.T, b atribuicao.Barramento, opcoes func(*atribuicao.Options)) *Ambiente {
	t.Helper()
	url := pgtest.URL(t)
	a := &Ambiente{T: t, Ctx: context.Background(), URL: url, Clk: NovoRelogio(), Opcoes: opcoes}
	a.St = AbrirStore(t, url)
	a.Svc = a.NovoServico(a.St, b)
	return a
}

// AbrirStore opens a store on url, closed when the test ends.
func AbrirStore(t *testing.T, url string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

// NovoServico starts one more service ("instance") on st, sharing the clock.
func (a *Ambiente) NovoServico(st *store.Store, b atribuicao.Barramento) *atribuicao.Servico {
	a.T.Helper()
	if b == nil {
		b = BarramentoFixo{ID: BaseFixa, Seq: SeqFixa}
	}
	hier := hierarquia.New(st.CarregarHierarquia, time.Hour, a.Clk.Now)
	o := atribuicao.Options{
		Store: st, Hierarquia: hier, Entradas: entradas.New(hier), Barramento: b, SubjectPrefix: "eventos",
		NRecusasSuspensao: 3, TSuspensao: 90 * 24 * time.Hour, Now: a.Clk.Now,
		Logger: slog.Default(),
	}
	if a.Opcoes != nil {
		a.Opcoes(&o)
	}
	svc := atribuicao.New(o)
	a.T.Cleanup(svc.Close)
	return svc
}

// UC inserts a civic unit into core.uc_polygons; parent may be uuid.Nil.
// The hierarchy is cached on first use: create units before the first draw.
func (a *Ambiente) UC(parent uuid.UUID) uuid.UUID {
	a.T.Helper()
	id := uuid.New()
	var p *uuid.UUID
	if parent != uuid.Nil {
		p = &parent
	}
	if _, err := a.St.Pool.Exec(a.Ctx, `INSERT INTO core.uc_polygons (id, parent_uc_id) VALUES ($1, $2)`, id, p); err != nil {
		a.T.Fatal(err)
	}
	return id
}

// ConselheiroOpcao adjusts a counsellor before insertion.
type ConselheiroOpcao func(*conselheiroSpec)

type conselheiroSpec struct {
	status       string
	capacitacao  bool
	suspensaoAte *time.Time
	ocupado      bool // holds an active assignment
}

// SemCapacitacao: training not completed.
func SemCapacitacao(c *conselheiroSpec) { c.capacitacao = false }

// ComAtribuicaoAtiva: occupied, holding an active assignment.
func ComAtribuicaoAtiva(c *conselheiroSpec) {
	c.ocupado = true
	c.status = elegibilidade.Ocupado
}

// ComStatus: status s.
func ComStatus(s string) ConselheiroOpcao { return func(c *conselheiroSpec) { c.status = s } }

// SuspensoAte: suspended until t.
func SuspensoAte(t time.Time) ConselheiroOpcao {
	return func(c *conselheiroSpec) {
		c.status = elegibilidade.Suspenso
		c.suspensaoAte = &t
	}
}

// Conselheiro registers a counsellor on uc: available and trained unless
// told otherwise.
func (a *Ambiente) Conselheiro(uc uuid.UUID, opts ...ConselheiroOpcao) uuid.UUID {
	a.T.Helper()
	spec := conselheiroSpec{status: elegibilidade.Disponivel, capacitacao: true}
	for _, o := range opts {
		o(&spec)
	}
	id := uuid.New()
	agora := a.Clk.Now().Add(-24 * time.Hour)
	err := a.St.InTx(a.Ctx, func(tx store.Tx) error {
		if err := tx.Cadastrar(a.Ctx, store.Cadastro{
			Cidadao: id, UC: uc, Nivel: 1, Status: spec.status,
			Capacitacao: spec.capacitacao, Agora: agora, EventID: uuid.New(),
		}); err != nil {
			return err
		}
		if spec.ocupado {
			_, err := tx.RecriarAtribuicao(a.Ctx, store.SorteioReconciliado{
				ConselheiroID: id, DemandaID: uuid.New(), UC: uc, Seed: "anterior",
				Posicao: 0, Total: 1, Quando: agora, EventID: uuid.New(),
				CategoriaID: "X", NivelPrecedencia: 1,
			})
			return err
		}
		return nil
	})
	if err != nil {
		a.T.Fatal(err)
	}
	// The date alone, whatever the status: no store method writes one
	// without the other.
	if spec.suspensaoAte != nil {
		if _, err := a.St.Pool.Exec(a.Ctx, `UPDATE d6a.conselheiros SET data_suspensao_ate = $2 WHERE id = $1`, id, *spec.suspensaoAte); err != nil {
			a.T.Fatal(err)
		}
	}
	return id
}

// Pedido is a draw request for a new demand on uc, with a full snapshot.
func Pedido(uc uuid.UUID) atribuicao.Pedido {
	demanda := uuid.New()
	grupo := uuid.New()
	return atribuicao.Pedido{
		UC: uc, DemandaID: demanda,
		Dados: atribuicao.DadosDemanda{
			ScoreFinal: 87.25, CategoriaID: "SAU", NivelPrecedencia: 2, GrupoID: &grupo,
			CorrelacaoID: demanda.String(), EventIDOrigem: uuid.New(),
		},
	}
}

// Sortear draws p on the ambiente's service; an error fails the test.
func (a *Ambiente) Sortear(p atribuicao.Pedido) atribuicao.Resultado {
	a.T.Helper()
	r, err := a.Svc.Sortear(a.Ctx, p)
	if err != nil {
		a.T.Fatalf("Sortear: %v", err)
	}
	return r
}

// SortearComSucesso draws and fails the test unless someone was drawn; it
// also checks the whole record of the draw (assignment, counsellor, audit,
// outbox) and that the audit recomputes.
func (a *Ambiente) SortearComSucesso(p atribuicao.Pedido) atribuicao.Resultado {
	a.T.Helper()
	r := a.Sortear(p)
	if !r.Sucesso {
		a.T.Fatalf("sorteio sem sucesso: motivo %q", r.Motivo)
	}
	a.ConferirSorteio(p, r)
	return r
}

// LinhaConselheiro is what the tests check of a counsellor's row: the
// columns a draw and the state machine write.
type LinhaConselheiro struct {
	Status                 string
	DataUltimaAtribuicao   *time.Time
	DataSuspensaoAte       *time.Time
	EventIDUltimaAlteracao uuid.UUID
}

// LinhaConselheiro reads counsellor id's row.
func (a *Ambiente) LinhaConselheiro(id uuid.UUID) LinhaConselheiro {
	a.T.Helper()
	var c LinhaConselheiro
	if err := a.St.Pool.QueryRow(a.Ctx, `SELECT status, data_ultima_atribuicao, data_suspensao_ate, event_id_ultima_alteracao
		FROM d6a.conselheiros WHERE id = $1`, id).Scan(&c.Status, &c.DataUltimaAtribuicao, &c.DataSuspensaoAte, &c.EventIDUltimaAlteracao); err != nil {
		a.T.Fatal(err)
	}
	return c
}

// Pendente reads demand's row of the pending queue, if it waits there.
func (a *Ambiente) Pendente(demanda uuid.UUID) (store.Pendente, bool) {
	a.T.Helper()
	p, achou, err := a.St.Read().PendenteDaDemanda(a.Ctx, demanda)
	if err != nil {
		a.T.Fatal(err)
	}
	return p, achou
}

// Auditoria reads the audit record of the draw eventIDSorteio; the test
// fails without one.
func (a *Ambiente) Auditoria(eventIDSorteio uuid.UUID) store.AuditoriaDoSorteio {
	a.T.Helper()
	aud, achou, err := a.St.Read().AuditoriaPorSorteio(a.Ctx, eventIDSorteio)
	if err != nil || !achou {
		a.T.Fatalf("audit of %s: %v (found %v)", eventIDSorteio, err, achou)
	}
	return aud
}

// Auditorias reads every audit record, by event id.
func (a *Ambiente) Auditorias() []store.AuditoriaDoSorteio {
	a.T.Helper()
	rows, err := a.St.Pool.Query(a.Ctx, `SELECT event_id_sorteio FROM d6a.auditoria_sorteios ORDER BY event_id_sorteio`)
	if err != nil {
		a.T.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		a.T.Fatal(err)
	}
	out := make([]store.AuditoriaDoSorteio, len(ids))
	for i, id := range ids {
		out[i] = a.Auditoria(id)
	}
	return out
}

// Atribuicao reads the assignment of the draw eventIDSorteio; the test
// fails without one.
func (a *Ambiente) Atribuicao(eventIDSorteio uuid.UUID) store.AtribuicaoDoSorteio {
	a.T.Helper()
	at, achou, err := a.St.Read().AtribuicaoPorSorteio(a.Ctx, eventIDSorteio)
	if err != nil || !achou {
		a.T.Fatalf("assignment of %s: %v (found %v)", eventIDSorteio, err, achou)
	}
	return at
}

// LinhaOutbox is what the tests read of an outbox row: the event, its
// subject and correlation, and its envelope.
type LinhaOutbox struct {
	EventID      uuid.UUID
	Subject      string
	CorrelacaoID *string
	Envelope     []byte
}

// Outbox returns the outbox rows of tipo whose correlacao_id is correlacao
// (every row of tipo when correlacao is empty), oldest first.
func (a *Ambiente) Outbox(tipo, correlacao string) []LinhaOutbox {
	a.T.Helper()
	rows, err := a.St.Pool.Query(a.Ctx, `SELECT event_id, subject, correlacao_id, envelope
		FROM d6a.outbox WHERE tipo = $1 AND ($2 = '' OR correlacao_id = $2) ORDER BY id`, tipo, correlacao)
	if err != nil {
		a.T.Fatal(err)
	}
	defer rows.Close()
	var out []LinhaOutbox
	for rows.Next() {
		var o LinhaOutbox
		if err := rows.Scan(&o.EventID, &o.Subject, &o.CorrelacaoID, &o.Envelope); err != nil {
			a.T.Fatal(err)
		}
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		a.T.Fatal(err)
	}
	return out
}

// Contar runs a count(*) query.
func (a *Ambiente) Contar(sql string, args ...any) int {
	a.T.Helper()
	var n int
	if err := a.St.Pool.QueryRow(a.Ctx, sql, args...).Scan(&n); err != nil {
		a.T.Fatal(err)
	}
	return n
}

// EnvelopePublicado decodes an outbox envelope and checks the fixed fields
// of CONTRACT §3: exactly seven, origem D-6a, versao_schema 1.0.0, the tipo,
// the event_id of the row, T-format timestamp.
func EnvelopePublicado(t *testing.T, o LinhaOutbox, tipo string) (map[string]any, map[string]any) {
	t.Helper()
	var env map[string]any
	if err := json.Unmarshal(o.Envelope, &env); err != nil {
		t.Fatalf("envelope: %v", err)
	}
	campos := make([]string, 0, len(env))
	for k := range env {
		campos = append(campos, k)
	}
	sort.Strings(campos)
	want := []string{"correlacao_id", "event_id", "origem", "payload", "timestamp", "tipo", "versao_schema"}
	if len(campos) != len(want) {
		t.Fatalf("envelope fields = %v, want %v", campos, want)
	}
	for i := range want {
		if campos[i] != want[i] {
			t.Fatalf("envelope fields = %v, want %v", campos, want)
		}
	}
	if env["origem"] != "D-6a" || env["versao_schema"] != "1.0.0" || env["tipo"] != tipo {
		t.Errorf("envelope origem/versao/tipo = %v/%v/%v", env["origem"], env["versao_schema"], env["tipo"])
	}
	if env["event_id"] != o.EventID.String() {
		t.Errorf("envelope event_id %v != outbox.event_id %s", env["event_id"], o.EventID)
	}
	if o.CorrelacaoID == nil || env["correlacao_id"] != *o.CorrelacaoID {
		t.Errorf("envelope correlacao_id %v != outbox.correlacao_id %v", env["correlacao_id"], o.CorrelacaoID)
	}
	ts, _ := env["timestamp"].(string)
	if _, err := sorteio.ParseTimestamp(ts); err != nil {
		t.Errorf("envelope timestamp: %v", err)
	}
	if o.Subject != "eventos."+tipo { // both published types are plain ASCII
		t.Errorf("subject = %q", o.Subject)
	}
	payload, ok := env["payload"].(map[string]any)
	if !ok {
		t.Fatalf("payload is %T", env["payload"])
	}
	return env, payload
}

// ConferirSorteio checks everything a successful draw must leave behind
// (spec 4.4, CONTRACT §3, §4): the active assignment, the occupied
// counsellor, the audit row (which recomputes), the outbox event.
func (a *Ambiente) ConferirSorteio(p atribuicao.Pedido, r atribuicao.Resultado) {
	t := a.T
	t.Helper()
	at := a.Atribuicao(r.EventIDSorteio)
	if at.Status != atribuicao.AtribuicaoAtiva || at.ConselheiroID != r.ConselheiroID || at.DemandaID != p.DemandaID ||
		at.UC != p.UC || at.SeedPublico != r.Seed || at.PosicaoSorteada != 0 ||
		int(at.TotalElegiveis) != r.TotalElegiveis || at.ListaElegiveisHash == nil || *at.ListaElegiveisHash != r.ListaHash ||
		at.MetodoSorteio != "fisher_yates" {
		t.Errorf("assignment row %+v does not match result %+v", at, r)
	}
	// spec 2.3: the demand's snapshot is kept on the assignment (T34 re-draws from it).
	if d := at.Demanda; d.ScoreFinal != p.Dados.ScoreFinal || d.CategoriaID != p.Dados.CategoriaID ||
		d.NivelPrecedencia != p.Dados.NivelPrecedencia || !MesmoUUID(d.GrupoID, p.Dados.GrupoID) {
		t.Errorf("assignment snapshot score/categoria/nivel/grupo = %v/%q/%d/%v, want %v/%q/%d/%v",
			d.ScoreFinal, d.CategoriaID, d.NivelPrecedencia, d.GrupoID,
			p.Dados.ScoreFinal, p.Dados.CategoriaID, p.Dados.NivelPrecedencia, p.Dados.GrupoID)
	}

	c := a.LinhaConselheiro(r.ConselheiroID)
	if c.Status != elegibilidade.Ocupado || c.DataUltimaAtribuicao == nil || c.EventIDUltimaAlteracao != r.EventIDSorteio {
		t.Errorf("counsellor after draw: status %q, data_ultima_atribuicao %v, event_id_ultima_alteracao %s",
			c.Status, c.DataUltimaAtribuicao, c.EventIDUltimaAlteracao)
	} else if d := c.DataUltimaAtribuicao.Sub(at.DataSorteio); d < -10*time.Millisecond || d > 10*time.Millisecond {
		t.Errorf("data_ultima_atribuicao %v != data_sorteio %v", c.DataUltimaAtribuicao, at.DataSorteio)
	}

	aud := a.Auditoria(r.EventIDSorteio)
	if aud.AtribuicaoID != at.ID || aud.DemandaID != p.DemandaID || aud.UC != p.UC ||
		aud.ConselheiroID != r.ConselheiroID || aud.Selecionado != at.ConselheiroID ||
		aud.Seed != at.SeedPublico || aud.ListaElegiveisHash != *at.ListaElegiveisHash ||
		len(aud.ElegiveisEntrada) != int(at.TotalElegiveis) || aud.Degrau != r.Degrau || !MesmoUUID(aud.Excluido, p.Excluir) {
		t.Errorf("audit row %+v does not match assignment %+v", aud, at)
	}
	if len(aud.Cadeia) != len(r.Cadeia) {
		t.Errorf("audit cadeia %v, result cadeia %v", aud.Cadeia, r.Cadeia)
	} else {
		for i := range r.Cadeia {
			if aud.Cadeia[i] != r.Cadeia[i].String() {
				t.Errorf("audit cadeia %v, result cadeia %v", aud.Cadeia, r.Cadeia)
				break
			}
		}
	}
	if ts, err := sorteio.ParseTimestamp(aud.TimestampSorteio); err != nil || ts.Sub(at.DataSorteio).Abs() > 10*time.Millisecond {
		t.Errorf("timestamp_sorteio %q vs data_sorteio %v (err %v)", aud.TimestampSorteio, at.DataSorteio, err)
	}
	VerificarAuditoria(t, aud)

	obs := a.Outbox("conselheiro.sorteado", "")
	var o *LinhaOutbox
	for i := range obs {
		if obs[i].EventID == at.EventIDSorteio {
			o = &obs[i]
		}
	}
	if o == nil {
		t.Fatalf("no conselheiro.sorteado in the outbox with event_id = atribuicoes.event_id_sorteio %s", at.EventIDSorteio)
	}
	env, pl := EnvelopePublicado(t, *o, "conselheiro.sorteado")
	if env["correlacao_id"] != p.Dados.CorrelacaoID {
		t.Errorf("correlacao_id = %v, want %q", env["correlacao_id"], p.Dados.CorrelacaoID)
	}
	if env["timestamp"] != aud.TimestampSorteio {
		t.Errorf("envelope timestamp %v != T %q", env["timestamp"], aud.TimestampSorteio)
	}
	want := map[string]any{
		"conselheiro_id": at.ConselheiroID.String(), "demanda_id": at.DemandaID.String(),
		"unidade_civica_id": at.UC.String(), "metodo_sorteio": "fisher_yates",
		"seed_publico": at.SeedPublico, "lista_elegiveis_hash": *at.ListaElegiveisHash,
		"posicao_sorteada": float64(at.PosicaoSorteada), "total_elegiveis": float64(at.TotalElegiveis),
		"timestamp": aud.TimestampSorteio,
	}
	if len(pl) != len(want) {
		t.Errorf("payload %v has %d fields, want %d", pl, len(pl), len(want))
	}
	for k, v := range want {
		if pl[k] != v {
			t.Errorf("payload.%s = %v, want %v (assignment row)", k, pl[k], v)
		}
	}
}

// VerificarAuditoria recomputes a draw from its audit record, as a third
// party would (docs/verificacao.md): no Divergencia, canonical input, and
// the winner is the assignment's counsellor.
func VerificarAuditoria(t *testing.T, aud store.AuditoriaDoSorteio) {
	t.Helper()
	sel := aud.Selecionado.String()
	res, err := sorteio.Verificar(sorteio.Alegacao{
		Base: aud.Base, Timestamp: aud.TimestampSorteio, Elegiveis: aud.ElegiveisEntrada,
		Seed: &aud.Seed, Ordenados: aud.Ordenados, Selecionado: &sel, ListaHash: &aud.ListaElegiveisHash,
	})
	if err != nil {
		t.Fatalf("audit %s does not verify: %v", aud.EventIDSorteio, err)
	}
	if !sort.StringsAreSorted(aud.ElegiveisEntrada) {
		t.Errorf("elegiveis_entrada not ascending: %v", aud.ElegiveisEntrada)
	}
	for i := range res.Entrada {
		if res.Entrada[i] != aud.ElegiveisEntrada[i] {
			t.Errorf("elegiveis_entrada %v is not canonical (%v)", aud.ElegiveisEntrada, res.Entrada)
			break
		}
	}
	if res.Selecionado != aud.ConselheiroID.String() {
		t.Errorf("recomputed winner %s != conselheiro_id %s", res.Selecionado, aud.ConselheiroID)
	}
}

// MesmoUUID says whether two optional ids are equal (both absent counts).
func MesmoUUID(a, b *uuid.UUID) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// DevolverProprios hands the service's own triggers (d6a.varredura,
// conselheiro.suspensao_expirada) it queued and has not applied back to it,
// in outbox order, as the bus would deliver them once published (CONTRACT
// §4): these tests run the executor without consumers. Each gets the next
// stream sequence from proximaSeq and the clock's time as its bus time.
func (a *Ambiente) DevolverProprios() int {
	a.T.Helper()
	n := 0
	for _, tipo := range []evento.Tipo{evento.Varredura, evento.SuspensaoExpirada} {
		for _, o := range a.Outbox(string(tipo), "") {
			if a.Contar(`SELECT count(*) FROM d6a.eventos_processados WHERE event_id = $1`, o.EventID) > 0 {
				continue
			}
			ev, err := evento.Decodificar(tipo, o.Envelope)
			if err != nil {
				a.T.Fatalf("own %s does not decode: %v", tipo, err)
			}
			ev.Armazenado = a.Clk.Now()
			a.ProximaSeq++
			if err := a.Svc.Handle(a.Ctx, ev, a.ProximaSeq); err != nil {
				a.T.Fatalf("own %s back from the bus: %v", tipo, err)
			}
			n++
		}
	}
	return n
}
