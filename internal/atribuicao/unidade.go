package atribuicao

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/outbox"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/store"
)

// unidade is one unit of work as the executor runs it: a transaction, its
// fixed clock reading, and what the unit decided, queued for the batch's
// writer and for after the commit. The packages above see it as Unidade.
type unidade struct {
	// tx runs the unit's statements after the writes queued on adiadas,
	// in the same round trip (store.Tx.Apos).
	tx      store.Tx
	adiadas store.Tx
	agora   time.Time
	// entrada is the stream sequence of the event this unit applies (0:
	// none), recorded with every outbox row it queues.
	entrada int64
	// gatilho is the consumed message this unit's decision follows, the
	// seed's base and T (CONTRACT §4); nil for a unit outside any event
	// (Sortear). sorteou: it already led to a draw.
	gatilho *Gatilho
	sorteou bool
	// rodada is the trigger's beacon round (job.rodada), compromisso its C
	// with witnesses (job.compromisso).
	rodada      *RodadaSorteio
	compromisso time.Time
	// evento is the consumed event this unit applies (nil: none), whose
	// sweep records are named after it.
	evento *evento.Evento
	ids    int      // novoID's count under the trigger
	saida  []Saida  // outbox rows queued, published after commit
	depois []func() // run after commit (metrics)
	// alterados are the citizens whose situation changed (Options.Alterados).
	alterados []uuid.UUID
	// registros are this unit's decisions for the transparency log: draws
	// and sorteio.sem_candidatos outcomes, in decision order.
	registros []registro.Registravel
	servico   *Servico
	// lote is what the batch decided and has not written: every unit adds
	// its decisions to it, and the executor writes them (diferido.gravar).
	lote *diferido
	// corrida: the unit is one of the batch's run of agenda items, whose
	// guards and first steps the executor read ahead (lerAdiante).
	corrida bool
	// veLote: the batch was not written before the unit (job.veLote).
	veLote bool
	// elos are the links the batch's hierarquia.uc records state, written
	// once before its commit.
	elos *elosNovos
}

// Unidade is a unit of work as the packages above the executor see it: the
// handlers of the consumed inputs (internal/entradas, through
// Options.Entradas), the console (internal/console), the periodic jobs
// (internal/manutencao) and the repair after a failover (internal/reparo).
// It is the unit's transaction and fixed clock reading, and the executor's
// own ways of drawing and of queueing what the unit decides, so that what
// goes to the outbox, the log and the situacao cache goes one way. The
// boot uses *unidade itself.
type Unidade struct{ u *unidade }

// Sortear is spec 4.4's draw inside this unit, under its trigger
// (executarSorteio): at most one per trigger (ErrGatilhoUsado).
func (x Unidade) Sortear(ctx context.Context, p Pedido) (Resultado, error) {
	return x.u.executarSorteio(ctx, p)
}

// GuardaAgenda reads spec 3.9's guards of an agenda item (steps 1, 3, 4 and
// spec 5.4's), from the batch's read-ahead when it holds them, with what
// the batch decided and has not written yet counted in.
func (x Unidade) GuardaAgenda(ctx context.Context, a store.AgendaAGuardar) (store.GuardaAgenda, error) {
	u := x.u
	g, lido := u.lote.guardas[a.EventID]
	if !lido {
		var err error
		if g, err = u.tx.GuardaDaAgenda(ctx, a); err != nil {
			return g, err
		}
	}
	g.PendentePeloEvento = g.PendentePeloEvento || u.lote.porEvento[a.EventID]
	g.Atribuida = g.Atribuida || u.lote.atribuidas[a.DemandaID]
	_, naFila := u.lote.pendentesDe[a.DemandaID]
	g.Pendente = g.Pendente || naFila
	g.SemCandidatosPublicado = g.SemCandidatosPublicado || u.lote.correlacoes[a.Correlacao]
	return g, nil
}

// Ver shows the reads that follow about counsellor conselheiro (nil:
// none) and the pending queues of ucs what the batch decided and has not
// written: when a decision touches them (the counsellor drawn, a demand
// queued in one of ucs), the batch's writes are queued before the next
// statement (store.Tx.Apos carries them). The other decisions stay in
// memory, written with the batch's commit. It does nothing in a unit the
// batch was written before (all but a cycle end, a refusal, a start and
// a registration, job.veLote).
func (x Unidade) Ver(ctx context.Context, conselheiro *uuid.UUID, ucs []uuid.UUID) error {
	u := x.u
	if !u.veLote || u.lote.vazio() {
		return nil
	}
	if (conselheiro != nil && u.lote.ocupados[*conselheiro]) || u.lote.naFila(ucs) {
		return u.lote.gravar(ctx, u.adiadas)
	}
	return nil
}

