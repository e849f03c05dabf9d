package log_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/formigueiro/d6a/internal/historico"
	navegador_ "github.com/formigueiro/d6a/internal/navegador"
	"github.com/formigueiro/d6a/internal/pgtest"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/tiles"
	"github.com/formigueiro/d6a/internal/transparencia"
)

// caminhos records the paths a proxy in front of a log was asked for.
type caminhos struct {
	mu sync.Mutex
	l  []string
}

func (c *caminhos) anotar(p string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.l = append(c.l, p)
}

func (c *caminhos) ler() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.l)
}

// The page's whole-log replay runs in a Web Worker on the C2SP tiles: on
// an honest, consistent history (transparencia.HistoriaSintetica, about
// 10,600 records: full tiles and a partial one; one draw eliminated, an
// empty entry whose leaf stays) it reads the checkpoint, the bundles and
// the level-0 hash tiles, never the JSON pages, reports its progress to
// the last record and ends with the root recomputed from the tiles. A
// server that swaps a draw's winner in its bundle is caught by the leaf's
// hash; one that also rewrites that leaf in the hash tile, by the root.
func TestPaginaReplayNosTiles(t *testing.T) {
	ctx := navegador(t)
	regs := historico.HistoriaSintetica("pagina", 200)
	var sorteios []int
	for i, r := range regs {
		if _, ok := r.(registro.Registro); ok {
			sorteios = append(sorteios, i)
		}
	}
	bg := context.Background()
	st := pgtest.New(t)
	if err := pgx.BeginTxFunc(bg, st.Pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		e, err := transparencia.LerEstado(bg, tx)
		if err != nil {
			return err
		}
		return e.AnexarRegistraveis(bg, tx, regs)
	}); err != nil {
		t.Fatal(err)
	}
	l := novoLogPublico(t)
	if _, err := transparencia.Assinar(bg, st.Pool, l.chave, registro.OrigemPadrao); err != nil {
		t.Fatal(err)
	}
	if _, err := transparencia.Eliminar(bg, st.Pool, regs[sorteios[5]].(registro.Registro).EventIDSorteio); err != nil {
		t.Fatal(err)
	}
	real := Servir(t, st, l.chave.Verificador)
	n := len(regs)

	var lidos caminhos
	honesto := adulterador(t, real, func(p string, b []byte) []byte { lidos.anotar(p); return b })
	estado, resumo, divs := reproduzirTudoNaPagina(t, ctx, honesto)
	if estado != "ok" || len(divs) != 0 || !strings.Contains(resumo, fmt.Sprintf(" %d registros reproduzidos", n)) {
		t.Errorf("honest log: %s %q %+v", estado, resumo, divs)
	}
	raiz, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#replay-raiz")))
	if err != nil || !strings.Contains(raiz, "é a do checkpoint") {
		t.Errorf("honest log, root line: %q %v", raiz, err)
	}
	barra, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](
		`(b => ({feito: b.dataset.feito, total: b.dataset.total, oculta: String(b.hidden)}))(document.getElementById("progresso-tudo"))`))
	if err != nil || barra["feito"] != strconv.Itoa(n) || barra["total"] != strconv.Itoa(n) || barra["oculta"] != "true" {
		t.Errorf("progress bar after the replay: %v %v", barra, err)
	}
	ps := lidos.ler()
	ultimo := int64(n / tiles.Width)
	for _, tl := range []tlog.Tile{tiles.Bundle(0, tiles.Width), tiles.Hash(0, 0, tiles.Width), tiles.Bundle(ultimo, n%tiles.Width), tiles.Hash(0, ultimo, n%tiles.Width)} {
		if want := "/d6a/transparencia/" + tiles.Path(tl); !slices.Contains(ps, want) {
			t.Errorf("the replay did not read %s", want)
		}
	}
	// The panel of the latest decisions reads one page of records on
	// load; the replay reads none.
	paginas := 0
	for _, p := range ps {
		if p == "/d6a/transparencia/registros" {
			paginas++
		}
	}
	if paginas > 1 {
		t.Errorf("the page read %d JSON pages of records", paginas)
	}

	k := sorteios[0]
	alvo := regs[k].(registro.Registro)
	b, _ := alvo.Bytes()
	trocado := []byte(strings.Replace(string(b), `"conselheiro_id":"`+alvo.ConselheiroID.String(), `"conselheiro_id":"`+alvo.Ordenados[1], 1))
	if bytes.Equal(b, trocado) {
		t.Fatal("the winner swap changed nothing")
	}
	bundle, folhas := "/d6a/transparencia/"+tiles.Path(tiles.Bundle(int64(k/tiles.Width), tiles.Width)), tiles.Path(tiles.Hash(0, int64(k/tiles.Width), tiles.Width))
	noBundle := func(p string, body []byte) []byte {
		if p == bundle {
			return bytes.Replace(body, b, trocado, 1)
		}
		return body
	}
	estado, resumo, _ = reproduzirTudoNaPagina(t, ctx, adulterador(t, real, noBundle))
	if estado != "falha" || !strings.Contains(resumo, fmt.Sprintf("o registro %d não confere com o hash da sua folha no tile %s", k, folhas)) {
		t.Errorf("a record edited in its bundle: %s %q", estado, resumo)
	}
	antes, depois := tlog.RecordHash(b), tlog.RecordHash(trocado)
	naFolhaTambem := func(p string, body []byte) []byte {
		if p == "/d6a/transparencia/"+folhas {
			return bytes.Replace(body, antes[:], depois[:], 1)
		}
		return noBundle(p, body)
	}
	estado, resumo, _ = reproduzirTudoNaPagina(t, ctx, adulterador(t, real, naFolhaTambem))
	if estado != "falha" || !strings.Contains(resumo, "a raiz recalculada dos tiles") || !strings.Contains(resumo, "não é a do checkpoint assinado") {
		t.Errorf("a record and its leaf edited: %s %q", estado, resumo)
	}
}

