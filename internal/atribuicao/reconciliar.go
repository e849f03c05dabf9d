package atribuicao

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/sorteio"
	"github.com/formigueiro/d6a/internal/store"
	consistencia "github.com/formigueiro/d6a/internal/verificar/barramento"
)

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

// ReconciliarResultado gives back the outbox row of a result that is on the
// bus without it (an asynchronous standby promoted without its commit), as
// the relay would have marked it: the relay never sends it again and the
// spec 5.4 guard (one sorteio.sem_candidatos per correlacao_id) sees it.
func (s *Servico) ReconciliarResultado(ctx context.Context, r consistencia.Resultado) error {
	return s.executar(ctx, func(ctx context.Context, u *uow) error {
		return u.outboxPublicado(ctx, r)
	})
}

func (u *uow) outboxPublicado(ctx context.Context, r consistencia.Resultado) error {
	seq := int64(r.Seq)
	return u.tx.InserirOutboxPublicado(ctx, store.InserirOutboxPublicadoParams{
		EventID: r.EventID, Tipo: string(r.Tipo), Subject: r.Subject, CorrelacaoID: r.CorrelacaoID,
		Envelope: r.Envelope, Agora: u.agora, Sequence: &seq,
	})
}

// Reconciliar re-creates, from the published conselheiro.sorteado, a draw
// the database lost: the assignment (with the demand snapshot from the
// agenda item on the bus), the occupied counsellor, the demand out of the
// pending queue, the outbox row as published, and a d6a.reconciliacoes row
// naming the seed's base when the bus holds it, and the inbox row of the
// agenda item that led to it. It never draws: the bus already says who drew
// the demand (docs/decisions.md).
func (s *Servico) Reconciliar(ctx context.Context, p consistencia.SorteadoPerdido) (Reconciliacao, error) {
	var out Reconciliacao
	err := s.executar(ctx, func(ctx context.Context, u *uow) error {
		var err error
		out, err = u.reconciliar(ctx, p)
		return err
	})
	return out, err
}

func (u *uow) reconciliar(ctx context.Context, p consistencia.SorteadoPerdido) (Reconciliacao, error) {
	if _, err := u.tx.BuscarAtribuicaoPorEventIdSorteio(ctx, p.EventID); err == nil {
		return JaExistia, nil
	} else if _, err := store.Found(err); err != nil {
		return "", err
	}
	if a, err := u.tx.BuscarAtribuicaoAtivaPorDemanda(ctx, p.DemandaID); err == nil {
		return "", fmt.Errorf("%w: demanda %s já tem atribuição ativa %s (sorteio %s) além da publicada em %d", ErrConflito, p.DemandaID, a.ID, a.EventIDSorteio, p.Seq)
	} else if _, err := store.Found(err); err != nil {
		return "", err
	}
	if a, err := u.tx.BuscarAtribuicaoAtivaPorConselheiro(ctx, p.ConselheiroID); err == nil {
		return "", fmt.Errorf("%w: conselheiro %s já tem atribuição ativa %s (demanda %s)", ErrConflito, p.ConselheiroID, a.ID, a.DemandaID)
	} else if _, err := store.Found(err); err != nil {
		return "", err
	}
	quando, err := sorteio.ParseTimestamp(p.Timestamp)
	if err != nil {
		return "", fmt.Errorf("timestamp %q: %w", p.Timestamp, err)
	}
	var dados DadosDemanda
	if p.Agenda != nil {
		dados = DadosDemanda{ScoreFinal: p.Agenda.ScoreFinal, CategoriaID: p.Agenda.CategoriaID,
			NivelPrecedencia: int32(p.Agenda.NivelPrecedencia), GrupoID: p.Agenda.GrupoID}
	}
	hash := p.ListaHash
	id, err := u.tx.InserirAtribuicao(ctx, store.InserirAtribuicaoParams{
		ConselheiroID: p.ConselheiroID, DemandaID: p.DemandaID, UnidadeCivicaID: p.UC,
		SeedPublico: p.Seed, PosicaoSorteada: int32(p.Posicao), TotalElegiveis: int32(p.Total),
		ListaElegiveisHash: &hash, DataSorteio: quando, EventIDSorteio: p.EventID,
		ScoreFinal: dados.ScoreFinal, CategoriaID: dados.CategoriaID, NivelPrecedencia: dados.NivelPrecedencia, GrupoID: dados.GrupoID,
	})
	if err != nil {
		return "", fmt.Errorf("atribuição: %w", err)
	}
	n, err := u.tx.MarcarConselheiroOcupado(ctx, store.MarcarConselheiroOcupadoParams{ID: p.ConselheiroID, EventID: p.EventID, Agora: u.agora})
	if err != nil {
		return "", err
	}
	if n == 0 {
		// His registration may be a lost input the repair applies later
		// (an input without results keeps its place in the stream, which
		// can be before its commit): a conflict waits for the later steps.
		return "", fmt.Errorf("%w: conselheiro %s não cadastrado (seu cadastro não está na janela lida do barramento?)", ErrConflito, p.ConselheiroID)
	}
	if p.AgendaSeq > 0 {
		// The agenda item is applied by this draw: a later replay of it
		// finds it processed (ON CONFLICT: it may be there already).
		if _, err := u.tx.RegistrarEventoProcessado(ctx, store.RegistrarEventoProcessadoParams{
			EventID: p.AgendaEventID, TipoEvento: string(evento.AgendaItemDisponivel), Sequence: int64(p.AgendaSeq), Agora: u.agora,
		}); err != nil {
			return "", err
		}
	}
	if _, err := u.tx.RemoverFilaPendentePorDemanda(ctx, p.DemandaID); err != nil {
		return "", err
	}
	if err := u.outboxPublicado(ctx, p.Resultado); err != nil {
		return "", err
	}
	var base *string
	var baseSeq *int64
	if p.Base != "" {
		b, s := p.Base, int64(p.BaseSeq)
		base, baseSeq = &b, &s
	}
	if err := u.tx.InserirReconciliacao(ctx, store.InserirReconciliacaoParams{
		EventIDSorteio: p.EventID, AtribuicaoID: id, DemandaID: p.DemandaID, ConselheiroID: p.ConselheiroID,
		Sequence: int64(p.Seq), Base: base, BaseSequence: baseSeq, Agora: u.agora,
	}); err != nil {
		return "", err
	}
	u.alterou(p.ConselheiroID)
	u.servico.log.Warn("sorteio reconciliado a partir do barramento", "event_id", p.EventID, "sequence", p.Seq,
		"demanda_id", p.DemandaID, "conselheiro_id", p.ConselheiroID, "base_encontrada", p.Base != "")
	return Recriada, nil
}

