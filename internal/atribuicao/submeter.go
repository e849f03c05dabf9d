package atribuicao

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/store"
)

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

// Tx is the unit's transaction.
func (x Unidade) Tx() store.Tx { return x.u.tx }

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
