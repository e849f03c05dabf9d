// Package atribuicao is the D-6a service's executor: it owns every state
// change (spec 4.4, 4.10, 4.11) and runs, in its units of work, the
// handlers of the consumed inputs it is given (Options.Entradas,
// internal/entradas), the draw, and the boot protocol of spec 4.5, 4.7 and
// 4.8.
//
// Every unit of work (one event, one boot step) runs on one goroutine. The
// executor takes every unit that is ready (up to Options.MaxLote), runs them
// one after the other in one PostgreSQL transaction that first takes a
// transaction-level advisory lock, so draws never race inside a process nor
// across processes, and commits them together: each unit sees what the
// previous ones wrote, exactly as if each had its own transaction. Effects,
// outbox rows and the consumer offsets commit together; the caller acks its
// messages only after that. A batch with a failing unit is rolled back and
// redone one unit per transaction, so the failure stays with its own event.
//
// A unit decides in memory: its draws, pending rows and outbox rows wait in
// the batch's diferido, which the executor alone writes, set-based, before
// the commit (and before a unit that reads the database as it is); no unit
// writes them itself.
//
// The executor (servico.go: batching, the transaction, the commit and what
// follows it; aplicar.go: the consumed inputs as units; lote.go and
// leitura_adiante.go: what a batch decided and not written, and what it
// read ahead; compromisso.go, beacon.go: what a batch waits for) runs the
// units (unidade.go: a unit, and Unidade, what the packages above use of
// it). The draw is sorteio.go (candidates, elegiveis.go; seed, shuffle,
// recording), the other decisions the executor owns timeout.go,
// varredura.go and reativacao.go, and the boot boot.go.
package atribuicao

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/hierarquia"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/sorteio"
	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/transparencia"
)

// lockSorteio is the advisory-lock key every d6a transaction that may draw
// takes: log-eliminar's append takes it too.
const lockSorteio = transparencia.LockSorteio

// ErrEncerrado is returned for work submitted after Close.
var ErrEncerrado = errors.New("atribuicao: executor encerrado")

// Barramento is what the draw needs from the bus: the event id (and stream
// sequence) of the last message, the base of the seed (CONTRACT §4).
type Barramento interface {
	LastEventID(ctx context.Context) (eventID string, seq uint64, err error)
}

// Observador receives the business counters (metrics); nil-safe.
type Observador interface {
	Sorteio(duracao time.Duration)
	SemCandidatos(motivo string)
	Recusa(motivo string)
	// Lote: one transaction committed unidades units.
	Lote(unidades int)
	// LoteDesfeito: a batch failed and is redone one unit per transaction.
	LoteDesfeito()
	// Elegibilidade: one eligibility decision (spec 4.3) made releituras
	// round trips beyond its first read, each because the steps read held
	// nobody eligible (one that also reads ahead for other chains of the
	// run counts once, for the draw that made it).
	Elegibilidade(releituras int)
	// Transacao: a committed transaction spent abertura on BEGIN and the
	// lock, decisoes on the reads and the units' decisions, fechamento on
	// the writes and COMMIT.
	Transacao(abertura, decisoes, fechamento time.Duration)
}