// aplicarEntrada applies a lost input with the consumer's own handler and
// inbox row, in one unit of work, and then makes that unit's results agree
// with the bus: a draw it just made for a demand whose draw the bus
// already holds (abertos, by demand) is undone
// before the commit, so never published, and the bus's draw is re-created
// in its place. The handler may draw (an agenda item, a refusal's re-draw,
// the sweep of the pending queue after a cycle or a registration); this is
// what keeps a demand the bus shows drawn from being drawn a second time.
// It returns the lost draws it re-created.
func (s *Servico) aplicarEntrada(ctx context.Context, e consistencia.EntradaPerdida, abertos map[uuid.UUID][]*consistencia.SorteadoPerdido) ([]*consistencia.SorteadoPerdido, error) {
	var feitos []*consistencia.SorteadoPerdido
	err := s.executar(ctx, func(ctx context.Context, u *uow) error {
		feitos = nil
		ev := e.Evento
		ja, err := u.tx.EventoJaProcessado(ctx, ev.EventID)
		if err != nil || ja {
			return err
		}
		log := s.log.With("event_id", ev.EventID, "tipo", string(ev.Tipo), "sequence", e.Seq, "reparo", true)
		if err := u.despachar(ctx, log, ev, e.Seq); err != nil {
			return err
		}
		if err := u.tx.RegistrarProcessamento(ctx, store.RegistrarProcessamentoParams{
			EventID: ev.EventID, TipoEvento: string(ev.Tipo), Sequence: int64(e.Seq), Agora: u.agora,
		}); err != nil {
			return err
		}
		novos, err := u.tx.OutboxNaoPublicadoEm(ctx, u.agora)
		if err != nil {
			return err
		}
		for _, n := range novos {
			fila := abertos[n.DemandaID]
			if evento.Tipo(n.Tipo) != evento.ConselheiroSorteado || len(fila) == 0 {
				// A new decision: the relay publishes it. (A
				// sem_candidatos where the bus has a later draw is what
				// the original run decided too; the draw came from a
				// later input, re-created at its turn.)
				continue
			}
			if err := u.tx.DescartarSorteio(ctx, n.EventID); err != nil {
				return err
			}
			u.descartar(n.EventID)
			p := fila[0]
			if _, err := u.reconciliar(ctx, *p); err != nil {
				return err
			}
			feitos = append(feitos, p)
			log.Warn("reparo: resultado refeito descartado; vale o sorteio do barramento", "descartado", n.EventID, "tipo_descartado", n.Tipo, "sorteio_barramento", p.EventID)
		}
		return nil
	})
	return feitos, err
}

