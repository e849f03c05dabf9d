package atribuicao_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/atribuicaotest"
	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/sorteio"
)

// ids renders counsellor ids as the draw's canonical input (ascending text).
func ids(us ...uuid.UUID) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = u.String()
	}
	slices.Sort(out)
	return out
}

// entradaAuditada is the input list audited for the draw of r.
func entradaAuditada(a *atribuicaotest.Ambiente, r atribuicao.Resultado) []string {
	a.T.Helper()
	aud := a.Auditoria(r.EventIDSorteio)
	return aud.ElegiveisEntrada
}

// T1 / T5: a successful draw leaves the active assignment, the occupied
// counsellor, the audit and the event; and the winner is what anyone gets
// from the public inputs (base of the bus, T of the clock, eligible list).
func TestT1_SorteioComSucesso(t *testing.T) {
	t.Parallel()
	a := atribuicaotest.Novo(t, nil)
	uc := a.UC(uuid.Nil)
	var todos []uuid.UUID
	for range 5 {
		todos = append(todos, a.Conselheiro(uc))
	}
	p := atribuicaotest.Pedido(uc)
	r := a.SortearComSucesso(p)

	T := sorteio.FormatTimestamp(a.Clk.Now())
	esperado, err := sorteio.Sortear(atribuicaotest.BaseFixa, T, ids(todos...))
	if err != nil {
		t.Fatal(err)
	}
	if r.ConselheiroID.String() != esperado.Selecionado || r.Seed != esperado.Seed || r.ListaHash != esperado.ListaHash {
		t.Errorf("draw = %s/%s/%s, want the public recomputation %s/%s/%s",
			r.ConselheiroID, r.Seed, r.ListaHash, esperado.Selecionado, esperado.Seed, esperado.ListaHash)
	}
	if r.TotalElegiveis != 5 || r.Degrau != uc || len(r.Cadeia) != 1 || r.Cadeia[0] != uc {
		t.Errorf("total/degrau/cadeia = %d/%s/%v", r.TotalElegiveis, r.Degrau, r.Cadeia)
	}
	aud := a.Auditoria(r.EventIDSorteio)
	if aud.Base != atribuicaotest.BaseFixa || aud.BaseFallback || aud.BaseSequence == nil || *aud.BaseSequence != atribuicaotest.SeqFixa ||
		aud.TimestampSorteio != T || aud.Excluido != nil {
		t.Errorf("audit base/fallback/sequence/T/excluido = %q/%v/%v/%q/%v", aud.Base, aud.BaseFallback, aud.BaseSequence, aud.TimestampSorteio, aud.Excluido)
	}
	if !slices.Equal(aud.Ordenados, esperado.Ordenados) || !slices.Equal(aud.ElegiveisEntrada, esperado.Entrada) {
		t.Errorf("audit lists %v / %v, want %v / %v", aud.ElegiveisEntrada, aud.Ordenados, esperado.Entrada, esperado.Ordenados)
	}
	if _, achou := a.Pendente(p.DemandaID); achou {
		t.Error("a successful draw left the demand pending")
	}
	if n := len(a.Outbox("sorteio.sem_candidatos", "")); n != 0 {
		t.Errorf("%d sorteio.sem_candidatos queued by a successful draw", n)
	}
	if n := a.Contar(`SELECT count(*) FROM d6a.atribuicoes WHERE status = 'ativa'`); n != 1 {
		t.Errorf("%d active assignments, want 1", n)
	}
	// The other four stay available.
	for _, id := range todos {
		if id != r.ConselheiroID && a.LinhaConselheiro(id).Status != elegibilidade.Disponivel {
			t.Errorf("counsellor %s not drawn but %s", id, a.LinhaConselheiro(id).Status)
		}
	}
}