// Options configure the service.
type Options struct {
	Store *store.Store
	// Entradas applies the consumed inputs (internal/entradas); nil fails
	// every input with ErrSemEntradas.
	Entradas   Aplicador
	Hierarquia *hierarquia.Cache
	Barramento Barramento
	// SubjectPrefix of published events (CONTRACT §3).
	SubjectPrefix string
	// NRecusasSuspensao: suspend when consecutive refusals exceed it
	// (strict >; the spec's limiteRecusasSuspensao).
	NRecusasSuspensao int
	// TSuspensao is the suspension length (the spec's periodoSuspensaoDias).
	TSuspensao time.Duration
	// TimeoutResposta is D6A_TIMEOUT_RESPOSTA_HORAS. With NRecusasSuspensao
	// and TSuspensao it seeds version 1 of d6a.config; after that the
	// version in force decides (parametros.go).
	TimeoutResposta time.Duration
	// Portoes are the phase-2 gates in force (D6A_CAPACITACAO_EXTERNA,
	// D6A_EXIGIR_VINCULO, CONTRACT §8); the zero value is the MVP.
	Portoes elegibilidade.Portoes
	// Now is the one clock of the service (draw time, row timestamps,
	// suspension checks).
	Now func() time.Time
	// Publicado is called after a commit that queued outbox rows, with
	// those rows in commit order: the caller publishes them at once (the
	// outbox relay only sweeps what a crash or an outage left behind).
	Publicado func([]Saida)
	// Alterados is called after a commit, before Publicado, with the
	// citizens whose counsellor row or assignment the unit of work changed
	// (conselheiro_id = cidadao_id, spec 3.10): this process's situacao
	// cache forgets them before the relay can put the result on the bus.
	// Other processes learn it from PostgreSQL's notifications.
	Alterados func(cidadaos []uuid.UUID)
	// Anexado is called after a commit that appended to the transparency
	// log, to wake the checkpoint signer.
	Anexado func()
	// ChaveLog signs, in every transaction whose tree grew, a checkpoint
	// of the log before the commit, so a result never reaches the bus
	// before a signed checkpoint covers its record (CONTRACT §7, issue 21).
	// nil (tests of the executor alone, the repair command) leaves it to
	// the relay, which signs before it publishes.
	ChaveLog  *transparencia.Chave
	OrigemLog string
	// Assinatura is told each signing's outcome: the error, or nil once
	// one succeeds (readiness says why results are held back).
	Assinatura func(error)
	// Embaralhar replaces the draw of CONTRACT §4 (sorteio.SortearComRodada), for
	// the fairness tests' biased lotteries only; nil is the real one.
	Embaralhar func(base, timestamp, randomness string, elegiveis []string) (sorteio.Resultado, error)
	// Beacon is the public randomness every draw mixes in (CONTRACT §4a):
	// a decision waits for the first round after its commitment time plus
	// the margin. nil draws by the rule before it (tests of the executor
	// alone; the attack test's control run).
	Beacon     *Beacon
	Observador Observador
	Logger     *slog.Logger
	// MaxLote bounds the units of work one transaction carries (default
	// 256; 1 runs each alone).
	MaxLote int
	// NovoID makes the ids of assignments and published events (default
	// novoID); tests fix it to compare runs byte for byte.
	NovoID func() uuid.UUID
}

// Saida is an event a committed unit of work queued in d6a.outbox.
type Saida struct {
	EventID  uuid.UUID
	Subject  string
	Envelope []byte
	// EntradaSeq is the stream sequence of the consumed event whose unit
	// queued it (0: none), published in the header D6a-Entrada-Seq.
	EntradaSeq int64
	// Rodada is a draw's beacon round (0: none), published in the header
	// D6a-Beacon-Rodada.
	Rodada int64
}

// Servico runs the units of work one at a time.
type Servico struct {
	o    Options
	log  *slog.Logger
	jobs chan []job
	stop chan struct{}
	done chan struct{}
	once sync.Once
	// hierarquia is what the executor goroutine knows of the links the
	// log holds (hierarquia.go).
	hierarquia elosRegistrados
}

// job is a unit of work handed to the executor: fn, the event it applies,
// if any, and where its outcome goes.
type job struct {
	ctx context.Context
	fn  func(context.Context, *unidade) error
	// inbox is the consumed event fn applies, recorded in
	// d6a.eventos_processados with its consumer offset; nil for boot steps
	// and direct draws.
	inbox *store.Processamento
	// guarda names what the agenda item's guards look up, read for a run
	// of agenda items at once (nil: any other unit, which reads the
	// database as it is; see diferido).
	guarda *guardaAgenda
	// veLote: the unit's handler shows itself what the batch decided
	// before each read it could change (Unidade.Ver), so the executor does
	// not write the batch before it.
	veLote bool
	// rodada is the beacon round the unit's decision mixes in, fetched and
	// verified before the unit was handed over (nil: no beacon rule).
	rodada *RodadaSorteio
	// compromisso is its input's commitment time under a rule with
	// witnesses (comprometer); zero: C is T.
	compromisso time.Time
	resp        chan error
}

type guardaAgenda struct {
	eventID, demandaID, uc uuid.UUID
	correlacao             string
}

