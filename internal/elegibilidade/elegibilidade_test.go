package elegibilidade

import (
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"
)

var agora = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func id(n byte) uuid.UUID { return uuid.UUID{15: n} }

var (
	bairro = id(100)
	cidade = id(101)
	cadeia = []uuid.UUID{bairro, cidade}
)

func disp(n byte, uc uuid.UUID) Candidato {
	return Candidato{ID: id(n), UC: uc, Status: Disponivel, Capacitacao: true}
}

func TestPrimeiroDegrauVence(t *testing.T) {
	r := Filtrar(cadeia, []Candidato{disp(3, cidade), disp(2, bairro), disp(1, bairro)}, nil, agora)
	if r.Degrau != bairro || len(r.Elegiveis) != 2 || r.Elegiveis[0] != id(1) || r.Elegiveis[1] != id(2) {
		t.Fatalf("%+v", r)
	}
}

func TestCidadeAtendeBairroVazio(t *testing.T) {
	r := Filtrar(cadeia, []Candidato{disp(3, cidade)}, nil, agora)
	if r.Degrau != cidade || len(r.Elegiveis) != 1 {
		t.Fatalf("%+v", r)
	}
}

func TestExclusoes(t *testing.T) {
	ontem, amanha := agora.Add(-24*time.Hour), agora.Add(24*time.Hour)
	cases := []struct {
		name string
		c    Candidato
		ok   bool
	}{
		{"sem capacitação", Candidato{ID: id(1), UC: bairro, Status: Disponivel}, false},
		{"suspensão vigente", Candidato{ID: id(1), UC: bairro, Status: Suspenso, Capacitacao: true, SuspensaoAte: &amanha}, false},
		{"suspensão vencida (T18)", Candidato{ID: id(1), UC: bairro, Status: Suspenso, Capacitacao: true, SuspensaoAte: &ontem}, true},
		{"suspenso sem data", Candidato{ID: id(1), UC: bairro, Status: Suspenso, Capacitacao: true}, false},
		{"atribuição ativa", Candidato{ID: id(1), UC: bairro, Status: Disponivel, Capacitacao: true, Ocupado: true}, false},
		{"status ocupado", Candidato{ID: id(1), UC: bairro, Status: Ocupado, Capacitacao: true}, false},
		{"inativo", Candidato{ID: id(1), UC: bairro, Status: Inativo, Capacitacao: true}, false},
	}
	for _, tc := range cases {
		if got := Elegivel(tc.c, agora); got != tc.ok {
			t.Errorf("%s: Elegivel = %v, want %v", tc.name, got, tc.ok)
		}
	}
	excl := id(1)
	r := Filtrar(cadeia, []Candidato{disp(1, bairro)}, &excl, agora)
	if len(r.Elegiveis) != 0 || r.Motivo != TodosInativos {
		t.Fatalf("refuser not excluded: %+v", r)
	}
}

func TestMotivos(t *testing.T) {
	if m := Filtrar(cadeia, nil, nil, agora).Motivo; m != NenhumCadastrado {
		t.Errorf("T6: %s", m)
	}
	oc := disp(1, bairro)
	oc.Ocupado = true
	oc2 := disp(2, cidade)
	oc2.Ocupado = true
	if m := Filtrar(cadeia, []Candidato{oc, oc2}, nil, agora).Motivo; m != TodosOcupados {
		t.Errorf("T7: %s", m)
	}
	sem := disp(3, bairro)
	sem.Capacitacao = false
	if m := Filtrar(cadeia, []Candidato{oc, sem}, nil, agora).Motivo; m != TodosInativos {
		t.Errorf("T8: %s", m)
	}
}

func TestStatusEfetivo(t *testing.T) {
	ontem, amanha := agora.Add(-time.Hour), agora.Add(time.Hour)
	if StatusEfetivo(Suspenso, &ontem, agora) != Disponivel || StatusEfetivo(Suspenso, &amanha, agora) != Suspenso ||
		StatusEfetivo(Ocupado, nil, agora) != Ocupado {
		t.Fatal("StatusEfetivo")
	}
}

// Subir reads a step at a time and decides as Filtrar over the whole
// chain: it stops at the first step with someone eligible, climbs past a
// step whose counsellors are all ineligible, and counts the whole chain
// for the motive when nobody qualifies.
func TestSubirIgualAFiltrar(t *testing.T) {
	estado := id(102)
	cadeia := []uuid.UUID{bairro, cidade, estado}
	ontem := agora.Add(-time.Hour)
	ocupado := disp(1, bairro)
	ocupado.Ocupado = true
	vencido := Candidato{ID: id(4), UC: estado, Status: Suspenso, Capacitacao: true, SuspensaoAte: &ontem}
	casos := []struct {
		nome       string
		cands      []Candidato
		leituras   int
		degrau     uuid.UUID
		motivo     string
		vencidoSai bool
	}{
		{"bairro elegível", []Candidato{disp(2, bairro), disp(3, cidade)}, 1, bairro, "", false},
		{"bairro ocupado, cidade vazia, estado vencido", []Candidato{ocupado, vencido}, 2, estado, "", true},
		{"ninguém", []Candidato{ocupado}, 2, uuid.Nil, TodosOcupados, false},
		{"nenhum cadastrado", nil, 1, uuid.Nil, NenhumCadastrado, false},
	}
	for _, c := range casos {
		ler := func(desde int) (Degrau, error) {
			for i := desde; i < len(cadeia); i++ {
				var d Degrau
				for _, x := range c.cands {
					if x.UC == cadeia[i] {
						d.Candidatos = append(d.Candidatos, x)
					}
				}
				if len(d.Candidatos) > 0 {
					d.Posicao = i
					return d, nil
				}
			}
			return Degrau{Posicao: len(cadeia)}, nil
		}
		got, n, err := Subir(cadeia, nil, agora, ler)
		want := Filtrar(cadeia, c.cands, nil, agora)
		if err != nil || n != c.leituras || got.Degrau != c.degrau || got.Motivo != c.motivo || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Subir = %+v in %d reads (%v), Filtrar = %+v", c.nome, got, n, err, want)
		}
		if _, ok := got.Vencidos[vencido.ID]; ok != c.vencidoSai {
			t.Errorf("%s: Vencidos = %v", c.nome, got.Vencidos)
		}
		if c.motivo != "" && (got.Cadastrados != len(c.cands) || got.Ocupados != Ocupados(c.cands)) {
			t.Errorf("%s: counts %d/%d", c.nome, got.Cadastrados, got.Ocupados)
		}
	}
}

// The draw's input order is the ids' canonical text ascending (CONTRACT
// §4); Filtrar sorts by bytes, which must give the same order.
func TestElegiveisNaOrdemDoTexto(t *testing.T) {
	var cs []Candidato
	for range 500 {
		c := disp(0, bairro)
		c.ID = uuid.New()
		cs = append(cs, c)
	}
	r := Filtrar(cadeia, cs, nil, agora)
	if len(r.Elegiveis) != len(cs) {
		t.Fatalf("%d eligible, want %d", len(r.Elegiveis), len(cs))
	}
	for i := 1; i < len(r.Elegiveis); i++ {
		if r.Elegiveis[i-1].String() >= r.Elegiveis[i].String() {
			t.Fatalf("position %d: %s before %s", i, r.Elegiveis[i-1], r.Elegiveis[i])
		}
	}
}