// SeqGatilho is the stream sequence of the unit's trigger, which its
// records name (nil: none, a console action or a periodic job).
func (x Unidade) SeqGatilho() *int64 { return x.u.seqGatilho() }

// RecusaObservada counts a refusal of motivo in the metrics, after the
// commit.
func (x Unidade) RecusaObservada(motivo string) {
	x.u.depois = append(x.u.depois, func() { x.u.servico.o.Observador.Recusa(motivo) })
}

// Submeter runs fn as one unit of work of the executor, under its global
// lock (spec 4.4 comFilaGlobal), and waits for its commit.
func (s *Servico) Submeter(ctx context.Context, fn func(context.Context, Unidade) error) error {
	return s.executar(ctx, func(ctx context.Context, u *unidade) error { return fn(ctx, Unidade{u}) })
}

// Tx is the unit's transaction. It does not show the draws, pending rows
// and outbox rows the batch (this unit included) decided: the executor
// writes them later; Sorteados, GuardaAgenda and the ways of publishing
// count them.
func (x Unidade) Tx() store.Tx { return x.u.tx }

// Adiadas queues the unit's writes whose outcome it does not read: they
// go out with the unit's next statement on Tx, or with the batch's
// writes and COMMIT, so each costs no round trip of its own. A write that
// fails fails the batch, named by its query.
func (x Unidade) Adiadas() store.Tx { return x.u.adiadas }

// Agora is the unit's clock reading.
func (x Unidade) Agora() time.Time { return x.u.agora }

// Parametros is the version of d6a.config in force in this transaction.
func (x Unidade) Parametros(ctx context.Context) (Parametros, error) { return x.u.parametros(ctx) }

// PublicarTimeout queues the response-timeout refusal of an active
// assignment once (timeout.go publicarTimeout).
func (x Unidade) PublicarTimeout(ctx context.Context, a store.AtribuicaoVigente) (id uuid.UUID, nova bool, err error) {
	return x.u.publicarTimeout(ctx, a)
}

// PublicarVarredura queues a sweep's trigger once (varredura.go
// publicarVarredura).
func (x Unidade) PublicarVarredura(ctx context.Context, id uuid.UUID, demanda, uc *uuid.UUID, acao string) (publicada bool, err error) {
	return x.u.publicarVarredura(ctx, id, demanda, uc, acao)
}

// EncerrarSuspensao queues the end of a suspension once (reativacao.go
// encerrarSuspensao).
func (x Unidade) EncerrarSuspensao(ctx context.Context, log *slog.Logger, conselheiro uuid.UUID, ate time.Time, motivo string) error {
	return x.u.encerrarSuspensao(ctx, log, conselheiro, ate, motivo)
}

// Alterou names a citizen whose situation the unit changed.
func (x Unidade) Alterou(cidadao uuid.UUID) { x.u.alterou(cidadao) }

// Registrar adds a decision of the unit to the transparency log.
func (x Unidade) Registrar(r registro.Registravel) { x.u.registros = append(x.u.registros, r) }

// Aplicar applies input ev, at stream sequence seq, inside this unit as its
// consumer would: its handler, then its inbox row. An input already
// processed is left alone (aplicada false). The repair after a failover
// (internal/reparo) applies the inputs the database lost so, in its own
// unit, and looks at what the handler decided before the commit.
func (x Unidade) Aplicar(ctx context.Context, log *slog.Logger, ev evento.Evento, seq uint64) (aplicada bool, err error) {
	u := x.u
	ja, err := u.tx.Processado(ctx, ev.EventID)
	if err != nil || ja {
		return false, err
	}
	if err := u.despachar(ctx, log, ev, seq); err != nil {
		return false, err
	}
	if err := u.tx.RegistrarEntrada(ctx, store.Processamento{
		EventID: ev.EventID, Tipo: string(ev.Tipo), Seq: int64(seq), Agora: u.agora,
	}); err != nil {
		return false, err
	}
	return true, nil
}

// Sorteado is a draw a unit decided: its conselheiro.sorteado's event id
// and its demand.
type Sorteado struct {
	EventID   uuid.UUID
	DemandaID uuid.UUID
}

// Sorteados are the draws this unit decided, in decision order. Like
// every decision they are written by the executor with the batch, so the
// unit's transaction does not show them (Descartar forgets one).
func (x Unidade) Sorteados() []Sorteado {
	var out []Sorteado
	for _, l := range x.u.lote.sorteios {
		if slices.ContainsFunc(x.u.saida, func(s Saida) bool { return s.EventID == l.EventIDSorteio }) {
			out = append(out, Sorteado{EventID: l.EventIDSorteio, DemandaID: l.DemandaID})
		}
	}
	return out
}

