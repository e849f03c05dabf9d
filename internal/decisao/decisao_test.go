package decisao

import (
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
)

// mundo is the state Passo reads, in memory, with each step's effects
// written back as the executor writes them to PostgreSQL. The same Passo
// runs there (internal/entradas) and in the replay (internal/replay).
type mundo struct {
	t         *testing.T
	agora     time.Time
	regras    *Regras
	c         map[uuid.UUID]*Conselheiro
	ativa     map[uuid.UUID]uuid.UUID
	recusas   map[uuid.UUID]int64
	aplicadas map[uuid.UUID]bool
}

func novoMundo(t *testing.T, nRecusas int) *mundo {
	return &mundo{t: t, agora: time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC),
		regras: &Regras{NRecusasSuspensao: nRecusas, TSuspensao: 7 * 24 * time.Hour},
		c:      map[uuid.UUID]*Conselheiro{}, ativa: map[uuid.UUID]uuid.UUID{},
		recusas: map[uuid.UUID]int64{}, aplicadas: map[uuid.UUID]bool{}}
}

func (m *mundo) visao(id uuid.UUID) Visao {
	var v Visao
	if c, ok := m.c[id]; ok {
		cc := *c
		v.Conselheiro = &cc
	}
	if d, ok := m.ativa[id]; ok {
		v.Ativa = &d
	}
	v.Recusas = m.recusas[id]
	return v
}

// passo runs the input evento of counsellor id and writes its effects.
func (m *mundo) passo(id, evento uuid.UUID, e Entrada) Efeitos {
	v := m.visao(id)
	v.Aplicada = m.aplicadas[evento]
	if e.Agora.IsZero() {
		e.Agora = m.agora
	}
	ef := Passo(v, e)
	if ef.Cadastrar {
		m.c[id] = &Conselheiro{}
	}
	if ef.Encerrar {
		delete(m.ativa, id)
	}
	if ef.Mudou {
		m.c[id].Status = ef.Status
	}
	if ef.SuspensoAte != nil {
		m.c[id].Status, m.c[id].Ate = elegibilidade.Suspenso, ef.SuspensoAte
	}
	if ef.Recusas > 0 {
		m.recusas[id] = ef.Recusas
	}
	m.aplicadas[evento] = true
	return ef
}

func (m *mundo) cadastrar() uuid.UUID {
	id := uuid.New()
	if ef := m.passo(id, uuid.New(), Entrada{Tipo: Cadastro, Status: elegibilidade.Disponivel}); !ef.Cadastrar || ef.Status != elegibilidade.Disponivel {
		m.t.Fatalf("registration: %+v, want a new disponivel counsellor", ef)
	}
	return id
}

// sortear is what a draw does to its winner (elegibilidade.StatusAposSorteio).
func (m *mundo) sortear(id uuid.UUID) uuid.UUID {
	d := uuid.New()
	m.ativa[id] = d
	m.c[id].Status = elegibilidade.Ocupado
	return d
}

// Spec 3.12 step 4: refusals count until they exceed N_RECUSAS_SUSPENSAO;
// the one that does suspends for T_SUSPENSAO_DIAS from now. A refusal for
// personal risk neither counts nor suspends. Every refusal closes the
// assignment, frees the refuser and re-draws the demand (step 5).
func TestRecusasAteASuspensao(t *testing.T) {
	m := novoMundo(t, 2)
	x := m.cadastrar()
	recusar := func(risco bool) Efeitos {
		t.Helper()
		d := m.sortear(x)
		ef := m.passo(x, uuid.New(), Entrada{Tipo: Recusa, Demanda: d, RiscoPessoal: risco, Regras: m.regras})
		if !ef.Encerrar || !ef.Resortear || !ef.Registrar || ef.Status != elegibilidade.Disponivel {
			t.Fatalf("refusal: %+v, want the assignment closed, the refuser disponivel in the record and a re-draw", ef)
		}
		return ef
	}
	if ef := recusar(false); ef.Recusas != 1 || ef.SuspensoAte != nil {
		t.Fatalf("1st refusal: %+v, want counted 1, no suspension", ef)
	}
	if ef := recusar(true); ef.Recusas != 0 {
		t.Fatalf("personal risk: counted %d, want not counted", ef.Recusas)
	}
	if ef := recusar(false); ef.Recusas != 2 || ef.SuspensoAte != nil || m.c[x].Status != elegibilidade.Disponivel {
		t.Fatalf("2nd counted refusal (limit 2): %+v, status %s; want no suspension", ef, m.c[x].Status)
	}
	ef := recusar(false)
	if ef.Recusas != 3 || ef.SuspensoAte == nil || !ef.SuspensoAte.Equal(m.agora.Add(7*24*time.Hour)) {
		t.Fatalf("3rd counted refusal: %+v, want a suspension until agora + 7 days", ef)
	}
	if m.c[x].Status != elegibilidade.Suspenso {
		t.Fatalf("after the suspension: status %s", m.c[x].Status)
	}
}

