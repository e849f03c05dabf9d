// Package atribuicao is the D-6a service: the draw executor that owns every
// state change (spec 4.4, 4.10, 4.11), the event handlers of spec 3.9–3.12,
// 3.6 and 4.9, and the boot protocol of spec 4.5, 4.7 and 4.8.
//
// Every unit of work (one event, one boot step) runs on one goroutine, in
// one PostgreSQL transaction that first takes a transaction-level advisory
// lock, so draws never race inside a process nor across processes. Effects,
// outbox rows and the consumer offset commit together; the caller acks the
// message only after that.
package atribuicao

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/hierarquia"
	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/transparencia"
)

// lockSorteio is the advisory-lock key every d6a transaction that may draw
// takes ("d6a" + "sort" in ASCII).
const lockSorteio int64 = 0x643661736f7274

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
}

// Options configure the service.
type Options struct {
	Store      *store.Store
	Hierarquia *hierarquia.Cache
	Barramento Barramento
	// SubjectPrefix of published events (CONTRACT §3).
	SubjectPrefix string
	// NRecusasSuspensao: suspend when consecutive refusals exceed it
	// (strict >; the spec's limiteRecusasSuspensao).
	NRecusasSuspensao int
	// TSuspensao is the suspension length (the spec's periodoSuspensaoDias).
	TSuspensao time.Duration
	// Now is the one clock of the service (draw time, row timestamps,
	// suspension checks).
	Now func() time.Time
	// Publicado is called after a commit that queued outbox rows, to wake
	// the relay.
	Publicado func()
	// Alterados is called after a commit, before Publicado, with the
	// citizens whose counsellor row or assignment the unit of work changed
	// (conselheiro_id = cidadao_id, spec 3.10): this process's situacao
	// cache forgets them before the relay can put the result on the bus.
	// Other processes learn it from PostgreSQL's notifications.
	Alterados func(cidadaos []uuid.UUID)
	// Anexado is called after a commit that appended to the transparency
	// log, to wake the checkpoint signer.
	Anexado    func()
	Observador Observador
	Logger     *slog.Logger
}

// Servico runs the units of work one at a time.
type Servico struct {
	o    Options
	log  *slog.Logger
	jobs chan job
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

type job struct {
	ctx  context.Context
	fn   func(context.Context, *uow) error
	resp chan error
}

// uow is one unit of work: a transaction and its fixed clock reading.
type uow struct {
	tx     store.Tx
	agora  time.Time
	outbox int
	depois []func() // run after commit (metrics)
	// alterados are the citizens whose situation changed (Options.Alterados).
	alterados []uuid.UUID
	// registros are this unit's draws for the transparency log.
	registros []transparencia.Registro
	servico   *Servico
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
		o.Publicado = func() {}
	}
	if o.Anexado == nil {
		o.Anexado = func() {}
	}
	if o.Alterados == nil {
		o.Alterados = func([]uuid.UUID) {}
	}
	s := &Servico{o: o, log: o.Logger, jobs: make(chan job), stop: make(chan struct{}), done: make(chan struct{})}
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
	for {
		select {
		case <-s.stop:
			return
		case j := <-s.jobs:
			j.resp <- s.run(j.ctx, j.fn)
		}
	}
}

// executar submits fn to the executor and waits for its result (spec 4.4
// comFilaGlobal: one global queue of draws).
func (s *Servico) executar(ctx context.Context, fn func(context.Context, *uow) error) error {
	j := job{ctx: ctx, fn: fn, resp: make(chan error, 1)}
	select {
	case s.jobs <- j:
	case <-s.stop:
		return ErrEncerrado
	case <-ctx.Done():
		return ctx.Err()
	}
	return <-j.resp
}

func (s *Servico) run(ctx context.Context, fn func(context.Context, *uow) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var u *uow
	err := s.o.Store.InTx(ctx, func(tx store.Tx) error {
		if err := tx.AdvisoryLockSorteio(ctx, lockSorteio); err != nil {
			return fmt.Errorf("advisory lock: %w", err)
		}
		u = &uow{tx: tx, agora: s.o.Now().UTC(), servico: s}
		if err := fn(ctx, u); err != nil {
			return err
		}
		// Transparency log (CONTRACT §7): this unit's draws become the next
		// leaves, in this transaction, right before commit.
		return transparencia.Anexar(ctx, tx.DB, u.registros)
	})
	if err != nil {
		return err
	}
	for _, f := range u.depois {
		f()
	}
	if len(u.alterados) > 0 {
		s.o.Alterados(u.alterados)
	}
	if u.outbox > 0 {
		s.o.Publicado()
	}
	if len(u.registros) > 0 {
		s.o.Anexado()
	}
	return nil
}

type nopObservador struct{}

func (nopObservador) Sorteio(time.Duration) {}
func (nopObservador) SemCandidatos(string)  {}
func (nopObservador) Recusa(string)         {}

// ptr returns a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }

func uuidPtr(u uuid.UUID) *uuid.UUID {
	if u == uuid.Nil {
		return nil
	}
	return &u
}
