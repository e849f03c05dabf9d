package registro

import (
	"encoding/json"
	"fmt"

	"github.com/formigueiro/d6a/internal/equidade"
)

// SomarRegistro adds one record's bytes to a: a draw's list and winner;
// an eliminated record (nil) or a record of another kind (starting with
// "tipo", CONTRACT §7) counts as a record and adds no draw. The service's
// fold (internal/estatisticas) and the verifier's recomputation both read
// records this way.
func SomarRegistro(a *equidade.Acumulador, registro []byte) error {
	a.Registros++
	s, err := LerSorteio(registro)
	if err != nil || s == nil {
		return err
	}
	a.Sorteio(s.ElegiveisEntrada, s.ConselheiroID)
	return nil
}

// SorteioLido is what the fairness statistics read of a draw's record.
type SorteioLido struct {
	ConselheiroID    string   `json:"conselheiro_id"`
	ElegiveisEntrada []string `json:"elegiveis_entrada"`
}

// LerSorteio reads a record's list and winner; nil for a record that adds
// no draw (eliminated, or of another kind).
func LerSorteio(registro []byte) (*SorteioLido, error) {
	if registro == nil {
		return nil, nil
	}
	var r struct {
		Tipo *string `json:"tipo"`
		SorteioLido
	}
	if err := json.Unmarshal(registro, &r); err != nil {
		return nil, fmt.Errorf("transparencia: record for the statistics: %w", err)
	}
	if r.Tipo != nil {
		return nil, nil
	}
	return &r.SorteioLido, nil
}