// raizServida is the root line of the checkpoint base serves.
func raizServida(t *testing.T, base string) string {
	t.Helper()
	res, err := http.Get(base + "/d6a/transparencia/checkpoint")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	linhas := strings.Split(string(b), "\n")
	if len(linhas) < 3 {
		t.Fatalf("checkpoint %q", b)
	}
	return linhas[2]
}

// trocavel is one address in front of whichever log it points at: a
// browser sees one origin (one localStorage) while the test swaps the
// history behind it.
type trocavel struct {
	alvo atomic.Pointer[url.URL]
	url  string
}

func novoTrocavel(t *testing.T) *trocavel {
	t.Helper()
	tr := &trocavel{}
	p := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(tr.alvo.Load()) }}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	tr.url = srv.URL
	return tr
}

func (tr *trocavel) apontar(t *testing.T, base string) {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	tr.alvo.Store(u)
}

// memoriaNaPagina opens the page at base and returns what its remembered
// checkpoint's panel says: its state and its text.
func memoriaNaPagina(t *testing.T, ctx context.Context, base string) (estado, texto string) {
	t.Helper()
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	if err := chromedp.Do(ctx,
		navegador_.Pagina(base+"/d6a/transparencia/"),
		chromedp.WaitVisible(css("#memoria[data-estado] [data-resumo]")),
	); err != nil {
		t.Fatalf("page %s, remembered checkpoint: %v", base, err)
	}
	a, err := chromedp.Run(ctx, chromedp.AttributeValue(css("#memoria"), "data-estado"))
	if err != nil {
		t.Fatal(err)
	}
	if texto, err = chromedp.Run(ctx, chromedp.Text(css("#memoria [data-resumo]"))); err != nil {
		t.Fatal(err)
	}
	return a.Value, texto
}

// The browser as a witness: the page remembers the checkpoint it verified
// and, on the next visit to the same address, proves from the tiles that
// the new one extends it (20 records, then 300). When the operator swaps
// in a re-signed fork (same key, same origin line, the first 100 records
// the same, then others: 400 records) the page says the log forked, with
// both sizes and roots, and keeps the remembered checkpoint, so it says
// so again on the next visit; a log shorter than the remembered one is a
// fork too.
func TestPaginaCheckpointLembradoApanhaBifurcacao(t *testing.T) {
	ctx := navegador(t)
	l := novoLogPublico(t)
	l.anexarEAssinar(t, 0, 20)
	tr := novoTrocavel(t)
	tr.apontar(t, l.url)
	estado, texto := memoriaNaPagina(t, ctx, tr.url)
	if estado != "primeira" || !strings.Contains(texto, "tamanho 20, raiz ") {
		t.Errorf("first visit: %s %q", estado, texto)
	}
	if estado, texto = memoriaNaPagina(t, ctx, tr.url); estado != "igual" {
		t.Errorf("second visit, same checkpoint: %s %q", estado, texto)
	}
	l.anexarEAssinar(t, 20, 300)
	estado, texto = memoriaNaPagina(t, ctx, tr.url)
	if estado != "estende" || !strings.Contains(texto, "os primeiros 20 dos 300 registros") {
		t.Errorf("grown to 300: %s %q", estado, texto)
	}

	// The fork: another database, the same key.
	st := pgtest.New(t)
	historico.Anexar(t, st, historico.Registros("teste", 0, 100))
	historico.Anexar(t, st, historico.Registros("bifurcacao", 100, 400))
	if _, err := transparencia.Assinar(context.Background(), st.Pool, l.chave, registro.OrigemPadrao); err != nil {
		t.Fatal(err)
	}
	bifurcado := Servir(t, st, l.chave.Verificador)
	tr.apontar(t, bifurcado)
	for visita := range 2 {
		estado, texto = memoriaNaPagina(t, ctx, tr.url)
		if estado != "bifurcado" || !strings.Contains(texto, "O LOG BIFURCOU") || !strings.Contains(texto, "tamanho 300, raiz ") ||
			!strings.Contains(texto, "tamanho 400, raiz "+raizServida(t, bifurcado)) {
			t.Errorf("fork, visit %d: %s %q", visita, estado, texto)
		}
	}
	cor, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector("#memoria [data-resumo] b")).color`))
	if err != nil || cor != "rgb(176, 0, 32)" {
		t.Errorf("the fork is not said in red: %q %v", cor, err)
	}

	// Shrunk: a log of 50 at the same address.
	st2 := pgtest.New(t)
	historico.Anexar(t, st2, historico.Registros("teste", 0, 50))
	if _, err := transparencia.Assinar(context.Background(), st2.Pool, l.chave, registro.OrigemPadrao); err != nil {
		t.Fatal(err)
	}
	tr.apontar(t, Servir(t, st2, l.chave.Verificador))
	if estado, texto = memoriaNaPagina(t, ctx, tr.url); estado != "bifurcado" || !strings.Contains(texto, "o log encolheu") {
		t.Errorf("shrunk: %s %q", estado, texto)
	}
}
