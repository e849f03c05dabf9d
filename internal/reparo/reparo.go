// Package reparo is the repair after a failover (`d6a verify
// --consistencia --reparar`): when an asynchronous standby was promoted
// without the last commits, the bus holds results and acknowledged inputs
// the database lost (verificar/barramento's Relatorio). The repair gives
// back the lost outbox rows, re-creates the lost draws from their published
// conselheiro.sorteado, and applies the lost inputs with the consumers'
// own handlers, in stream order. It never draws a demand the bus shows
// drawn, and never cancels a published draw: a conflict is an operator's.
//
// Each step is one unit of work of the executor (Executor, declared here),
// whose transaction it reads and writes through Banco (store.Tx).
package reparo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/sorteio"
	"github.com/formigueiro/d6a/internal/store"
	consistencia "github.com/formigueiro/d6a/internal/verificar/barramento"
)

// Executor runs a unit of work under the executor's global lock
// (*atribuicao.Servico). Besides the transaction and the clock, the repair
// uses the unit's Aplicar (an input through its consumer's handler),
// Sorteados and Descartar (forget a draw the unit just decided) and
// Alterou.
type Executor interface {
	Submeter(ctx context.Context, fn func(context.Context, atribuicao.Unidade) error) error
}

// Banco is what the repair reads and writes in its unit's transaction
// (store.Tx).
type Banco interface {
	SorteioTemAtribuicao(ctx context.Context, eventID uuid.UUID) (bool, error)
	AtribuicaoAtivaDaDemanda(ctx context.Context, demanda uuid.UUID) (store.AtribuicaoVigente, bool, error)
	AtribuicaoAtivaDoConselheiro(ctx context.Context, conselheiro uuid.UUID) (store.AtribuicaoVigente, bool, error)
	RecriarAtribuicao(ctx context.Context, s store.SorteioReconciliado) (uuid.UUID, error)
	OcuparConselheiro(ctx context.Context, conselheiro, eventID uuid.UUID, agora time.Time) (bool, error)
	MarcarProcessado(ctx context.Context, eventID uuid.UUID, tipo string, seq int64, agora time.Time) error
	TirarDaFila(ctx context.Context, demanda uuid.UUID) (bool, error)
	DevolverOutboxPublicado(ctx context.Context, r store.ResultadoPublicado, agora time.Time) error
	RegistrarReconciliacao(ctx context.Context, r store.Reconciliacao, agora time.Time) error
}

// A lost draw that cannot be re-created because the database has since
// moved on (the demand or the counsellor holds another active assignment, a
// draw made after the failover) is ErrConflito: an operator decides; d6a
// never cancels a published draw by itself.
var ErrConflito = errors.New("conflito")

// Reconciliacao is what Reconciliar did with one lost draw.
type Reconciliacao string

// Outcomes of Reconciliar.
const (
	// Recriada: assignment, occupied counsellor, published outbox row and
	// d6a.reconciliacoes row written.
	Recriada Reconciliacao = "recriada"
	// JaExistia: the assignment is there (a second run, or another
	// instance reconciled it).
	JaExistia Reconciliacao = "ja-existia"
)

// Reparo runs the repair through an executor.
type Reparo struct {
	e   Executor
	log *slog.Logger
}

// New is the repair over e (*atribuicao.Servico), logging to log
// (slog.Default when nil).
func New(e Executor, log *slog.Logger) *Reparo {
	if log == nil {
		log = slog.Default()
	}
	return &Reparo{e: e, log: log}
}

// ReconciliarResultado gives back the outbox row of a result that is on the
// bus without it (an asynchronous standby promoted without its commit), as
// the relay would have marked it: the relay never sends it again and the
// spec 5.4 guard (one sorteio.sem_candidatos per correlacao_id) sees it.
func (r *Reparo) ReconciliarResultado(ctx context.Context, res consistencia.Resultado) error {
	return r.e.Submeter(ctx, func(ctx context.Context, u atribuicao.Unidade) error {
		return outboxPublicado(ctx, u, res)
	})
}

