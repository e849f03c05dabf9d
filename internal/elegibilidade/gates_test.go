package elegibilidade

import (
	"testing"

	"github.com/google/uuid"
)

// The phase-2 gates (CONTRACT §8): off, the MVP's rule; on, the external
// training record and a valid link at the unit of action.
func TestPortoes(t *testing.T) {
	desligados, ligados := Portoes{}, Portoes{CapacitacaoExterna: true, ExigirVinculo: true}
	autodeclarada := Fase2{Autodeclarada: true}
	casos := []struct {
		nome string
		p    Portoes
		f    Fase2
		uc   uuid.UUID
		fora string
	}{
		{"MVP: self-declared training", desligados, autodeclarada, bairro, ""},
		{"MVP: untrained", desligados, Fase2{}, bairro, ForaSemCapacitacao},
		{"MVP: external record sets the flag", desligados, Fase2{Externa: true}, bairro, ""},
		{"gate: self-declared is not enough", ligados, autodeclarada, bairro, ForaSemCapacitacao},
		{"gate: external, no link", ligados, Fase2{Externa: true}, bairro, ForaSemVinculo},
		{"gate: link to another unit", ligados, Fase2{Externa: true, Vinculos: map[uuid.UUID]bool{cidade: true}}, bairro, ForaSemVinculo},
		{"gate: valid link", ligados, Fase2{Externa: true, Vinculos: map[uuid.UUID]bool{bairro: true}}, bairro, ""},
		{"gate: revoked link", ligados, AposVinculo(Fase2{Externa: true, Vinculos: map[uuid.UUID]bool{bairro: true}}, bairro, false), bairro, ForaSemVinculo},
	}
	for _, c := range casos {
		if got := c.p.Fora(c.f, c.uc); got != c.fora {
			t.Errorf("%s: Fora = %q, want %q", c.nome, got, c.fora)
		}
		cand := c.p.Aplicar(Candidato{ID: id(1), UC: c.uc, Status: Disponivel}, c.f)
		if Elegivel(cand, agora) != (c.fora == "") {
			t.Errorf("%s: Elegivel = %v", c.nome, !(c.fora == ""))
		}
	}
	// A progression moves the unit of action and counts as a valid link.
	uc, f := AposProgressao(Fase2{Externa: true}, cidade)
	if uc != cidade || ligados.Fora(f, cidade) != "" {
		t.Fatalf("progression: %v %+v", uc, f)
	}
	// Filtrar with a gate: the revoked one is left out and the motive is
	// todos_inativos (registered, nobody busy).
	c := ligados.Aplicar(Candidato{ID: id(1), UC: bairro, Status: Disponivel}, Fase2{Externa: true})
	if r := Filtrar(cadeia, []Candidato{c}, nil, agora); len(r.Elegiveis) != 0 || r.Motivo != TodosInativos {
		t.Fatalf("%+v", r)
	}
	if !VarreApos(false) || VarreApos(true) {
		t.Fatal("VarreApos")
	}
}
