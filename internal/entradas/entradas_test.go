package entradas

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/store"
)

// These tests run the handlers on memoria, Banco in memory: the decisions
// of spec 3.10–3.12 without PostgreSQL. The same handlers run on
// PostgreSQL in internal/atribuicao's and internal/colonia's tests.

var silencio = slog.New(slog.NewTextHandler(io.Discard, nil))

type cena struct {
	t *testing.T
	m *memoria
	u *unidade
	e *Entradas
}

func novaCena(t *testing.T, nRecusas int) *cena {
	m := novaMemoria()
	return &cena{t: t, m: m, e: New(arvore{}), u: &unidade{
		m: m, agora: time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC),
		par: atribuicao.Parametros{Versao: 3, NRecusasSuspensao: nRecusas, TSuspensaoDias: 7, TimeoutRespostaHoras: 48},
	}}
}

func (c *cena) aplicar(tipo evento.Tipo, payload any) uuid.UUID {
	c.t.Helper()
	ev := evento.Evento{Envelope: evento.Envelope{EventID: uuid.New(), Tipo: tipo}, Payload: payload}
	c.reaplicar(ev)
	return ev.EventID
}

func (c *cena) reaplicar(ev evento.Evento) {
	c.t.Helper()
	x := &aplicacao{b: c.m, u: c.u, hier: c.e.hier, ev: ev}
	if err := x.despachar(context.Background(), silencio); err != nil {
		c.t.Fatalf("%s: %v", ev.Tipo, err)
	}
}

func (c *cena) cadastrar(uc uuid.UUID) uuid.UUID {
	id := uuid.New()
	c.aplicar(evento.ConselheiroCadastrado, evento.ConselheiroCadastradoPayload{
		ConselheiroID: id, CidadaoID: id, UnidadeCivicaID: uc, NivelAtuacao: 1,
		Status: elegibilidade.Disponivel, CapacitacaoConcluida: true,
	})
	return id
}

func (c *cena) status(id uuid.UUID) string { return c.m.conselheiros[id].Status }

// Spec 3.12 step 4: refusals count until they exceed N_RECUSAS_SUSPENSAO of
// the version in force; the one that does suspends for T_SUSPENSAO_DIAS,
// recorded with that version. A refusal for personal risk neither counts
// nor suspends. Every refusal re-draws the demand without the refuser
// (step 5).
func TestRecusasAteASuspensao(t *testing.T) {
	c := novaCena(t, 2)
	uc := uuid.New()
	x := c.cadastrar(uc)

	recusar := func(motivo evento.MotivoRecusa) (demanda uuid.UUID) {
		t.Helper()
		demanda = uuid.New()
		c.aplicar(evento.AgendaItemDisponivel, evento.AgendaItemDisponivelPayload{DemandaID: demanda, UnidadeCivicaID: uc, CategoriaID: "C", NivelPrecedencia: 2, ScoreFinal: 10})
		if a, ok, _ := c.m.AtribuicaoAtivaDaDemanda(context.Background(), demanda); !ok || a.ConselheiroID != x {
			t.Fatalf("demand %s not drawn to the only counsellor: %+v, %v", demanda, a, ok)
		}
		c.aplicar(evento.AtribuicaoRecusada, evento.ConselheiroAtribuicaoRecusadaPayload{ConselheiroID: x, DemandaID: demanda, UnidadeCivicaID: uc, Motivo: motivo})
		redraw := c.u.pedidos[len(c.u.pedidos)-1]
		if redraw.DemandaID != demanda || redraw.Excluir == nil || *redraw.Excluir != x || redraw.Dados.CategoriaID != "C" || redraw.Dados.NivelPrecedencia != 2 {
			t.Fatalf("re-draw after the refusal = %+v, want demand %s from the snapshot without %s", redraw, demanda, x)
		}
		return demanda
	}

	recusar(evento.RecusaExplicita)
	recusar(evento.RiscoPessoal)
	recusar(evento.RecusaExplicita)
	if got := c.status(x); got != elegibilidade.Disponivel {
		t.Fatalf("after 2 counted refusals (limit 2): status %s, want disponivel", got)
	}
	if len(c.m.recusas) != 2 || len(c.m.suspensoes) != 0 {
		t.Fatalf("counted %d refusals, %d suspensions; want 2, 0 (personal risk does not count)", len(c.m.recusas), len(c.m.suspensoes))
	}
	recusar(evento.RecusaExplicita)
	if got := c.status(x); got != elegibilidade.Suspenso {
		t.Fatalf("after the 3rd counted refusal: status %s, want suspenso", got)
	}
	s := c.m.suspensoes[0]
	if s.Conselheiro != x || s.Consecutivas != 3 || s.VersaoParametros != 3 || !s.Ate.Equal(c.u.agora.Add(7*24*time.Hour)) {
		t.Fatalf("suspension %+v, want 3 refusals, version 3, until agora + 7 days", s)
	}
	if got := c.m.conselheiros[x].SuspensaoAte; got == nil || !got.Equal(s.Ate) {
		t.Fatalf("data_suspensao_ate %v, want %v", got, s.Ate)
	}
	if len(c.u.recusas) != 4 {
		t.Fatalf("%d refusals observed, want 4", len(c.u.recusas))
	}
}

