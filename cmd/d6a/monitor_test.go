package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/formigueiro/d6a/internal/pgtest"
	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/tiles"
	"github.com/formigueiro/d6a/internal/transparencia"
)

// anexarAssinar appends regs to st's log and signs a checkpoint of it.
func anexarAssinar(t *testing.T, st *store.Store, chave transparencia.Chave, regs []transparencia.Registravel) {
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
	if _, err := transparencia.Assinar(ctx, st.Pool, chave, transparencia.OrigemPadrao); err != nil {
		t.Fatal(err)
	}
}

func novaChave(t *testing.T) transparencia.Chave {
	t.Helper()
	skey, _, err := transparencia.GerarChave(transparencia.OrigemPadrao)
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
	historia := transparencia.HistoriaSintetica("espelho", 300) // 5,000 registrations, 600 records after
	anexarAssinar(t, st, chave, historia[:3000])
	anexarAssinar(t, st, chave, historia[3000:])
	n := len(historia)
	url := servirLog(t, st, chave)
	dir := t.TempDir()
	code, out, errOut := rodar(t, bin, "verify", "--url", url, "--chave", chave.Verificador, "--espelhar", dir)
	if code != 0 || !strings.Contains(out, "espelho: tamanho=5600 ") || !strings.Contains(out, "espelho verificado: transparencia: registros=5600 verificados=5600 falhas=0") {
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
		if code != 0 || !strings.Contains(out, "replay: registros=5600 decisoes=300 divergencias=0 gatilhos=0 raiz=") {
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
	_ = n
}

// CONTRACT §7 "Monitor": a first run verifies everything, each later run
// only what is new, with the right de/para/novos; a re-signed fork (same
// key, history rewritten below the kept size) exits 1 and leaves DIR
// byte for byte as it was.
func TestMonitor(t *testing.T) {
	bin := d6aBin(t)
	chave := novaChave(t)
	st := pgtest.New(t)
	historia := transparencia.HistoriaSintetica("monitor", 200) // 5,400 records
	anexarAssinar(t, st, chave, historia[:5100])
	url := servirLog(t, st, chave)
	dir := filepath.Join(t.TempDir(), "monitor")
	monitor := func(base string) (int, string, string) {
		return rodar(t, bin, "verify", "--url", base, "--chave", chave.Verificador, "--monitorar", dir)
	}
	code, out, errOut := monitor(url)
	if code != 0 || !strings.Contains(out, "monitor: de=0 para=5100 novos=5100 divergencias=0") || !strings.Contains(out, "replay: registros=5100 decisoes=50 divergencias=0") {
		t.Fatalf("first run: %d %q %q", code, out, errOut)
	}
	anexarAssinar(t, st, chave, historia[5100:5301])
	code, out, errOut = monitor(url)
	if code != 0 || !strings.Contains(out, "monitor: de=5100 para=5301 novos=201 divergencias=0") || !strings.Contains(out, "replay: registros=5301 decisoes=151 divergencias=0") {
		t.Fatalf("second run: %d %q %q", code, out, errOut)
	}
	code, out, errOut = monitor(url)
	if code != 0 || !strings.Contains(out, "monitor: de=5301 para=5301 novos=0 divergencias=0") {
		t.Fatalf("nothing new: %d %q %q", code, out, errOut)
	}
	guardado, err := os.ReadFile(filepath.Join(dir, transparencia.ArquivoMonitor))
	if err != nil {
		t.Fatal(err)
	}
	// The fork: the same key signs a log whose record 5200 differs (a
	// cycle end dropped), then grows past the kept size.
	forkSt := pgtest.New(t)
	fork := append(append([]transparencia.Registravel{}, historia[:5200]...), historia[5201:]...)
	anexarAssinar(t, forkSt, chave, fork)
	forkURL := servirLog(t, forkSt, chave)
	code, out, errOut = monitor(forkURL)
	if code != 1 || !strings.Contains(errOut, "FALHA consistencia") {
		t.Errorf("fork: %d %q %q", code, out, errOut)
	}
	// The same size, another root.
	forkSt2 := pgtest.New(t)
	anexarAssinar(t, forkSt2, chave, fork[:5301])
	code, out, errOut = monitor(servirLog(t, forkSt2, chave))
	if code != 1 || !strings.Contains(errOut, "FALHA checkpoint.raiz") {
		t.Errorf("fork of the same size: %d %q %q", code, out, errOut)
	}
	depois, err := os.ReadFile(filepath.Join(dir, transparencia.ArquivoMonitor))
	if err != nil || !bytes.Equal(guardado, depois) {
		t.Errorf("the forks changed the kept state (%v)", err)
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("DIR holds %d files after the forks, want 1", len(es))
	}
	// The real log goes on: the kept state still verifies it.
	anexarAssinar(t, st, chave, historia[5301:])
	code, out, errOut = monitor(url)
	if code != 0 || !strings.Contains(out, "monitor: de=5301 para=5400 novos=99 divergencias=0") {
		t.Fatalf("after the forks: %d %q %q", code, out, errOut)
	}
}
