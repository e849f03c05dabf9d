package log_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/eliminacao"
	"github.com/formigueiro/d6a/internal/equidade"
	"github.com/formigueiro/d6a/internal/estatisticas"
	"github.com/formigueiro/d6a/internal/historico"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/transparencia"
)

// Spec 2.2 / N-0d on the log (CONTRACT §7 "Erasure is a record"):
// erasing a citizen blanks every record that names them and appends a
// signed d6a.eliminacao record of their indices; the leaf hashes stay, so
// the new checkpoint extends the old one, every other draw and the whole
// log still verify and replay, and those draws verify as eliminated. The
// fairness statistics fold again without them: the counsellor is gone
// from the route and --estatisticas still agrees.
func TestEliminacaoMantemAArvore(t *testing.T) {
	ctx := context.Background()
	l := novoLogPublico(t)
	l.anexarEAssinar(t, 0, 50)
	c := l.cliente()
	antes, _, err := c.Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	alvo := historico.RegistroSintetico("teste", 21)
	cidadao := alvo.ConselheiroID
	apurar(t, l)
	if r, err := estatisticas.Ler(ctx, l.st); err != nil || !slices.ContainsFunc(r.Conselheiros, func(c equidade.Conselheiro) bool { return c.ID == cidadao.String() }) {
		t.Fatalf("before the erasure the statistics name %s: %v", cidadao, err)
	}
	var esperados []int64
	for i, r := range historico.Registros("teste", 0, 50) {
		b, _ := r.Bytes()
		if containsID(b, cidadao) {
			esperados = append(esperados, int64(i))
		}
	}
	a := eliminacao.Assinador{Chave: l.chave, Origem: registro.OrigemPadrao}
	res, err := eliminacao.Cidadao(ctx, l.st, a, cidadao)
	if err != nil || len(res.Apagados) != len(esperados) || len(res.Apagados) == 0 {
		t.Fatalf("eliminated %v, %v; want the %d records naming %s", res.Apagados, err, len(esperados), cidadao)
	}
	if !slices.Equal(res.Registro.Indices, esperados) {
		t.Fatalf("d6a.eliminacao lists %v, want %v", res.Registro.Indices, esperados)
	}
	depois, _, err := c.Checkpoint(ctx)
	if err != nil || depois.Tamanho != 51 {
		t.Fatalf("the erasure record is not signed: %+v %v", depois, err)
	}
	if err := c.ConferirExtensao(ctx, antes, depois); err != nil {
		t.Fatalf("the checkpoint after the erasure does not extend the one before: %v", err)
	}
	f, err := transparencia.Folhas(ctx, l.st.Pool, 50, 51, 1)
	if err != nil || len(f) != 1 || containsID(f[0].Registro, cidadao) {
		t.Fatalf("erasure record: %v %v", f, err)
	}
	if lido, err := registro.LerRegistravel(f[0].Registro); err != nil || lido.(registro.Eliminacao).EventID != res.Registro.EventID {
		t.Fatalf("erasure record %s: %v", f[0].Registro, err)
	}
	s, err := c.VerificarSorteio(ctx, alvo.EventIDSorteio)
	if err != nil || !s.Eliminado || s.Indice != 21 {
		t.Fatalf("eliminated draw: %+v %v", s, err)
	}
	outro := historico.RegistroSintetico("teste", 22)
	if s, err := c.VerificarSorteio(ctx, outro.EventIDSorteio); err != nil || s.Eliminado {
		t.Fatalf("untouched draw: %+v %v", s, err)
	}
	tudo, cp, err := c.VerificarTudo(ctx, nil)
	if err != nil || tudo.Falhas != 0 || tudo.Eliminados != int64(len(res.Apagados)) || tudo.Verificados != 51-tudo.Eliminados || cp.Raiz != depois.Raiz {
		t.Fatalf("log after elimination: %+v %v", tudo, err)
	}
	// The statistics: folded again, without the citizen, and they verify.
	apurar(t, l)
	if b, err := get(l.url + "/d6a/transparencia/estatisticas"); err != nil || !strings.Contains(b, `"conselheiros"`) || strings.Contains(b, cidadao.String()) {
		t.Fatalf("after the erasure the statistics still name %s (%v)", cidadao, err)
	}
	if _, _, err := c.VerificarEstatisticas(ctx, nil); err != nil {
		t.Fatalf("--estatisticas after the erasure: %v", err)
	}
	// Twice is a no-op (no second record); an unknown draw is reported.
	if r, err := eliminacao.Sorteio(ctx, l.st, a, alvo.EventIDSorteio); len(r.Apagados) != 0 || err != nil {
		t.Errorf("second elimination: %v %v", r, err)
	}
	if r, err := eliminacao.Cidadao(ctx, l.st, a, cidadao); len(r.Apagados) != 0 || err != nil {
		t.Errorf("second erasure of the citizen: %v %v", r, err)
	}
	if n, _ := transparencia.Tamanho(ctx, l.st.Pool); n != 51 {
		t.Errorf("a no-op erasure appended: size %d", n)
	}
	if _, err := eliminacao.Sorteio(ctx, l.st, a, uuid.New()); !errors.Is(err, transparencia.ErrNaoEncontrado) {
		t.Errorf("unknown draw: %v", err)
	}
	// The log keeps growing and signing after an elimination.
	historico.Anexar(t, l.st, historico.Registros("teste", 50, 60))
	if _, err := transparencia.Assinar(ctx, l.st.Pool, l.chave, registro.OrigemPadrao); err != nil {
		t.Fatal(err)
	}
	if res, _, err := c.VerificarTudo(ctx, nil); err != nil || res.Registros != 61 || res.Falhas != 0 {
		t.Fatalf("after growing: %+v %v", res, err)
	}
}