// Reparar is the repair of `d6a verify --consistencia --reparar`. First it
// gives back the outbox rows of the results on the bus other than draws
// (so the spec 5.4 guard holds: no second sorteio.sem_candidatos). Then it
// walks the lost draws and the lost inputs together in stream order (an
// input that led to results, at the place of its first result): a draw
// is re-created from its conselheiro.sorteado (Reconciliar), an input is
// applied as the consumer would have (aplicarEntrada: its handler, in one
// unit of work whose own draws for demands the bus shows drawn are replaced
// by the bus's draws before the commit). Stream order across types is why this is not six
// `d6a replay`: the consumers replay independently, so a cycle could be
// applied after the draw that needed its counsellor free. It writes one
// line per action to w and reports whether everything went through; a
// conflict (ErrConflito) is left to an operator.
func (s *Servico) Reparar(ctx context.Context, rel consistencia.Relatorio, w io.Writer) bool {
	ok := true
	perdido := map[string]bool{}
	for _, p := range rel.Perdidos {
		perdido[p.EventID.String()] = true
	}
	for _, r := range rel.SemOutbox {
		if perdido[r.EventID.String()] {
			continue
		}
		if err := s.ReconciliarResultado(ctx, r); err != nil {
			fmt.Fprintf(w, "FAILED seq=%d event_id=%s: outbox row: %v\n", r.Seq, r.EventID, err)
			ok = false
			continue
		}
		fmt.Fprintf(w, "outbox row restored seq=%d event_id=%s %s\n", r.Seq, r.EventID, r.Tipo)
	}
	type passo struct {
		seq     uint64
		sorteio *consistencia.SorteadoPerdido
		entrada *consistencia.EntradaPerdida
	}
	var passos []passo
	abertos := map[uuid.UUID][]*consistencia.SorteadoPerdido{}
	for i := range rel.Perdidos {
		p := &rel.Perdidos[i]
		passos = append(passos, passo{seq: p.Seq, sorteio: p})
		abertos[p.DemandaID] = append(abertos[p.DemandaID], p)
	}
	// An input that led to results on the bus (their header
	// D6a-Entrada-Seq names it) is applied where the first of them is: it
	// committed there, after every input its handler saw, whatever its own
	// place in the stream (the six consumers run side by side). Other inputs
	// keep their place in the stream.
	posicao := map[uint64]uint64{}
	for _, r := range rel.SemOutbox {
		if s, ok := posicao[r.EntradaSeq]; r.EntradaSeq > 0 && (!ok || r.Seq < s) {
			posicao[r.EntradaSeq] = r.Seq
		}
	}
	for i := range rel.EntradasPerdidas {
		e := &rel.EntradasPerdidas[i]
		seq := e.Seq
		if s, ok := posicao[e.Seq]; ok && s > seq {
			seq = s
		}
		passos = append(passos, passo{seq: seq, entrada: e})
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
			r, err := s.Reconciliar(ctx, *p)
			if err != nil {
				return err
			}
			fechar(p)
			feito[p] = true
			fmt.Fprintf(w, "draw seq=%d event_id=%s demanda=%s conselheiro=%s: %s\n", p.Seq, p.EventID, p.DemandaID, p.ConselheiroID, r)
			return nil
		}
		e := ps.entrada
		feitos, err := s.aplicarEntrada(ctx, *e, abertos)
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
	// Stream order is the order of each type's consumer, not of the
	// commits across types (the six consumers run side by side): a cycle
	// published after an agenda item may have been applied before it. A
	// step that meets a conflict (the bus's draw names a counsellor still
	// busy here) waits for the steps after it, and passes repeat while one
	// of them makes progress.
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

// descartar forgets a draw this unit made and undid before its commit: not
// published, not a leaf of the transparency log.
func (u *uow) descartar(eventID uuid.UUID) {
	u.saida = slices.DeleteFunc(u.saida, func(s Saida) bool { return s.EventID == eventID })
	u.registros = slices.DeleteFunc(u.registros, func(r registro.Registravel) bool {
		d, ok := r.(registro.Registro)
		return ok && d.EventIDSorteio == eventID
	})
}
