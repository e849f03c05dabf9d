package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// The external inputs of eligibility (CONTRACT §8): training records
// (d6a.capacitacoes), links to units (d6a.vinculos), units' criteria
// (d6a.criterios_uc) and the gates (d6a.regras_elegibilidade); and the
// reads that weigh the counsellors against them (the steps of a chain,
// the exclusions over units).

// Capacitacao is an external training record (capacitação.concluída).
type Capacitacao struct {
	Conselheiro uuid.UUID
	Curso       string
	ConcluidaEm string
	EventID     uuid.UUID
	Agora       time.Time
}

// AnotarCapacitacao stores an external training record, the latest
// winning.
func (t Tx) AnotarCapacitacao(ctx context.Context, c Capacitacao) error {
	return t.q.RegistrarCapacitacao(ctx, dbsqlc.RegistrarCapacitacaoParams{
		ConselheiroID: c.Conselheiro, CursoID: c.Curso, ConcluidaEm: c.ConcluidaEm, EventID: c.EventID, Agora: c.Agora,
	})
}

// CapacitadoExternamente reports whether an external training record of
// the counsellor exists.
func (t Tx) CapacitadoExternamente(ctx context.Context, conselheiro uuid.UUID) (bool, error) {
	return t.q.TemCapacitacaoExterna(ctx, conselheiro)
}

// Vinculo is a counsellor's link to a unit, valid or revoked
// (vínculo.validado, or granted by a progression).
type Vinculo struct {
	Conselheiro, UC uuid.UUID
	Valido          bool
	Origem          string
	ValidadoEm      *string
	EventID         uuid.UUID
	Agora           time.Time
}

// AnotarVinculo stores a link, the latest winning.
func (t Tx) AnotarVinculo(ctx context.Context, v Vinculo) error {
	return t.q.RegistrarVinculo(ctx, dbsqlc.RegistrarVinculoParams{
		ConselheiroID: v.Conselheiro, UnidadeCivicaID: v.UC, Valido: v.Valido, Origem: v.Origem,
		ValidadoEm: v.ValidadoEm, EventID: v.EventID, Agora: v.Agora,
	})
}

// AnotarCriterios stores a unit's criteria version (spec 4.9).
func (t Tx) AnotarCriterios(ctx context.Context, uc uuid.UUID, versao string, eventID uuid.UUID, agora time.Time) error {
	return t.q.RegistrarCriterios(ctx, dbsqlc.RegistrarCriteriosParams{
		UnidadeCivicaID: uc, VersaoParametros: versao, EventID: eventID, Agora: agora,
	})
}

// PortoesRegistrados reads the latest recorded gates and their version;
// achou is false when none was ever recorded.
func (t Tx) PortoesRegistrados(ctx context.Context) (versao int32, g elegibilidade.Portoes, achou bool, err error) {
	r, err := t.q.RegrasVigentes(ctx)
	if achou, err = Found(err); !achou || err != nil {
		return 0, g, false, err
	}
	return r.Versao, elegibilidade.Portoes{CapacitacaoExterna: r.CapacitacaoExterna, ExigirVinculo: r.ExigirVinculo}, true, nil
}

// RegistrarPortoes records a new version of the gates.
func (t Tx) RegistrarPortoes(ctx context.Context, g elegibilidade.Portoes, eventID uuid.UUID, agora time.Time) error {
	return t.q.InserirRegras(ctx, dbsqlc.InserirRegrasParams{
		CapacitacaoExterna: g.CapacitacaoExterna, ExigirVinculo: g.ExigirVinculo, EventID: eventID, Agora: agora,
	})
}

// PedidoDegrau asks for the first step of Cadeia at or above position
// Desde that holds registered counsellors.
type PedidoDegrau struct {
	Cadeia []uuid.UUID
	Desde  int
}

// LerDegraus reads, in one statement, the step each pedido asks for, as
// elegibilidade.Subir takes it: rows with the gates applied
// (elegibilidade.Portoes.Aplicar, as the replay does), never a decision.
// A chain with nobody registered from Desde up reads as the step past its
// top (Posicao len(Cadeia)).
func (t Tx) LerDegraus(ctx context.Context, pedidos []PedidoDegrau, g elegibilidade.Portoes) ([]elegibilidade.Degrau, error) {
	p := dbsqlc.BuscarDegrausCadastradosParams{CapacitacaoExterna: g.CapacitacaoExterna, ExigirVinculo: g.ExigirVinculo}
	out := make([]elegibilidade.Degrau, len(pedidos))
	for i, d := range pedidos {
		resto := d.Cadeia[d.Desde:]
		p.Inicios = append(p.Inicios, int32(len(p.Ucs)))
		p.Tamanhos = append(p.Tamanhos, int32(len(resto)))
		p.Ucs = append(p.Ucs, resto...)
		out[i] = elegibilidade.Degrau{Posicao: len(d.Cadeia)}
	}
	if len(pedidos) == 0 {
		return out, nil
	}
	rows, err := t.q.BuscarDegrausCadastrados(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("elegíveis: %w", err)
	}
	// The query numbers the chains from 1.
	for _, r := range rows {
		if n := int(r.Cadeia) - 1; n >= 0 && n < len(pedidos) {
			out[n] = degrauDe(r, pedidos[n].Cadeia, pedidos[n].Desde, g)
		}
	}
	return out, nil
}

// LerDegrau is LerDegraus for one chain.
func (t Tx) LerDegrau(ctx context.Context, cadeia []uuid.UUID, desde int, g elegibilidade.Portoes) (elegibilidade.Degrau, error) {
	d, err := t.LerDegraus(ctx, []PedidoDegrau{{Cadeia: cadeia, Desde: desde}}, g)
	if err != nil {
		return elegibilidade.Degrau{Posicao: len(cadeia)}, err
	}
	return d[0], nil
}

// degrauDe is a row of BuscarDegrausCadastrados for the chain cadeia read
// from position desde: each counsellor with the gates applied.
func degrauDe(r dbsqlc.BuscarDegrausCadastradosRow, cadeia []uuid.UUID, desde int, g elegibilidade.Portoes) elegibilidade.Degrau {
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

// Exclusoes counts, over a set of units, the counsellors each exclusion
// leaves out of the draw (a counsellor may count under several).
type Exclusoes struct {
	Cadastrados, Ocupados, Inativos, Suspensos, SemCapacitacao, SemVinculo int64
}

// ExclusoesNasUcs counts the exclusions over ucs at agora, under the
// phase-2 gates given.
func (t Tx) ExclusoesNasUcs(ctx context.Context, ucs []uuid.UUID, agora time.Time, capacitacaoExterna, exigirVinculo bool) (Exclusoes, error) {
	r, err := t.q.ContarRazoesPorUcs(ctx, dbsqlc.ContarRazoesPorUcsParams{
		Ucs: ucs, Agora: agora, CapacitacaoExterna: capacitacaoExterna, ExigirVinculo: exigirVinculo,
	})
	if err != nil {
		return Exclusoes{}, err
	}
	return Exclusoes{Cadastrados: r.Cadastrados, Ocupados: r.Ocupados, Inativos: r.Inativos,
		Suspensos: r.Suspensos, SemCapacitacao: r.SemCapacitacao, SemVinculo: r.SemVinculo}, nil
}
