package log_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	navegador_ "github.com/formigueiro/d6a/internal/navegador"
	"github.com/formigueiro/d6a/internal/pgtest"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/sorteio"
	"github.com/formigueiro/d6a/internal/transparencia"
)

func idPagina(s string) uuid.UUID { return uuid.NewSHA1(uuid.NameSpaceOID, []byte("pagina/"+s)) }

func seqPagina(n int64) *int64 { return &n }

// sortearPagina is the draw of demanda among lista (lista[0] wins when
// alone) under trigger s, at second s.
func sortearPagina(t *testing.T, nome string, s int64, demanda, uc uuid.UUID, cadeia []uuid.UUID, lista ...uuid.UUID) registro.Registro {
	t.Helper()
	base, ts := idPagina("gatilho-"+nome).String(), fmt.Sprintf("2026-12-03T10:00:%02d.000Z", s)
	ids := make([]string, len(lista))
	for i, c := range lista {
		ids[i] = c.String()
	}
	res, err := sorteio.Sortear(base, ts, ids)
	if err != nil {
		t.Fatal(err)
	}
	r, err := registro.NovoRegistro(idPagina("sorteio-"+nome), demanda, uc, base, seqPagina(s), ts, res, cadeia[0], cadeia, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// filaPagina is the queue log of cmd/d6a's filaSintetica: a one-counsellor
// neighbourhood under a city, counsellor a registered, d0 drawn to a, d1
// then d2 queued while a is busy, a's cycle end, and the sweep's draw, of
// d1 (honest) or of the newer d2 (rigged). The sweep is record 8, its draw
// record 9.
func filaPagina(t *testing.T, servir uuid.UUID) []registro.Registravel {
	t.Helper()
	bairro, cidade, a := idPagina("bairro"), idPagina("cidade"), idPagina("a")
	cadeia := []uuid.UUID{bairro, cidade}
	sem := func(nome string, s int64, demanda uuid.UUID) registro.SemCandidatos {
		return registro.NovoSemCandidatos(idPagina("sem-"+nome), demanda, bairro, seqPagina(s), fmt.Sprintf("2026-12-03T10:00:%02d.000Z", s), "todos_ocupados", cadeia, 1, 1, nil)
	}
	return []registro.Registravel{
		registro.NovoCadastro(idPagina("cadastro"), seqPagina(1), a, bairro, 1, "disponivel", true),
		registro.NovaVarredura(registro.IDVarredura(idPagina("cadastro")), seqPagina(1), &bairro, nil, "conselheiro.cadastrado"),
		registro.NovaHierarquia(idPagina("h-bairro"), seqPagina(2), bairro, &cidade, 1),
		registro.NovaHierarquia(idPagina("h-cidade"), seqPagina(2), cidade, nil, 0),
		sortearPagina(t, "d0", 2, idPagina("d0"), bairro, cadeia, a),
		sem("d1", 3, idPagina("d1")),
		sem("d2", 4, idPagina("d2")),
		registro.NovoCicloConcluido(idPagina("ciclo"), seqPagina(5), a, idPagina("d0"), "disponivel"),
		registro.NovaVarredura(registro.IDVarredura(idPagina("ciclo")), seqPagina(5), &bairro, nil, "conselheiro.ciclo_concluído"),
		sortearPagina(t, "sweep", 5, servir, bairro, cadeia, a),
	}
}

// servirRegistraveis appends regs to a fresh log, signs it and serves the
// real public API over it.
func servirRegistraveis(t *testing.T, regs []registro.Registravel) string {
	t.Helper()
	ctx := context.Background()
	skey, _, err := transparencia.GerarChave(registro.OrigemPadrao)
	if err != nil {
		t.Fatal(err)
	}
	k, err := transparencia.NovaChave(skey)
	if err != nil {
		t.Fatal(err)
	}
	st := pgtest.New(t)
	if err := pgx.BeginTxFunc(ctx, st.Pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		e, err := transparencia.LerEstado(ctx, tx)
		if err != nil {
			return err
		}
		return e.AnexarRegistraveis(ctx, tx, regs)
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := transparencia.Assinar(ctx, st.Pool, k, registro.OrigemPadrao); err != nil {
		t.Fatal(err)
	}
	return Servir(t, st, k.Verificador)
}

// itemPagina is a list item the page shows: its data-* and its text.
type itemPagina struct {
	Indice, Tipo, Passada, Conselheiro, Texto string
}

func itensNaPagina(t *testing.T, ctx context.Context, sel string) []itemPagina {
	t.Helper()
	l, err := chromedp.Run(ctx, chromedp.Evaluate[[]itemPagina](`Array.from(document.querySelectorAll(`+jsonString(sel)+`)).map(l => ({
		Indice: l.dataset.indice || "", Tipo: l.dataset.tipo || "", Passada: l.dataset.passada || "", Conselheiro: l.dataset.conselheiro || "", Texto: l.textContent}))`))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// conferirDemandaNaPagina asks the page at base "Minha demanda foi passada
// para trás?" for demanda and returns the verdict's data-resultado and
// text, and the demand's timeline.
func conferirDemandaNaPagina(t *testing.T, ctx context.Context, base string, demanda uuid.UUID) (resultado, texto string, linha []itemPagina) {
	t.Helper()
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	if err := chromedp.Do(ctx,
		navegador_.Pagina(base+"/d6a/transparencia/"),
		chromedp.WaitVisible(css("#demanda-id")),
		chromedp.SendKeys(css("#demanda-id"), demanda.String()),
		chromedp.Click(css("#conferir-demanda")),
		chromedp.WaitVisible(css("#demanda-veredito[data-resultado]")),
	); err != nil {
		t.Fatalf("page %s, demand's check of %s: %v", base, demanda, err)
	}
	a, err := chromedp.Run(ctx, chromedp.AttributeValue(css("#demanda-veredito"), "data-resultado"))
	if err != nil {
		t.Fatal(err)
	}
	if texto, err = chromedp.Run(ctx, chromedp.Text(css("#demanda-veredito"))); err != nil {
		t.Fatal(err)
	}
	return a.Value, texto, itensNaPagina(t, ctx, "#linha-demanda li")
}

// reproduzirTudoNaPagina asks the page at base "Todas as decisões seguem
// do log?" and returns the panel's state, its summary and its divergences.
func reproduzirTudoNaPagina(t *testing.T, ctx context.Context, base string) (estado, resumo string, divs []itemPagina) {
	t.Helper()
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	if err := chromedp.Do(ctx,
		navegador_.Pagina(base+"/d6a/transparencia/"),
		chromedp.WaitVisible(css("#reproduzir")),
		chromedp.Click(css("#reproduzir")),
	); err != nil {
		t.Fatalf("page %s, whole-log replay: %v", base, err)
	}
	espera, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	if err := chromedp.Do(espera, chromedp.WaitVisible(css("#replay[data-estado] [data-resumo]"))); err != nil {
		diag, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify({painel: document.getElementById("replay").outerHTML.slice(0, 500), barra: document.getElementById("progresso-tudo").outerHTML})`))
		t.Fatalf("page %s, whole-log replay: %v; %s", base, err, diag)
	}
	a, err := chromedp.Run(ctx, chromedp.AttributeValue(css("#replay"), "data-estado"))
	if err != nil {
		t.Fatal(err)
	}
	if resumo, err = chromedp.Run(ctx, chromedp.Text(css("#replay [data-resumo]"))); err != nil {
		t.Fatal(err)
	}
	return a.Value, resumo, itensNaPagina(t, ctx, "#divergencias li")
}

// conferirConselheiroNaPagina asks the page at base "Fui deixado de fora
// de algum sorteio?" for conselheiro and returns the panel's state and
// summary, and the decisions it listed.
func conferirConselheiroNaPagina(t *testing.T, ctx context.Context, base string, conselheiro uuid.UUID) (estado, resumo string, itens []itemPagina) {
	t.Helper()
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	if err := chromedp.Do(ctx,
		navegador_.Pagina(base+"/d6a/transparencia/"),
		chromedp.WaitVisible(css("#conselheiro-id")),
		chromedp.SendKeys(css("#conselheiro-id"), conselheiro.String()),
		chromedp.Click(css("#conferir")),
		chromedp.WaitVisible(css("#conselheiro[data-estado] [data-resumo]")),
	); err != nil {
		t.Fatalf("page %s, counsellor's check: %v", base, err)
	}
	a, err := chromedp.Run(ctx, chromedp.AttributeValue(css("#conselheiro"), "data-estado"))
	if err != nil {
		t.Fatal(err)
	}
	if resumo, err = chromedp.Run(ctx, chromedp.Text(css("#conselheiro [data-resumo]"))); err != nil {
		t.Fatal(err)
	}
	return a.Value, resumo, itensNaPagina(t, ctx, "#cobertura li")
}

func acharItem(l []itemPagina, indice, tipo string) (itemPagina, bool) {
	for _, it := range l {
		if it.Indice == indice && (tipo == "" || it.Tipo == tipo) {
			return it, true
		}
	}
	return itemPagina{}, false
}

// The page's demand's own check (CONTRACT §7 "A demand's own check"), in
// Chromium, as `d6a verify --url --demanda`: on the honest queue log d1's
// timeline shows its entry and its draw and nothing passed it over, d2's
// shows the sweep that served the older d1; on the log whose sweep served
// the newer d2 the page says d1 was passed over, by that sweep's record,
// naming d2, and the whole-log replay finds the draw that served d2.
func TestPaginaDemandaPassadaParaTras(t *testing.T) {
	ctx := navegador(t)
	d1, d2 := idPagina("d1"), idPagina("d2")

	honesto := servirRegistraveis(t, filaPagina(t, d1))
	res, texto, linha := conferirDemandaNaPagina(t, ctx, honesto, d1)
	entrou, ok1 := acharItem(linha, "5", "sem_candidatos")
	sorteada, ok2 := acharItem(linha, "9", "sorteio")
	if res != "ok" || !strings.Contains(texto, "Nenhuma liberação a passou para trás") || !ok1 || !strings.Contains(entrou.Texto, "desde o registro 5") ||
		!ok2 || !strings.Contains(sorteada.Texto, "sorteada para o conselheiro "+idPagina("a").String()) {
		t.Errorf("honest log, d1: %s %q %+v", res, texto, linha)
	}
	res, texto, linha = conferirDemandaNaPagina(t, ctx, honesto, d2)
	varredura, ok := acharItem(linha, "8", "liberacao")
	if res != "ok" || !ok || varredura.Passada != "false" || !strings.Contains(varredura.Texto, "serviu a demanda "+d1.String()+" (registro 9)") {
		t.Errorf("honest log, d2: %s %q %+v", res, texto, linha)
	}
	estado, resumo, divs := reproduzirTudoNaPagina(t, ctx, honesto)
	if estado != "ok" || len(divs) != 0 || !strings.HasPrefix(resumo, "Todas as 4 decisões") {
		t.Errorf("honest log, whole replay: %s %q %+v", estado, resumo, divs)
	}
	if res, texto, _ = conferirDemandaNaPagina(t, ctx, honesto, uuid.New()); res != "desconhecida" {
		t.Errorf("unknown demand: %s %q", res, texto)
	}

	rigado := servirRegistraveis(t, filaPagina(t, d2))
	res, texto, linha = conferirDemandaNaPagina(t, ctx, rigado, d1)
	varredura, ok = acharItem(linha, "8", "liberacao")
	if res != "falha" || !strings.Contains(texto, "PASSADA PARA TRÁS") || !strings.Contains(texto, "registro 8: ") || !strings.Contains(texto, d2.String()) ||
		!ok || varredura.Passada != "true" || !strings.Contains(varredura.Texto, "serviu a demanda "+d2.String()+" (registro 9)") {
		t.Errorf("rigged log, d1: %s %q %+v", res, texto, linha)
	}
	navegador_.Capturar(t, ctx, "verificacao-demanda.png")
	if res, texto, linha = conferirDemandaNaPagina(t, ctx, rigado, d2); res != "ok" {
		t.Errorf("rigged log, d2 (served out of turn, not passed over): %s %q %+v", res, texto, linha)
	}
	estado, resumo, divs = reproduzirTudoNaPagina(t, ctx, rigado)
	if estado != "falha" || len(divs) != 1 || divs[0].Indice != "9" || !strings.Contains(divs[0].Texto, "a devida era a demanda "+d1.String()+" (na fila desde o registro 5)") {
		t.Errorf("rigged log, whole replay: %s %q %+v", estado, resumo, divs)
	}
}

// The page's whole-log replay checks each decision's chain against the
// hierarquia.uc records (CONTRACT §7 "Hierarchy"): a sorteio.sem_candidatos
// whose chain climbs from the neighbourhood straight to the state, skipping
// the city where counsellor b was available, is a divergence naming the
// record and the unit, and it is judged on the recorded chain, so b is
// found available there; b's own check, which takes the coverage from the
// recorded links, says b was left out of it.
func TestPaginaCadeiaPulaUnidade(t *testing.T) {
	ctx := navegador(t)
	bairro, cidade, estadoUC, a, b := idPagina("bairro"), idPagina("cidade"), idPagina("estado"), idPagina("a"), idPagina("b")
	d0, d1 := idPagina("d0"), idPagina("d1")
	regs := []registro.Registravel{
		// Each registration with its queue sweep (spec 3.10 step 4), as
		// the service records it: the page's replay is the CLI's, which
		// checks that too.
		registro.NovoCadastro(idPagina("cadastro-a"), seqPagina(1), a, bairro, 3, "disponivel", true),
		registro.NovaVarredura(registro.IDVarredura(idPagina("cadastro-a")), seqPagina(1), &bairro, nil, "conselheiro.cadastrado"),
		registro.NovoCadastro(idPagina("cadastro-b"), seqPagina(2), b, cidade, 2, "disponivel", true),
		registro.NovaVarredura(registro.IDVarredura(idPagina("cadastro-b")), seqPagina(2), &cidade, nil, "conselheiro.cadastrado"),
		registro.NovaHierarquia(idPagina("h-bairro"), seqPagina(3), bairro, &cidade, 2),
		registro.NovaHierarquia(idPagina("h-cidade"), seqPagina(3), cidade, &estadoUC, 1),
		registro.NovaHierarquia(idPagina("h-estado"), seqPagina(3), estadoUC, nil, 0),
		sortearPagina(t, "d0", 3, d0, bairro, []uuid.UUID{bairro, cidade, estadoUC}, a),
		registro.NovoSemCandidatos(idPagina("sem-d1"), d1, bairro, seqPagina(4), "2026-12-03T10:00:04.000Z", "todos_ocupados",
			[]uuid.UUID{bairro, estadoUC}, 1, 1, nil),
	}
	base := servirRegistraveis(t, regs)
	sem, hBairro := strconv.Itoa(len(regs)-1), 4 // the sorteio.sem_candidatos; bairro's link
	estado, resumo, divs := reproduzirTudoNaPagina(t, ctx, base)
	if estado != "falha" || len(divs) != 2 || divs[0].Indice != sem ||
		!strings.Contains(divs[0].Texto, fmt.Sprintf("a cadeia sobe da unidade %s para %s, mas pelo registro %d o pai de %s é %s", bairro, estadoUC, hBairro, bairro, cidade)) ||
		divs[1].Indice != sem || divs[1].Conselheiro != b.String() || !strings.Contains(divs[1].Texto, "estava disponível no degrau "+cidade.String()) {
		t.Errorf("chain skipping the city, whole replay: %s %q %+v", estado, resumo, divs)
	}
	estado, resumo, itens := conferirConselheiroNaPagina(t, ctx, base, b)
	if estado != "falha" || !strings.Contains(resumo, "DEIXADO DE FORA de 1 de 1") || len(itens) != 1 || !strings.Contains(itens[0].Texto, "folha "+sem+" ") {
		t.Errorf("chain skipping the city, b's check: %s %q %+v", estado, resumo, itens)
	}
	// a, busy since d0, was never eligible for d1: nothing left a out.
	if estado, resumo, _ = conferirConselheiroNaPagina(t, ctx, base, a); estado != "ok" {
		t.Errorf("a's check: %s %q", estado, resumo)
	}
}
