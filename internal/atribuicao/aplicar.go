package atribuicao

import (
	"context"
	"errors"
	"log/slog"

	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/store"
)

// Assignment statuses (spec 2.3).
const (
	AtribuicaoAtiva     = "ativa"
	AtribuicaoRecusada  = "recusada"
	AtribuicaoConcluida = "concluida"
)

// Handle applies one decoded event in one transaction: the handler's effects,
// its outbox rows, the consumer_offset row (spec 2.6) and the inbox row
// commit together. A nil return means the message may be acked; an error
// means nothing was applied and the message should be redelivered.
func (s *Servico) Handle(ctx context.Context, ev evento.Evento, seq uint64) error {
	return s.HandleLote(ctx, []evento.Evento{ev}, []uint64{seq})[0]
}

// HandleLote applies events in this order, as Handle would one by one; they
// may share one transaction (the executor's batch). errs[i] is evs[i]'s.
// Under the beacon rule each unit first gets its trigger's round: a
// decision never runs before its round is out and verified, and the units
// behind it wait with it (stream order).
func (s *Servico) HandleLote(ctx context.Context, evs []evento.Evento, seqs []uint64) []error {
	js := s.aplicacoes(evs, seqs)
	b := s.o.Beacon
	if b == nil {
		return s.executarVarios(ctx, js)
	}
	errs := make([]error, len(js))
	if b.Quorum > 0 {
		if err := s.comprometer(ctx, evs, seqs, js); err != nil {
			for k := range errs {
				errs[k] = err
			}
			return errs
		}
	}
	for i := 0; i < len(js); {
		n, err := b.prontas(ctx, s.log, evs[i:], js[i:])
		if err != nil {
			for k := i; k < len(js); k++ {
				errs[k] = err
			}
			return errs
		}
		copy(errs[i:i+n], s.executarVarios(ctx, js[i:i+n]))
		i += n
	}
	return errs
}

// aplicacoes are the units of work of evs, in this order.
func (s *Servico) aplicacoes(evs []evento.Evento, seqs []uint64) []job {
	js := make([]job, len(evs))
	for i, ev := range evs {
		js[i] = job{
			fn:    s.aplicar(ev, seqs[i]),
			inbox: &store.Processamento{EventID: ev.EventID, Tipo: string(ev.Tipo), Seq: int64(seqs[i])},
		}
		if p, ok := ev.AgendaItemDisponivel(); ok {
			js[i].guarda = &guardaAgenda{eventID: ev.EventID, demandaID: p.DemandaID, uc: p.UnidadeCivicaID, correlacao: ev.Correlacao(p.DemandaID)}
		}
		// A cycle end's, a refusal's and a start's handlers read one
		// counsellor and the queues they sweep after Unidade.Ver, a
		// registration those queues (a counsellor's existence is not the
		// batch's); their draws see the batch's in memory
		// (entradas.onConselheiroCicloConcluido, onConselheiroAtribuicaoRecusada,
		// onDemandaIniciada, onConselheiroCadastrado).
		switch ev.Tipo {
		case evento.CicloConcluido, evento.AtribuicaoRecusada, evento.DemandaIniciada, evento.ConselheiroCadastrado:
			js[i].veLote = true
		}
	}
	return js
}

// Aplicador applies a consumed input inside a unit of work: the handlers
// (internal/entradas), which this package runs and does not import.
type Aplicador interface {
	Aplicar(ctx context.Context, u Unidade, log *slog.Logger, ev evento.Evento) error
}

// ErrSemEntradas is returned for an input when Options.Entradas is nil.
var ErrSemEntradas = errors.New("atribuicao: Options.Entradas não configurado")

// aplicar is the unit of work of one event, whose inbox row the executor
// checks and writes.
func (s *Servico) aplicar(ev evento.Evento, seq uint64) func(context.Context, *unidade) error {
	return func(ctx context.Context, u *unidade) error {
		log := s.log.With("event_id", ev.EventID, "tipo", string(ev.Tipo), "sequence", seq)
		if ev.CorrelacaoID != nil {
			log = log.With("correlacao_id", *ev.CorrelacaoID)
		}
		return u.despachar(ctx, log, ev, seq)
	}
}

// despachar is spec 1.4 despacharEvento: the event at stream sequence seq
// is the trigger of whatever this unit decides (CONTRACT §4), and its
// handler decides.
func (u *unidade) despachar(ctx context.Context, log *slog.Logger, ev evento.Evento, seq uint64) error {
	if !ev.Armazenado.IsZero() {
		u.gatilho = &Gatilho{EventID: ev.EventID, Seq: int64(seq), Armazenado: ev.Armazenado}
	}
	u.evento = &ev
	if u.servico.o.Entradas == nil {
		return ErrSemEntradas
	}
	return u.servico.o.Entradas.Aplicar(ctx, Unidade{u}, log, ev)
}