// CONTRACT §4: there is no fallback base. When the bus's latest message is
// unknown the draw fails (its event is retried) and writes nothing; once the
// bus answers, the same demand is drawn on the bus's base.
func TestSemBaseNaoHaSorteio(t *testing.T) {
	t.Parallel()
	b := &atribuicaotest.BarramentoAlternavel{}
	a := atribuicaotest.Novo(t, b)
	uc := a.UC(uuid.Nil)
	x, y := a.Conselheiro(uc), a.Conselheiro(uc)
	p := atribuicaotest.Pedido(uc)
	if _, err := a.Svc.Sortear(a.Ctx, p); !errors.Is(err, atribuicao.ErrBaseDesconhecida) {
		t.Fatalf("Sortear without a base: %v, want ErrBaseDesconhecida", err)
	}
	for _, id := range []uuid.UUID{x, y} {
		if st := a.LinhaConselheiro(id).Status; st != elegibilidade.Disponivel {
			t.Fatalf("counsellor %s is %s after a draw that could not run", id, st)
		}
	}
	if obs := a.Outbox("conselheiro.sorteado", ""); len(obs) != 0 {
		t.Fatalf("%d outbox rows after a draw that could not run", len(obs))
	}
	b.Ligar(atribuicaotest.BarramentoFixo{ID: atribuicaotest.BaseFixa, Seq: atribuicaotest.SeqFixa})
	r := a.SortearComSucesso(p)
	aud := a.Auditoria(r.EventIDSorteio)
	if aud.Base != atribuicaotest.BaseFixa || aud.BaseFallback || aud.BaseSequence == nil || *aud.BaseSequence != atribuicaotest.SeqFixa {
		t.Errorf("base %q fallback %v sequence %v; want %s, false, %d", aud.Base, aud.BaseFallback, aud.BaseSequence, atribuicaotest.BaseFixa, atribuicaotest.SeqFixa)
	}
}

// spec 4.3: the exact unit's step wins over its parent's.
func TestDegrauBairroVenceCidade(t *testing.T) {
	t.Parallel()
	a := atribuicaotest.Novo(t, nil)
	cidade := a.UC(uuid.Nil)
	bairro := a.UC(cidade)
	doBairro := a.Conselheiro(bairro)
	a.Conselheiro(cidade)
	a.Conselheiro(cidade)

	r := a.SortearComSucesso(atribuicaotest.Pedido(bairro))
	if r.ConselheiroID != doBairro || r.Degrau != bairro || r.TotalElegiveis != 1 {
		t.Errorf("winner %s at step %s (total %d), want the neighbourhood's %s at %s (total 1)",
			r.ConselheiroID, r.Degrau, r.TotalElegiveis, doBairro, bairro)
	}
	if !slices.Equal(uuidsTexto(r.Cadeia), []string{bairro.String(), cidade.String()}) {
		t.Errorf("cadeia = %v, want [bairro cidade]", r.Cadeia)
	}
	if e := entradaAuditada(a, r); !slices.Equal(e, ids(doBairro)) {
		t.Errorf("audited input %v: the city's counsellors must not take part", e)
	}
}

// spec 4.3: a neighbourhood with nobody is served by the city, and the
// chain climbs as far as core.uc_polygons goes (estado > cidade > bairro).
func TestDegrauCidadeAtendeBairroSemConselheiros(t *testing.T) {
	t.Parallel()
	a := atribuicaotest.Novo(t, nil)
	estado := a.UC(uuid.Nil)
	cidade := a.UC(estado)
	bairro := a.UC(cidade)
	outroBairro := a.UC(cidade)
	a.Conselheiro(outroBairro) // a sibling never serves
	a.Conselheiro(estado)
	c1, c2 := a.Conselheiro(cidade), a.Conselheiro(cidade)
	a.Conselheiro(cidade, atribuicaotest.SemCapacitacao)

	r := a.SortearComSucesso(atribuicaotest.Pedido(bairro))
	if r.Degrau != cidade || r.TotalElegiveis != 2 || (r.ConselheiroID != c1 && r.ConselheiroID != c2) {
		t.Errorf("winner %s at step %s (total %d), want one of the city's two", r.ConselheiroID, r.Degrau, r.TotalElegiveis)
	}
	if !slices.Equal(uuidsTexto(r.Cadeia), []string{bairro.String(), cidade.String(), estado.String()}) {
		t.Errorf("cadeia = %v, want [bairro cidade estado]", r.Cadeia)
	}
	if e := entradaAuditada(a, r); !slices.Equal(e, ids(c1, c2)) {
		t.Errorf("audited input %v, want the city's two trained counsellors", e)
	}

	// City exhausted: the next demand of the neighbourhood climbs to the state.
	r2 := a.SortearComSucesso(atribuicaotest.Pedido(bairro))
	if r2.Degrau != cidade {
		t.Fatalf("second draw at %s, want the city's remaining counsellor", r2.Degrau)
	}
	r3 := a.SortearComSucesso(atribuicaotest.Pedido(bairro))
	if r3.Degrau != estado || r3.TotalElegiveis != 1 {
		t.Errorf("third draw at %s (total %d), want the state's", r3.Degrau, r3.TotalElegiveis)
	}
}

