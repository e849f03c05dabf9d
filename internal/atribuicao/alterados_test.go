package atribuicao_test

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/atribuicaotest"
	"github.com/formigueiro/d6a/internal/elegibilidade"
)

// chamadas records, in order, the post-commit hooks of the service.
type chamadas struct {
	mu sync.Mutex
	l  []string // "alterados:<id>,…" or "publicado"
}

func (c *chamadas) opcoes(o *atribuicao.Options) {
	o.Alterados = func(ids []uuid.UUID) {
		c.mu.Lock()
		defer c.mu.Unlock()
		s := "alterados:"
		for i, id := range ids {
			if i > 0 {
				s += ","
			}
			s += id.String()
		}
		c.l = append(c.l, s)
	}
	o.Publicado = func([]atribuicao.Saida) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.l = append(c.l, "publicado")
	}
}

func (c *chamadas) tomar() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.l
	c.l = nil
	return l
}

// The citizens a unit of work changed are handed to Options.Alterados
// (the situacao cache of this process) before Publicado wakes the relay:
// once a result is on the bus, this process no longer answers from before
// it.
func TestAlteradosAntesDePublicado(t *testing.T) {
	t.Parallel()
	var c chamadas
	a := atribuicaotest.NovoCom(t, nil, c.opcoes)
	uc, vazia := a.UC(uuid.Nil), a.UC(uuid.Nil)
	x := a.Conselheiro(uc)

	// A draw changes the winner.
	p := atribuicaotest.Pedido(uc)
	r := a.SortearComSucesso(p)
	if got, want := c.tomar(), []string{"alterados:" + x.String(), "publicado"}; !slices.Equal(got, want) {
		t.Fatalf("after a draw: %q, want %q", got, want)
	}

	// A refusal releases the refuser and re-draws: nobody else is left, so
	// the demand goes pending; the refuser changed.
	recusar(a, p, r.ConselheiroID)
	got := c.tomar()
	if len(got) != 2 || got[1] != "publicado" || !containsID(got[0], x) {
		t.Fatalf("after a refusal: %q, want the refuser in alterados, then publicado", got)
	}

	// A draw with no candidates changes no counsellor.
	p2 := atribuicaotest.Pedido(vazia)
	semCandidatos(a, p2, a.Sortear(p2), elegibilidade.NenhumCadastrado, 1)
	if got := c.tomar(); !slices.Equal(got, []string{"publicado"}) {
		t.Fatalf("after a draw without candidates: %q, want only publicado", got)
	}
}

func containsID(s string, id uuid.UUID) bool {
	ids, ok := strings.CutPrefix(s, "alterados:")
	return ok && slices.Contains(strings.Split(ids, ","), id.String())
}
