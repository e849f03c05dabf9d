package replay

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/registro"
)

// LeitorDeEntradas reads the bus stream's consumed messages in order
// (*bus.Bus is one): with it the replay checks that every message that
// changes eligibility has its record, none dropped (CONTRACT §7).
type LeitorDeEntradas interface {
	Entradas(ctx context.Context, desde uint64, fn func(seq uint64, tipo string, data []byte) error) error
	// MortasDesde is the stream sequences dead-lettered from desde on,
	// with the reason: bad input the service refused, publicly.
	MortasDesde(ctx context.Context, desde uint64) (map[uint64]string, error)
}

// PosicaoConsumida is a LeitorDeEntradas that also tells how far the
// service consumed the bus (*bus.Bus: the ack floor of its durable, read
// without changing it). A message at or below it was acknowledged, so its
// record is in the log already, even when no later record follows it
// (CONTRACT §7 "Consumed is not ahead").
type PosicaoConsumida interface {
	ConsumidoAte(ctx context.Context) (uint64, error)
}

// barramento is the replay's side of the "none dropped" check: the bus's
// input messages from the first sequence under the trigger's rule, merged
// with the records in stream order.
type barramento struct {
	mensagens []registro.MensagemEntrada
	proxima   int
	// ativas is the demand each counsellor holds by the records (a
	// refusal of another pair changes nothing, spec 3.12).
	ativas map[uuid.UUID]uuid.UUID
	// vistos are the event ids of the input records.
	vistos   map[uuid.UUID]bool
	omitidas map[uuid.UUID]*registro.Falha
	mortas   map[uint64]string
	ultima   uint64
	// Consumido is the bus's consumed position (PosicaoConsumida), read
	// before the log: messages up to it are judged, never "ahead".
	Consumido uint64
	// Mensagens is how many input messages of the bus were checked,
	// Registradas how many of them have their record, SemEfeito how many
	// change nothing by the records before them (a second registration,
	// a cycle end of a counsellor never registered, a refusal of a pair
	// without an assignment), and Invalidas how many cannot be read (the
	// service dead-letters those). Adiante are those after the last record
	// that names a sequence and past the consumed position: not yet
	// processed, left unjudged. Mortas are
	// those dead-lettered (the dead-letter stream names them and why).
	Mensagens, Registradas, SemEfeito, Invalidas, Mortas, Adiante int64
}

// CarregarMensagens reads the bus's input messages from sequence desde
// (the first one a record under the trigger's rule names).
func (r *Replay) CarregarMensagens(ctx context.Context, b LeitorDeEntradas, desde uint64) error {
	r.mensagens = r.mensagens[:0]
	var err error
	if r.mortas, err = b.MortasDesde(ctx, desde); err != nil {
		return err
	}
	return b.Entradas(ctx, desde, func(seq uint64, tipo string, data []byte) error {
		m, ok, invalida := registro.LerMensagem(seq, tipo, data)
		switch {
		case invalida:
			r.Invalidas++
		case ok:
			r.mensagens = append(r.mensagens, m)
		}
		return nil
	})
}

// SemBarramento is a replay with no bus to judge messages against: the
// input records' event ids (vistos, what a judged message is looked up
// in) are not kept, so its memory is the state's, not one id per input
// record of the log (issue 39). A monitor keeps them: a later run may
// have the bus.
func (r *Replay) SemBarramento() { r.vistos = nil }

// ComBarramento says whether the replay judges input messages against a
// bus (SemBarramento was not called).
func (r *Replay) ComBarramento() bool { return r.vistos != nil }

// mensagemEm is the loaded bus message at stream sequence seq.
func (r *Replay) mensagemEm(seq int64) (registro.MensagemEntrada, bool) {
	i, ok := slices.BinarySearchFunc(r.mensagens, uint64(seq), func(m registro.MensagemEntrada, s uint64) int { return cmp.Compare(m.Seq, s) })
	if !ok {
		return registro.MensagemEntrada{}, false
	}
	return r.mensagens[i], true
}

