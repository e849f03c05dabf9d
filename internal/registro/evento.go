package registro

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/formigueiro/d6a/internal/sorteio"
)

// ConferirEvento checks a published conselheiro.sorteado — the whole
// envelope, or only its payload — against the draw's record: what a
// citizen received is what the log proves.
func ConferirEvento(r Registro, data []byte) error {
	var env map[string]any
	if err := json.Unmarshal(data, &env); err != nil || env == nil {
		return NovaFalha("evento", "not a JSON object", "the conselheiro.sorteado envelope or its payload")
	}
	prefixo := "evento.payload."
	pl, _ := env["payload"].(map[string]any)
	if pl == nil {
		pl, prefixo = env, "evento."
	} else {
		for _, c := range []struct {
			campo    string
			esperado string
		}{
			{"event_id", r.EventIDSorteio.String()},
			{"tipo", "conselheiro.sorteado"},
			{"timestamp", r.Timestamp},
		} {
			if v := texto(env[c.campo]); v != c.esperado {
				return NovaFalha("evento."+c.campo, v, c.esperado)
			}
		}
	}
	for _, c := range []struct {
		campo    string
		esperado string
	}{
		{"conselheiro_id", r.ConselheiroID.String()},
		{"demanda_id", r.DemandaID.String()},
		{"unidade_civica_id", r.UnidadeCivicaID.String()},
		{"seed_publico", r.Seed},
		{"lista_elegiveis_hash", r.ListaElegiveisHash},
		{"total_elegiveis", strconv.Itoa(len(r.ElegiveisEntrada))},
		{"posicao_sorteada", strconv.Itoa(sorteio.PosicaoSorteada)},
		{"metodo_sorteio", sorteio.Metodo},
		{"timestamp", r.Timestamp},
	} {
		if v := texto(pl[c.campo]); v != c.esperado {
			return NovaFalha(prefixo+c.campo, v, c.esperado)
		}
	}
	return nil
}

func texto(v any) string {
	switch v := v.(type) {
	case nil:
		return "(absent)"
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}
