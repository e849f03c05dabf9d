package estatisticas_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
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

// A draw among more than registro.ElegiveisEmLinha counsellors, whose list
// sits in d6a.lista_sorteio records before it, counts for each of its
// eligible counsellors, wherever the service's passes cut the log (a pass
// of 1 record ends between every part), and the sums are those a reading
// of the records alone gives (registro.Sorteios, as `d6a verify --url
// --estatisticas` reads them), bit for bit.
func TestApurarContaSorteioLongo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	longo := sorteioLongo(t, 900)
	var regs []registro.Registravel
	for _, r := range poucos(t, 30) {
		regs = append(regs, r)
	}
	regs = slices.Insert(regs, 20, registro.Partir(longo)...)
	if len(regs) != 30+2 {
		t.Fatalf("%d records, want the 30 short draws, one list record and the long draw", len(regs))
	}
	// The records alone, in one reading.
	lido := equidade.NovoAcumulador()
	var leitor registro.Sorteios
	for _, f := range regs {
		b, err := f.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		if err := leitor.Somar(lido, b); err != nil {
			t.Fatal(err)
		}
	}
	esperado := lido.Resultado()
	if esperado.Sorteios != 31 {
		t.Fatalf("the records alone count %d draws, want 31", esperado.Sorteios)
	}
	for _, lote := range []int{1, 7, 0} {
		st := assinadosRegistraveis(t, regs)
		for {
			n, err := estatisticas.Apurar(ctx, st, lote)
			if err != nil {
				t.Fatalf("passes of %d: %v", lote, err)
			}
			if n == 0 {
				break
			}
		}
		servido, err := estatisticas.Ler(ctx, st)
		if err != nil {
			t.Fatal(err)
		}
		if servido.Registros != 32 || servido.Sorteios != 31 {
			t.Fatalf("passes of %d: %d records, %d draws; want 32, 31", lote, servido.Registros, servido.Sorteios)
		}
		porID := map[string]equidade.Conselheiro{}
		for _, c := range servido.Conselheiros {
			porID[c.ID] = c
		}
		for _, id := range longo.ElegiveisEntrada {
			c := porID[id]
			venceu := int64(0)
			if id == longo.ConselheiroID.String() {
				venceu = 1
			}
			if c.SorteiosElegivel != 1 || c.Esperado != 1.0/900 || c.Observado != venceu {
				t.Fatalf("passes of %d: counsellor %s of the long draw: %+v", lote, id, c)
			}
		}
		if !reflect.DeepEqual(servido, esperado) {
			t.Errorf("passes of %d: served %+v, the records alone %+v", lote, servido, esperado)
		}
	}
}

// sorteioLongo is a draw among n counsellors of their own.
func sorteioLongo(t *testing.T, n int) registro.Registro {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "longo/conselheiro/%d", i)).String()
	}
	slices.Sort(ids)
	base := uuid.NewSHA1(uuid.NameSpaceOID, []byte("longo/base")).String()
	ts := "2026-12-01T00:00:00.000Z"
	res, err := sorteio.Sortear(base, ts, ids)
	if err != nil {
		t.Fatal(err)
	}
	uc := uuid.NewSHA1(uuid.NameSpaceOID, []byte("longo/uc"))
	seq := int64(1000)
	r, err := registro.NovoRegistro(uuid.NewSHA1(uuid.NameSpaceOID, []byte("longo/evento")), uuid.NewSHA1(uuid.NameSpaceOID, []byte("longo/demanda")),
		uc, base, &seq, ts, res, uc, []uuid.UUID{uc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// assinadosRegistraveis is assinados for records of any kind.
func assinadosRegistraveis(t *testing.T, regs []registro.Registravel) *store.Store {
	t.Helper()
	st := pgtest.New(t)
	skey, _, err := transparencia.GerarChave(registro.OrigemPadrao)
	if err != nil {
		t.Fatal(err)
	}
	chave, _ := transparencia.NovaChave(skey)
	ctx := context.Background()
	if err := st.InTx(ctx, func(tx store.Tx) error {
		e, err := transparencia.LerEstado(ctx, tx.ParaOLog())
		if err != nil {
			return err
		}
		return e.AnexarRegistraveis(ctx, tx.ParaOLog(), regs)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := transparencia.Assinar(ctx, st.Pool, chave, registro.OrigemPadrao); err != nil {
		t.Fatal(err)
	}
	return st
}