// New starts the executor goroutine; Close stops it.
func New(o Options) *Servico {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Observador == nil {
		o.Observador = nopObservador{}
	}
	if o.Publicado == nil {
		o.Publicado = func([]Saida) {}
	}
	if o.MaxLote <= 0 {
		o.MaxLote = 256
	}
	if o.NovoID == nil {
		o.NovoID = novoID
	}
	if o.Anexado == nil {
		o.Anexado = func() {}
	}
	if o.Embaralhar == nil {
		o.Embaralhar = sorteio.SortearComRodada
	}
	if o.Assinatura == nil {
		o.Assinatura = func(error) {}
	}
	if o.Alterados == nil {
		o.Alterados = func([]uuid.UUID) {}
	}
	s := &Servico{o: o, log: o.Logger, jobs: make(chan []job), stop: make(chan struct{}), done: make(chan struct{})}
	go s.loop()
	return s
}

// Close lets the unit of work in flight finish and stops the executor.
func (s *Servico) Close() {
	s.once.Do(func() { close(s.stop) })
	<-s.done
}

func (s *Servico) loop() {
	defer close(s.done)
	var fila []job
	for {
		if len(fila) == 0 {
			select {
			case <-s.stop:
				return
			case js := <-s.jobs:
				fila = append(fila, js...)
			}
		}
		// Everything else already waiting joins the batch.
	coleta:
		for len(fila) < s.o.MaxLote {
			select {
			case js := <-s.jobs:
				fila = append(fila, js...)
			default:
				break coleta
			}
		}
		n := min(len(fila), s.o.MaxLote)
		s.runLote(fila[:n])
		fila = fila[n:]
	}
}

// executar submits fn to the executor and waits for its result (spec 4.4
// comFilaGlobal: one global queue of draws).
func (s *Servico) executar(ctx context.Context, fn func(context.Context, *unidade) error) error {
	return s.executarVarios(ctx, []job{{fn: fn}})[0]
}

// executarVarios submits units in this order, in one hand-over, and waits
// for all of them: they may share one transaction with each other and with
// other callers' units.
func (s *Servico) executarVarios(ctx context.Context, js []job) []error {
	errs := make([]error, len(js))
	for i := range js {
		js[i].ctx, js[i].resp = ctx, make(chan error, 1)
	}
	select {
	case s.jobs <- js:
	case <-s.stop:
		for i := range errs {
			errs[i] = ErrEncerrado
		}
		return errs
	case <-ctx.Done():
		for i := range errs {
			errs[i] = ctx.Err()
		}
		return errs
	}
	for i, j := range js {
		errs[i] = <-j.resp
	}
	return errs
}

// runLote runs a batch in one transaction; when any unit fails, nothing of
// the batch is kept and each unit runs again in a transaction of its own,
// so a poisonous event fails alone.
func (s *Servico) runLote(lote []job) {
	if len(lote) > 1 {
		us, err := s.transacao(lote)
		if err == nil {
			s.o.Observador.Lote(len(lote))
			s.depoisDoCommit(us)
			for _, j := range lote {
				j.resp <- nil
			}
			return
		}
		s.log.Debug("lote desfeito; cada unidade em sua própria transação", "unidades", len(lote), "erro", err)
		s.o.Observador.LoteDesfeito()
	}
	for _, j := range lote {
		us, err := s.transacao([]job{j})
		if err == nil {
			s.o.Observador.Lote(1)
			s.depoisDoCommit(us)
		}
		j.resp <- err
	}
}