func outboxPublicado(ctx context.Context, u atribuicao.Unidade, r consistencia.Resultado) error {
	var tx Banco = u.Tx()
	return tx.DevolverOutboxPublicado(ctx, store.ResultadoPublicado{
		EventID: r.EventID, Tipo: string(r.Tipo), Subject: r.Subject, CorrelacaoID: r.CorrelacaoID,
		Envelope: r.Envelope, Seq: int64(r.Seq),
	}, u.Agora())
}

// Reconciliar re-creates, from the published conselheiro.sorteado, a draw
// the database lost: the assignment (with the demand snapshot from the
// agenda item on the bus), the occupied counsellor, the demand out of the
// pending queue, the outbox row as published, and a d6a.reconciliacoes row
// naming the seed's base when the bus holds it, and the inbox row of the
// agenda item that led to it. It never draws: the bus already says who drew
// the demand (docs/decisions.md).
func (r *Reparo) Reconciliar(ctx context.Context, p consistencia.SorteadoPerdido) (Reconciliacao, error) {
	var out Reconciliacao
	err := r.e.Submeter(ctx, func(ctx context.Context, u atribuicao.Unidade) error {
		var err error
		out, err = r.reconciliar(ctx, u, p)
		return err
	})
	return out, err
}

func (r *Reparo) reconciliar(ctx context.Context, u atribuicao.Unidade, p consistencia.SorteadoPerdido) (Reconciliacao, error) {
	var tx Banco = u.Tx()
	agora := u.Agora()
	if ja, err := tx.SorteioTemAtribuicao(ctx, p.EventID); err != nil {
		return "", err
	} else if ja {
		return JaExistia, nil
	}
	if a, achou, err := tx.AtribuicaoAtivaDaDemanda(ctx, p.DemandaID); err != nil {
		return "", err
	} else if achou {
		return "", fmt.Errorf("%w: demanda %s já tem atribuição ativa %s (sorteio %s) além da publicada em %d", ErrConflito, p.DemandaID, a.ID, a.EventIDSorteio, p.Seq)
	}
	if a, achou, err := tx.AtribuicaoAtivaDoConselheiro(ctx, p.ConselheiroID); err != nil {
		return "", err
	} else if achou {
		return "", fmt.Errorf("%w: conselheiro %s já tem atribuição ativa %s (demanda %s)", ErrConflito, p.ConselheiroID, a.ID, a.DemandaID)
	}
	quando, err := sorteio.ParseTimestamp(p.Timestamp)
	if err != nil {
		return "", fmt.Errorf("timestamp %q: %w", p.Timestamp, err)
	}
	s := store.SorteioReconciliado{
		EventID: p.EventID, ConselheiroID: p.ConselheiroID, DemandaID: p.DemandaID, UC: p.UC,
		Seed: p.Seed, ListaHash: p.ListaHash, Posicao: int32(p.Posicao), Total: int32(p.Total), Quando: quando,
	}
	if p.Agenda != nil {
		s.ScoreFinal, s.CategoriaID = p.Agenda.ScoreFinal, p.Agenda.CategoriaID
		s.NivelPrecedencia, s.GrupoID = int32(p.Agenda.NivelPrecedencia), p.Agenda.GrupoID
	}
	id, err := tx.RecriarAtribuicao(ctx, s)
	if err != nil {
		return "", fmt.Errorf("atribuição: %w", err)
	}
	ocupou, err := tx.OcuparConselheiro(ctx, p.ConselheiroID, p.EventID, agora)
	if err != nil {
		return "", err
	}
	if !ocupou {
		// His registration may be a lost input the repair applies later
		// (an input without results keeps its place in the stream, which
		// can be before its commit): a conflict waits for the later steps.
		return "", fmt.Errorf("%w: conselheiro %s não cadastrado (seu cadastro não está na janela lida do barramento?)", ErrConflito, p.ConselheiroID)
	}
	if p.AgendaSeq > 0 {
		// The agenda item is applied by this draw: a later replay of it
		// finds it processed (ON CONFLICT: it may be there already).
		if err := tx.MarcarProcessado(ctx, p.AgendaEventID, string(evento.AgendaItemDisponivel), int64(p.AgendaSeq), agora); err != nil {
			return "", err
		}
	}
	if _, err := tx.TirarDaFila(ctx, p.DemandaID); err != nil {
		return "", err
	}
	if err := outboxPublicado(ctx, u, p.Resultado); err != nil {
		return "", err
	}
	if err := tx.RegistrarReconciliacao(ctx, store.Reconciliacao{
		EventIDSorteio: p.EventID, AtribuicaoID: id, DemandaID: p.DemandaID, ConselheiroID: p.ConselheiroID,
		Seq: int64(p.Seq), Base: p.Base, BaseSeq: int64(p.BaseSeq),
	}, agora); err != nil {
		return "", err
	}
	u.Alterou(p.ConselheiroID)
	r.log.Warn("sorteio reconciliado a partir do barramento", "event_id", p.EventID, "sequence", p.Seq,
		"demanda_id", p.DemandaID, "conselheiro_id", p.ConselheiroID, "base_encontrada", p.Base != "")
	return Recriada, nil
}

