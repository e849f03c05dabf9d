package schemas

import (
	"encoding/json"
	"strings"
	"testing"
)

func sorteado() map[string]any {
	return map[string]any{
		"event_id":      "6f1c3a2e-9b4d-4e8a-a1f0-2c3d4e5f6a7b",
		"tipo":          "conselheiro.sorteado",
		"origem":        "D-6a",
		"versao_schema": "1.0.0",
		"correlacao_id": "0b9e8d7c-6a5b-4c3d-8e2f-1a0b9c8d7e6f",
		"timestamp":     "2026-08-11T19:17:28.042Z",
		"payload": map[string]any{
			"conselheiro_id":       "f0000001-0000-4000-8000-0000000000a3",
			"demanda_id":           "d0000000-0000-4000-8000-000000000001",
			"unidade_civica_id":    "c0000000-0000-4000-8000-000000000001",
			"metodo_sorteio":       "fisher_yates",
			"seed_publico":         "23b282cc347afc3c84fb8999452a77f36c8eb1edb610336e1b1694aea46f2ad6",
			"lista_elegiveis_hash": "6f24412cf61adca3ca21212a1ea1e760400cd05cf7365a74a0d97ab915022037",
			"posicao_sorteada":     0,
			"total_elegiveis":      5,
			"timestamp":            "2026-08-11T19:17:28.000Z",
		},
	}
}

func semCandidatos() map[string]any {
	return map[string]any{
		"event_id":      "7A2D4B3F-0C5E-4F9B-B2A1-3D4E5F6A7B8C",
		"tipo":          "sorteio.sem_candidatos",
		"origem":        "D-6a",
		"versao_schema": "1.0.0",
		"correlacao_id": nil,
		"timestamp":     "2026-08-11T19:17:28.042Z",
		"payload": map[string]any{
			"demanda_id":        "d0000000-0000-4000-8000-000000000001",
			"unidade_civica_id": "c0000000-0000-4000-8000-000000000001",
			"total_elegiveis":   0,
			"motivo":            "todos_ocupados",
			"timestamp":         "2026-08-11T19:17:28.000Z",
		},
	}
}

func payload(env map[string]any) map[string]any { return env["payload"].(map[string]any) }

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestValidarValid(t *testing.T) {
	if err := Validar(TipoConselheiroSorteado, mustJSON(t, sorteado())); err != nil {
		t.Errorf("valid conselheiro.sorteado rejected: %v", err)
	}
	if err := Validar(TipoSorteioSemCandidatos, mustJSON(t, semCandidatos())); err != nil {
		t.Errorf("valid sorteio.sem_candidatos rejected: %v", err)
	}
	for _, motivo := range []string{"nenhum_cadastrado", "todos_ocupados", "todos_inativos"} {
		env := semCandidatos()
		payload(env)["motivo"] = motivo
		if err := Validar(TipoSorteioSemCandidatos, mustJSON(t, env)); err != nil {
			t.Errorf("motivo %q rejected: %v", motivo, err)
		}
	}
	env := sorteado()
	env["correlacao_id"] = nil
	payload(env)["posicao_sorteada"] = 4
	if err := Validar(TipoConselheiroSorteado, mustJSON(t, env)); err != nil {
		t.Errorf("null correlacao_id / posicao 4 rejected: %v", err)
	}
}

