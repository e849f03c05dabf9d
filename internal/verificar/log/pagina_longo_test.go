package log_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/eliminacao"
	"github.com/formigueiro/d6a/internal/historico"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/sorteio"
	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/transparencia"
)

// A draw among 900 counsellors, its list in d6a.lista_sorteio records
// before it, checked by itself in a real browser: the page fetches the
// tiles that hold the list records, proves them against the signed
// checkpoint and recomputes the draw in full, every step OK; with a list
// record eliminated it says so instead of passing or failing.
func TestPaginaSorteioLongoNoChromium(t *testing.T) {
	ctx := navegador(t)
	l := novoLogPublico(t)
	longo := sorteioLongo(t, 900)
	var regs []registro.Registravel
	for _, r := range historico.Registros("teste", 0, 20) {
		regs = append(regs, r)
	}
	regs = append(regs, registro.Partir(longo)...)
	for _, r := range historico.Registros("teste", 20, 25) {
		regs = append(regs, r)
	}
	bg := context.Background()
	if err := l.st.InTx(bg, func(tx store.Tx) error {
		e, err := transparencia.LerEstado(bg, tx.ParaOLog())
		if err != nil {
			return err
		}
		return e.AnexarRegistraveis(bg, tx.ParaOLog(), regs)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := transparencia.Assinar(bg, l.st.Pool, l.chave, registro.OrigemPadrao); err != nil {
		t.Fatal(err)
	}
	res, texto, estados := verificarNaPagina(t, ctx, l.url, longo.EventIDSorteio.String())
	lista := "Lista de entrada: 1 registros d6a.lista_sorteio (folhas 20–20), provados pelos tiles do checkpoint"
	if res != "ok" || estados[lista] != "ok" || estados["Sorteado (1º da lista embaralhada)"] != "ok" {
		t.Fatalf("long draw: %s %q %v", res, texto, estados)
	}
	for passo, e := range estados {
		if e != "ok" {
			t.Errorf("long draw: step %q is %s", passo, e)
		}
	}
	// The list record eliminated: the draw's leaf still proved, its list
	// gone.
	a := eliminacao.Assinador{Chave: l.chave, Origem: registro.OrigemPadrao}
	if e, err := eliminacao.Sorteio(bg, l.st, a, registro.IDListaSorteio(longo.EventIDSorteio, 0)); err != nil || len(e.Apagados) != 1 {
		t.Fatalf("erase the list record: %v %v", e.Apagados, err)
	}
	res, texto, estados = verificarNaPagina(t, ctx, l.url, longo.EventIDSorteio.String())
	if res != "eliminado" || estados["Lista de entrada (registros d6a.lista_sorteio antes do sorteio)"] != "aviso" || !strings.Contains(texto, "ELIMINADO") {
		t.Errorf("list eliminated: %s %q %v", res, texto, estados)
	}
}

// sorteioLongo is a draw among n counsellors of their own.
func sorteioLongo(t *testing.T, n int) registro.Registro {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "pagina-longo/conselheiro/%d", i)).String()
	}
	slices.Sort(ids)
	base := uuid.NewSHA1(uuid.NameSpaceOID, []byte("pagina-longo/base")).String()
	ts := "2026-12-01T00:00:00.000Z"
	res, err := sorteio.Sortear(base, ts, ids)
	if err != nil {
		t.Fatal(err)
	}
	uc := uuid.NewSHA1(uuid.NameSpaceOID, []byte("pagina-longo/uc"))
	seq := int64(1000)
	r, err := registro.NovoRegistro(uuid.NewSHA1(uuid.NameSpaceOID, []byte("pagina-longo/evento")), uuid.NewSHA1(uuid.NameSpaceOID, []byte("pagina-longo/demanda")),
		uc, base, &seq, ts, res, uc, []uuid.UUID{uc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
