package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// Pipeline queues generated :exec queries instead of running them, and
// Enviar sends them all in one round trip (a pgx batch), in the order
// queued: the executor's set-based writes at the end of a batch cost one
// round trip instead of one per table (issue 11). A query that returns rows
// cannot be queued.
type Pipeline struct {
	b      pgx.Batch
	nomes  []string
	dentro Tx
}

// NewPipeline returns an empty pipeline; Tx runs the generated queries
// into it.
func NewPipeline() *Pipeline {
	p := &Pipeline{}
	p.dentro = Tx{q: dbsqlc.New(p), db: p}
	return p
}

// Tx is the pipeline as the generated queries' database.
func (p *Pipeline) Tx() Tx { return p.dentro }

// ErrPipeline is returned by a query that reads rows through a Pipeline.
var ErrPipeline = errors.New("store: a query returning rows cannot be queued in a pipeline")

// Exec queues the statement; its outcome comes with Enviar.
func (p *Pipeline) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	p.b.Queue(sql, args...)
	p.nomes = append(p.nomes, NomeDaQuery(sql))
	return pgconn.CommandTag{}, nil
}

// Query refuses: rows cannot wait for Enviar.
func (p *Pipeline) Query(context.Context, string, ...any) (pgx.Rows, error) {
	return nil, ErrPipeline
}

// QueryRow refuses: rows cannot wait for Enviar.
func (p *Pipeline) QueryRow(context.Context, string, ...any) pgx.Row {
	return linhaComErro{ErrPipeline}
}

type linhaComErro struct{ err error }

func (l linhaComErro) Scan(...any) error { return l.err }

// Enviar sends what was queued on tx's connection in one round trip and
// empties the pipeline; the first failure is returned with its query's
// name, and the statements after it were not run.
func (p *Pipeline) Enviar(ctx context.Context, tx Tx) error {
	_, err := p.enviar(ctx, tx)
	return err
}

// enviar is Enviar, with the last statement's command tag.
func (p *Pipeline) enviar(ctx context.Context, tx Tx) (pgconn.CommandTag, error) {
	var ultimo pgconn.CommandTag
	if p.b.Len() == 0 {
		return ultimo, nil
	}
	br, err := enviarLote(ctx, tx, &p.b)
	if err != nil {
		return ultimo, err
	}
	var primeiro error
	for _, nome := range p.nomes {
		tag, err := br.Exec()
		if err != nil {
			primeiro = fmt.Errorf("%s: %w", nome, err)
			break
		}
		ultimo = tag
	}
	if err := br.Close(); primeiro == nil && err != nil {
		primeiro = err
	}
	p.b, p.nomes = pgx.Batch{}, nil
	return ultimo, primeiro
}

// enviarLote sends b in one round trip on tx's connection.
func enviarLote(ctx context.Context, tx Tx, b *pgx.Batch) (pgx.BatchResults, error) {
	envia, ok := tx.db.(interface {
		SendBatch(context.Context, *pgx.Batch) pgx.BatchResults
	})
	if !ok {
		return nil, fmt.Errorf("store: %T cannot send a batch", tx.db)
	}
	return envia.SendBatch(ctx, b), nil
}

// InTxPipelined is InTx in fewer round trips: BEGIN goes out with the
// reads queued in abertura (nil: none), and COMMIT with the writes fn
// leaves queued in its Pipeline; fn may send the pipeline earlier and read
// in between. It runs on a connection of its own: one left inside a
// failed transaction is rolled back, or destroyed by the pool.
func (s *Store) InTxPipelined(ctx context.Context, abertura *Leituras, fn func(Tx, *Pipeline) error) (err error) {
	c, err := s.Pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("connect to database: %w", err)
	}
	defer c.Release()
	defer func() {
		if err != nil && !c.Conn().IsClosed() && c.Conn().PgConn().TxStatus() != 'I' {
			_, _ = c.Exec(context.WithoutCancel(ctx), "rollback")
		}
	}()
	tx := On(c)
	if err := abertura.Enviar(ctx, tx, "begin"); err != nil {
		return err
	}
	p := NewPipeline()
	if err := fn(tx, p); err != nil {
		return err
	}
	p.b.Queue("commit")
	p.nomes = append(p.nomes, "commit")
	tag, err := p.enviar(ctx, tx)
	if err != nil {
		return err
	}
	// COMMIT of a transaction that failed earlier answers ROLLBACK.
	if tag.String() != "COMMIT" {
		return pgx.ErrTxCommitRollback
	}
	return nil
}

// NomeDaQuery names a statement in errors and reports: sqlc opens each
// query with "-- name: Nome :kind"; others go by their first words.
func NomeDaQuery(sql string) string {
	if r, ok := strings.CutPrefix(strings.TrimSpace(sql), "-- name: "); ok {
		nome, _, _ := strings.Cut(r, " ")
		return nome
	}
	nome := strings.Join(strings.Fields(sql), " ")
	if len(nome) > 40 {
		nome = nome[:40] + "…"
	}
	return nome
}
