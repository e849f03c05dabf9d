package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	fnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"

	"github.com/formigueiro/d6a/internal/config"
	"github.com/formigueiro/d6a/internal/estatisticas"
	"github.com/formigueiro/d6a/internal/historico"
	"github.com/formigueiro/d6a/internal/httpapi"
	"github.com/formigueiro/d6a/internal/pgtest"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/sorteio"
	"github.com/formigueiro/d6a/internal/testemunha"
	"github.com/formigueiro/d6a/internal/transparencia"
)

// `d6a log-keygen` then `d6a verify --url` against the real public API:
// the exit statuses and lines of CONTRACT §1.
func TestVerifyURL(t *testing.T) {
	bin := d6aBin(t)
	ctx := context.Background()
	code, out, errOut := rodar(t, bin, "log-keygen", "--origin", "teste.example/d6a")
	linhas := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(linhas) != 2 || !strings.HasPrefix(linhas[0], "PRIVATE+KEY+teste.example/d6a+") || !strings.HasPrefix(linhas[1], "teste.example/d6a+") {
		t.Fatalf("log-keygen: %d %q %q", code, out, errOut)
	}
	arquivoChave := filepath.Join(t.TempDir(), "log.key")
	if err := os.WriteFile(arquivoChave, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	chave, err := transparencia.CarregarChave(arquivoChave)
	if err != nil || chave.Verificador != linhas[1] {
		t.Fatalf("key file from log-keygen: %v %q", err, chave.Verificador)
	}

	st := pgtest.New(t)
	var regs []registro.Registro
	for i := range 30 {
		regs = append(regs, historico.RegistroSintetico("cmd", i))
	}
	if err := pgx.BeginTxFunc(ctx, st.Pool, pgx.TxOptions{}, func(tx pgx.Tx) error { return transparencia.Anexar(ctx, tx, regs) }); err != nil {
		t.Fatal(err)
	}
	if _, err := transparencia.Assinar(ctx, st.Pool, chave, "teste.example/d6a"); err != nil {
		t.Fatal(err)
	}
	app, err := httpapi.New(httpapi.Options{Config: config.Config{}, Store: st, ChaveLog: chave.Verificador})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = httpapi.Servir(app, ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	url := "http://" + ln.Addr().String()

	code, out, errOut = rodar(t, bin, "verify", "--url", url, "--all", "--chave", chave.Verificador)
	if code != 0 || !strings.Contains(out, "transparencia: registros=30 verificados=30 falhas=0 raiz=") {
		t.Errorf("--all: %d %q %q", code, out, errOut)
	}
	// The replay (CONTRACT §7): these synthetic draws name counsellors no
	// registration record does, so they are counted unknown, not guessed;
	// and no hierarquia.uc record states the links their chains climb, so
	// every chain is a divergence (CONTRACT §7 "Hierarchy").
	code, out, errOut = rodar(t, bin, "verify", "--url", url, "--all", "--replay", "--chave", chave.Verificador)
	if code != 1 || !strings.Contains(out, "replay: registros=30 decisoes=30 divergencias=30 gatilhos=0 raiz=") ||
		!strings.Contains(errOut, "registro 0: sorteio") || !strings.Contains(errOut, "não tem registro hierarquia.uc antes da decisão") ||
		!strings.Contains(out, "desconhecidos=") || !strings.Contains(out, "gatilhos: não conferidos") {
		t.Errorf("--all --replay: %d %q %q", code, out, errOut)
	}
	code, out, errOut = rodar(t, bin, "verify", "--url", url, "--conselheiro", regs[3].ConselheiroID.String(), "--chave", chave.Verificador)
	if code != 0 || !strings.Contains(out, "linha do tempo") || !strings.Contains(out, "nenhuma decisão o deixou de fora") {
		t.Errorf("--conselheiro: %d %q %q", code, out, errOut)
	}
	if code, _, errOut = rodar(t, bin, "verify", "--url", url, "--replay", "--estatisticas"); code != 2 || !strings.Contains(errOut, "--replay goes with --all") {
		t.Errorf("--replay without --all: %d %q", code, errOut)
	}
	code, out, errOut = rodar(t, bin, "verify", "--url", url, "--event-id", regs[7].EventIDSorteio.String())
	if code != 0 || !strings.HasPrefix(out, "OK event_id="+regs[7].EventIDSorteio.String()+" indice=7") || !strings.Contains(errOut, chave.Verificador) {
		t.Errorf("--event-id, trust on first use: %d %q %q", code, out, errOut)
	}
	// The event a citizen received, compared with the record.
	evento := filepath.Join(t.TempDir(), "evento.json")
	pl := fmt.Sprintf(`{"conselheiro_id":%q,"demanda_id":%q,"unidade_civica_id":%q,"metodo_sorteio":"fisher_yates","seed_publico":%q,"lista_elegiveis_hash":%q,"posicao_sorteada":0,"total_elegiveis":%d,"timestamp":%q}`,
		regs[7].ConselheiroID, regs[7].DemandaID, regs[7].UnidadeCivicaID, regs[7].Seed, regs[7].ListaElegiveisHash, len(regs[7].ElegiveisEntrada), regs[7].Timestamp)
	_ = os.WriteFile(evento, []byte(pl), 0o600)
	if code, out, errOut = rodar(t, bin, "verify", "--url", url, "--event-id", regs[7].EventIDSorteio.String(), "--evento", evento); code != 0 {
		t.Errorf("--evento: %d %q %q", code, out, errOut)
	}
	_ = os.WriteFile(evento, []byte(strings.Replace(pl, regs[7].Seed, strings.Repeat("a", 64), 1)), 0o600)
	if code, out, errOut = rodar(t, bin, "verify", "--url", url, "--event-id", regs[7].EventIDSorteio.String(), "--evento", evento); code != 1 || !strings.Contains(errOut, "evento.seed_publico") {
		t.Errorf("--evento with another seed: %d %q %q", code, out, errOut)
	}
	desde := filepath.Join(t.TempDir(), "checkpoint")
	for i := range 2 {
		if code, out, errOut = rodar(t, bin, "verify", "--url", url, "--desde", desde, "--chave", chave.Verificador); code != 0 {
			t.Errorf("--desde visit %d: %d %q %q", i, code, out, errOut)
		}
	}
	// A witness's cosignature of the checkpoint, stored as the submitter
	// stores one: --quorum 1 with its key passes and names it.
	wskey, wvkey, err := note.GenerateKey(rand.Reader, "w.example/w1")
	if err != nil {
		t.Fatal(err)
	}
	cvkey, err := fnote.VKeyToCosignatureV1(wvkey)
	if err != nil {
		t.Fatal(err)
	}
	cosigner, err := fnote.NewSignerForCosignatureV1(wskey)
	if err != nil {
		t.Fatal(err)
	}
	nota, tam, err := transparencia.UltimoCheckpoint(ctx, st.Pool)
	if err != nil {
		t.Fatal(err)
	}
	texto, _, _ := strings.Cut(nota, "\n\n")
	cossinado, err := note.Sign(&note.Note{Text: texto + "\n"}, cosigner)
	if err != nil {
		t.Fatal(err)
	}
	_, cs, err := registro.Cossinaturas(append([]byte(nota), cossinado[strings.Index(string(cossinado), "\n\n")+2:]...), chave.Verificador, []string{cvkey})
	if err != nil || len(cs) != 1 {
		t.Fatalf("cosignature: %v %v", cs, err)
	}
	if err := testemunha.GravarCossinatura(ctx, st.Pool, tam, cs[0], time.Now()); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = rodar(t, bin, "verify", "--url", url, "--chave", chave.Verificador, "--testemunha", cvkey, "--quorum", "1", "--event-id", regs[7].EventIDSorteio.String())
	if code != 0 || !strings.Contains(out, "OK testemunhas: checkpoint tamanho=30 cossinado por 1 de 1 (quorum 1): w.example/w1 em ") {
		t.Errorf("--testemunha --quorum 1: %d %q %q", code, out, errOut)
	}
	// The fairness statistics, once the service's pass has run.
	if _, err := estatisticas.Apurar(ctx, st, 0); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = rodar(t, bin, "verify", "--url", url, "--chave", chave.Verificador, "--estatisticas")
	if code != 0 || !strings.Contains(out, "estatisticas: registros=30 sorteios=30 ") || !strings.Contains(out, "iguais às servidas") {
		t.Errorf("--estatisticas: %d %q %q", code, out, errOut)
	}
	for _, args := range [][]string{
		{"--url", url, "--testemunha", cvkey, "--quorum", "2", "--all"},
		{"--url", url, "--testemunha", wvkey, "--all"},
		{"--url", url, "--event-id", uuid.NewString()},
		{"--url", url, "--event-id", "nao-uuid"},
		{"--url", "ftp://x", "--all"},
		{"--url", url},
		{"--url", "http://127.0.0.1:1", "--all"},
	} {
		if code, out, errOut = rodar(t, bin, append([]string{"verify"}, args...)...); code != 2 {
			t.Errorf("verify %v: %d, want 2: %q %q", args, code, out, errOut)
		}
	}
	// A server that swaps a winner: exit 1, the failure named.
	b, _ := regs[3].Bytes()
	trocado := strings.Replace(string(b), regs[3].ConselheiroID.String(), uuid.NewString(), 1)
	falso := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, err := http.Get(url + r.URL.RequestURI())
		if err != nil {
			http.Error(w, err.Error(), 502)
			return
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		w.WriteHeader(res.StatusCode)
		// In the JSON routes and, byte for byte, in the entry bundles.
		s := strings.Replace(string(body), strings.ReplaceAll(string(b), `"`, `\"`), strings.ReplaceAll(trocado, `"`, `\"`), 1)
		_, _ = w.Write([]byte(strings.Replace(s, string(b), trocado, 1)))
	}))
	defer falso.Close()
	code, out, errOut = rodar(t, bin, "verify", "--url", falso.URL, "--all", "--chave", chave.Verificador)
	if code != 1 || !strings.Contains(out, "falhas=1") || !strings.Contains(errOut, "FALHA registro 3: hash_folha") {
		t.Errorf("--all over a tampered record: %d %q %q", code, out, errOut)
	}
}

