package store

import (
	"context"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/fila"
)

// LerDegrau reads the first step of cadeia at or above position desde that
// holds registered counsellors (BuscarDegrausCadastrados), as
// elegibilidade.Subir asks for it: rows, with the gates applied, never a
// decision.
func (q Tx) LerDegrau(ctx context.Context, cadeia []uuid.UUID, desde int, g elegibilidade.Portoes) (elegibilidade.Degrau, error) {
	resto := cadeia[desde:]
	rows, err := q.BuscarDegrausCadastrados(ctx, DegrausCadastradosParams{
		Ucs: resto, Inicios: []int32{0}, Tamanhos: []int32{int32(len(resto))},
		CapacitacaoExterna: g.CapacitacaoExterna, ExigirVinculo: g.ExigirVinculo,
	})
	if err != nil || len(rows) == 0 {
		return elegibilidade.Degrau{Posicao: len(cadeia)}, err
	}
	return DegrauDe(rows[0], cadeia, desde, g), nil
}

// DegrauDe is a row of BuscarDegrausCadastrados for the chain cadeia read
// from position desde, as elegibilidade.Subir takes it: each counsellor
// with the gates applied (elegibilidade.Portoes.Aplicar, as the replay
// does).
func DegrauDe(r DegrauCadastrado, cadeia []uuid.UUID, desde int, g elegibilidade.Portoes) elegibilidade.Degrau {
	pos := desde + int(r.Ordem) - 1
	if r.Ordem < 1 || pos >= len(cadeia) {
		return elegibilidade.Degrau{Posicao: len(cadeia)}
	}
	uc := cadeia[pos]
	n := len(r.Ids)
	if len(r.Status) != n || len(r.Capacitacao) != n || len(r.Ates) != n || len(r.Suspensos) != n ||
		len(r.Ocupados) != n || len(r.Externas) != n || len(r.Vinculos) != n {
		n = 0 // cannot happen: every array comes from one aggregate
	}
	d := elegibilidade.Degrau{Posicao: pos, Candidatos: make([]elegibilidade.Candidato, n)}
	for i := range n {
		c := elegibilidade.Candidato{ID: r.Ids[i], UC: uc, Status: r.Status[i], Ocupado: r.Ocupados[i]}
		if r.Suspensos[i] {
			ate := r.Ates[i]
			c.SuspensaoAte = &ate
		}
		f := elegibilidade.Fase2{Autodeclarada: r.Capacitacao[i], Externa: r.Externas[i]}
		if r.Vinculos[i] {
			f.Vinculos = map[uuid.UUID]bool{uc: true}
		}
		d.Candidatos[i] = g.Aplicar(c, f)
	}
	return d
}

// Espera is a pending row as fila.Devida takes it.
func Espera(p Pendente) fila.Espera {
	return fila.Espera{Demanda: p.DemandaID, UC: p.UnidadeCivicaID, Entrada: p.DataEntrada, Ordem: p.OrdemEntrada}
}
