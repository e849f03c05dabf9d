package estatisticas_test

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"testing"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/equidade"
	"github.com/formigueiro/d6a/internal/estatisticas"
	"github.com/formigueiro/d6a/internal/pgtest"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/sorteio"
	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/transparencia"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// The fairness sums do not depend on where the service's passes cut the
// log: folded in passes of 7 records or in one pass, every counsellor's
// float sums come out the same, bit for bit (the passes run in the
// background, so where they cut is a matter of timing; the determinism
// test of internal/colonia once saw 1.3666666666666667 against
// 1.3666666666666665).
func TestApurarEstatisticasNaoDependeDosCortes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	somas := func(lote int) []equidade.Conselheiro {
		st := assinados(t, poucos(t, 400))
		passes := 0
		for {
			n, err := estatisticas.Apurar(ctx, st, lote)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
			passes++
		}
		if want := (400 + lote - 1) / lote; passes != want {
			t.Fatalf("%d passes of %d records, want %d", passes, lote, want)
		}
		return lerSomas(t, st)
	}
	inteiro, picado := somas(400), somas(7)
	if len(inteiro) == 0 || len(inteiro) != len(picado) {
		t.Fatalf("%d counsellors in one pass, %d in passes of 7", len(inteiro), len(picado))
	}
	for i := range inteiro {
		if inteiro[i] != picado[i] {
			t.Errorf("counsellor %s: one pass %+v, passes of 7 %+v", inteiro[i].ID, inteiro[i], picado[i])
		}
	}
}

// The service's metric streams the stored sums into the test
// (Testar) where the route holds them all (Ler):
// both give the same figures, bit for bit.
func TestTestarEstatisticasComoLer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := assinados(t, poucos(t, 400))
	if _, err := estatisticas.Apurar(ctx, st, 0); err != nil {
		t.Fatal(err)
	}
	lido, err := estatisticas.Ler(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	testado, err := estatisticas.Testar(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if lido.Sorteios != 400 || len(lido.Conselheiros) != 12 || lido.GrausLiberdade == 0 || lido.Extremo == "" {
		t.Fatalf("the route's test is not over the 400 draws: %+v", lido)
	}
	if testado.Conselheiros != nil {
		t.Errorf("the streamed test holds %d counsellors", len(testado.Conselheiros))
	}
	lido.Conselheiros = nil
	if !reflect.DeepEqual(lido, testado) {
		t.Errorf("Ler %+v, Testar %+v", lido, testado)
	}
	// Pages that cut the 12 counsellors unevenly and evenly (a last page
	// that comes back empty) give the same figures.
	for _, n := range []int32{5, 4, 1} {
		paginado, err := estatisticas.TestarEmPaginas(ctx, st, n)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(lido, paginado) {
			t.Errorf("pages of %d: %+v, want %+v", n, paginado, lido)
		}
	}
}

// assinados is a fresh database whose log holds regs under a signed
// checkpoint.
func assinados(t *testing.T, regs []registro.Registro) *store.Store {
	t.Helper()
	st := pgtest.New(t)
	skey, _, err := transparencia.GerarChave(registro.OrigemPadrao)
	if err != nil {
		t.Fatal(err)
	}
	chave, _ := transparencia.NovaChave(skey)
	ctx := context.Background()
	if err := st.InTx(ctx, func(tx store.Tx) error { return transparencia.Anexar(ctx, tx.ParaOLog(), regs) }); err != nil {
		t.Fatal(err)
	}
	if _, err := transparencia.Assinar(ctx, st.Pool, chave, registro.OrigemPadrao); err != nil {
		t.Fatal(err)
	}
	return st
}

// poucos is n draws among 12 counsellors, lists of 1 to 7: each
// counsellor's sums gather many terms like 1/3 and 1/7, whose rounding
// depends on the order of the additions.
func poucos(t *testing.T, n int) []registro.Registro {
	t.Helper()
	id := func(tipo string, k int) uuid.UUID {
		return uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "cortes/%s/%d", tipo, k))
	}
	out := make([]registro.Registro, 0, n)
	for i := range n {
		eleg := make([]string, 1+i%7)
		for k := range eleg {
			eleg[k] = id("conselheiro", (i*5+k)%12).String()
		}
		base := id("base", i).String()
		seq := int64(i + 1)
		ts := fmt.Sprintf("2026-11-30T00:%02d:%02d.%03dZ", (i/60000)%60, (i/1000)%60, i%1000)
		res, err := sorteio.Sortear(base, ts, eleg)
		if err != nil {
			t.Fatal(err)
		}
		uc := id("uc", i%5)
		r, err := registro.NovoRegistro(id("evento", i), id("demanda", i), uc, base, &seq, ts, res, uc, []uuid.UUID{uc}, nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func lerSomas(t *testing.T, st *store.Store) []equidade.Conselheiro {
	t.Helper()
	rows, err := st.Pool.Query(context.Background(), `SELECT conselheiro_id, sorteios_elegivel, esperado, observado, variancia, esperado_n2, observado_n2
FROM d6a.transparencia_estatisticas ORDER BY conselheiro_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []equidade.Conselheiro
	for rows.Next() {
		var c equidade.Conselheiro
		if err := rows.Scan(&c.ID, &c.SorteiosElegivel, &c.Esperado, &c.Observado, &c.Variancia, &c.EsperadoN2, &c.ObservadoN2); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