// `verify --url --all --replay` and `--conselheiro` from the binary on a
// rigged log, rebuilt and signed with the operator's own key: one draw's
// list lacks an available counsellor, its order, hash and winner
// recomputed so the record verifies by itself. Both exit 1, naming the
// record and the counsellor (CONTRACT §7).
func TestVerifyURLReplayAdulterado(t *testing.T) {
	bin := d6aBin(t)
	id := func(s string) uuid.UUID { return uuid.NewSHA1(uuid.NameSpaceOID, []byte("adulterado/"+s)) }
	uc, pai := id("uc"), id("pai")
	var lista []string
	var regs []registro.Registravel
	for k := range 3 {
		seq := int64(k + 1)
		c := id(fmt.Sprint("conselheiro", k))
		lista = append(lista, c.String())
		regs = append(regs, registro.NovoCadastro(id(fmt.Sprint("cadastro", k)), &seq, c, uc, 3, "disponivel", true),
			registro.NovaVarredura(registro.IDVarredura(id(fmt.Sprint("cadastro", k))), &seq, &uc, nil, registro.TipoCadastro))
	}
	slices.Sort(lista)
	fora := lista[1]
	rigada := []string{lista[0], lista[2]}
	base, ts, seq := id("gatilho").String(), "2026-12-02T10:00:00.000Z", int64(4)
	res, err := sorteio.Sortear(base, ts, rigada)
	if err != nil {
		t.Fatal(err)
	}
	r, err := registro.NovoRegistro(id("sorteio"), id("demanda"), uc, base, &seq, ts, res, uc, []uuid.UUID{uc, pai}, nil)
	if err != nil || registro.Conferir(r) != nil {
		t.Fatalf("the rigged draw does not verify by itself: %v %v", err, registro.Conferir(r))
	}
	regs = append(regs, registro.NovaHierarquia(id("h-uc"), &seq, uc, &pai, 1), registro.NovaHierarquia(id("h-pai"), &seq, pai, nil, 0), r)

	chave := novaChave(t)
	st := pgtest.New(t)
	anexarAssinar(t, st, chave, regs)
	url := servirLog(t, st, chave)

	code, out, errOut := rodar(t, bin, "verify", "--url", url, "--all", "--chave", chave.Verificador)
	if code != 0 || !strings.Contains(out, "falhas=0") {
		t.Fatalf("--all, every record by itself: %d %q %q", code, out, errOut)
	}
	code, out, errOut = rodar(t, bin, "verify", "--url", url, "--all", "--replay", "--chave", chave.Verificador)
	if code != 1 || !strings.Contains(out, "divergencias=1 ") || !strings.Contains(errOut, "registro 8") || !strings.Contains(errOut, fora) {
		t.Errorf("--all --replay on the rigged log: %d %q %q", code, out, errOut)
	}
	code, out, errOut = rodar(t, bin, "verify", "--url", url, "--conselheiro", fora, "--chave", chave.Verificador)
	if code != 1 || !strings.Contains(out+errOut, "DEIXADO DE FORA") || !strings.Contains(out+errOut, id("demanda").String()) {
		t.Errorf("--conselheiro %s on the rigged log: %d %q %q", fora, code, out, errOut)
	}
}
