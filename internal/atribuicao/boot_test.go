package atribuicao_test

import (
	"github.com/formigueiro/d6a/internal/atribuicaotest"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/manutencao"
)

// T19: five pending demands and one counsellor: the boot sweep (spec 4.7)
// draws the oldest by data_entrada (not by insertion order); the other four
// stay pending, each with one more failed attempt counted (T35).
func TestT19_FilaPendentesFIFO(t *testing.T) {
	t.Parallel()
	a := atribuicaotest.Novo(t, nil)
	cidade := a.UC(uuid.Nil)
	bairro := a.UC(cidade)
	grupo := uuid.New()
	// Inserted out of order; minutes give the order by data_entrada.
	minutos := []int{3, 1, 0, 4, 2}
	demandas := make([]uuid.UUID, len(minutos))
	for i, m := range minutos {
		demandas[i] = uuid.New()
		if _, err := a.St.Pool.Exec(a.Ctx, `INSERT INTO d6a.fila_pendentes (id, demanda_id, unidade_civica_id, categoria_id,
			nivel_precedencia, score_final, grupo_id, data_entrada, event_id_origem, tentativas_sorteio)
			VALUES (md5('d6a.fila_pendentes|' || ($1::uuid)::text)::uuid, $1::uuid, $2, 'EDU', 3, 10.5, $3, $4, $5, 1)`,
			demandas[i], bairro, grupo, a.Clk.Now().Add(time.Duration(m-60)*time.Minute), uuid.New()); err != nil {
			t.Fatal(err)
		}
	}
	mais := demandas[2] // minute 0
	// A city counsellor serves a neighbourhood's pending demand (spec 4.7).
	novo := a.Conselheiro(cidade)

	if err := boot(a); err != nil {
		t.Fatal(err)
	}
	at, achou, err := a.St.Read().AtribuicaoAtivaDaDemanda(a.Ctx, mais)
	if err != nil || !achou {
		t.Fatalf("oldest pending demand not drawn: %v", err)
	}
	if d := at.Demanda; at.ConselheiroID != novo || d.CategoriaID != "EDU" || d.NivelPrecedencia != 3 || d.ScoreFinal != 10.5 || !atribuicaotest.MesmoUUID(d.GrupoID, &grupo) {
		t.Errorf("assignment %+v: wrong counsellor or lost the pending snapshot", at)
	}
	aud := a.Auditoria(at.EventIDSorteio)
	atribuicaotest.VerificarAuditoria(t, aud)
	if aud.Degrau != cidade {
		t.Errorf("degrau %s, want the city", aud.Degrau)
	}
	if _, achou := a.Pendente(mais); achou {
		t.Error("drawn demand still pending")
	}
	pend, err := a.St.Read().FilaInteira(a.Ctx)
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
		if p.Tentativas != 2 {
			t.Errorf("pending %s: tentativas_sorteio %d, want 2", p.DemandaID, p.Tentativas)
		}
		obs := a.Outbox("sorteio.sem_candidatos", p.DemandaID.String())
		if len(obs) != 1 {
			t.Errorf("pending %s: %d sorteio.sem_candidatos", p.DemandaID, len(obs))
			continue
		}
		_, pl := atribuicaotest.EnvelopePublicado(t, obs[0], "sorteio.sem_candidatos")
		if pl["motivo"] != elegibilidade.TodosOcupados {
			t.Errorf("motivo %v, want todos_ocupados", pl["motivo"])
		}
	}
	// spec 4.5 step 2: offsets seeded at the bus head.
	offs, err := a.St.Pool.Query(a.Ctx, `SELECT tipo_evento, last_sequence FROM d6a.consumer_offset ORDER BY tipo_evento`)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for offs.Next() {
		var tipo string
		var seq int64
		if err := offs.Scan(&tipo, &seq); err != nil {
			t.Fatal(err)
		}
		n++
		if tipo == string(evento.Varredura) {
			continue // the boot's own triggers, handed back since
		}
		if seq != atribuicaotest.SeqFixa {
			t.Errorf("offset %s at %d, want %d", tipo, seq, atribuicaotest.SeqFixa)
		}
	}
	if err := offs.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(evento.Consumidos) {
		t.Errorf("%d offsets seeded, want %d", n, len(evento.Consumidos))
	}

	// A second boot changes nothing the first did not: no new draw, no new
	// event; only one more attempt each.
	if err := boot(a); err != nil {
		t.Fatal(err)
	}
	if n := a.Contar(`SELECT count(*) FROM d6a.atribuicoes`); n != 1 {
		t.Errorf("%d assignments after a second boot", n)
	}
	if n := len(a.Outbox("sorteio.sem_candidatos", "")); n != 4 {
		t.Errorf("%d sorteio.sem_candidatos after a second boot, want 4", n)
	}
	if n := a.Contar(`SELECT count(*) FROM d6a.fila_pendentes WHERE tentativas_sorteio = 3`); n != 4 {
		t.Errorf("%d pending rows at attempt 3", n)
	}
}

// boot runs every boot step, as a worker whose consistency check is clean
// does.
// The boot's sweep publishes one trigger per pending demand; they are
// handed back as the bus would.
func boot(a *atribuicaotest.Ambiente) error {
	if err := a.Svc.Boot(a.Ctx); err != nil {
		return err
	}
	if _, err := manutencao.ReativarVencidos(a.Ctx, a.Svc, slog.Default()); err != nil {
		return err
	}
	if err := a.Svc.BootSorteios(a.Ctx); err != nil {
		return err
	}
	a.DevolverProprios()
	return nil
}

// spec 4.8 at boot: a counsellor marked ocupado without an active
// assignment is freed (disponivel, under a new event id, with the log
// record of the release); one holding an assignment stays ocupado. A
// second boot frees nobody again and logs nothing more.
func TestBootLiberaOcupadoSemAtribuicao(t *testing.T) {
	t.Parallel()
	a := atribuicaotest.Novo(t, nil)
	uc := a.UC(uuid.Nil)
	solto := a.Conselheiro(uc, atribuicaotest.ComStatus(elegibilidade.Ocupado))
	preso := a.Conselheiro(uc, atribuicaotest.ComAtribuicaoAtiva)
	registros := -1
	for _, vez := range []string{"first boot", "second boot"} {
		if err := a.Svc.Boot(a.Ctx); err != nil {
			t.Fatalf("%s: %v", vez, err)
		}
		if s := a.LinhaConselheiro(solto).Status; s != elegibilidade.Disponivel {
			t.Errorf("%s: counsellor occupied without an assignment is %s, want disponivel", vez, s)
		}
		if s := a.LinhaConselheiro(preso).Status; s != elegibilidade.Ocupado {
			t.Errorf("%s: counsellor holding an assignment is %s, want ocupado", vez, s)
		}
		if n := a.Contar(`SELECT count(*) FROM d6a.transparencia_registros r JOIN d6a.conselheiros c
			ON r.event_id_sorteio = c.event_id_ultima_alteracao WHERE c.id = $1`, solto); n != 1 {
			t.Errorf("%s: %d log records of the release under its event id, want 1", vez, n)
		}
		n := a.Contar(`SELECT count(*) FROM d6a.transparencia_registros`)
		if registros >= 0 && n != registros {
			t.Errorf("%s: %d log records, the first boot left %d", vez, n, registros)
		}
		registros = n
	}
}
