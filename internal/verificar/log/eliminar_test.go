package log_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/historico"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/transparencia"
)

// Spec 2.2 / N-0d on the log: eliminating a citizen blanks every record
// that names them; the leaf hashes stay, so the checkpoint, every other
// draw and the whole mirror still verify, and those draws verify as
// eliminated. The checkpoint signed before the elimination stays valid.
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
	var esperados []uuid.UUID
	for _, r := range historico.Registros("teste", 0, 50) {
		b, _ := r.Bytes()
		if containsID(b, cidadao) {
			esperados = append(esperados, r.EventIDSorteio)
		}
	}
	apagados, err := transparencia.EliminarCidadao(ctx, l.st.Pool, cidadao)
	if err != nil || len(apagados) != len(esperados) || len(apagados) == 0 {
		t.Fatalf("eliminated %v, %v; want the %d records naming %s", apagados, err, len(esperados), cidadao)
	}
	s, err := c.VerificarSorteio(ctx, alvo.EventIDSorteio)
	if err != nil || !s.Eliminado || s.Indice != 21 {
		t.Fatalf("eliminated draw: %+v %v", s, err)
	}
	outro := historico.RegistroSintetico("teste", 22)
	if s, err := c.VerificarSorteio(ctx, outro.EventIDSorteio); err != nil || s.Eliminado {
		t.Fatalf("untouched draw: %+v %v", s, err)
	}
	res, cp, err := c.VerificarTudo(ctx, nil)
	if err != nil || res.Falhas != 0 || res.Eliminados != int64(len(apagados)) || res.Verificados != 50-res.Eliminados || cp.Raiz != antes.Raiz {
		t.Fatalf("mirror after elimination: %+v %v", res, err)
	}
	// Twice is a no-op; an unknown draw is reported.
	if ok, err := transparencia.Eliminar(ctx, l.st.Pool, alvo.EventIDSorteio); ok || err != nil {
		t.Errorf("second elimination: %v %v", ok, err)
	}
	if _, err := transparencia.Eliminar(ctx, l.st.Pool, uuid.New()); !errors.Is(err, transparencia.ErrNaoEncontrado) {
		t.Errorf("unknown draw: %v", err)
	}
	// The log keeps growing and signing after an elimination.
	l.anexarEAssinar(t, 50, 60)
	if res, _, err := c.VerificarTudo(ctx, nil); err != nil || res.Registros != 60 || res.Falhas != 0 {
		t.Fatalf("after growing: %+v %v", res, err)
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