// A unit missing from core.uc_polygons is its own chain (spec 4.3).
func TestDegrauUCForaDaHierarquia(t *testing.T) {
	t.Parallel()
	a := atribuicaotest.Novo(t, nil)
	a.UC(uuid.Nil) // the table is not empty
	solta := uuid.New()
	c := a.Conselheiro(solta)
	r := a.SortearComSucesso(atribuicaotest.Pedido(solta))
	if r.ConselheiroID != c || len(r.Cadeia) != 1 || r.Cadeia[0] != solta {
		t.Errorf("winner %s, cadeia %v; want %s, [%s]", r.ConselheiroID, r.Cadeia, c, solta)
	}
}

// Each per-step exclusion of spec 4.3, next to one eligible counsellor:
// the excluded one never enters the audited input.
func TestExclusoes(t *testing.T) {
	t.Parallel()
	casos := []struct {
		nome  string
		opts  []atribuicaotest.ConselheiroOpcao
		exclu bool // exclude it through Pedido.Excluir instead
	}{
		{nome: "sem_capacitacao", opts: []atribuicaotest.ConselheiroOpcao{atribuicaotest.SemCapacitacao}},
		{nome: "suspensao_vigente", opts: []atribuicaotest.ConselheiroOpcao{atribuicaotest.SuspensoAte(atribuicaotest.NovoRelogio().Now().Add(30 * 24 * time.Hour))}},
		{nome: "suspensao_vigente_status_disponivel", opts: []atribuicaotest.ConselheiroOpcao{
			atribuicaotest.SuspensoAte(atribuicaotest.NovoRelogio().Now().Add(time.Hour)), atribuicaotest.ComStatus(elegibilidade.Disponivel)}},
		{nome: "atribuicao_ativa", opts: []atribuicaotest.ConselheiroOpcao{atribuicaotest.ComAtribuicaoAtiva}},
		{nome: "atribuicao_ativa_status_disponivel", opts: []atribuicaotest.ConselheiroOpcao{atribuicaotest.ComAtribuicaoAtiva, atribuicaotest.ComStatus(elegibilidade.Disponivel)}},
		{nome: "inativo", opts: []atribuicaotest.ConselheiroOpcao{atribuicaotest.ComStatus(elegibilidade.Inativo)}},
		{nome: "recusante", exclu: true},
	}
	for _, c := range casos {
		t.Run(c.nome, func(t *testing.T) {
			t.Parallel()
			a := atribuicaotest.Novo(t, nil)
			uc := a.UC(uuid.Nil)
			excluido := a.Conselheiro(uc, c.opts...)
			elegivel := a.Conselheiro(uc)
			p := atribuicaotest.Pedido(uc)
			if c.exclu {
				p.Excluir = &excluido
			}
			r := a.SortearComSucesso(p)
			if r.ConselheiroID != elegivel || r.TotalElegiveis != 1 {
				t.Errorf("winner %s of %d, want %s of 1", r.ConselheiroID, r.TotalElegiveis, elegivel)
			}
			if e := entradaAuditada(a, r); !slices.Equal(e, ids(elegivel)) {
				t.Errorf("audited input %v contains the excluded counsellor %s", e, excluido)
			}
		})
	}
}

