package atribuicao_test

import (
	"slices"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/atribuicaotest"
	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/store"
)

// cenarioConcorrente is a city with three neighbourhoods: 10 counsellors in
// the city and 7/7/6 in the neighbourhoods (30, all eligible), and 50
// demands spread 17/17/16 over the neighbourhoods. Every pool overlaps on
// the city. Whatever the order of the draws, each neighbourhood's own
// counsellors go first and the 30 left-over demands exhaust the city, so
// exactly 30 draws succeed and 20 find everyone on their chain busy.
type cenarioConcorrente struct {
	cidade   uuid.UUID
	bairros  []uuid.UUID
	cadeia   map[uuid.UUID][]uuid.UUID // demand UC → chain
	ucDe     map[uuid.UUID]uuid.UUID   // counsellor → UC
	pedidos  []atribuicao.Pedido
	elegivel int
}

func novoCenarioConcorrente(a *atribuicaotest.Ambiente) *cenarioConcorrente {
	c := &cenarioConcorrente{cadeia: map[uuid.UUID][]uuid.UUID{}, ucDe: map[uuid.UUID]uuid.UUID{}}
	c.cidade = a.UC(uuid.Nil)
	for range 3 {
		b := a.UC(c.cidade)
		c.bairros = append(c.bairros, b)
		c.cadeia[b] = []uuid.UUID{b, c.cidade}
	}
	add := func(uc uuid.UUID, n int) {
		for range n {
			c.ucDe[a.Conselheiro(uc)] = uc
			c.elegivel++
		}
	}
	add(c.cidade, 10)
	add(c.bairros[0], 7)
	add(c.bairros[1], 7)
	add(c.bairros[2], 6)
	// Not eligible, on every unit: they must never be drawn.
	for _, uc := range append([]uuid.UUID{c.cidade}, c.bairros...) {
		c.ucDe[a.Conselheiro(uc, atribuicaotest.SemCapacitacao)] = uc
	}
	for i := range 50 {
		c.pedidos = append(c.pedidos, atribuicaotest.Pedido(c.bairros[i%3]))
	}
	return c
}

// disparar submits every request at once, each from its own goroutine,
// released together; servicos[i%len] serves request i.
func disparar(t *testing.T, a *atribuicaotest.Ambiente, servicos []*atribuicao.Servico, pedidos []atribuicao.Pedido) ([]atribuicao.Resultado, []error) {
	t.Helper()
	res := make([]atribuicao.Resultado, len(pedidos))
	errs := make([]error, len(pedidos))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, p := range pedidos {
		svc := servicos[i%len(servicos)]
		wg.Go(func() {
			<-start
			res[i], errs[i] = svc.Sortear(a.Ctx, p)
		})
	}
	close(start)
	wg.Wait()
	return res, errs
}