// aplicarEntrada applies a lost input with the consumer's own handler and
// inbox row, in one unit of work (Unidade.Aplicar), and then makes that
// unit's results agree with the bus: a draw it just decided
// (Unidade.Sorteados) for a demand whose draw the bus already holds
// (abertos, by demand) is forgotten before anything of it is written
// (Unidade.Descartar), so never published, and the bus's draw is
// re-created in its place. The handler may draw (an agenda item, a
// refusal's re-draw, the sweep of the pending queue after a cycle or a
// registration); this is what keeps a demand the bus shows drawn from being
// drawn a second time. It returns the lost draws it re-created.
func (r *Reparo) aplicarEntrada(ctx context.Context, e consistencia.EntradaPerdida, abertos map[uuid.UUID][]*consistencia.SorteadoPerdido) ([]*consistencia.SorteadoPerdido, error) {
	var feitos []*consistencia.SorteadoPerdido
	err := r.e.Submeter(ctx, func(ctx context.Context, u atribuicao.Unidade) error {
		feitos = nil
		ev := e.Evento
		log := r.log.With("event_id", ev.EventID, "tipo", string(ev.Tipo), "sequence", e.Seq, "reparo", true)
		aplicada, err := u.Aplicar(ctx, log, ev, e.Seq)
		if err != nil || !aplicada {
			return err
		}
		// Any other result is a new decision: the relay publishes it. (A
		// sem_candidatos where the bus has a later draw is what the
		// original run decided too; the draw came from a later input,
		// re-created at its turn.)
		for _, n := range u.Sorteados() {
			fila := abertos[n.DemandaID]
			if len(fila) == 0 {
				continue // a new draw
			}
			if err := u.Descartar(n.EventID); err != nil {
				return err
			}
			p := fila[0]
			if _, err := r.reconciliar(ctx, u, *p); err != nil {
				return err
			}
			feitos = append(feitos, p)
			log.Warn("reparo: sorteio refeito descartado; vale o sorteio do barramento", "descartado", n.EventID, "sorteio_barramento", p.EventID)
		}
		return nil
	})
	return feitos, err
}