func TestValidarInvalid(t *testing.T) {
	tests := []struct {
		name      string
		tipo      string
		env       func() map[string]any
		mutate    func(map[string]any)
		wantInErr string
	}{
		{"sorteado missing event_id", TipoConselheiroSorteado, sorteado,
			func(e map[string]any) { delete(e, "event_id") }, "event_id"},
		{"sorteado missing correlacao_id", TipoConselheiroSorteado, sorteado,
			func(e map[string]any) { delete(e, "correlacao_id") }, "correlacao_id"},
		{"sorteado missing payload field", TipoConselheiroSorteado, sorteado,
			func(e map[string]any) { delete(payload(e), "lista_elegiveis_hash") }, "lista_elegiveis_hash"},
		{"sem_candidatos missing motivo", TipoSorteioSemCandidatos, semCandidatos,
			func(e map[string]any) { delete(payload(e), "motivo") }, "motivo"},
		{"sorteado extra envelope field", TipoConselheiroSorteado, sorteado,
			func(e map[string]any) { e["extra"] = 1 }, "extra"},
		{"sorteado extra payload field", TipoConselheiroSorteado, sorteado,
			func(e map[string]any) { payload(e)["elegiveis"] = []string{} }, "elegiveis"},
		{"sem_candidatos extra payload field", TipoSorteioSemCandidatos, semCandidatos,
			func(e map[string]any) { payload(e)["conselheiro_id"] = "x" }, "conselheiro_id"},
		{"wrong tipo const", TipoConselheiroSorteado, sorteado,
			func(e map[string]any) { e["tipo"] = "sorteio.sem_candidatos" }, "/tipo"},
		{"wrong origem const", TipoConselheiroSorteado, sorteado,
			func(e map[string]any) { e["origem"] = "D-6b" }, "/origem"},
		{"wrong versao_schema const", TipoSorteioSemCandidatos, semCandidatos,
			func(e map[string]any) { e["versao_schema"] = "1.0.1" }, "/versao_schema"},
		{"wrong metodo_sorteio const", TipoConselheiroSorteado, sorteado,
			func(e map[string]any) { payload(e)["metodo_sorteio"] = "sattolo" }, "/payload/metodo_sorteio"},
		{"empty correlacao_id", TipoConselheiroSorteado, sorteado,
			func(e map[string]any) { e["correlacao_id"] = "" }, "/correlacao_id"},
		{"bad event_id uuid", TipoConselheiroSorteado, sorteado,
			func(e map[string]any) { e["event_id"] = "6f1c3a2e9b4d4e8aa1f02c3d4e5f6a7b" }, "/event_id"},
		{"bad conselheiro_id uuid", TipoConselheiroSorteado, sorteado,
			func(e map[string]any) { payload(e)["conselheiro_id"] = "f0000001-0000-4000-8000-0000000000g3" }, "/payload/conselheiro_id"},
		{"bad demanda_id uuid", TipoSorteioSemCandidatos, semCandidatos,
			func(e map[string]any) { payload(e)["demanda_id"] = "{d0000000-0000-4000-8000-000000000001}" }, "/payload/demanda_id"},
		{"bad timestamp no millis", TipoConselheiroSorteado, sorteado,
			func(e map[string]any) { e["timestamp"] = "2026-08-11T19:17:28Z" }, "/timestamp"},
		{"bad timestamp offset", TipoConselheiroSorteado, sorteado,
			func(e map[string]any) { payload(e)["timestamp"] = "2026-08-11T16:17:28.000-03:00" }, "/payload/timestamp"},
		{"bad timestamp sem_candidatos", TipoSorteioSemCandidatos, semCandidatos,
			func(e map[string]any) { payload(e)["timestamp"] = "2026-08-11 19:17:28.000Z" }, "/payload/timestamp"},
		{"uppercase seed", TipoConselheiroSorteado, sorteado,
			func(e map[string]any) {
				payload(e)["seed_publico"] = strings.ToUpper(payload(e)["seed_publico"].(string))
			}, "/payload/seed_publico"},
		{"short hash", TipoConselheiroSorteado, sorteado,
			func(e map[string]any) { payload(e)["lista_elegiveis_hash"] = "6f24" }, "/payload/lista_elegiveis_hash"},
		{"total_elegiveis 0 for sorteado", TipoConselheiroSorteado, sorteado,
			func(e map[string]any) { payload(e)["total_elegiveis"] = 0 }, "/payload/total_elegiveis"},
		{"negative posicao_sorteada", TipoConselheiroSorteado, sorteado,
			func(e map[string]any) { payload(e)["posicao_sorteada"] = -1 }, "/payload/posicao_sorteada"},
		{"fractional total_elegiveis", TipoConselheiroSorteado, sorteado,
			func(e map[string]any) { payload(e)["total_elegiveis"] = 2.5 }, "/payload/total_elegiveis"},
		{"total_elegiveis 1 for sem_candidatos", TipoSorteioSemCandidatos, semCandidatos,
			func(e map[string]any) { payload(e)["total_elegiveis"] = 1 }, "/payload/total_elegiveis"},
		{"unknown motivo", TipoSorteioSemCandidatos, semCandidatos,
			func(e map[string]any) { payload(e)["motivo"] = "todos_de_ferias" }, "/payload/motivo"},
		{"payload not an object", TipoSorteioSemCandidatos, semCandidatos,
			func(e map[string]any) { e["payload"] = []any{} }, "/payload"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := tt.env()
			tt.mutate(env)
			err := Validar(tt.tipo, mustJSON(t, env))
			if err == nil {
				t.Fatalf("Validar accepted an invalid envelope: %s", mustJSON(t, env))
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans several lines: %q", msg)
			}
			if !strings.Contains(msg, tt.wantInErr) {
				t.Errorf("error %q does not mention %q", msg, tt.wantInErr)
			}
		})
	}
}

func TestValidarWrongSchemaForEnvelope(t *testing.T) {
	if err := Validar(TipoSorteioSemCandidatos, mustJSON(t, sorteado())); err == nil {
		t.Error("a conselheiro.sorteado envelope passed the sorteio.sem_candidatos schema")
	}
}

func TestValidarUnknownTipo(t *testing.T) {
	err := Validar("conselheiro.recusou", mustJSON(t, sorteado()))
	if err == nil || !strings.Contains(err.Error(), `unknown tipo "conselheiro.recusou"`) {
		t.Errorf("Validar(unknown tipo) = %v, want unknown tipo error", err)
	}
}

func TestValidarMalformedJSON(t *testing.T) {
	valid := mustJSON(t, sorteado())
	for name, in := range map[string][]byte{
		"empty":         nil,
		"truncated":     valid[:len(valid)-1],
		"trailing data": append(append([]byte{}, valid...), []byte(" {}")...),
	} {
		if err := Validar(TipoConselheiroSorteado, in); err == nil || !strings.Contains(err.Error(), "invalid JSON") {
			t.Errorf("%s: Validar = %v, want invalid JSON error", name, err)
		}
	}
}

func TestSchemasCompile(t *testing.T) {
	all, err := compiled()
	if err != nil {
		t.Fatal(err)
	}
	entries, err := files.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	// Every embedded file must be reachable through Validar, or it is a
	// schema nobody enforces.
	if len(entries) != len(all) {
		t.Errorf("%d embedded schema files, %d compiled", len(entries), len(all))
	}
	for _, e := range entries {
		tipo := strings.TrimSuffix(e.Name(), ".json")
		if _, ok := all[tipo]; !ok {
			t.Errorf("embedded %s is not compiled", e.Name())
		}
	}
}
