package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Apos is t behind p: every statement run on its Tx goes out after the
// writes queued in p, in the same round trip, and empties p. A reader
// therefore sees every write queued before it, as if each had run when
// queued, and the writes cost no round trip of their own: they ride with
// the next read, or with COMMIT (InTxPipelined). A queued write that fails
// is reported by the statement that carried it, with its own name.
func (t Tx) Apos(p *Pipeline) *Atras {
	return &Atras{&aposPipeline{db: t.db, p: p, levadaEm: -1}}
}

// Atras is a Tx behind a Pipeline (Tx.Apos). Its owner may also hand it
// reads of its own to carry (Levar): they go with every later round trip
// that carries writes, after them, so the last such round trip answers
// them as of everything written so far.
type Atras struct{ a *aposPipeline }

// Tx runs statements behind the pipeline.
func (x *Atras) Tx() Tx { return On(x.a) }

// Levar sets the reads to carry (nil: none): after the statements of each
// later round trip that carries writes, their functions run on each
// answer.
func (x *Atras) Levar(l *Leituras) {
	x.a.carona, x.a.levadaEm = nil, -1
	if l != nil {
		x.a.carona, l.fns = l.fns, nil
	}
}

// Levada reports whether the reads set by Levar went with the last round
// trip and nothing was queued after it: what their functions were given is
// then what reading them now would give.
func (x *Atras) Levada() bool {
	return len(x.a.carona) > 0 && x.a.levadaEm == x.a.enviadas && x.a.p.b.Len() == 0
}

type aposPipeline struct {
	db interface {
		Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
		Query(context.Context, string, ...any) (pgx.Rows, error)
		QueryRow(context.Context, string, ...any) pgx.Row
	}
	p *Pipeline
	// carona are the reads Levar set; enviadas counts round trips,
	// levadaEm is the one that last carried carona (-1: none).
	carona             []func(Tx) error
	enviadas, levadaEm int
}

// Conn is the connection's, for decoding a batch's rows (Leituras).
func (a *aposPipeline) Conn() *pgx.Conn {
	if c, ok := a.db.(interface{ Conn() *pgx.Conn }); ok {
		return c.Conn()
	}
	return nil
}

// SendBatch sends p's writes, then b, then the reads to carry when there
// were writes, in one round trip; the results it returns are b's, and the
// carried reads are answered when they are closed.
func (a *aposPipeline) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	envia, ok := a.db.(interface {
		SendBatch(context.Context, *pgx.Batch) pgx.BatchResults
	})
	if !ok {
		return loteFalho{fmt.Errorf("store: %T cannot send a batch", a.db)}
	}
	a.enviadas++
	if a.p.b.Len() == 0 || b == &a.p.b {
		return envia.SendBatch(ctx, b)
	}
	var carona leiturasGravadas
	if len(a.carona) > 0 {
		var err error
		if carona, err = gravar(a.carona); err != nil {
			return loteFalho{err}
		}
	}
	junto := &pgx.Batch{QueuedQueries: append(a.p.b.QueuedQueries, b.QueuedQueries...)}
	carona.enfileirar(junto)
	nomes := a.p.nomes
	a.p.b, a.p.nomes = pgx.Batch{}, nil
	br := envia.SendBatch(ctx, junto)
	for _, nome := range nomes {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return loteFalho{fmt.Errorf("%s: %w", nome, err)}
		}
	}
	if len(carona.gs) == 0 {
		return br
	}
	return &comCarona{BatchResults: br, restam: b.Len(), a: a, carona: carona, envio: a.enviadas}
}

// comCarona are a batch's results whose carried reads follow the caller's
// statements: Close skips what the caller left unread, answers them and
// runs their functions.
type comCarona struct {
	pgx.BatchResults
	restam  int
	a       *aposPipeline
	carona  leiturasGravadas
	envio   int
	fechado bool
	err     error
}

func (c *comCarona) Exec() (pgconn.CommandTag, error) {
	c.restam--
	return c.BatchResults.Exec()
}

func (c *comCarona) Query() (pgx.Rows, error) {
	c.restam--
	return c.BatchResults.Query()
}

func (c *comCarona) QueryRow() pgx.Row {
	c.restam--
	return c.BatchResults.QueryRow()
}

func (c *comCarona) Close() error {
	if c.fechado {
		return c.err
	}
	c.fechado = true
	c.err = func() error {
		for ; c.restam > 0; c.restam-- {
			if _, err := c.BatchResults.Exec(); err != nil {
				return err
			}
		}
		if err := c.carona.receber(c.BatchResults); err != nil {
			return err
		}
		return c.carona.aplicar(c.a.Conn().TypeMap())
	}()
	if err := c.BatchResults.Close(); c.err == nil {
		c.err = err
	}
	if c.err == nil {
		c.a.levadaEm = c.envio
	}
	return c.err
}

// direto reports that nothing is queued, so a statement goes alone on the
// connection; it counts the round trip.
func (a *aposPipeline) direto() bool {
	if a.p.b.Len() > 0 {
		return false
	}
	a.enviadas++
	return true
}

// atras sends one statement behind the queued writes (SendBatch).
func (a *aposPipeline) atras(ctx context.Context, sql string, args []any) pgx.BatchResults {
	var b pgx.Batch
	b.Queue(sql, args...)
	return a.SendBatch(ctx, &b)
}

func (a *aposPipeline) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if a.direto() {
		return a.db.Exec(ctx, sql, args...)
	}
	br := a.atras(ctx, sql, args)
	tag, err := br.Exec()
	return tag, errors.Join(err, br.Close())
}

func (a *aposPipeline) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if a.direto() {
		return a.db.Query(ctx, sql, args...)
	}
	br := a.atras(ctx, sql, args)
	rows, err := br.Query()
	if err != nil {
		return nil, errors.Join(err, br.Close())
	}
	return &linhasDoLote{Rows: rows, br: br}, nil
}

func (a *aposPipeline) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if a.direto() {
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
