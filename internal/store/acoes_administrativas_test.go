package store_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// d6a.acoes_administrativas is append-only and refuses an empty
// justification.
func TestAcoesAdministrativasSomenteInsercao(t *testing.T) {
	t.Parallel()
	ctx, _, q := open(t)
	agora := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	ev := uuid.New()
	id := val(store.Consultas(q).RegistrarAcao(ctx, dbsqlc.RegistrarAcaoParams{Sub: "op", Acao: "inativar", Alvo: uuid.NewString(), Justificativa: "pedido", Agora: agora, EventID: &ev})).must(t)
	if _, err := store.Consultas(q).RegistrarAcao(ctx, dbsqlc.RegistrarAcaoParams{Sub: "op", Acao: "inativar", Alvo: "x", Justificativa: "  ", Agora: agora}); err == nil {
		t.Error("blank justificativa accepted")
	}
	for _, sql := range []string{
		`UPDATE d6a.acoes_administrativas SET justificativa = 'outra'`,
		`DELETE FROM d6a.acoes_administrativas`,
	} {
		if _, err := store.Conexao(q).Exec(ctx, sql); err == nil {
			t.Errorf("%s: accepted, want refused (append-only)", sql)
		}
	}
	acoes := val(store.Consultas(q).ListarAcoes(ctx, dbsqlc.ListarAcoesParams{DepoisDe: 0, Limite: 10})).must(t)
	if len(acoes) != 1 || acoes[0].ID != id || acoes[0].Justificativa != "pedido" || acoes[0].EventID == nil || *acoes[0].EventID != ev {
		t.Fatalf("journal %+v", acoes)
	}
}