// Descartar forgets a draw this unit decided (Sorteados): its assignment,
// audit and outbox rows are never written, its counsellor stays as he was,
// and what the unit queued for it goes, so it is never published nor a
// leaf of the transparency log.
func (x Unidade) Descartar(eventID uuid.UUID) error {
	if !slices.ContainsFunc(x.u.saida, func(s Saida) bool { return s.EventID == eventID }) || !x.u.lote.descartar(eventID) {
		return fmt.Errorf("atribuicao: o sorteio %s não é desta unidade de trabalho", eventID)
	}
	x.u.descartar(eventID)
	return nil
}

// descartar forgets a draw this unit made and undid before its commit: not
// published, not a leaf of the transparency log.
func (u *unidade) descartar(eventID uuid.UUID) {
	u.saida = slices.DeleteFunc(u.saida, func(s Saida) bool { return s.EventID == eventID })
	u.registros = slices.DeleteFunc(u.registros, func(r registro.Registravel) bool {
		switch d := r.(type) {
		case registro.Registro:
			return d.EventIDSorteio == eventID
		case registro.ListaSorteio: // its list records go with it
			return d.EventIDSorteio == eventID
		}
		return false
	})
}

// seqGatilho is the stream sequence of the unit's trigger, for its input
// records (nil: none, a console action or a periodic job).
func (u *unidade) seqGatilho() *int64 {
	if u.gatilho != nil {
		return &u.gatilho.Seq
	}
	return u.entradaSeq()
}

// entradaSeq is the unit's input for an outbox row (nil: none).
func (u *unidade) entradaSeq() *int64 {
	if u.entrada == 0 {
		return nil
	}
	return &u.entrada
}

// novoID is an id for what the unit decides. Under a trigger it is a
// function of the trigger (its event_id and how many ids the unit asked
// for before), laid out as a UUIDv7 stamped with T: the same bus prefix
// gives the same ids, bit for bit, and they still grow in time order
// (docs/decisions.md, "Ids in time order"). Outside any trigger (Sortear)
// they come from Options.NovoID.
func (u *unidade) novoID() uuid.UUID {
	g := u.gatilho
	if g == nil {
		return u.servico.o.NovoID()
	}
	u.ids++
	h := sha256.Sum256(fmt.Appendf(nil, "d6a/id|%s|%d|%d", g.EventID, g.Seq, u.ids))
	var id uuid.UUID
	ms := uint64(g.Armazenado.UnixMilli())
	for i := range 6 {
		id[i] = byte(ms >> (40 - 8*i))
	}
	copy(id[6:], h[:10])
	id[6] = 0x70 | id[6]&0x0f // version 7
	id[8] = 0x80 | id[8]&0x3f // RFC 9562 variant
	return id
}

// publicar queues an event in the outbox of this transaction, with the
// batch's other rows in decision order; the relay publishes it with
// Nats-Msg-Id = event_id. Nothing that fails the schema enters the outbox.
func (u *unidade) publicar(tipo evento.Tipo, eventID uuid.UUID, correlacao, timestamp string, payload any) error {
	data, err := outbox.Envelope(tipo, eventID, correlacao, timestamp, payload)
	if err != nil {
		return err
	}
	subject := tipo.Subject(u.servico.o.SubjectPrefix)
	u.lote.outbox = append(u.lote.outbox, linhaOutbox{
		EventID: eventID, Tipo: string(tipo), Subject: subject, CorrelacaoID: correlacao,
		Envelope: data, CriadoEm: u.agora, EntradaSequence: u.entradaSeq(),
	})
	u.saida = append(u.saida, Saida{EventID: eventID, Subject: subject, Envelope: data})
	return nil
}

// naOutbox reports whether the outbox holds event id, written or still
// the batch's: the guard of the events whose id is fixed (a second path, a
// second pass or a second instance queues nothing).
func (u *unidade) naOutbox(ctx context.Context, id uuid.UUID) (bool, error) {
	if slices.ContainsFunc(u.lote.outbox, func(o linhaOutbox) bool { return o.EventID == id }) {
		return true, nil
	}
	return u.tx.OutboxJaTem(ctx, id)
}

// alterou notes a citizen whose situation this unit of work changed.
func (u *unidade) alterou(cidadao uuid.UUID) { u.alterados = append(u.alterados, cidadao) }