// T27: 3 available, one of them holding an active assignment → the filter
// returns 2 and the draw uses only those 2.
func TestT27_FiltroExcluiAtribuicaoAtiva(t *testing.T) {
	t.Parallel()
	a := atribuicaotest.Novo(t, nil)
	uc := a.UC(uuid.Nil)
	livre1 := a.Conselheiro(uc)
	livre2 := a.Conselheiro(uc)
	// Still reads disponivel, but holds an active assignment (spec 4.3
	// counts assignments, not the status column).
	ocupado := a.Conselheiro(uc, atribuicaotest.ComAtribuicaoAtiva, atribuicaotest.ComStatus(elegibilidade.Disponivel))

	r := a.SortearComSucesso(atribuicaotest.Pedido(uc))
	if r.TotalElegiveis != 2 {
		t.Errorf("total_elegiveis = %d, want 2", r.TotalElegiveis)
	}
	if r.ConselheiroID == ocupado {
		t.Error("drawn a counsellor holding an active assignment")
	}
	if e := entradaAuditada(a, r); !slices.Equal(e, ids(livre1, livre2)) {
		t.Errorf("audited input %v, want the two free ones", e)
	}
	if n := a.Contar(`SELECT count(*) FROM d6a.atribuicoes WHERE conselheiro_id = $1 AND status = 'ativa'`, ocupado); n != 1 {
		t.Errorf("the occupied counsellor has %d active assignments", n)
	}
}

// T18: a suspension whose date has passed does not exclude, even while the
// row still reads `suspenso` (CONTRACT §5).
func TestT18_SuspensaoVencidaAceita(t *testing.T) {
	t.Parallel()
	a := atribuicaotest.Novo(t, nil)
	uc := a.UC(uuid.Nil)
	vencido := a.Conselheiro(uc, atribuicaotest.SuspensoAte(a.Clk.Now().Add(-time.Hour)))
	if s := a.LinhaConselheiro(vencido).Status; s != elegibilidade.Suspenso {
		t.Fatalf("setup: status %q", s)
	}
	r := a.SortearComSucesso(atribuicaotest.Pedido(uc))
	if r.ConselheiroID != vencido || r.TotalElegiveis != 1 {
		t.Errorf("winner %s of %d, want the expired suspension %s", r.ConselheiroID, r.TotalElegiveis, vencido)
	}

	// The same counsellor with the suspension still running is not drawn,
	// and becomes eligible once the injected clock passes the date.
	b := atribuicaotest.Novo(t, nil)
	uc2 := b.UC(uuid.Nil)
	s := b.Conselheiro(uc2, atribuicaotest.SuspensoAte(b.Clk.Now().Add(time.Hour)))
	p := atribuicaotest.Pedido(uc2)
	if r := b.Sortear(p); r.Sucesso || r.Motivo != elegibilidade.TodosInativos {
		t.Fatalf("current suspension drawn: %+v", r)
	}
	b.Clk.Avancar(time.Hour + time.Second)
	if r := b.SortearComSucesso(p); r.ConselheiroID != s {
		t.Errorf("after the date: winner %s, want %s", r.ConselheiroID, s)
	}
}

