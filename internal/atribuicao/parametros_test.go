package atribuicao_test

import (
	"testing"
	"time"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/store"
)

// A version of d6a.config reads the same for the executor and the console
// (both call ParametrosDaVersao): every field, times in UTC.
func TestParametrosDaVersao(t *testing.T) {
	em := time.Date(2026, 12, 4, 15, 30, 0, 0, time.FixedZone("BRT", -3*3600))
	v := store.VersaoParametros{Versao: 3, NRecusasSuspensao: 4, TSuspensaoDias: 5, TimeoutRespostaHoras: 6, Sub: "op", Justificativa: "porque", Em: em}
	got := atribuicao.ParametrosDaVersao(v)
	want := atribuicao.Parametros{Versao: 3, NRecusasSuspensao: 4, TSuspensaoDias: 5, TimeoutRespostaHoras: 6, Sub: "op", Justificativa: "porque", CriadoEm: em.UTC()}
	if got != want {
		t.Fatalf("ParametrosDaVersao = %+v, want %+v", got, want)
	}
	if got.CriadoEm.Location() != time.UTC {
		t.Errorf("criado_em in %s, want UTC", got.CriadoEm.Location())
	}
}