// Spec 3.12: a refusal of a demand the counsellor does not hold changes
// nothing (the handler only sweeps the unit); a suspended refuser is not
// released by it.
func TestRecusaSemAtribuicao(t *testing.T) {
	m := novoMundo(t, 0)
	x := m.cadastrar()
	d := m.sortear(x)
	if ef := m.passo(x, uuid.New(), Entrada{Tipo: Recusa, Demanda: uuid.New(), Regras: m.regras}); ef != (Efeitos{}) {
		t.Fatalf("refusal of another demand: %+v, want no effect", ef)
	}
	m.c[x].Status = elegibilidade.Suspenso
	if ef := m.passo(x, uuid.New(), Entrada{Tipo: Recusa, Demanda: d}); !ef.Encerrar || ef.Status != elegibilidade.Suspenso || ef.Mudou {
		t.Fatalf("refusal by a suspended counsellor: %+v, want closed, suspenso kept", ef)
	}
}

// Spec 3.13: an input delivered again changes nothing, whatever its kind.
func TestReentregaNaoMudaNada(t *testing.T) {
	m := novoMundo(t, 0)
	x := m.cadastrar()
	d := m.sortear(x)
	ev := uuid.New()
	if ef := m.passo(x, ev, Entrada{Tipo: Recusa, Demanda: d, Regras: m.regras}); ef.SuspensoAte == nil {
		t.Fatalf("first delivery: %+v, want a suspension (limit 0)", ef)
	}
	for tipo := Cadastro; tipo <= Liberacao; tipo++ {
		if ef := m.passo(x, ev, Entrada{Tipo: tipo, Demanda: d, Regras: m.regras}); ef != (Efeitos{}) {
			t.Fatalf("redelivery of kind %d: %+v, want no effect", tipo, ef)
		}
	}
}

// Spec 3.11: the cycle's end closes the pair's assignment and frees the
// counsellor, unless another assignment of theirs is still active
// (ocupado iff an active assignment exists); its record says which.
func TestCicloConcluido(t *testing.T) {
	m := novoMundo(t, 5)
	x := m.cadastrar()
	d := m.sortear(x)
	ef := m.passo(x, uuid.New(), Entrada{Tipo: CicloConcluido, Demanda: uuid.New()})
	if ef.Encerrar || !ef.OutraAtiva || ef.Status != elegibilidade.Ocupado || !ef.Registrar {
		t.Fatalf("cycle of another demand: %+v, want x kept ocupado with d", ef)
	}
	ef = m.passo(x, uuid.New(), Entrada{Tipo: CicloConcluido, Demanda: d})
	if !ef.Encerrar || ef.Status != elegibilidade.Disponivel || m.c[x].Status != elegibilidade.Disponivel {
		t.Fatalf("cycle of its demand: %+v, want closed and disponivel", ef)
	}
	m.c[x].Status = elegibilidade.Inativo
	if ef := m.passo(x, uuid.New(), Entrada{Tipo: CicloConcluido, Demanda: d}); ef.Status != elegibilidade.Inativo || ef.Mudou {
		t.Fatalf("cycle of an inactive counsellor: %+v, want inativo kept", ef)
	}
	if ef := m.passo(uuid.New(), uuid.New(), Entrada{Tipo: CicloConcluido, Demanda: d}); ef != (Efeitos{}) {
		t.Fatalf("cycle of an unknown counsellor: %+v, want no effect", ef)
	}
}

// Spec 4.6: a cycle end lifts a suspension only once its date has passed,
// and a lifted one has its end published.
func TestCicloDeSuspenso(t *testing.T) {
	m := novoMundo(t, 5)
	x := m.cadastrar()
	ate := m.agora.Add(time.Hour)
	m.c[x].Status, m.c[x].Ate = elegibilidade.Suspenso, &ate
	ef := m.passo(x, uuid.New(), Entrada{Tipo: CicloConcluido, Demanda: uuid.New()})
	if ef.Status != elegibilidade.Suspenso || ef.Mudou || !ef.Proibida || ef.FimDaSuspensao != nil {
		t.Fatalf("cycle before the suspension's end: %+v, want suspenso kept", ef)
	}
	ef = m.passo(x, uuid.New(), Entrada{Tipo: CicloConcluido, Demanda: uuid.New(), Agora: ate.Add(time.Second)})
	if ef.Status != elegibilidade.Disponivel || !ef.Mudou || ef.FimDaSuspensao == nil || !ef.FimDaSuspensao.Equal(ate) {
		t.Fatalf("cycle after the suspension's end: %+v, want disponivel and the end published", ef)
	}
}