// semCandidatos checks a failed draw's trace: the demand pending with its
// snapshot and attempt count, exactly one sorteio.sem_candidatos for its
// correlacao_id (queued by the first failure, so it names the first
// failure's motive), no active assignment and no audit of a draw that did
// not happen.
func semCandidatos(a *atribuicaotest.Ambiente, p atribuicao.Pedido, r atribuicao.Resultado, motivo string, tentativas int32) {
	t := a.T
	t.Helper()
	if r.Sucesso || r.Motivo != motivo {
		t.Fatalf("result %+v, want failure %q", r, motivo)
	}
	pend, achou := a.Pendente(p.DemandaID)
	if !achou {
		t.Fatal("demand not in d6a.fila_pendentes")
	}
	if pend.UC != p.UC || pend.Demanda.ScoreFinal != p.Dados.ScoreFinal || pend.Demanda.CategoriaID != p.Dados.CategoriaID ||
		pend.Demanda.NivelPrecedencia != p.Dados.NivelPrecedencia || !atribuicaotest.MesmoUUID(pend.Demanda.GrupoID, p.Dados.GrupoID) ||
		pend.EventIDOrigem != p.Dados.EventIDOrigem || pend.Tentativas != tentativas {
		t.Errorf("pending row %+v does not keep the demand %+v (tentativas want %d)", pend, p, tentativas)
	}
	obs := a.Outbox("sorteio.sem_candidatos", p.Dados.CorrelacaoID)
	if len(obs) != 1 {
		t.Fatalf("%d sorteio.sem_candidatos queued for correlacao_id %s, want exactly 1", len(obs), p.Dados.CorrelacaoID)
	}
	_, pl := atribuicaotest.EnvelopePublicado(t, obs[0], "sorteio.sem_candidatos")
	want := map[string]any{
		"demanda_id": p.DemandaID.String(), "unidade_civica_id": p.UC.String(), "total_elegiveis": float64(0),
	}
	if tentativas == 1 {
		want["motivo"] = motivo
	}
	if len(pl) != 5 {
		t.Errorf("payload %v: want 5 fields", pl)
	}
	for k, v := range want {
		if pl[k] != v {
			t.Errorf("payload.%s = %v, want %v", k, pl[k], v)
		}
	}
	if ts, _ := pl["timestamp"].(string); ts == "" {
		t.Error("payload.timestamp missing")
	}
	if n := a.Contar(`SELECT count(*) FROM d6a.atribuicoes WHERE demanda_id = $1 AND status = 'ativa'`, p.DemandaID); n != 0 {
		t.Errorf("%d active assignments after a failed draw", n)
	}
	if n, m := a.Contar(`SELECT count(*) FROM d6a.auditoria_sorteios WHERE demanda_id = $1`, p.DemandaID),
		a.Contar(`SELECT count(*) FROM d6a.atribuicoes WHERE demanda_id = $1`, p.DemandaID); n != m {
		t.Errorf("%d audit rows for %d assignments of the demand", n, m)
	}
}

// T6: nobody registered on the whole chain.
func TestT6_SemCandidatosNenhumCadastrado(t *testing.T) {
	t.Parallel()
	a := atribuicaotest.Novo(t, nil)
	cidade := a.UC(uuid.Nil)
	bairro := a.UC(cidade)
	a.Conselheiro(a.UC(cidade)) // a sibling neighbourhood's does not count
	p := atribuicaotest.Pedido(bairro)
	semCandidatos(a, p, a.Sortear(p), elegibilidade.NenhumCadastrado, 1)
}

// T7: everyone on the chain holds an active assignment.
func TestT7_SemCandidatosTodosOcupados(t *testing.T) {
	t.Parallel()
	a := atribuicaotest.Novo(t, nil)
	cidade := a.UC(uuid.Nil)
	bairro := a.UC(cidade)
	a.Conselheiro(bairro, atribuicaotest.ComAtribuicaoAtiva)
	a.Conselheiro(cidade, atribuicaotest.ComAtribuicaoAtiva)
	p := atribuicaotest.Pedido(bairro)
	semCandidatos(a, p, a.Sortear(p), elegibilidade.TodosOcupados, 1)

	// Busy through this service's own draws: the same motive.
	b := atribuicaotest.Novo(t, nil)
	uc := b.UC(uuid.Nil)
	b.Conselheiro(uc)
	b.SortearComSucesso(atribuicaotest.Pedido(uc))
	p2 := atribuicaotest.Pedido(uc)
	semCandidatos(b, p2, b.Sortear(p2), elegibilidade.TodosOcupados, 1)
}

// T8: counsellors exist but are suspended, untrained or inactive.
func TestT8_SemCandidatosTodosInativos(t *testing.T) {
	t.Parallel()
	a := atribuicaotest.Novo(t, nil)
	cidade := a.UC(uuid.Nil)
	bairro := a.UC(cidade)
	a.Conselheiro(bairro, atribuicaotest.SuspensoAte(a.Clk.Now().Add(10*24*time.Hour)))
	a.Conselheiro(cidade, atribuicaotest.SemCapacitacao)
	a.Conselheiro(cidade, atribuicaotest.ComStatus(elegibilidade.Inativo))
	a.Conselheiro(cidade, atribuicaotest.ComAtribuicaoAtiva) // one busy among inactive: still todos_inativos
	p := atribuicaotest.Pedido(bairro)
	semCandidatos(a, p, a.Sortear(p), elegibilidade.TodosInativos, 1)

	// The refuser excluded and nobody else: todos_inativos too.
	b := atribuicaotest.Novo(t, nil)
	uc := b.UC(uuid.Nil)
	unico := b.Conselheiro(uc)
	p2 := atribuicaotest.Pedido(uc)
	p2.Excluir = &unico
	semCandidatos(b, p2, b.Sortear(p2), elegibilidade.TodosInativos, 1)
}

