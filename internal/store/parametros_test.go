package store_test

import (
	"testing"
	"time"

	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// d6a.config: version 1 is seeded once; later versions are numbered in
// order; no version can be edited or deleted (spec 8.3, issue 13).
func TestParametrosVersionadosSomenteInsercao(t *testing.T) {
	t.Parallel()
	ctx, _, q := open(t)
	agora := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	check(t, store.Consultas(q).SemearParametros(ctx, dbsqlc.SemearParametrosParams{NRecusasSuspensao: 3, TSuspensaoDias: 90, TimeoutRespostaHoras: 72, Agora: agora}))
	check(t, store.Consultas(q).SemearParametros(ctx, dbsqlc.SemearParametrosParams{NRecusasSuspensao: 9, TSuspensaoDias: 9, TimeoutRespostaHoras: 9, Agora: agora}))
	v := val(store.Consultas(q).ParametrosVigentes(ctx)).must(t)
	if v.Versao != 1 || v.NRecusasSuspensao != 3 || v.TSuspensaoDias != 90 || v.TimeoutRespostaHoras != 72 || v.Sub != "ambiente" {
		t.Fatalf("seeded version %+v, want version 1 = 3/90/72 by ambiente (the second seed must not apply)", v)
	}
	n := val(store.Consultas(q).InserirParametros(ctx, dbsqlc.InserirParametrosParams{
		NRecusasSuspensao: 1, TSuspensaoDias: 30, TimeoutRespostaHoras: 24, Sub: "admin", Justificativa: "teste", Agora: agora,
	})).must(t)
	if n != 2 {
		t.Fatalf("new version %d, want 2", n)
	}
	if v := val(store.Consultas(q).ParametrosVigentes(ctx)).must(t); v.Versao != 2 || v.NRecusasSuspensao != 1 {
		t.Fatalf("in force %+v, want version 2", v)
	}
	for _, sql := range []string{
		`UPDATE d6a.config SET n_recusas_suspensao = 7 WHERE versao = 1`,
		`DELETE FROM d6a.config WHERE versao = 1`,
	} {
		if _, err := store.Conexao(q).Exec(ctx, sql); err == nil {
			t.Errorf("%s: accepted, want refused (append-only)", sql)
		}
	}
	h := val(store.Consultas(q).HistoricoParametros(ctx)).must(t)
	if len(h) != 2 || h[0].NRecusasSuspensao != 3 || h[1].NRecusasSuspensao != 1 {
		t.Fatalf("history %+v, want the two versions untouched", h)
	}
}
