package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/formigueiro/d6a/internal/historico"
	"github.com/formigueiro/d6a/internal/pgtest"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/tiles"
	"github.com/formigueiro/d6a/internal/transparencia"
	"github.com/formigueiro/d6a/internal/verificar/log"
)

// anexarAssinar appends regs to st's log and signs a checkpoint of it.
func anexarAssinar(t *testing.T, st *store.Store, chave transparencia.Chave, regs []registro.Registravel) {
	t.Helper()
	ctx := context.Background()
	if err := pgx.BeginTxFunc(ctx, st.Pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		e, err := transparencia.LerEstado(ctx, tx)
		if err != nil {
			return err
		}
		return e.AnexarRegistraveis(ctx, tx, regs)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := transparencia.Assinar(ctx, st.Pool, chave, registro.OrigemPadrao); err != nil {
		t.Fatal(err)
	}
}

func novaChave(t *testing.T) transparencia.Chave {
	t.Helper()
	skey, _, err := transparencia.GerarChave(registro.OrigemPadrao)
	if err != nil {
		t.Fatal(err)
	}
	chave, err := transparencia.NovaChave(skey)
	if err != nil {
		t.Fatal(err)
	}
	return chave
}

// CONTRACT §7 "The verifier reads tiles": a static mirror, the files
// `--espelhar` copied served by a plain http.FileServer (or read from the
// directory itself), passes `--all --replay`; the same mirror with one
// byte of one bundle changed fails.
func TestEspelhoEstaticoVerifica(t *testing.T) {
	bin := d6aBin(t)
	chave := novaChave(t)
	st := pgtest.New(t)
	historia := historico.HistoriaSintetica("espelho", 300) // 5,000 registrations and their sweeps, then 300 draws
	anexarAssinar(t, st, chave, historia[:3000])
	anexarAssinar(t, st, chave, historia[3000:])
	n := len(historia)
	tamanho := fmt.Sprintf("tamanho=%d ", n)
	registros := fmt.Sprintf("registros=%d ", n)
	url := servirLog(t, st, chave)
	dir := t.TempDir()
	code, out, errOut := rodar(t, bin, "verify", "--url", url, "--chave", chave.Verificador, "--espelhar", dir)
	if code != 0 || !strings.Contains(out, "espelho: "+tamanho) || !strings.Contains(out, fmt.Sprintf("espelho verificado: transparencia: registros=%d verificados=%d falhas=0", n, n)) {
		t.Fatalf("--espelhar: %d %q %q", code, out, errOut)
	}
	// Again: the full tiles are kept, only the partial ones fetched.
	code, out, errOut = rodar(t, bin, "verify", "--url", url, "--chave", chave.Verificador, "--espelhar", dir)
	if code != 0 || !strings.Contains(out, "copiados=3 ") {
		t.Fatalf("--espelhar again: %d %q %q", code, out, errOut)
	}
	espelho := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer espelho.Close()
	for _, base := range []string{espelho.URL, dir, "file://" + dir} {
		code, out, errOut = rodar(t, bin, "verify", "--url", base, "--all", "--replay", "--chave", chave.Verificador)
		if code != 0 || !strings.Contains(out, "replay: "+registros+"decisoes=300 divergencias=0 gatilhos=0 raiz=") {
			t.Errorf("--all --replay on the mirror %s: %d %q %q", base, code, out, errOut)
		}
	}
	// Trust on first use works on the mirror too: it copied the key.
	if code, out, errOut = rodar(t, bin, "verify", "--url", espelho.URL, "--all"); code != 0 || !strings.Contains(errOut, "confiando no primeiro uso") {
		t.Errorf("--all on the mirror without --chave: %d %q %q", code, out, errOut)
	}
	// One byte of a bundle: the record no longer hashes to its leaf.
	bundle := filepath.Join(dir, "d6a", "transparencia", filepath.FromSlash(tiles.Path(tiles.Bundle(10, tiles.Width))))
	b, err := os.ReadFile(bundle)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte(`"disponivel"`))
	if i < 0 {
		t.Fatalf("no status in bundle 10")
	}
	b[i+1] = 'D'
	if err := os.WriteFile(bundle, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = rodar(t, bin, "verify", "--url", espelho.URL, "--all", "--replay", "--chave", chave.Verificador)
	if code != 1 || !strings.Contains(errOut, "FALHA registro 2") || !strings.Contains(errOut, "hash_folha") {
		t.Errorf("--all --replay on the mirror with a byte changed: %d %q %q", code, out, errOut)
	}
}

// fimDeGatilho is the first index from k on where a trigger's records end
// (after a sweep record): where the service can sign a checkpoint, since a
// unit of work's records commit together.
func fimDeGatilho(h []registro.Registravel, k int) int {
	for ; k < len(h); k++ {
		if e, ok := h[k-1].(registro.Entrada); ok && e.Tipo == registro.TipoVarredura {
			return k
		}
	}
	return len(h)
}

// decisoesAte counts the decisions in h[:k].
func decisoesAte(h []registro.Registravel, k int) int {
	n := 0
	for _, r := range h[:k] {
		if _, ok := r.(registro.Registro); ok {
			n++
		}
	}
	return n
}

// CONTRACT §7 "Monitor": a first run verifies everything, each later run
// only what is new, with the right de/para/novos; a re-signed fork (same
// key, history rewritten below the kept size) exits 1 and leaves DIR
// byte for byte as it was.
func TestMonitor(t *testing.T) {
	bin := d6aBin(t)
	chave := novaChave(t)
	st := pgtest.New(t)
	historia := historico.HistoriaSintetica("monitor", 200)
	a, b, n := fimDeGatilho(historia, 10_500), fimDeGatilho(historia, 10_700), len(historia)
	anexarAssinar(t, st, chave, historia[:a])
	url := servirLog(t, st, chave)
	dir := filepath.Join(t.TempDir(), "monitor")
	monitor := func(base string) (int, string, string) {
		return rodar(t, bin, "verify", "--url", base, "--chave", chave.Verificador, "--monitorar", dir)
	}
	code, out, errOut := monitor(url)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("monitor: de=0 para=%d novos=%d divergencias=0", a, a)) ||
		!strings.Contains(out, fmt.Sprintf("replay: registros=%d decisoes=%d divergencias=0", a, decisoesAte(historia, a))) {
		t.Fatalf("first run: %d %q %q", code, out, errOut)
	}
	anexarAssinar(t, st, chave, historia[a:b])
	code, out, errOut = monitor(url)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("monitor: de=%d para=%d novos=%d divergencias=0", a, b, b-a)) ||
		!strings.Contains(out, fmt.Sprintf("replay: registros=%d decisoes=%d divergencias=0", b, decisoesAte(historia, b))) {
		t.Fatalf("second run: %d %q %q", code, out, errOut)
	}
	code, out, errOut = monitor(url)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("monitor: de=%d para=%d novos=0 divergencias=0", b, b)) {
		t.Fatalf("nothing new: %d %q %q", code, out, errOut)
	}
	guardado, err := os.ReadFile(filepath.Join(dir, log.ArquivoMonitor))
	if err != nil {
		t.Fatal(err)
	}
	// The fork: the same key signs a log whose record a+100 differs (one
	// record dropped), then grows past the kept size.
	forkSt := pgtest.New(t)
	fork := append(append([]registro.Registravel{}, historia[:a+100]...), historia[a+101:]...)
	anexarAssinar(t, forkSt, chave, fork)
	forkURL := servirLog(t, forkSt, chave)
	code, out, errOut = monitor(forkURL)
	if code != 1 || !strings.Contains(errOut, "FALHA consistencia") {
		t.Errorf("fork: %d %q %q", code, out, errOut)
	}
	// The same size, another root.
	forkSt2 := pgtest.New(t)
	anexarAssinar(t, forkSt2, chave, fork[:b])
	code, out, errOut = monitor(servirLog(t, forkSt2, chave))
	if code != 1 || !strings.Contains(errOut, "FALHA checkpoint.raiz") {
		t.Errorf("fork of the same size: %d %q %q", code, out, errOut)
	}
	depois, err := os.ReadFile(filepath.Join(dir, log.ArquivoMonitor))
	if err != nil || !bytes.Equal(guardado, depois) {
		t.Errorf("the forks changed the kept state (%v)", err)
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("DIR holds %d files after the forks, want 1", len(es))
	}
	// The real log goes on: the kept state still verifies it.
	anexarAssinar(t, st, chave, historia[b:])
	code, out, errOut = monitor(url)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("monitor: de=%d para=%d novos=%d divergencias=0", b, n, n-b)) {
		t.Fatalf("after the forks: %d %q %q", code, out, errOut)
	}
}
