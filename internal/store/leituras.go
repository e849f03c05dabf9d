package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// Leituras queues reads made through the generated queries and sends them
// in one round trip (a pgx batch): a batch's opening reads (the draw lock,
// the inbox, the guards, the eligibility) cost one round trip instead of
// one each (issue 11). Each read is a function that runs one query on the
// Tx it is given and uses its rows. It runs twice: once on a recorder that
// keeps the statement and fails it, so the function must return that
// query's error at once; then, after the batch came back, on the rows the
// server sent.
type Leituras struct {
	fns []func(Tx) error
}

// Ler queues fn.
func (l *Leituras) Ler(fn func(Tx) error) { l.fns = append(l.fns, fn) }

// Vazia reports nothing queued.
func (l *Leituras) Vazia() bool { return len(l.fns) == 0 }

// errGravada is what a recorded statement returns on the first run.
var errGravada = errors.New("store: statement recorded, not run")

// ErrLeitura is returned when a queued function does not run exactly one
// statement and return its error.
var ErrLeitura = errors.New("store: a queued read must run one statement and return its error")

type gravada struct {
	sql    string
	args   []any
	linhas bool // Query or QueryRow, not Exec
	nome   string
	// after the round trip
	fds     []pgconn.FieldDescription
	valores [][][]byte
	tag     pgconn.CommandTag
}

// Enviar sends the queued reads on db, after the statements of antes (run
// without arguments, such as "begin"), in one round trip, then runs each
// function on its rows, in order, and empties l. A failing statement's
// error is returned with its query's name; the functions after it do not
// run.
func (l *Leituras) Enviar(ctx context.Context, db Tx, antes ...string) error {
	var fns []func(Tx) error
	if l != nil {
		fns, l.fns = l.fns, nil
	}
	r, err := gravar(fns)
	if err != nil {
		return err
	}
	if len(r.gs) == 0 && len(antes) == 0 {
		return nil
	}
	conexao, ok := db.db.(interface{ Conn() *pgx.Conn })
	if !ok {
		return fmt.Errorf("store: %T has no connection to decode with", db.db)
	}
	var b pgx.Batch
	for _, s := range antes {
		b.Queue(s)
	}
	r.enfileirar(&b)
	br, err := enviarLote(ctx, db, &b)
	if err != nil {
		return err
	}
	falha := func() error {
		for _, s := range antes {
			if _, err := br.Exec(); err != nil {
				return fmt.Errorf("%s: %w", s, err)
			}
		}
		return r.receber(br)
	}()
	if err := br.Close(); falha == nil && err != nil {
		falha = err
	}
	if falha != nil {
		return falha
	}
	return r.aplicar(conexao.Conn().TypeMap())
}

// leiturasGravadas are queued reads with their statements recorded: what
// goes in a batch (enfileirar), is read back from it (receber) and is then
// handed to the functions (aplicar).
type leiturasGravadas struct {
	gs     []*gravada
	usadas []func(Tx) error
}

// gravar records the statement of each function (ErrLeitura when one does
// not run exactly one); a function that reads nothing this time is left
// out.
func gravar(fns []func(Tx) error) (leiturasGravadas, error) {
	r := leiturasGravadas{gs: make([]*gravada, 0, len(fns)), usadas: make([]func(Tx) error, 0, len(fns))}
	for _, fn := range fns {
		g := &gravador{}
		err := fn(On(g))
		switch {
		case g.g == nil && err == nil:
			continue // nothing to read this time
		case g.g == nil || g.extra || !errors.Is(err, errGravada):
			return r, fmt.Errorf("%w (got %v)", ErrLeitura, err)
		}
		r.gs = append(r.gs, g.g)
		r.usadas = append(r.usadas, fn)
	}
	return r, nil
}

func (r leiturasGravadas) enfileirar(b *pgx.Batch) {
	for _, g := range r.gs {
		b.Queue(g.sql, g.args...)
	}
}

// receber reads the statements' results from br, in order; the first
// failure is returned with its query's name.
func (r leiturasGravadas) receber(br pgx.BatchResults) error {
	for _, g := range r.gs {
		if err := g.receber(br); err != nil {
			return fmt.Errorf("%s: %w", g.nome, err)
		}
	}
	return nil
}

// aplicar runs each function on its rows.
func (r leiturasGravadas) aplicar(m *pgtype.Map) error {
	for i, fn := range r.usadas {
		if err := fn(On(&reprise{g: r.gs[i], m: m})); err != nil {
			return err
		}
	}
	return nil
}