// T35 and the spec 5.4 guard: each failed draw of the same demand counts
// one attempt, exactly once; only the first queues sorteio.sem_candidatos
// for its correlacao_id.
func TestT35_GuardaSemCandidatosETentativas(t *testing.T) {
	t.Parallel()
	a := atribuicaotest.Novo(t, nil)
	uc := a.UC(uuid.Nil)
	p := atribuicaotest.Pedido(uc)
	semCandidatos(a, p, a.Sortear(p), elegibilidade.NenhumCadastrado, 1)
	a.Clk.Avancar(time.Minute)
	a.Conselheiro(uc, atribuicaotest.ComAtribuicaoAtiva) // the motive changes, the guard holds
	semCandidatos(a, p, a.Sortear(p), elegibilidade.TodosOcupados, 2)
	obs := a.Outbox("sorteio.sem_candidatos", p.Dados.CorrelacaoID)
	var env struct {
		Payload struct {
			Motivo string `json:"motivo"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(obs[0].Envelope, &env); err != nil || env.Payload.Motivo != elegibilidade.NenhumCadastrado {
		t.Errorf("the queued event changed: %s (%v)", obs[0].Envelope, err)
	}
	semCandidatos(a, p, a.Sortear(p), elegibilidade.TodosOcupados, 3)
	if n := a.Contar(`SELECT count(*) FROM d6a.fila_pendentes`); n != 1 {
		t.Errorf("%d pending rows for one demand", n)
	}
	// Another demand has its own correlation and gets its own event.
	p2 := atribuicaotest.Pedido(uc)
	semCandidatos(a, p2, a.Sortear(p2), elegibilidade.TodosOcupados, 1)
	if n := len(a.Outbox("sorteio.sem_candidatos", "")); n != 2 {
		t.Errorf("%d sorteio.sem_candidatos in total, want 2", n)
	}
}

// T22-like: three counsellors, four demands in a row: three distinct
// winners, then todos_ocupados; each draw verifies.
func TestSorteiosSucessivosNuncaRepetemConselheiro(t *testing.T) {
	t.Parallel()
	a := atribuicaotest.Novo(t, nil)
	uc := a.UC(uuid.Nil)
	todos := []uuid.UUID{a.Conselheiro(uc), a.Conselheiro(uc), a.Conselheiro(uc)}
	vistos := map[uuid.UUID]bool{}
	for i := range 3 {
		a.Clk.Avancar(1500 * time.Microsecond) // a new T each time
		r := a.SortearComSucesso(atribuicaotest.Pedido(uc))
		if vistos[r.ConselheiroID] {
			t.Fatalf("counsellor %s drawn twice", r.ConselheiroID)
		}
		vistos[r.ConselheiroID] = true
		if r.TotalElegiveis != 3-i {
			t.Errorf("draw %d: total_elegiveis %d, want %d", i, r.TotalElegiveis, 3-i)
		}
	}
	for _, id := range todos {
		if !vistos[id] {
			t.Errorf("counsellor %s never drawn", id)
		}
	}
	p := atribuicaotest.Pedido(uc)
	semCandidatos(a, p, a.Sortear(p), elegibilidade.TodosOcupados, 1)
}

// recusar hands the service a conselheiro.atribuicao_recusada of p's demand
// by conselheiro, through the real handler (spec 3.12).
func recusar(a *atribuicaotest.Ambiente, p atribuicao.Pedido, conselheiro uuid.UUID) uuid.UUID {
	a.T.Helper()
	return recusarPor(a, p, conselheiro, "recusa_explicita")
}

// recusarPor is recusar with the refusal's motive.
func recusarPor(a *atribuicaotest.Ambiente, p atribuicao.Pedido, conselheiro uuid.UUID, motivo string) uuid.UUID {
	a.T.Helper()
	id := uuid.New()
	data := fmt.Sprintf(`{"event_id":%q,"tipo":"conselheiro.atribuicao_recusada","origem":"D-6b","versao_schema":"1.1.0",
		"correlacao_id":%q,"timestamp":"2026-11-29T15:00:00.000Z",
		"payload":{"conselheiro_id":%q,"demanda_id":%q,"unidade_civica_id":%q,"motivo":%q}}`,
		id, p.Dados.CorrelacaoID, conselheiro, p.DemandaID, p.UC, motivo)
	ev, err := evento.Decodificar(evento.AtribuicaoRecusada, []byte(data))
	if err != nil {
		a.T.Fatal(err)
	}
	a.Clk.Avancar(time.Second)
	if err := a.Svc.Handle(a.Ctx, ev, 100); err != nil {
		a.T.Fatalf("Handle: %v", err)
	}
	return id
}

// T34: the re-draw after a refusal with nobody left keeps the refused
// assignment's snapshot in the pending queue, not placeholders.
func TestT34_ResorteioSemElegiveisMantemSnapshot(t *testing.T) {
	t.Parallel()
	a := atribuicaotest.Novo(t, nil)
	uc := a.UC(uuid.Nil)
	a.Conselheiro(uc)
	p := atribuicaotest.Pedido(uc)
	r := a.SortearComSucesso(p)
	p.Dados.EventIDOrigem = recusar(a, p, r.ConselheiroID)
	// The refuser is excluded from its own re-draw: todos_inativos, and the
	// pending row carries the original demand's snapshot (attempt 1); its
	// origin is the refusal. The re-draw's result is what the service did:
	// an active assignment or not, and the motive it published.
	_, ativa, err := a.St.Read().AtribuicaoAtivaDaDemanda(a.Ctx, p.DemandaID)
	if err != nil {
		t.Fatal(err)
	}
	var motivo string
	if obs := a.Outbox("sorteio.sem_candidatos", p.Dados.CorrelacaoID); len(obs) == 1 {
		_, pl := atribuicaotest.EnvelopePublicado(t, obs[0], "sorteio.sem_candidatos")
		motivo, _ = pl["motivo"].(string)
	}
	semCandidatos(a, p, atribuicao.Resultado{Sucesso: ativa, Motivo: motivo}, elegibilidade.TodosInativos, 1)
}

// spec 3.12 step 5 through the handler: the re-draw excludes the refuser,
// audits it as excluido, and carries the snapshot to the new assignment.
func TestResorteioAposRecusaExcluiRecusante(t *testing.T) {
	t.Parallel()
	a := atribuicaotest.Novo(t, nil)
	uc := a.UC(uuid.Nil)
	x, y := a.Conselheiro(uc), a.Conselheiro(uc)
	p := atribuicaotest.Pedido(uc)
	r := a.SortearComSucesso(p)
	outro := x
	if r.ConselheiroID == x {
		outro = y
	}
	recusar(a, p, r.ConselheiroID)
	ativa, achou, err := a.St.Read().AtribuicaoAtivaDaDemanda(a.Ctx, p.DemandaID)
	if err != nil || !achou {
		t.Fatalf("no active assignment after the re-draw: %v", err)
	}
	at := a.Atribuicao(ativa.EventIDSorteio)
	if at.ConselheiroID != outro || at.TotalElegiveis != 1 {
		t.Errorf("re-draw gave %s of %d, want %s of 1", at.ConselheiroID, at.TotalElegiveis, outro)
	}
	excl := r.ConselheiroID
	p2 := p
	p2.Excluir = &excl
	a.ConferirSorteio(p2, atribuicao.Resultado{
		Sucesso: true, ConselheiroID: at.ConselheiroID, EventIDSorteio: at.EventIDSorteio, Seed: at.SeedPublico,
		ListaHash: *at.ListaElegiveisHash, TotalElegiveis: 1, Degrau: uc, Cadeia: []uuid.UUID{uc},
	})
}

func uuidsTexto(us []uuid.UUID) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = u.String()
	}
	return out
}