// transacao runs units in one transaction under the draw lock, each with
// its own clock reading, and commits when all succeed. The inbox is read
// for the whole batch at once and written once before the commit; an event
// applied before, or earlier in the same batch (a redelivery), is skipped
// (spec 3.13: the spec's own guards catch most, this catches every one).
//
// A lone event pays two round trips (issues 11 and 24): BEGIN, the lock,
// the inbox, the transparency log's state and the head's guards and
// eligibility go in the first; the writes with COMMIT in the second.
func (s *Servico) transacao(lote []job) ([]*unidade, error) {
	ctx := lote[0].ctx
	if len(lote) > 1 {
		// One unit's caller giving up must not cancel the others' commit;
		// each unit still runs under its own context.
		ctx = context.WithoutCancel(ctx)
	}
	us := make([]*unidade, 0, len(lote))
	d := novoDiferido()
	elos := &elosNovos{}
	var (
		processados map[uuid.UUID]bool
		arvore      *transparencia.Estado
		abertura    store.Leituras
	)
	// BEGIN, the lock and the batch's other opening reads go in one round
	// trip: the inbox, the transparency log's state and, for agenda items
	// at the head, their guards and eligibility as at the first unit's
	// clock reading. Under READ COMMITTED each read takes its snapshot when
	// it starts, after the lock was granted, so it sees what the previous
	// holder committed. The lock's statement also refits the connection's
	// generic plans to the tables (d6a.ajustar_planos) before the reads
	// behind it are planned, even in the first batch after a bulk load.
	// The clock is read before the lock: a draw's T is its trigger's
	// (CONTRACT §4), so a lock wait moves nothing a verifier checks.
	agora := s.agora()
	abertura.Ler(func(tx store.Tx) error {
		if err := tx.TravarSorteio(ctx, lockSorteio); err != nil {
			return fmt.Errorf("advisory lock: %w", err)
		}
		return nil
	})
	abertura.Ler(func(tx store.Tx) (err error) {
		processados, err = jaProcessados(ctx, tx, lote)
		return err
	})
	abertura.Ler(func(tx store.Tx) (err error) {
		arvore, err = transparencia.LerEstado(ctx, tx.ParaOLog())
		return err
	})
	if lote[0].guarda != nil {
		d.lerAdiante(ctx, &abertura, s.o.Hierarquia, lote, s.o.Portoes)
	}
	inicio := time.Now()
	var aberta, decidida time.Time
	err := s.o.Store.InTxPipelined(ctx, &abertura, func(tx store.Tx, p *store.Pipeline) error {
		aberta = time.Now()
		defer func() { decidida = time.Now() }()
		if err := s.hierarquia.atualizar(ctx, tx, arvore.Tamanho()); err != nil {
			return err
		}
		// The units read and write on atras: the writes queued in p go
		// out with their next statement (store.Tx.Apos), so a write costs
		// no round trip of its own and every read sees it.
		atras := tx.Apos(p)
		var inbox []store.Processamento
		for i, j := range lote {
			if err := j.ctx.Err(); err != nil {
				return err
			}
			if j.guarda == nil && !j.veLote && !d.vazio() {
				// It reads the database as it is: what the batch decided
				// goes first, with its first statement.
				if err := d.gravar(ctx, p.Tx()); err != nil {
					return err
				}
			}
			if i > 0 {
				agora = s.agora()
			}
			if j.guarda != nil && d.guardas == nil {
				var l store.Leituras
				d.lerAdiante(ctx, &l, s.o.Hierarquia, lote[i:], s.o.Portoes)
				if err := l.Enviar(ctx, atras.Tx()); err != nil {
					return err
				}
			}
			u := &unidade{
				tx: atras.Tx(), adiadas: p.Tx(), agora: agora, servico: s, lote: d, corrida: j.guarda != nil, veLote: j.veLote,
				elos: elos, rodada: j.rodada, compromisso: j.compromisso,
			}
			if j.inbox != nil {
				u.entrada = j.inbox.Seq
			}
			if e := j.inbox; e != nil {
				if processados[e.EventID] {
					s.log.Info("evento já processado — ignorando", "event_id", e.EventID, "tipo", e.Tipo, "sequence", e.Seq)
					continue
				}
				processados[e.EventID] = true
			}
			if j.guarda == nil && i+1 < len(lote) && lote[i+1].guarda != nil {
				// The next run's reads go with this unit's last round
				// trip that carries writes; they stand if nothing follows
				// it (store.Atras.Levada).
				var l store.Leituras
				d.lerAdiante(ctx, &l, s.o.Hierarquia, lote[i+1:], s.o.Portoes)
				atras.Levar(&l)
			}
			if err := rodar(j.ctx, u, j.fn); err != nil {
				return err
			}
			if j.guarda == nil {
				// It wrote: the guards read before it are stale, unless
				// the next run's went with its last round trip.
				if !atras.Levada() {
					d.guardas = nil
				}
				atras.Levar(nil)
			}
			if j.inbox != nil {
				e := *j.inbox
				e.Agora = u.agora
				inbox = append(inbox, e)
			}
			us = append(us, u)
		}
		// Transparency log (CONTRACT §7): the batch's draws become the next
		// leaves, in decision order, in this transaction. It goes out with
		// the rest of the writes and COMMIT.
		var registros []registro.Registravel
		for _, u := range us {
			registros = append(registros, u.registros...)
		}
		if err := arvore.AnexarRegistraveis(ctx, p.Tx().ParaOLog(), registros); err != nil {
			return fmt.Errorf("transparência: %w", err)
		}
		if err := elos.gravar(ctx, p.Tx()); err != nil {
			return fmt.Errorf("hierarquia registrada: %w", err)
		}
		if s.o.ChaveLog != nil {
			assinou, err := arvore.Assinar(ctx, tx.ParaOLog(), p.Tx().ParaOLog(), *s.o.ChaveLog, s.o.OrigemLog)
			if assinou || err != nil {
				s.o.Assinatura(err)
			}
			if err != nil {
				return fmt.Errorf("transparência: %w", err)
			}
		}
		if err := d.gravar(ctx, p.Tx()); err != nil {
			return err
		}
		return p.Tx().RegistrarEntradas(ctx, inbox)
	})
	if err != nil {
		return nil, err
	}
	elos.juntar(&s.hierarquia, arvore.Tamanho())
	s.o.Observador.Transacao(aberta.Sub(inicio), decidida.Sub(aberta), time.Since(decidida))
	return us, nil
}

