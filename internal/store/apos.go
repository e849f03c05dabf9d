package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Apos is t behind p: every statement run on the Tx it returns goes out
// after the writes queued in p, in the same round trip, and empties p. A
// reader therefore sees every write queued before it, as if each had run
// when queued, and the writes cost no round trip of their own: they ride
// with the next read, or with COMMIT (InTxPipelined). A queued write that
// fails is reported by the statement that carried it, with its own name.
func (t Tx) Apos(p *Pipeline) Tx {
	a := &aposPipeline{db: t.db, p: p}
	return On(a)
}

type aposPipeline struct {
	db interface {
		Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
		Query(context.Context, string, ...any) (pgx.Rows, error)
		QueryRow(context.Context, string, ...any) pgx.Row
	}
	p *Pipeline
}

// Conn is the connection's, for decoding a batch's rows (Leituras).
func (a *aposPipeline) Conn() *pgx.Conn {
	if c, ok := a.db.(interface{ Conn() *pgx.Conn }); ok {
		return c.Conn()
	}
	return nil
}

// SendBatch sends p's writes, then b, in one round trip; the results it
// returns are b's.
func (a *aposPipeline) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	envia, ok := a.db.(interface {
		SendBatch(context.Context, *pgx.Batch) pgx.BatchResults
	})
	if !ok {
		return loteFalho{fmt.Errorf("store: %T cannot send a batch", a.db)}
	}
	if a.p.b.Len() == 0 || b == &a.p.b {
		return envia.SendBatch(ctx, b)
	}
	junto := &pgx.Batch{QueuedQueries: append(a.p.b.QueuedQueries, b.QueuedQueries...)}
	nomes := a.p.nomes
	a.p.b, a.p.nomes = pgx.Batch{}, nil
	br := envia.SendBatch(ctx, junto)
	for _, nome := range nomes {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return loteFalho{fmt.Errorf("%s: %w", nome, err)}
		}
	}
	return br
}

func (a *aposPipeline) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if a.p.b.Len() == 0 {
		return a.db.Exec(ctx, sql, args...)
	}
	var b pgx.Batch
	b.Queue(sql, args...)
	br := a.SendBatch(ctx, &b)
	tag, err := br.Exec()
	return tag, errors.Join(err, br.Close())
}

func (a *aposPipeline) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if a.p.b.Len() == 0 {
		return a.db.Query(ctx, sql, args...)
	}
	var b pgx.Batch
	b.Queue(sql, args...)
	br := a.SendBatch(ctx, &b)
	rows, err := br.Query()
	if err != nil {
		return nil, errors.Join(err, br.Close())
	}
	return &linhasDoLote{Rows: rows, br: br}, nil
}

func (a *aposPipeline) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if a.p.b.Len() == 0 {
		return a.db.QueryRow(ctx, sql, args...)
	}
	rows, err := a.Query(ctx, sql, args...)
	return linhaDoLote{rows: rows, err: err}
}

// linhasDoLote are a query's rows read from a batch: closing them ends the
// batch.
type linhasDoLote struct {
	pgx.Rows
	br      pgx.BatchResults
	fecho   error
	fechado bool
}

func (l *linhasDoLote) Close() {
	l.Rows.Close()
	if !l.fechado {
		l.fechado = true
		l.fecho = l.br.Close()
	}
}

// Err closes the rows first (pgx asks Err to be called once they are
// done), so the batch's end is reported too.
func (l *linhasDoLote) Err() error {
	l.Close()
	if err := l.Rows.Err(); err != nil {
		return err
	}
	return l.fecho
}

// linhaDoLote is QueryRow's row read from a batch.
type linhaDoLote struct {
	rows pgx.Rows
	err  error
}

func (l linhaDoLote) Scan(dest ...any) error {
	if l.err != nil {
		return l.err
	}
	defer l.rows.Close()
	if !l.rows.Next() {
		l.rows.Close()
		if err := l.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := l.rows.Scan(dest...); err != nil {
		return err
	}
	l.rows.Close()
	return l.rows.Err()
}

// loteFalho is a batch that failed before its first result.
type loteFalho struct{ err error }

func (l loteFalho) Exec() (pgconn.CommandTag, error) { return pgconn.CommandTag{}, l.err }
func (l loteFalho) Query() (pgx.Rows, error)         { return nil, l.err }
func (l loteFalho) QueryRow() pgx.Row                { return linhaComErro{l.err} }
func (l loteFalho) Close() error                     { return l.err }
func (l loteFalho) Tx() pgx.Tx                       { return nil }