// conferirConcorrencia checks the invariants after the storm.
func (c *cenarioConcorrente) conferir(t *testing.T, a *atribuicaotest.Ambiente, res []atribuicao.Resultado, errs []error) {
	t.Helper()
	// The executor never even tries to break an invariant: no unique
	// violation, no error at all, comes back.
	violacoes := 0
	for i, err := range errs {
		if _, ok := store.UniqueViolation(err); ok {
			violacoes++
		}
		if err != nil {
			t.Errorf("Sortear %d: %v", i, err)
		}
	}
	if violacoes != 0 {
		t.Errorf("%d unique violations returned by Sortear", violacoes)
	}

	want := min(len(c.pedidos), c.elegivel)
	sucessos := 0
	vencedores := map[uuid.UUID]int{}
	for i, r := range res {
		p := c.pedidos[i]
		if !r.Sucesso {
			// Everyone trained on the chain is busy, the untrained are
			// not: spec 4.3 step 5 calls that todos_inativos.
			if errs[i] == nil && r.Motivo != elegibilidade.TodosInativos {
				t.Errorf("demand %d failed with %q, want todos_inativos", i, r.Motivo)
			}
			if _, achou := a.Pendente(p.DemandaID); !achou && errs[i] == nil {
				t.Errorf("failed demand %d not pending", i)
			}
			continue
		}
		sucessos++
		vencedores[r.ConselheiroID]++
		if uc, ok := c.ucDe[r.ConselheiroID]; !ok || uc != r.Degrau || !slices.Contains(c.cadeia[p.UC], uc) {
			t.Errorf("demand %d of %s drawn %s of %s at step %s: outside its chain", i, p.UC, r.ConselheiroID, uc, r.Degrau)
		}
		if _, achou := a.Pendente(p.DemandaID); achou {
			t.Errorf("drawn demand %d is pending", i)
		}
	}
	if sucessos != want {
		t.Errorf("%d draws succeeded, want min(%d, %d) = %d", sucessos, len(c.pedidos), c.elegivel, want)
	}
	for id, n := range vencedores {
		if n > 1 {
			t.Errorf("counsellor %s drawn %d times", id, n)
		}
	}

	// The database agrees.
	if n := a.Contar(`SELECT count(*) FROM (SELECT conselheiro_id FROM d6a.atribuicoes
		WHERE status = 'ativa' GROUP BY conselheiro_id HAVING count(*) > 1) d`); n != 0 {
		t.Errorf("%d counsellors with two active assignments", n)
	}
	if n := a.Contar(`SELECT count(*) FROM d6a.atribuicoes WHERE status = 'ativa'`); n != want {
		t.Errorf("%d active assignments, want %d", n, want)
	}
	if n := a.Contar(`SELECT count(*) FROM d6a.fila_pendentes`); n != len(c.pedidos)-want {
		t.Errorf("%d pending demands, want %d", n, len(c.pedidos)-want)
	}
	if n := a.Contar(`SELECT count(*) FROM d6a.fila_pendentes f JOIN d6a.atribuicoes a
		ON a.demanda_id = f.demanda_id AND a.status = 'ativa'`); n != 0 {
		t.Errorf("%d demands both pending and assigned", n)
	}
	if n := a.Contar(`SELECT count(*) FROM d6a.conselheiros c WHERE c.capacitacao_concluida
		AND (c.status <> 'ocupado' OR NOT EXISTS (SELECT 1 FROM d6a.atribuicoes a WHERE a.conselheiro_id = c.id AND a.status = 'ativa'))`); n != 0 {
		t.Errorf("%d eligible counsellors left free or occupied without an assignment", n)
	}
	if n := a.Contar(`SELECT count(*) FROM d6a.conselheiros WHERE NOT capacitacao_concluida AND status <> 'disponivel'`); n != 0 {
		t.Errorf("%d untrained counsellors drawn", n)
	}
	if n := len(a.Outbox("conselheiro.sorteado", "")); n != want {
		t.Errorf("%d conselheiro.sorteado queued, want %d", n, want)
	}
	if n := len(a.Outbox("sorteio.sem_candidatos", "")); n != len(c.pedidos)-want {
		t.Errorf("%d sorteio.sem_candidatos queued, want %d", n, len(c.pedidos)-want)
	}
	auds := a.Auditorias()
	if len(auds) != want {
		t.Errorf("%d audit rows, want %d", len(auds), want)
	}
	for _, aud := range auds {
		atribuicaotest.VerificarAuditoria(t, aud)
		at := a.Atribuicao(aud.EventIDSorteio)
		if at.ConselheiroID != aud.Selecionado || int(at.TotalElegiveis) != len(aud.ElegiveisEntrada) {
			t.Errorf("audit %s does not match its assignment", aud.EventIDSorteio)
		}
	}
}

// 50 draws at once on one service over overlapping pools.
func TestConcorrencia50SorteiosUmaInstancia(t *testing.T) {
	t.Parallel()
	a := atribuicaotest.Novo(t, nil)
	c := novoCenarioConcorrente(a)
	res, errs := disparar(t, a, []*atribuicao.Servico{a.Svc}, c.pedidos)
	c.conferir(t, a, res, errs)
}

// The same storm split over two services on two separate connection pools
// to the same database: two instances, serialized by the advisory lock.
func TestConcorrencia50SorteiosDuasInstancias(t *testing.T) {
	t.Parallel()
	a := atribuicaotest.Novo(t, nil)
	c := novoCenarioConcorrente(a)
	outra := a.NovoServico(atribuicaotest.AbrirStore(t, a.URL), nil)
	res, errs := disparar(t, a, []*atribuicao.Servico{a.Svc, outra}, c.pedidos)
	c.conferir(t, a, res, errs)
}