// agora is a unit's clock reading, at PostgreSQL's precision so JSON rows
// and binary parameters agree.
func (s *Servico) agora() time.Time {
	return s.o.Now().UTC().Truncate(time.Microsecond)
}

// jaProcessados reads which of the batch's events the inbox already holds.
func jaProcessados(ctx context.Context, tx store.Tx, lote []job) (map[uuid.UUID]bool, error) {
	ids := make([]uuid.UUID, 0, len(lote))
	for _, j := range lote {
		if j.inbox != nil {
			ids = append(ids, j.inbox.EventID)
		}
	}
	m := make(map[uuid.UUID]bool, len(ids))
	if len(ids) == 0 {
		return m, nil
	}
	ja, err := tx.JaProcessados(ctx, ids)
	for _, id := range ja {
		m[id] = true
	}
	return m, err
}

// ErrPanico wraps a panic of a unit of work: the unit failed and no retry
// will fix it; the executor goes on with the next.
var ErrPanico = errors.New("panic na unidade de trabalho")

func rodar(ctx context.Context, u *unidade, fn func(context.Context, *unidade) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrPanico, r)
		}
	}()
	return fn(ctx, u)
}

// depoisDoCommit runs the post-commit hooks of a committed batch: metrics,
// then the situacao cache, then publication, in the units' order.
func (s *Servico) depoisDoCommit(us []*unidade) {
	var (
		alterados []uuid.UUID
		saida     []Saida
	)
	for _, u := range us {
		for _, f := range u.depois {
			f()
		}
		alterados = append(alterados, u.alterados...)
		for _, s := range u.saida {
			s.EntradaSeq = u.entrada
			saida = append(saida, s)
		}
	}
	if len(alterados) > 0 {
		s.o.Alterados(alterados)
	}
	if len(saida) > 0 {
		s.o.Publicado(saida)
	}
	for _, u := range us {
		if len(u.registros) > 0 {
			s.o.Anexado()
			break
		}
	}
}

type nopObservador struct{}

func (nopObservador) Sorteio(time.Duration)           {}
func (nopObservador) SemCandidatos(string)            {}
func (nopObservador) Recusa(string)                   {}
func (nopObservador) Lote(int)                        {}
func (nopObservador) LoteDesfeito()                   {}
func (nopObservador) Elegibilidade(int)               {}
func (nopObservador) Transacao(_, _, _ time.Duration) {}

// novoID is a UUIDv7: ids made in time order land at the right edge of
// the unique indexes on them (assignments, audit records, outbox), which
// stay in memory and cost one full-page image per checkpoint, where random
// ids touch a random leaf of an index that grows with the history on every
// draw (docs/decisions.md, "Ids in time order").
func novoID() uuid.UUID { return uuid.Must(uuid.NewV7()) }