func get(url string) (string, error) {
	r, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	return string(b), err
}

// apurar folds every signed record into the statistics.
func apurar(t *testing.T, l *logPublico) {
	t.Helper()
	for {
		n, err := estatisticas.Apurar(context.Background(), l.st, 0)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}

func containsID(b []byte, id uuid.UUID) bool { return strings.Contains(string(b), id.String()) }

// The conselheiro.sorteado a citizen holds is checked against the record.
func TestConferirEvento(t *testing.T) {
	r := historico.RegistroSintetico("teste", 9)
	pl := map[string]any{
		"conselheiro_id": r.ConselheiroID.String(), "demanda_id": r.DemandaID.String(),
		"unidade_civica_id": r.UnidadeCivicaID.String(), "metodo_sorteio": "fisher_yates",
		"seed_publico": r.Seed, "lista_elegiveis_hash": r.ListaElegiveisHash, "posicao_sorteada": 0,
		"total_elegiveis": len(r.ElegiveisEntrada), "timestamp": r.Timestamp,
	}
	env := map[string]any{"event_id": r.EventIDSorteio.String(), "tipo": "conselheiro.sorteado", "origem": "D-6a",
		"versao_schema": "1.0.0", "correlacao_id": nil, "timestamp": r.Timestamp, "payload": pl}
	for _, v := range []any{env, pl} {
		b, _ := json.Marshal(v)
		if err := registro.ConferirEvento(r, b); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
	}
	pl["conselheiro_id"] = r.Ordenados[len(r.Ordenados)-1]
	b, _ := json.Marshal(env)
	if err := registro.ConferirEvento(r, b); campoDaFalha(err) != "evento.payload.conselheiro_id" && len(r.Ordenados) > 1 {
		t.Errorf("other winner: %v", err)
	}
	pl["conselheiro_id"] = r.ConselheiroID.String()
	env["event_id"] = uuid.NewString()
	b, _ = json.Marshal(env)
	if err := registro.ConferirEvento(r, b); campoDaFalha(err) != "evento.event_id" {
		t.Errorf("other event: %v", err)
	}
}
