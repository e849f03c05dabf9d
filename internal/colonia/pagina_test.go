package colonia_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/navegador"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/sorteio"
	"github.com/formigueiro/d6a/internal/verificar/log"
)

// painel opens the verifier page at base and returns the state and the
// summary of the panel id once it has loaded.
func painel(t *testing.T, ctx context.Context, base, id string) (estado, resumo string) {
	t.Helper()
	err := chromedp.Do(ctx,
		navegador.Pagina(base+"/d6a/transparencia/"),
		chromedp.WaitVisible(chromedp.CSS("#"+id+"[data-estado] [data-resumo]")),
	)
	must(t, err == nil, "page %s, panel %s: %v", base, id, err)
	a, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS("#"+id), "data-estado"))
	must(t, err == nil, "%v", err)
	resumo, err = chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#"+id+" [data-resumo]")))
	must(t, err == nil, "%v", err)
	return a.Value, resumo
}

// The verifier page in Chromium (issue 23): it shows the two real
// witnesses' cosignatures checked in the browser and the fairness plot;
// with one witness down the checkpoint is shown as short of cosignatures,
// never green; a server that serves a fork with the honest cosignatures
// is shown as a failure; so is a biased lottery's log.
func TestPaginaTestemunhasEEquidade(t *testing.T) {
	t.Parallel()
	ctx := navegador.Abrir(t)
	c := novaColonia(t, opcoes{})
	skey, vkey := c.chaveDoLog()
	ws := c.comTestemunhas(vkey, "tce.example/w1", "mp.example/w2")
	w1, w2 := ws[0], ws[1]
	c.iniciar()
	c.w.Testemunhas.Intervalo = 200 * time.Millisecond
	base := "http://" + c.w.Addr.String()
	bairro := c.novaUC()
	c.sortearEmCiclos(bairro, 6, 30)
	cli := &log.Cliente{Base: base, Chave: vkey}
	tt, err := cli.VerificarTestemunhas(context.Background(), []string{w1.vkey, w2.vkey}, 2, 20*time.Second)
	must(t, err == nil, "quorum: %v", err)
	c.eventually("statistics over the 30 draws", func() bool {
		r := c.http(http.MethodGet, "/d6a/transparencia/estatisticas", "", nil)
		return r.status == 200 && strings.Contains(string(r.body), `"sorteios":30`)
	})

	estado, resumo := painel(t, ctx, base, "testemunhas")
	must(t, estado == "ok" && strings.Contains(resumo, "2 de 2"), "witnesses panel: %s %q", estado, resumo)
	linhas, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](
		`Object.fromEntries(Array.from(document.querySelectorAll("tr[data-testemunha]")).map(r => [r.dataset.testemunha, r.dataset.estado]))`))
	must(t, err == nil && linhas["log"] == "ok" && linhas[w1.nome] == "ok" && linhas[w2.nome] == "ok", "rows %v %v", linhas, err)
	estado, resumo = painel(t, ctx, base, "equidade")
	must(t, estado == "ok" && strings.Contains(resumo, "Compatível"), "fairness panel: %s %q", estado, resumo)
	pontos, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#grafico-equidade circle").length`))
	must(t, err == nil && pontos == 6, "%d points on the plot, want 6 (%v)", pontos, err)
	// The page opens on the log as it stands: its latest decisions, each a
	// link that verifies it.
	_, resumo = painel(t, ctx, base, "log")
	must(t, strings.Contains(resumo, fmt.Sprintf("O log tem %d registros", c.tamanhoLog())), "log panel: %q", resumo)
	links, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#ultimas a[data-event-id]")).map(a => a.dataset.eventId)`))
	itens, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#ultimas li")).map(l => l.textContent)`))
	must(t, err == nil && len(links) == 10, "%d links to the latest decisions (%v) %v", len(links), err, itens)
	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#ultimas a[data-event-id]")), chromedp.WaitVisible(chromedp.CSS("#veredito[data-resultado]")))
	must(t, err == nil, "%v", err)
	clicado, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS("#veredito"), "data-resultado"))
	must(t, err == nil && clicado.Value == "ok", "the latest decision's check: %q %v", clicado.Value, err)
	navegador.Capturar(t, ctx, "verificacao-pagina.png")

	// A sorteio.sem_candidatos is a record too: the page checks its motive.
	vazia := c.novaUC()
	dv, _ := c.novaDemanda(vazia)
	c.esperarOutboxVazio()
	sem := porDemanda(c.publicados(evento.SorteioSemCandidatos), dv)
	must(t, len(sem) == 1, "%d sorteio.sem_candidatos", len(sem))
	err = chromedp.Do(ctx,
		navegador.Pagina(base+"/d6a/transparencia/?id="+sem[0]["event_id"].(string)),
		chromedp.WaitVisible(chromedp.CSS("#veredito[data-resultado]")),
	)
	must(t, err == nil, "%v", err)
	passos, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](
		`Object.fromEntries(Array.from(document.querySelectorAll("tr[data-passo]")).map(r => [r.dataset.passo.split(" (")[0], r.dataset.estado]))`))
	must(t, err == nil, "%v", err)
	veredito, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS("#veredito"), "data-resultado"))
	must(t, err == nil && veredito.Value == "ok" && passos["Sem candidatos: motivo pelas contagens"] == "ok", "sem_candidatos on the page: %s %v", veredito.Value, passos)

	// One witness down: the next checkpoint is short of cosignatures.
	w2.parar()
	d, s := c.novaDemanda(bairro)
	must(t, s != uuid.Nil, "no draw")
	c.processar(evento.CicloConcluido, "1.0.0", ciclo(s, d, bairro))
	_, err = cli.VerificarTestemunhas(context.Background(), []string{w1.vkey}, 1, 20*time.Second)
	must(t, err == nil, "quorum 1: %v", err)
	estado, resumo = painel(t, ctx, base, "testemunhas")
	must(t, estado == "aviso" && strings.Contains(resumo, "1 de 2"), "witnesses panel with one down: %s %q", estado, resumo)

	// A fork served with the honest cosignatures of its size.
	signer, err := note.NewSigner(skey)
	must(t, err == nil, "%v", err)
	falsa := tlog.Hash(sha256.Sum256([]byte("outra história")))
	bifurcado, err := note.Sign(&note.Note{Text: registro.Checkpoint{Origem: c.cfg.LogOrigin, Tamanho: tt.Checkpoint.Tamanho, Raiz: falsa}.Texto()}, signer)
	must(t, err == nil, "%v", err)
	for _, cs := range tt.Cossinaturas {
		bifurcado = append(bifurcado, cs.Linha...)
	}
	alvo, _ := url.Parse(base)
	proxy := httputil.NewSingleHostReverseProxy(alvo)
	proxy.ModifyResponse = func(r *http.Response) error {
		if strings.HasSuffix(r.Request.URL.Path, "/transparencia/checkpoint") {
			r.Body.Close()
			r.Body = io.NopCloser(bytes.NewReader(bifurcado))
			r.ContentLength = int64(len(bifurcado))
			r.Header.Set("Content-Length", strconv.Itoa(len(bifurcado)))
			r.Header.Del("Etag")
		}
		return nil
	}
	garfo := httptest.NewServer(proxy)
	defer garfo.Close()
	estado, resumo = painel(t, ctx, garfo.URL, "testemunhas")
	must(t, estado == "falha" && strings.Contains(resumo, "FALHA"), "forked checkpoint: %s %q", estado, resumo)
	navegador.Capturar(t, ctx, "verificacao-bifurcacao.png")

	// A lottery whose lowest id always wins.
	v := novaColonia(t, opcoes{embaralhar: func(b, ts, rnd string, ids []string) (sorteio.Resultado, error) {
		r, err := sorteio.SortearComRodada(b, ts, rnd, ids)
		if err == nil {
			r.Selecionado = r.Entrada[0]
		}
		return r, err
	}})
	v.iniciar()
	v.sortearEmCiclos(v.novaUC(), 6, 30)
	v.eventually("statistics over the biased draws", func() bool {
		r := v.http(http.MethodGet, "/d6a/transparencia/estatisticas", "", nil)
		return r.status == 200 && strings.Contains(string(r.body), `"sorteios":30`)
	})
	estado, resumo = painel(t, ctx, "http://"+v.w.Addr.String(), "equidade")
	must(t, estado == "falha" && strings.Contains(resumo, "SUSPEITO"), "biased lottery: %s %q", estado, resumo)
	fora, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#grafico-equidade circle[data-fora='1']").length`))
	must(t, err == nil && fora >= 1, "%d points outside the band for a biased lottery (%v)", fora, err)
	navegador.Capturar(t, ctx, "verificacao-vies.png")
}
