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
// The executor (executor.go: batching, the transaction, the commit and what
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
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/hierarquia"
	"github.com/formigueiro/d6a/internal/sorteio"
	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/transparencia"
)

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
