package evento

import (
	"testing"

	"github.com/formigueiro/d6a/schemas"
)

// The schemas of the phase-2 inputs (schemas/, CONTRACT §8) and the
// decoder agree: what the schema accepts decodes, and every bad payload the
// issue names (missing id, non-UUID, valido not a boolean, level out of
// 1–7, missing unit) fails both, the decoder with its reason.
func TestFase2SchemaIgualAoDecodificador(t *testing.T) {
	tipos := map[Tipo]string{
		CapacitacaoConcluida:    schemas.TipoCapacitacaoConcluida,
		VinculoValidado:         schemas.TipoVinculoValidado,
		ProgressaoHabilitada:    schemas.TipoProgressaoHabilitada,
		ElegibilidadeAtualizada: schemas.TipoElegibilidadeAtualizada,
	}
	for tipo, nome := range tipos {
		data := mudar(t, tipo, func(env, p map[string]any) { p["extra"] = 1 })
		if err := schemas.Validar(nome, data); err != nil {
			t.Errorf("%s: schema refuses a valid envelope: %v", tipo, err)
		}
		if _, err := Decodificar(tipo, data); err != nil {
			t.Errorf("%s: decoder refuses a valid envelope: %v", tipo, err)
		}
	}
	ruins := []struct {
		tipo   Tipo
		motivo string
		f      func(env, p map[string]any)
	}{
		{CapacitacaoConcluida, "payload.conselheiro_id ausente", func(env, p map[string]any) { delete(p, "conselheiro_id") }},
		{CapacitacaoConcluida, "payload.conselheiro_id não é UUID", func(env, p map[string]any) { p["conselheiro_id"] = "abc" }},
		{VinculoValidado, "payload.valido não é booleano", func(env, p map[string]any) { p["valido"] = "sim" }},
		{VinculoValidado, "payload.unidade_civica_id ausente", func(env, p map[string]any) { delete(p, "unidade_civica_id") }},
		{VinculoValidado, "payload.conselheiro_id não é string", func(env, p map[string]any) { p["conselheiro_id"] = 7 }},
		{ProgressaoHabilitada, "payload.nivel_atuacao fora de 1..7", func(env, p map[string]any) { p["nivel_atuacao"] = 9 }},
		{ProgressaoHabilitada, "payload.nivel_atuacao não é inteiro", func(env, p map[string]any) { p["nivel_atuacao"] = 2.5 }},
		{ProgressaoHabilitada, "payload.unidade_civica_id ausente", func(env, p map[string]any) { delete(p, "unidade_civica_id") }},
		{ElegibilidadeAtualizada, "payload.unidade_civica_id ausente", func(env, p map[string]any) { delete(p, "unidade_civica_id") }},
		{ElegibilidadeAtualizada, "payload.versao_parametros ausente", func(env, p map[string]any) { delete(p, "versao_parametros") }},
	}
	for _, r := range ruins {
		data := mudar(t, r.tipo, r.f)
		if err := schemas.Validar(tipos[r.tipo], data); err == nil {
			t.Errorf("%s (%s): schema accepts it", r.tipo, r.motivo)
		}
		_, err := Decodificar(r.tipo, data)
		if err == nil || len(err.Error()) < len(r.motivo) || err.Error()[:len(r.motivo)] != r.motivo {
			t.Errorf("%s: decoder says %v, want %q", r.tipo, err, r.motivo)
		}
	}
}
