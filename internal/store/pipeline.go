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
	p.dentro = Tx{Queries: dbsqlc.New(p), DB: p}
	return p
}

// Tx is the pipeline as the generated queries' database.
func (p *Pipeline) Tx() Tx { return p.dentro }

// ErrPipeline is returned by a query that reads rows through a Pipeline.
var ErrPipeline = errors.New("store: a query returning rows cannot be queued in a pipeline")

// Exec queues the statement; its outcome comes with Enviar.
func (p *Pipeline) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	p.b.Queue(sql, args...)
	// sqlc opens each query with "-- name: Nome :exec".
	nome, _, _ := strings.Cut(strings.TrimPrefix(sql, "-- name: "), " ")
	p.nomes = append(p.nomes, nome)
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
	if p.b.Len() == 0 {
		return nil
	}
	envia, ok := tx.DB.(interface {
		SendBatch(context.Context, *pgx.Batch) pgx.BatchResults
	})
	if !ok {
		return fmt.Errorf("store: %T cannot send a batch", tx.DB)
	}
	br := envia.SendBatch(ctx, &p.b)
	var primeiro error
	for _, nome := range p.nomes {
		if _, err := br.Exec(); err != nil {
			primeiro = fmt.Errorf("%s: %w", nome, err)
			break
		}
	}
	if err := br.Close(); primeiro == nil && err != nil {
		primeiro = err
	}
	p.b, p.nomes = pgx.Batch{}, nil
	return primeiro
}