// passar merges the bus's input messages below the record's sequence into
// the replay before the record is applied: records follow their triggers'
// stream order, and a message's input record comes before the decisions
// it leads to, so a message not recorded by then is judged on the state
// the records before it give. A record that turns up later (a redelivery
// out of order) clears the judgement.
func (r *Replay) passar(indice int64, reg registro.Registravel) {
	e, entrada := reg.(registro.Entrada)
	if entrada {
		if r.vistos != nil {
			r.vistos[e.EventID] = true
		}
		delete(r.omitidas, e.EventID)
	}
	seq := registro.SeqDe(reg)
	if seq == nil || r.mensagens == nil {
		return
	}
	g := uint64(*seq)
	r.ultima = max(r.ultima, g)
	for r.proxima < len(r.mensagens) && r.mensagens[r.proxima].Seq < g {
		r.julgar(indice, r.mensagens[r.proxima])
		r.proxima++
	}
	if r.proxima < len(r.mensagens) && r.mensagens[r.proxima].Seq == g {
		if m := r.mensagens[r.proxima]; !entrada || e.EventID != m.EventID {
			r.julgar(indice, m)
		} else {
			r.Mensagens++
			r.Registradas++
		}
		r.proxima++
	}
}

// julgar checks one input message that reached indice without its record:
// recorded before (a second delivery of one event), dead-lettered as bad
// input, without effect by the handlers' rules, or dropped.
func (r *Replay) julgar(indice int64, m registro.MensagemEntrada) {
	r.Mensagens++
	if r.vistos[m.EventID] {
		r.Registradas++
		return
	}
	if _, morta := r.mortas[m.Seq]; morta {
		r.Mortas++
		return
	}
	_, conhecido := r.conselheiros[m.Conselheiro]
	semEfeito := false
	switch m.Tipo {
	case registro.TipoCadastro:
		semEfeito = conhecido
	case registro.TipoCicloConcluido:
		semEfeito = !conhecido
	case registro.TipoRecusa:
		semEfeito = r.ativas[m.Conselheiro] != m.Demanda
	case registro.TipoVarredura:
		// Every consumed d6a.varredura is its own record, whatever it
		// finds (CONTRACT §7 "Queue order").
	case registro.TipoProgressao:
		semEfeito = !conhecido // no row whose unit could move (docs/decisions.md)
	}
	if semEfeito {
		r.SemEfeito++
		return
	}
	d := &registro.Falha{Indice: indice, Motivo: fmt.Sprintf("mensagem %d do barramento (%s, event_id %s) muda a elegibilidade e não tem registro no log", m.Seq, m.Tipo, m.EventID)}
	if m.Conselheiro != uuid.Nil {
		c := m.Conselheiro
		d.Conselheiro = &c
		d.Motivo += " (conselheiro " + c.String() + ")"
	}
	r.omitidas[m.EventID] = d
}

// Fechar ends the replay: the input messages up to the last sequence a
// record names are judged, and those still without their record become
// divergences, in log order with the rest.
func (r *Replay) Fechar() {
	if err := r.listas.Pendente(); err != nil {
		r.divergir(r.indice+1, nil, "%v", err)
	}
	r.fechar()
	r.semVarredura()
	for ; r.proxima < len(r.mensagens); r.proxima++ {
		if m := r.mensagens[r.proxima]; m.Seq <= max(r.ultima, r.Consumido) {
			r.julgar(r.indice+1, m)
		} else {
			r.Adiante++
		}
	}
	if len(r.omitidas) == 0 {
		return
	}
	for _, d := range r.omitidas {
		r.Divergencias = append(r.Divergencias, d)
	}
	clear(r.omitidas)
	slices.SortStableFunc(r.Divergencias, func(a, b *registro.Falha) int {
		return cmp.Or(cmp.Compare(a.Indice, b.Indice), cmp.Compare(a.Motivo, b.Motivo))
	})
}