func (g *gravada) receber(br pgx.BatchResults) error {
	if !g.linhas {
		tag, err := br.Exec()
		g.tag = tag
		return err
	}
	rows, err := br.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	g.fds = append([]pgconn.FieldDescription(nil), rows.FieldDescriptions()...)
	for rows.Next() {
		raw := rows.RawValues()
		vs := make([][]byte, len(raw))
		for i, v := range raw {
			if v != nil {
				vs[i] = append([]byte{}, v...)
			}
		}
		g.valores = append(g.valores, vs)
	}
	rows.Close()
	g.tag = rows.CommandTag()
	return rows.Err()
}

// gravador records the one statement a queued read runs.
type gravador struct {
	g     *gravada
	extra bool
}

var _ dbsqlc.DBTX = (*gravador)(nil)

func (r *gravador) gravar(sql string, args []any, linhas bool) error {
	if r.g != nil {
		r.extra = true
		return ErrLeitura
	}
	r.g = &gravada{sql: sql, args: args, linhas: linhas, nome: NomeDaQuery(sql)}
	return errGravada
}

func (r *gravador) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return pgconn.CommandTag{}, r.gravar(sql, args, false)
}

func (r *gravador) Query(_ context.Context, sql string, args ...any) (pgx.Rows, error) {
	return nil, r.gravar(sql, args, true)
}

func (r *gravador) QueryRow(_ context.Context, sql string, args ...any) pgx.Row {
	return linhaComErro{r.gravar(sql, args, true)}
}

// reprise answers the recorded statement with the rows the server sent.
type reprise struct {
	g     *gravada
	m     *pgtype.Map
	usada bool
}

func (r *reprise) proxima(sql string) error {
	if r.usada || sql != r.g.sql {
		return ErrLeitura
	}
	r.usada = true
	return nil
}

func (r *reprise) Exec(_ context.Context, sql string, _ ...any) (pgconn.CommandTag, error) {
	if err := r.proxima(sql); err != nil {
		return pgconn.CommandTag{}, err
	}
	return r.g.tag, nil
}

func (r *reprise) Query(_ context.Context, sql string, _ ...any) (pgx.Rows, error) {
	if err := r.proxima(sql); err != nil {
		return nil, err
	}
	return &linhasLidas{g: r.g, m: r.m, i: -1}, nil
}

func (r *reprise) QueryRow(_ context.Context, sql string, _ ...any) pgx.Row {
	if err := r.proxima(sql); err != nil {
		return linhaComErro{err}
	}
	return primeiraLinha{&linhasLidas{g: r.g, m: r.m, i: -1}}
}

type primeiraLinha struct{ l *linhasLidas }

func (p primeiraLinha) Scan(dest ...any) error {
	if !p.l.Next() {
		return pgx.ErrNoRows
	}
	return p.l.Scan(dest...)
}

// linhasLidas is pgx.Rows over rows already received.
type linhasLidas struct {
	g *gravada
	m *pgtype.Map
	i int
}

var _ pgx.Rows = (*linhasLidas)(nil)

func (l *linhasLidas) Close()                                       {}
func (l *linhasLidas) Err() error                                   { return nil }
func (l *linhasLidas) CommandTag() pgconn.CommandTag                { return l.g.tag }
func (l *linhasLidas) FieldDescriptions() []pgconn.FieldDescription { return l.g.fds }
func (l *linhasLidas) Conn() *pgx.Conn                              { return nil }
func (l *linhasLidas) TypeMap() *pgtype.Map                         { return l.m }

func (l *linhasLidas) Next() bool {
	if l.i+1 >= len(l.g.valores) {
		l.i = len(l.g.valores)
		return false
	}
	l.i++
	return true
}

func (l *linhasLidas) RawValues() [][]byte {
	if l.i < 0 || l.i >= len(l.g.valores) {
		return nil
	}
	return l.g.valores[l.i]
}

func (l *linhasLidas) Scan(dest ...any) error {
	return pgx.ScanRow(l.m, l.g.fds, l.RawValues(), dest...)
}

func (l *linhasLidas) Values() ([]any, error) {
	vs := make([]any, len(l.g.fds))
	for i, fd := range l.g.fds {
		v, err := decodificar(l.m, fd, l.RawValues()[i])
		if err != nil {
			return nil, err
		}
		vs[i] = v
	}
	return vs, nil
}

func decodificar(m *pgtype.Map, fd pgconn.FieldDescription, src []byte) (any, error) {
	if src == nil {
		return nil, nil
	}
	if t, ok := m.TypeForOID(fd.DataTypeOID); ok {
		return t.Codec.DecodeValue(m, fd.DataTypeOID, fd.Format, src)
	}
	if fd.Format == pgx.TextFormatCode {
		return string(src), nil
	}
	return append([]byte{}, src...), nil
}
