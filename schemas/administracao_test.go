package schemas

import (
	"strings"
	"testing"
)

func timeoutRecusa() map[string]any {
	return map[string]any{
		"event_id": "5d1c3a2e-9b4d-5e8a-a1f0-2c3d4e5f6a7b", "tipo": "conselheiro.atribuicao_recusada",
		"origem": "D-6a", "versao_schema": "1.0.0", "correlacao_id": "d0000000-0000-4000-8000-000000000001",
		"timestamp": "2026-11-30T19:00:00.000Z",
		"payload": map[string]any{
			"conselheiro_id": "f0000001-0000-4000-8000-0000000000a3", "demanda_id": "d0000000-0000-4000-8000-000000000001",
			"unidade_civica_id": "c0000000-0000-4000-8000-000000000001", "motivo": "timeout_resposta",
			"timestamp": "2026-11-30T19:00:00.000Z",
		},
	}
}

func suspensaoExpirada() map[string]any {
	return map[string]any{
		"event_id": "5d1c3a2e-9b4d-5e8a-a1f0-2c3d4e5f6a7c", "tipo": "conselheiro.suspensao_expirada",
		"origem": "D-6a", "versao_schema": "1.0.0", "correlacao_id": "f0000001-0000-4000-8000-0000000000a3",
		"timestamp": "2026-11-30T19:00:00.000Z",
		"payload": map[string]any{
			"conselheiro_id": "f0000001-0000-4000-8000-0000000000a3", "data_suspensao_ate": "2026-11-30T18:00:00.000Z",
			"timestamp": "2026-11-30T19:00:00.000Z",
		},
	}
}

func TestValidarEventosDaAdministracao(t *testing.T) {
	if err := Validar(TipoAtribuicaoRecusada, mustJSON(t, timeoutRecusa())); err != nil {
		t.Errorf("valid timeout refusal rejected: %v", err)
	}
	if err := Validar(TipoSuspensaoExpirada, mustJSON(t, suspensaoExpirada())); err != nil {
		t.Errorf("valid suspensao_expirada rejected: %v", err)
	}
	ruins := []struct {
		nome   string
		tipo   string
		env    map[string]any
		mudar  func(map[string]any)
		trecho string
	}{
		{"recusa com outro motivo", TipoAtribuicaoRecusada, timeoutRecusa(), func(e map[string]any) { payload(e)["motivo"] = "recusa_explicita" }, "/payload/motivo"},
		{"recusa sem unidade", TipoAtribuicaoRecusada, timeoutRecusa(), func(e map[string]any) { delete(payload(e), "unidade_civica_id") }, "unidade_civica_id"},
		{"expirada sem data", TipoSuspensaoExpirada, suspensaoExpirada(), func(e map[string]any) { delete(payload(e), "data_suspensao_ate") }, "data_suspensao_ate"},
		{"expirada com campo a mais", TipoSuspensaoExpirada, suspensaoExpirada(), func(e map[string]any) { payload(e)["status"] = "disponivel" }, "status"},
	}
	for _, r := range ruins {
		r.mudar(r.env)
		err := Validar(r.tipo, mustJSON(t, r.env))
		if err == nil {
			t.Errorf("%s: accepted", r.nome)
			continue
		}
		if !strings.Contains(err.Error(), r.trecho) {
			t.Errorf("%s: error %q does not name %q", r.nome, err, r.trecho)
		}
	}
}