// Reparar is the repair of `d6a verify --consistencia --reparar`. First it
// gives back the outbox rows of the results on the bus other than draws
// (so the spec 5.4 guard holds: no second sorteio.sem_candidatos). Then it
// walks the lost inputs and the lost draws in the order they committed:
// the inputs in stream order, each lost draw right after the input that
// made it. A draw is re-created from its conselheiro.sorteado
// (Reconciliar); an input is applied as the consumer would have
// (aplicarEntrada: its handler, in one unit of work whose own draws for
// demands the bus shows drawn are replaced by the bus's draws before the
// commit). It writes one line per action to w and reports whether
// everything went through; a conflict (ErrConflito) is left to an operator.
func (r *Reparo) Reparar(ctx context.Context, rel consistencia.Relatorio, w io.Writer) bool {
	ok := true
	perdido := map[string]bool{}
	for _, p := range rel.Perdidos {
		perdido[p.EventID.String()] = true
	}
	for _, res := range rel.SemOutbox {
		if perdido[res.EventID.String()] {
			continue
		}
		if err := r.ReconciliarResultado(ctx, res); err != nil {
			fmt.Fprintf(w, "FAILED seq=%d event_id=%s: outbox row: %v\n", res.Seq, res.EventID, err)
			ok = false
			continue
		}
		fmt.Fprintf(w, "outbox row restored seq=%d event_id=%s %s\n", res.Seq, res.EventID, res.Tipo)
	}
	type passo struct {
		seq     uint64
		sorteio *consistencia.SorteadoPerdido
		entrada *consistencia.EntradaPerdida
	}
	var passos []passo
	abertos := map[uuid.UUID][]*consistencia.SorteadoPerdido{}
	// One durable applies every input in stream order (CONTRACT §3), and a
	// draw commits in the unit of the input that made it (its header
	// D6a-Entrada-Seq names it), whenever its round let it be published.
	// So inputs keep their place in the stream and a draw goes right after
	// its input; a draw with no input (a manual one) keeps its own place.
	for i := range rel.Perdidos {
		p := &rel.Perdidos[i]
		seq := p.Seq
		if p.EntradaSeq > 0 && p.EntradaSeq < seq {
			seq = p.EntradaSeq
		}
		passos = append(passos, passo{seq: seq, sorteio: p})
		abertos[p.DemandaID] = append(abertos[p.DemandaID], p)
	}
	for i := range rel.EntradasPerdidas {
		e := &rel.EntradasPerdidas[i]
		passos = append(passos, passo{seq: e.Seq, entrada: e})
	}
	// At one place, the input goes first: its own draw is the bus's.
	sort.SliceStable(passos, func(i, j int) bool {
		if passos[i].seq != passos[j].seq {
			return passos[i].seq < passos[j].seq
		}
		return passos[i].entrada != nil && passos[j].entrada == nil
	})
	fechar := func(p *consistencia.SorteadoPerdido) {
		fila := abertos[p.DemandaID]
		for i, q := range fila {
			if q == p {
				abertos[p.DemandaID] = append(fila[:i:i], fila[i+1:]...)
				return
			}
		}
	}
	feito := map[*consistencia.SorteadoPerdido]bool{}
	// passo1 applies one step; a conflict is returned for a later pass.
	passo1 := func(ps passo) error {
		if p := ps.sorteio; p != nil {
			if feito[p] {
				return nil // re-created with the input that drew it
			}
			r, err := r.Reconciliar(ctx, *p)
			if err != nil {
				return err
			}
			fechar(p)
			feito[p] = true
			fmt.Fprintf(w, "draw seq=%d event_id=%s demanda=%s conselheiro=%s: %s\n", p.Seq, p.EventID, p.DemandaID, p.ConselheiroID, r)
			return nil
		}
		e := ps.entrada
		feitos, err := r.aplicarEntrada(ctx, *e, abertos)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "input applied seq=%d event_id=%s %s\n", e.Seq, e.Evento.EventID, e.Evento.Tipo.ASCII())
		for _, p := range feitos {
			fechar(p)
			feito[p] = true
			fmt.Fprintf(w, "draw seq=%d event_id=%s demanda=%s conselheiro=%s: %s (in place of the draw input seq=%d just made, discarded unpublished)\n", p.Seq, p.EventID, p.DemandaID, p.ConselheiroID, Recriada, e.Seq)
		}
		return nil
	}
	// A step that meets a conflict (the bus's draw names a counsellor
	// still busy here: the database may hold rows the bus does not explain)
	// waits for the steps after it, and passes repeat while one of them
	// makes progress.
	adiados := passos
	for len(adiados) > 0 {
		var resto []passo
		ultimos := map[int]error{}
		for _, ps := range adiados {
			err := passo1(ps)
			switch {
			case errors.Is(err, ErrConflito):
				resto = append(resto, ps)
				ultimos[len(resto)-1] = err
			case err != nil:
				fmt.Fprintf(w, "FAILED seq=%d: %v\n", ps.seq, err)
				ok = false
			}
		}
		if len(resto) == len(adiados) {
			for i, ps := range resto {
				fmt.Fprintf(w, "CONFLICT seq=%d: %v (an operator decides; d6a never cancels a published draw)\n", ps.seq, ultimos[i])
			}
			ok = false
			break
		}
		adiados = resto
	}
	return ok
}
