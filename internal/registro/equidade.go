package registro

import (
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/equidade"
)

// Sorteios reads records, in log order, as the fairness statistics count
// them (CONTRACT §7): each draw's list and winner, the list inline or, for
// a long draw, joined from the d6a.lista_sorteio records right before it.
// The service's fold (internal/estatisticas) and the verifier's
// recomputation (`d6a verify --url --estatisticas`) both read the log
// through it, so they count the same draws. A draw whose list cannot be
// joined (a list record eliminated, spec 2.2) adds no draw, as an
// eliminated draw adds none; the walk of the log judges a list that does
// not join, the statistics only count.
type Sorteios struct {
	listas Listas
}

// SorteioLido is what the fairness statistics read of a draw's record.
type SorteioLido struct {
	ConselheiroID    string   `json:"conselheiro_id"`
	ElegiveisEntrada []string `json:"elegiveis_entrada"`
}

// Somar adds one record's bytes to a: a draw's list and winner; an
// eliminated record (nil) or a record of another kind counts as a record
// and adds no draw.
func (s *Sorteios) Somar(a *equidade.Acumulador, registro []byte) error {
	a.Registros++
	l, err := s.Ler(registro)
	if err != nil || l == nil {
		return err
	}
	a.Sorteio(l.ElegiveisEntrada, l.ConselheiroID)
	return nil
}

// Ler takes the next record (nil: eliminated) and returns the draw it
// completes, nil for a record that adds no draw.
func (s *Sorteios) Ler(registro []byte) (*SorteioLido, error) {
	if registro == nil {
		_, _ = s.listas.Aplicar(nil)
		return nil, nil
	}
	var r struct {
		Tipo           *string   `json:"tipo"`
		EventIDSorteio uuid.UUID `json:"event_id_sorteio"`
		SorteioLido
	}
	if err := json.Unmarshal(registro, &r); err != nil {
		return nil, fmt.Errorf("transparencia: record for the statistics: %w", err)
	}
	switch {
	case r.Tipo == nil:
	case *r.Tipo == TipoListaSorteio:
		var l ListaSorteio
		if err := json.Unmarshal(registro, &l); err != nil {
			return nil, fmt.Errorf("transparencia: list record for the statistics: %w", err)
		}
		// Parts without their draw are the walk's failure to name.
		_, _ = s.listas.Aplicar(l)
		return nil, nil
	default:
		s.listas.limpar()
		return nil, nil
	}
	// Only the keys the join reads: Juntar checks the parts follow each
	// other and belong to this draw.
	d := Registro{EventIDSorteio: r.EventIDSorteio, ElegiveisEntrada: r.ElegiveisEntrada}
	f, err := s.listas.Aplicar(d)
	if d.Partido() {
		if err != nil {
			return nil, nil
		}
		r.ElegiveisEntrada = f.(Registro).ElegiveisEntrada
	}
	return &r.SorteioLido, nil
}
