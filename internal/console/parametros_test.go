package console

import (
	"testing"
	"time"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/store"
)

// The console shows a version of the parameters as the executor reads the
// same row of d6a.config (atribuicao.ParametrosDaLinha), times in UTC.
func TestParametrosComoOExecutor(t *testing.T) {
	em := time.Date(2026, 12, 4, 15, 30, 0, 0, time.FixedZone("BRT", -3*3600))
	linha := store.Parametros{Versao: 3, NRecusasSuspensao: 4, TSuspensaoDias: 5, TimeoutRespostaHoras: 6, Sub: "op", Justificativa: "porque", CriadoEm: em}
	v := store.VersaoParametros{Versao: 3, NRecusasSuspensao: 4, TSuspensaoDias: 5, TimeoutRespostaHoras: 6, Sub: "op", Justificativa: "porque", Em: em}
	got, want := parametros(v), atribuicao.ParametrosDaLinha(linha)
	if got != want {
		t.Fatalf("parametros = %+v, want %+v", got, want)
	}
	if got.CriadoEm.Location() != time.UTC {
		t.Errorf("criado_em in %s, want UTC", got.CriadoEm.Location())
	}
}
