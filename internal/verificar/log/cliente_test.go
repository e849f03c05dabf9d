package log_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/formigueiro/d6a/internal/config"
	"github.com/formigueiro/d6a/internal/historico"
	"github.com/formigueiro/d6a/internal/httpapi"
	"github.com/formigueiro/d6a/internal/pgtest"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/transparencia"
	"github.com/formigueiro/d6a/internal/verificar/log"
)

// logPublico is a database with a log, a key and the real HTTP API.
type logPublico struct {
	st    *store.Store
	chave transparencia.Chave
	url   string
}

func novoLogPublico(t *testing.T) *logPublico {
	t.Helper()
	skey, _, err := transparencia.GerarChave(registro.OrigemPadrao)
	if err != nil {
		t.Fatal(err)
	}
	chave, err := transparencia.NovaChave(skey)
	if err != nil {
		t.Fatal(err)
	}
	st := pgtest.New(t)
	return &logPublico{st: st, chave: chave, url: Servir(t, st, chave.Verificador)}
}

// Servir serves the real public API of st on a loopback port.
func Servir(t testing.TB, st *store.Store, vkey string) string {
	t.Helper()
	app, err := httpapi.New(httpapi.Options{Config: config.Config{}, Store: st, ChaveLog: vkey})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = httpapi.Servir(app, ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	return "http://" + ln.Addr().String()
}

func (l *logPublico) anexarEAssinar(t *testing.T, de, ate int) {
	t.Helper()
	historico.Anexar(t, l.st, historico.Registros("teste", de, ate))
	if _, err := transparencia.Assinar(context.Background(), l.st.Pool, l.chave, registro.OrigemPadrao); err != nil {
		t.Fatal(err)
	}
}

func (l *logPublico) cliente() *log.Cliente {
	return &log.Cliente{Base: l.url, Chave: l.chave.Verificador}
}

func campoDaFalha(err error) string {
	var f *registro.Falha
	if errors.As(err, &f) {
		return f.Campo
	}
	return "not a Falha: " + errorString(err)
}

func errorString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

// The public path end to end: one draw, the whole log, the watcher.
func TestClienteVerificaPeloHTTP(t *testing.T) {
	ctx := context.Background()
	l := novoLogPublico(t)
	l.anexarEAssinar(t, 0, 40)
	arquivo := filepath.Join(t.TempDir(), "checkpoint")
	c := l.cliente()
	if _, _, primeira, err := c.VerificarDesde(ctx, arquivo); err != nil || !primeira {
		t.Fatalf("first visit: %v %v", primeira, err)
	}
	l.anexarEAssinar(t, 40, 107)
	for _, i := range []int{0, 39, 106} {
		r := historico.RegistroSintetico("teste", i)
		s, err := c.VerificarSorteio(ctx, r.EventIDSorteio)
		if err != nil || s.Indice != int64(i) || s.Registro.ConselheiroID != r.ConselheiroID || s.Checkpoint.Tamanho != 107 {
			t.Fatalf("draw %d: %+v %v", i, s, err)
		}
	}
	res, cp, err := c.VerificarTudo(ctx, nil)
	if err != nil || res.Registros != 107 || res.Verificados != 107 || res.Falhas != 0 || res.Raiz != cp.Raiz {
		t.Fatalf("all: %+v %v", res, err)
	}
	if !strings.HasPrefix(res.Linha(), "transparencia: registros=107 verificados=107 falhas=0 raiz=") {
		t.Errorf("summary %q", res.Linha())
	}
	antigo, novo, _, err := c.VerificarDesde(ctx, arquivo)
	if err != nil || antigo.Tamanho != 40 || novo.Tamanho != 107 {
		t.Fatalf("watcher: %d → %d, %v", antigo.Tamanho, novo.Tamanho, err)
	}
	// Trust on first use: no pinned key, the served one is used and named.
	var avisos strings.Builder
	tofu := &log.Cliente{Base: l.url + "/d6a/transparencia/", Avisos: &avisos}
	if _, err := tofu.VerificarSorteio(ctx, historico.RegistroSintetico("teste", 5).EventIDSorteio); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(avisos.String(), l.chave.Verificador) {
		t.Errorf("no trust-on-first-use note: %q", avisos.String())
	}
	// Another key pinned: the signature fails.
	skey, _, _ := transparencia.GerarChave(registro.OrigemPadrao)
	outra, _ := transparencia.NovaChave(skey)
	errada := &log.Cliente{Base: l.url, Chave: outra.Verificador}
	if _, err := errada.VerificarSorteio(ctx, historico.RegistroSintetico("teste", 5).EventIDSorteio); campoDaFalha(err) != "checkpoint" {
		t.Errorf("wrong key: %v", err)
	}
}

// adulterador serves the real API but rewrites what mudar says.
func adulterador(t *testing.T, real string, mudar func(path string, body []byte) []byte) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, err := http.Get(real + r.URL.RequestURI())
		if err != nil {
			http.Error(w, err.Error(), 502)
			return
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		for k, v := range res.Header {
			if k != "Content-Length" && k != "Etag" {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(res.StatusCode)
		_, _ = w.Write(mudar(r.URL.Path, b))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A server that lies is caught: a record edited (winner swapped), a leaf
// hash recomputed to match the edit, history rewritten under the watcher.
func TestClienteApanhaServidorAdulterado(t *testing.T) {
	ctx := context.Background()
	l := novoLogPublico(t)
	l.anexarEAssinar(t, 0, 30)
	alvo := historico.RegistroSintetico("teste", 13)
	b, _ := alvo.Bytes()
	trocado := strings.Replace(string(b), `"conselheiro_id":"`+alvo.ConselheiroID.String(), `"conselheiro_id":"`+alvo.Ordenados[1], 1)
	// In the JSON routes and, byte for byte (same length), in the bundles.
	editar := func(_ string, body []byte) []byte {
		s := strings.Replace(string(body), jsonString(string(b)), jsonString(trocado), 1)
		return []byte(strings.Replace(s, string(b), trocado, 1))
	}
	c := &log.Cliente{Base: adulterador(t, l.url, editar), Chave: l.chave.Verificador}
	if _, err := c.VerificarSorteio(ctx, alvo.EventIDSorteio); campoDaFalha(err) != "hash_folha" {
		t.Errorf("edited record: %v", err)
	}
	res, _, err := c.VerificarTudo(ctx, nil)
	if err != nil || res.Falhas != 1 || res.Verificados != 29 || campoDaFalha(res.Primeira) != "hash_folha" {
		t.Errorf("all over an edited record: %+v %v", res, err)
	}
	// The edit with its leaf hash recomputed: the proof no longer reaches
	// the signed root.
	h := hash64([]byte(trocado))
	orig := hash64(b)
	hOrig, hTrocado := tlog.RecordHash(b), tlog.RecordHash([]byte(trocado))
	editarComHash := func(p string, body []byte) []byte {
		s := strings.Replace(string(editar(p, body)), orig, h, 1)
		return []byte(strings.Replace(s, string(hOrig[:]), string(hTrocado[:]), 1))
	}
	c.Base = adulterador(t, l.url, editarComHash)
	if _, err := c.VerificarSorteio(ctx, alvo.EventIDSorteio); campoDaFalha(err) != "prova_inclusao" {
		t.Errorf("edited record and leaf hash: %v", err)
	}
	if _, _, err := c.VerificarTudo(ctx, nil); campoDaFalha(err) != "raiz" {
		t.Errorf("all over edited record and leaf hash: %v", err)
	}
	// The recomputation itself: a record whose stored leaf is the edited
	// one (an operator who rewrote the database before the first checkpoint)
	// verifies its proof but fails the draw.
	mentira := novoLogPublico(t)
	reg := historico.RegistroSintetico("teste", 13)
	reg.ConselheiroID = uuid.MustParse(reg.Ordenados[1])
	historico.Anexar(t, mentira.st, []registro.Registro{reg})
	if _, err := transparencia.Assinar(ctx, mentira.st.Pool, mentira.chave, registro.OrigemPadrao); err != nil {
		t.Fatal(err)
	}
	if _, err := mentira.cliente().VerificarSorteio(ctx, reg.EventIDSorteio); campoDaFalha(err) != "registro.conselheiro_id" {
		t.Errorf("a lying record: %v", err)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// The API's error answers (CONTRACT §7).
func TestAPIErros(t *testing.T) {
	l := novoLogPublico(t)
	status := func(path string) (int, string) {
		res, err := http.Get(l.url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var e struct{ Erro string }
		_ = json.NewDecoder(res.Body).Decode(&e)
		return res.StatusCode, e.Erro
	}
	if s, _ := status("/d6a/transparencia/checkpoint"); s != 404 {
		t.Errorf("checkpoint of an empty log: %d", s)
	}
	l.anexarEAssinar(t, 0, 5)
	casos := map[string]int{
		"/d6a/transparencia/sorteios/nao-e-uuid":                                                             400,
		"/d6a/transparencia/sorteios/" + uuid.NewString():                                                    404,
		"/d6a/transparencia/sorteios?demanda_id=x":                                                           400,
		"/d6a/transparencia/sorteios?demanda_id=" + uuid.NewString():                                         404,
		"/d6a/transparencia/registros?inicio=-1":                                                             400,
		"/d6a/transparencia/registros?limite=1001":                                                           400,
		"/d6a/transparencia/registros?limite=0":                                                              400,
		"/d6a/transparencia/consistencia?de=0&para=3":                                                        400,
		"/d6a/transparencia/consistencia?de=3&para=6":                                                        400,
		"/d6a/transparencia/consistencia?de=2":                                                               400,
		"/d6a/transparencia/consistencia?de=2&para=5":                                                        200,
		"/d6a/transparencia/registros?inicio=3&limite=2":                                                     200,
		"/d6a/transparencia/chave":                                                                           200,
		"/d6a/transparencia/":                                                                                200,
		"/d6a/transparencia/sorteios?demanda_id=" + historico.Registros("teste", 0, 1)[0].DemandaID.String(): 200,
	}
	for path, want := range casos {
		got, msg := status(path)
		if got != want || (got >= 400 && msg == "") {
			t.Errorf("GET %s: %d %q, want %d", path, got, msg, want)
		}
	}
	res, err := http.Get(l.url + "/d6a/transparencia/consistencia?de=2&para=5")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "immutable") || res.Header.Get("ETag") == "" {
		t.Errorf("consistency proof: Cache-Control %q ETag %q", cc, res.Header.Get("ETag"))
	}
	req, _ := http.NewRequest(http.MethodGet, l.url+"/d6a/transparencia/consistencia?de=2&para=5", nil)
	req.Header.Set("If-None-Match", res.Header.Get("ETag"))
	res2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res2.Body.Close()
	if res2.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match: %d, want 304", res2.StatusCode)
	}
}

var _ = url.Parse
var _ = os.Remove

func hash64(b []byte) string {
	h := tlog.RecordHash(b)
	return base64.StdEncoding.EncodeToString(h[:])
}