// Spec 3.10: a registration's status is the event's inativo, else
// disponivel; a citizen registered before is a duplicate, left alone.
func TestCadastro(t *testing.T) {
	for _, c := range []struct{ evento, quer string }{
		{elegibilidade.Inativo, elegibilidade.Inativo},
		{elegibilidade.Disponivel, elegibilidade.Disponivel},
		{elegibilidade.Ocupado, elegibilidade.Disponivel},
	} {
		if ef := Passo(Visao{}, Entrada{Tipo: Cadastro, Status: c.evento}); !ef.Cadastrar || ef.Status != c.quer {
			t.Errorf("registration with status %q: %+v, want %s", c.evento, ef, c.quer)
		}
	}
	if ef := Passo(Visao{Conselheiro: &Conselheiro{Status: elegibilidade.Ocupado}}, Entrada{Tipo: Cadastro}); ef != (Efeitos{}) {
		t.Fatalf("duplicate registration: %+v, want no effect", ef)
	}
}

// Spec 3.12 step 4, 4.6: a suspension applies to a disponivel or suspended
// counsellor, never to an ocupado or inativo one.
func TestSuspensao(t *testing.T) {
	ate := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	for status, pode := range map[string]bool{elegibilidade.Disponivel: true, elegibilidade.Suspenso: true, elegibilidade.Ocupado: false, elegibilidade.Inativo: false} {
		ef := Passo(Visao{Conselheiro: &Conselheiro{Status: status}}, Entrada{Tipo: Suspensao, Ate: ate})
		if pode != (ef.SuspensoAte != nil && ef.Status == elegibilidade.Suspenso) || pode == ef.Proibida {
			t.Errorf("suspension from %s: %+v, allowed %v", status, ef, pode)
		}
	}
}

// Spec 4.6: the console moves into inativo only a counsellor without an
// active assignment, and out of it to suspenso while a suspension runs,
// else disponivel.
func TestConsole(t *testing.T) {
	agora := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	d := uuid.New()
	futuro, passado := agora.Add(time.Hour), agora.Add(-time.Hour)
	casos := []struct {
		nome string
		v    Visao
		tipo Tipo
		quer string // "" : refused
	}{
		{"inativar disponivel", Visao{Conselheiro: &Conselheiro{Status: elegibilidade.Disponivel}}, Inativacao, elegibilidade.Inativo},
		{"inativar ocupado", Visao{Conselheiro: &Conselheiro{Status: elegibilidade.Ocupado}, Ativa: &d}, Inativacao, ""},
		{"inativar com atribuição ativa", Visao{Conselheiro: &Conselheiro{Status: elegibilidade.Disponivel}, Ativa: &d}, Inativacao, ""},
		{"reativar durante a suspensão", Visao{Conselheiro: &Conselheiro{Status: elegibilidade.Inativo, Ate: &futuro}}, Reativacao, elegibilidade.Suspenso},
		{"reativar depois da suspensão", Visao{Conselheiro: &Conselheiro{Status: elegibilidade.Inativo, Ate: &passado}}, Reativacao, elegibilidade.Disponivel},
		{"reativar quem não está inativo", Visao{Conselheiro: &Conselheiro{Status: elegibilidade.Disponivel}}, Reativacao, ""},
	}
	for _, c := range casos {
		ef := Passo(c.v, Entrada{Tipo: c.tipo, Agora: agora})
		if c.quer == "" && (!ef.Proibida || ef.Mudou) || c.quer != "" && (ef.Status != c.quer || !ef.Mudou || !ef.Registrar) {
			t.Errorf("%s: %+v, want %q", c.nome, ef, c.quer)
		}
	}
}

// A record carries no time: where the outcome turns on whether the
// suspension had ended, the replay accepts either.
func TestPossiveis(t *testing.T) {
	ate := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	v := Visao{Conselheiro: &Conselheiro{Status: elegibilidade.Suspenso, Ate: &ate}}
	got := Possiveis(v, Entrada{Tipo: CicloConcluido, Demanda: uuid.New(), Agora: ate.Add(-time.Hour)})
	if !slices.Equal(got, []string{elegibilidade.Suspenso, elegibilidade.Disponivel}) {
		t.Fatalf("cycle of a suspended counsellor: %v, want suspenso or disponivel", got)
	}
	v.Conselheiro = &Conselheiro{Status: elegibilidade.Ocupado}
	if got := Possiveis(v, Entrada{Tipo: Recusa, Demanda: uuid.New()}); !slices.Equal(got, []string{""}) {
		t.Fatalf("refusal without the assignment: %v, want only no status", got)
	}
}
