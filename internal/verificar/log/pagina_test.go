package log_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/historico"
	navegador_ "github.com/formigueiro/d6a/internal/navegador"
	"github.com/formigueiro/d6a/internal/transparencia"
)

// navegador is Debian's chromium, headless (internal/navegador).
func navegador(t *testing.T) context.Context { return navegador_.Abrir(t) }

// verificarNaPagina types id into the page at base, submits, and returns
// the verdict's data-resultado and text, and each step's state.
func verificarNaPagina(t *testing.T, ctx context.Context, base, id string) (resultado, texto string, estados map[string]string) {
	t.Helper()
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	err := chromedp.Do(ctx,
		navegador_.Pagina(base+"/d6a/transparencia/"),
		chromedp.WaitVisible(css("#id")),
		chromedp.SendKeys(css("#id"), id),
		chromedp.Click(css("#verificar")),
		chromedp.WaitVisible(css("#veredito[data-resultado]")),
	)
	if err != nil {
		t.Fatalf("page with %s: %v", id, err)
	}
	attr, err := chromedp.Run(ctx, chromedp.AttributeValue(css("#veredito"), "data-resultado"))
	if err != nil {
		t.Fatal(err)
	}
	if texto, err = chromedp.Run(ctx, chromedp.Text(css("#veredito"))); err != nil {
		t.Fatal(err)
	}
	passos, err := chromedp.Run(ctx, chromedp.Evaluate[[]map[string]string](
		`Array.from(document.querySelectorAll("tr[data-passo]")).map(r => ({passo: r.dataset.passo, estado: r.dataset.estado}))`))
	if err != nil {
		t.Fatal(err)
	}
	resultado = attr.Value
	estados = map[string]string{}
	for _, p := range passos {
		estados[p["passo"]] = p["estado"]
	}
	return resultado, texto, estados
}

// The verifier page in a real browser: a good draw (every step recomputed
// with WebCrypto agrees), a demand id, a record tampered by the server
// (shown as failure), an eliminated record and an unknown id.
func TestPaginaVerificadorNoChromium(t *testing.T) {
	ctx := navegador(t)
	l := novoLogPublico(t)
	l.anexarEAssinar(t, 0, 23)

	bom := historico.RegistroSintetico("teste", 13)
	res, texto, estados := verificarNaPagina(t, ctx, l.url, bom.EventIDSorteio.String())
	if res != "ok" || len(estados) < 9 {
		t.Fatalf("good draw: %s %q %v", res, texto, estados)
	}
	for passo, e := range estados {
		if e != "ok" {
			t.Errorf("good draw: step %q is %s", passo, e)
		}
	}

	// A demand id: its draws (two per demand in the synthetic family).
	res, texto, estados = verificarNaPagina(t, ctx, l.url, bom.DemandaID.String())
	if res != "ok" {
		t.Errorf("demand: %s %q %v", res, texto, estados)
	}

	// The server swaps the winner in the record it serves.
	b, _ := bom.Bytes()
	trocado := strings.Replace(string(b), `"conselheiro_id":"`+bom.ConselheiroID.String(), `"conselheiro_id":"`+bom.Ordenados[1], 1)
	falso := adulterador(t, l.url, func(_ string, body []byte) []byte {
		return []byte(strings.Replace(string(body), jsonString(string(b)), jsonString(trocado), 1))
	})
	res, texto, estados = verificarNaPagina(t, ctx, falso, bom.EventIDSorteio.String())
	if res != "falha" || !strings.Contains(texto, "FALHA") {
		t.Errorf("tampered record: %s %q", res, texto)
	}
	if estados["Sorteado (1º da lista embaralhada)"] != "falha" || estados["Hash da folha SHA-256(0x00 ‖ registro)"] != "falha" {
		t.Errorf("tampered record: steps %v", estados)
	}

	// Eliminated: the body is gone, the leaf is still proved.
	if _, err := transparencia.Eliminar(context.Background(), l.st.Pool, bom.EventIDSorteio); err != nil {
		t.Fatal(err)
	}
	res, texto, estados = verificarNaPagina(t, ctx, l.url, bom.EventIDSorteio.String())
	if res != "eliminado" || estados["Raiz da árvore pela prova de inclusão (folha 13 de 23)"] != "ok" {
		t.Errorf("eliminated: %s %q %v", res, texto, estados)
	}

	res, texto, _ = verificarNaPagina(t, ctx, l.url, uuid.NewString())
	if res != "nao-encontrado" {
		t.Errorf("unknown id: %s %q", res, texto)
	}
}