// Spec 3.12 step 1, 3.13: a refusal delivered again changes nothing.
func TestRecusaReentregue(t *testing.T) {
	c := novaCena(t, 5)
	uc := uuid.New()
	x := c.cadastrar(uc)
	demanda := uuid.New()
	c.aplicar(evento.AgendaItemDisponivel, evento.AgendaItemDisponivelPayload{DemandaID: demanda, UnidadeCivicaID: uc, CategoriaID: "C"})
	ev := evento.Evento{Envelope: evento.Envelope{EventID: uuid.New(), Tipo: evento.AtribuicaoRecusada},
		Payload: evento.ConselheiroAtribuicaoRecusadaPayload{ConselheiroID: x, DemandaID: demanda, UnidadeCivicaID: uc, Motivo: evento.RecusaExplicita}}
	c.reaplicar(ev)
	pedidos, registros := len(c.u.pedidos), len(c.u.registros)
	c.reaplicar(ev)
	if len(c.m.recusas) != 1 || len(c.u.pedidos) != pedidos || len(c.u.registros) != registros {
		t.Fatalf("redelivery: %d refusals counted, %d→%d draws, %d→%d records; want 1 and nothing new",
			len(c.m.recusas), pedidos, len(c.u.pedidos), registros, len(c.u.registros))
	}
}

// Spec 3.11: the cycle's end closes the pair's assignment and frees the
// counsellor, unless another assignment of theirs is still active
// (ocupado iff an active assignment exists); its record says which.
func TestCicloConcluido(t *testing.T) {
	c := novaCena(t, 5)
	uc := uuid.New()
	x := c.cadastrar(uc)
	d1 := uuid.New()
	c.aplicar(evento.AgendaItemDisponivel, evento.AgendaItemDisponivelPayload{DemandaID: d1, UnidadeCivicaID: uc, CategoriaID: "C"})

	// A cycle of a demand x does not hold: x keeps d1 and stays ocupado.
	c.aplicar(evento.CicloConcluido, evento.ConselheiroCicloConcluidoPayload{ConselheiroID: x, DemandaID: uuid.New()})
	if got := c.status(x); got != elegibilidade.Ocupado {
		t.Fatalf("cycle of another demand: status %s, want ocupado", got)
	}
	// d1's cycle: concluded, disponivel.
	c.aplicar(evento.CicloConcluido, evento.ConselheiroCicloConcluidoPayload{ConselheiroID: x, DemandaID: d1})
	if got := c.status(x); got != elegibilidade.Disponivel {
		t.Fatalf("cycle of its demand: status %s, want disponivel", got)
	}
	if _, ativa, _ := c.m.AtribuicaoAtivaDaDemanda(context.Background(), d1); ativa {
		t.Fatal("d1 still active after its cycle")
	}
	var depois []string
	for _, r := range c.u.registros {
		if rr, ok := r.(registro.Entrada); ok && rr.Tipo == registro.TipoCicloConcluido {
			depois = append(depois, rr.Status)
		}
	}
	if len(depois) != 2 || depois[0] != elegibilidade.Ocupado || depois[1] != elegibilidade.Disponivel {
		t.Fatalf("cycle records' statuses %v, want [ocupado disponivel]", depois)
	}
}

// Spec 3.10 step 4 and 4.7: a registration sweeps its unit's queue, oldest
// first, and the demand drawn leaves the queue.
func TestCadastroVarreAFila(t *testing.T) {
	c := novaCena(t, 5)
	uc := uuid.New()
	antiga, nova := uuid.New(), uuid.New()
	c.m.fila = []store.Pendente{{DemandaID: antiga, UC: uc, Ordem: 1}, {DemandaID: nova, UC: uc, Ordem: 2}}
	x := c.cadastrar(uc)
	a, ok, _ := c.m.AtribuicaoAtivaDoConselheiro(context.Background(), x)
	if !ok || a.DemandaID != antiga {
		t.Fatalf("registration's sweep drew %+v (%v), want the oldest pending %s", a, ok, antiga)
	}
	if _, espera, _ := c.m.PendenteDaDemanda(context.Background(), antiga); espera {
		t.Fatal("the drawn demand is still pending")
	}
	if _, espera, _ := c.m.PendenteDaDemanda(context.Background(), nova); !espera {
		t.Fatal("the newer demand left the queue")
	}
}
