package atribuicao_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/manutencao"
	"github.com/formigueiro/d6a/internal/store"
)

// T19: five pending demands and one counsellor: the boot sweep (spec 4.7)
// draws the oldest by data_entrada (not by insertion order); the other four
// stay pending, each with one more failed attempt counted (T35).
func TestT19_FilaPendentesFIFO(t *testing.T) {
	t.Parallel()
	a := novoAmbiente(t, nil)
	cidade := a.uc(uuid.Nil)
	bairro := a.uc(cidade)
	grupo := uuid.New()
	// Inserted out of order; minutes give the order by data_entrada.
	minutos := []int{3, 1, 0, 4, 2}
	demandas := make([]uuid.UUID, len(minutos))
	err := a.st.InTx(a.ctx, func(tx store.Tx) error {
		for i, m := range minutos {
			demandas[i] = uuid.New()
			if err := tx.InserirFilaPendente(a.ctx, store.InserirFilaPendenteParams{
				DemandaID: demandas[i], UnidadeCivicaID: bairro, CategoriaID: "EDU", NivelPrecedencia: 3,
				ScoreFinal: 10.5, GrupoID: &grupo, Agora: a.clk.Now().Add(time.Duration(m-60) * time.Minute),
				EventIDOrigem: uuid.New(),
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	mais := demandas[2] // minute 0
	// A city counsellor serves a neighbourhood's pending demand (spec 4.7).
	novo := a.conselheiro(cidade)

	if err := boot(a); err != nil {
		t.Fatal(err)
	}
	at, err := a.st.Read().BuscarAtribuicaoAtivaPorDemanda(a.ctx, mais)
	if err != nil {
		t.Fatalf("oldest pending demand not drawn: %v", err)
	}
	if at.ConselheiroID != novo || at.CategoriaID != "EDU" || at.NivelPrecedencia != 3 || at.ScoreFinal != 10.5 || !mesmoUUID(at.GrupoID, &grupo) {
		t.Errorf("assignment %+v: wrong counsellor or lost the pending snapshot", at)
	}
	aud, err := a.st.Read().BuscarAuditoria(a.ctx, at.EventIDSorteio)
	if err != nil {
		t.Fatal(err)
	}
	verificarAuditoria(t, aud)
	if aud.Degrau != cidade {
		t.Errorf("degrau %s, want the city", aud.Degrau)
	}
	if _, achou := a.pendente(mais); achou {
		t.Error("drawn demand still pending")
	}
	pend, err := a.st.Read().BuscarTodosPendentes(a.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(pend) != 4 {
		t.Fatalf("%d pending, want 4", len(pend))
	}
	for _, p := range pend {
		if p.DemandaID == mais {
			t.Error("the oldest is still pending")
		}
		if p.TentativasSorteio != 2 {
			t.Errorf("pending %s: tentativas_sorteio %d, want 2", p.DemandaID, p.TentativasSorteio)
		}
		obs := a.outbox("sorteio.sem_candidatos", p.DemandaID.String())
		if len(obs) != 1 {
			t.Errorf("pending %s: %d sorteio.sem_candidatos", p.DemandaID, len(obs))
			continue
		}
		_, pl := envelopePublicado(t, obs[0], "sorteio.sem_candidatos")
		if pl["motivo"] != elegibilidade.TodosOcupados {
			t.Errorf("motivo %v, want todos_ocupados", pl["motivo"])
		}
	}
	// spec 4.5 step 2: offsets seeded at the bus head.
	offs, err := a.st.Read().BuscarTodosOffsets(a.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(offs) != len(evento.Consumidos) {
		t.Errorf("%d offsets seeded, want %d", len(offs), len(evento.Consumidos))
	}
	for _, o := range offs {
		if o.TipoEvento == string(evento.Varredura) {
			continue // the boot's own triggers, handed back since
		}
		if o.LastSequence != seqFixa {
			t.Errorf("offset %s at %d, want %d", o.TipoEvento, o.LastSequence, seqFixa)
		}
	}

	// A second boot changes nothing the first did not: no new draw, no new
	// event; only one more attempt each.
	if err := boot(a); err != nil {
		t.Fatal(err)
	}
	if n := a.contar(`SELECT count(*) FROM d6a.atribuicoes`); n != 1 {
		t.Errorf("%d assignments after a second boot", n)
	}
	if n := len(a.outbox("sorteio.sem_candidatos", "")); n != 4 {
		t.Errorf("%d sorteio.sem_candidatos after a second boot, want 4", n)
	}
	if n := a.contar(`SELECT count(*) FROM d6a.fila_pendentes WHERE tentativas_sorteio = 3`); n != 4 {
		t.Errorf("%d pending rows at attempt 3", n)
	}
}

// boot runs every boot step, as a worker whose consistency check is clean
// does.
// The boot's sweep publishes one trigger per pending demand; they are
// handed back as the bus would.
func boot(a *ambiente) error {
	if err := a.svc.Boot(a.ctx); err != nil {
		return err
	}
	if _, err := manutencao.ReativarVencidos(a.ctx, a.svc, slog.Default()); err != nil {
		return err
	}
	if err := a.svc.BootSorteios(a.ctx); err != nil {
		return err
	}
	a.devolverProprios()
	return nil
}
