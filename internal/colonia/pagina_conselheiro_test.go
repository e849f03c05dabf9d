package colonia_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/navegador"
	"github.com/formigueiro/d6a/internal/registro"
)

// conferirNaPagina asks the page at base "Fui deixado de fora de algum
// sorteio?" for conselheiro and returns the panel's state and summary.
func conferirNaPagina(t *testing.T, c context.Context, base string, conselheiro uuid.UUID) (estado, resumo string) {
	t.Helper()
	err := chromedp.Do(c,
		navegador.Pagina(base+"/d6a/transparencia/"),
		chromedp.WaitVisible(chromedp.CSS("#conselheiro-id")),
		chromedp.SendKeys(chromedp.CSS("#conselheiro-id"), conselheiro.String()),
		chromedp.Click(chromedp.CSS("#conferir")),
		chromedp.WaitVisible(chromedp.CSS("#conselheiro[data-estado] [data-resumo]")),
	)
	must(t, err == nil, "page %s, counsellor's check: %v", base, err)
	a, err := chromedp.Run(c, chromedp.AttributeValue(chromedp.CSS("#conselheiro"), "data-estado"))
	must(t, err == nil, "%v", err)
	resumo, err = chromedp.Run(c, chromedp.Text(chromedp.CSS("#conselheiro [data-resumo]")))
	must(t, err == nil, "%v", err)
	return a.Value, resumo
}

// reproduzirNaPagina asks the page at base "Todas as decisões seguem do
// log?" and returns the panel's state, its summary, and the first
// divergence's record index and counsellor ("" when none).
func reproduzirNaPagina(t *testing.T, c context.Context, base string) (estado, resumo, indice, conselheiro string) {
	t.Helper()
	err := chromedp.Do(c,
		navegador.Pagina(base+"/d6a/transparencia/"),
		chromedp.WaitVisible(chromedp.CSS("#reproduzir")),
		chromedp.Click(chromedp.CSS("#reproduzir")),
		chromedp.WaitVisible(chromedp.CSS("#replay[data-estado] [data-resumo]")),
	)
	must(t, err == nil, "page %s, whole-log replay: %v", base, err)
	a, err := chromedp.Run(c, chromedp.AttributeValue(chromedp.CSS("#replay"), "data-estado"))
	must(t, err == nil, "%v", err)
	resumo, err = chromedp.Run(c, chromedp.Text(chromedp.CSS("#replay [data-resumo]")))
	must(t, err == nil, "%v", err)
	d, err := chromedp.Run(c, chromedp.Evaluate[[]string](`(l => l ? [l.dataset.indice, l.dataset.conselheiro] : ["", ""])(document.querySelector("#divergencias li"))`))
	must(t, err == nil && len(d) == 2, "%v %v", d, err)
	return a.Value, resumo, d[0], d[1]
}

// The page's counsellor's check and whole-log replay (CONTRACT §7, issue
// 22), in Chromium: on an honest colony's log the counsellor was in every
// list of their coverage and every decision follows; served a log where
// one draw's list lacks them, the page says they were left out, and of
// which decision, and the replay names that record and that counsellor.
func TestPaginaConselheiroDeixadoDeFora(t *testing.T) {
	t.Parallel()
	ctx := navegador.Abrir(t)
	c, regs, _, _ := historia(t)
	base := "http://" + c.w.Addr.String()
	i := slices.IndexFunc(regs, func(r registro.Registravel) bool {
		s, ok := r.(registro.Registro)
		return ok && len(s.ElegiveisEntrada) >= 2
	})
	must(t, i >= 0, "no draw among two")
	orig := regs[i].(registro.Registro)
	fora := uuid.MustParse(orig.ElegiveisEntrada[0])
	if fora == orig.ConselheiroID {
		fora = uuid.MustParse(orig.ElegiveisEntrada[1])
	}

	estado, resumo := conferirNaPagina(t, ctx, base, fora)
	must(t, estado == "ok" && strings.Contains(resumo, "Nenhuma decisão o deixou de fora"), "honest log: %s %q", estado, resumo)
	estado, resumo, indice, quem := reproduzirNaPagina(t, ctx, base)
	must(t, estado == "ok" && strings.HasPrefix(resumo, "Todas as ") && indice == "", "honest log, whole replay: %s %q, first divergence %s %s", estado, resumo, indice, quem)

	// The same log with record i's list lacking them, the tree rebuilt and
	// signed again with the log's key: what the page reads are the tiles,
	// so a server cannot edit a record without signing the edit.
	rig := slices.Clone(regs)
	sem := orig
	sem.ElegiveisEntrada = slices.DeleteFunc(slices.Clone(orig.ElegiveisEntrada), func(id string) bool { return id == fora.String() })
	rig[i] = sem
	rigado, _ := c.publicarLog(rig)
	estado, resumo = conferirNaPagina(t, ctx, rigado, fora)
	must(t, estado == "falha" && strings.Contains(resumo, "DEIXADO DE FORA de 1"), "rigged log: %s %q", estado, resumo)
	itens, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#cobertura li[data-na-lista=false]")).map(l => l.textContent)`))
	must(t, err == nil && len(itens) == 1 && strings.Contains(itens[0], "folha "+strconv.Itoa(i)+" ") && strings.Contains(itens[0], orig.DemandaID.String()),
		"left-out decisions %v (%v), want record %d of demand %s", itens, err, i, orig.DemandaID)
	navegador.Capturar(t, ctx, "verificacao-conselheiro.png")
	estado, resumo, indice, quem = reproduzirNaPagina(t, ctx, rigado)
	must(t, estado == "falha" && strings.HasPrefix(resumo, "1 de ") && indice == strconv.Itoa(i) && quem == fora.String(),
		"rigged log, whole replay: %s %q, first divergence %s %s, want record %d and %s", estado, resumo, indice, quem, i, fora)
	navegador.Capturar(t, ctx, "verificacao-replay.png")
	c.semDLQ()
}
