package store_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// A pipeline runs its queued statements in order in one round trip, inside
// the caller's transaction; the first failure names its query and stops the
// rest; a query that reads rows is refused.
func TestPipeline(t *testing.T) {
	ctx, st, _ := open(t)
	a, b := uuid.New(), uuid.New()
	err := st.InTx(ctx, func(tx store.Tx) error {
		p := store.NewPipeline()
		check(t, store.Consultas(p.Tx()).RegistrarProcessamentos(ctx, inbox(a, 1)))
		check(t, store.Consultas(p.Tx()).RegistrarProcessamentos(ctx, inbox(b, 2)))
		if ja := val(store.Consultas(tx).EventosJaProcessados(ctx, []uuid.UUID{a, b})).must(t); len(ja) != 0 {
			t.Fatalf("queued statements ran before Enviar: %v", ja)
		}
		check(t, p.Enviar(ctx, tx))
		if ja := val(store.Consultas(tx).EventosJaProcessados(ctx, []uuid.UUID{a, b})).must(t); len(ja) != 2 {
			t.Fatalf("after Enviar the transaction sees %d of 2 rows", len(ja))
		}
		if _, err := store.Consultas(p.Tx()).EventosJaProcessados(ctx, []uuid.UUID{a}); !errors.Is(err, store.ErrPipeline) {
			t.Fatalf("a query reading rows through the pipeline: %v, want ErrPipeline", err)
		}
		// The same event twice: the inbox's primary key fails the first
		// statement, and the second (a new event) must not run.
		c := uuid.New()
		check(t, store.Consultas(p.Tx()).RegistrarProcessamentos(ctx, inbox(a, 3)))
		check(t, store.Consultas(p.Tx()).RegistrarProcessamentos(ctx, inbox(c, 4)))
		err := p.Enviar(ctx, tx)
		var pg *pgconn.PgError
		if !errors.As(err, &pg) || pg.Code != "23505" || !strings.HasPrefix(err.Error(), "RegistrarProcessamentos: ") {
			t.Fatalf("Enviar: %v, want a unique violation named RegistrarProcessamentos", err)
		}
		return err
	})
	if err == nil {
		t.Fatal("the transaction committed after a failed pipeline")
	}
	if ja := val(store.Consultas(st.Read()).EventosJaProcessados(ctx, []uuid.UUID{a, b})).must(t); len(ja) != 0 {
		t.Fatalf("%d rows survived the rollback", len(ja))
	}
}

// Queued reads run in one round trip after the statements named, each
// function then sees its own rows (one row, many rows, none); a failing
// statement is named and stops the functions after it; a function that
// runs two statements is refused.
func TestLeituras(t *testing.T) {
	ctx, st, _ := open(t)
	a, b := uuid.New(), uuid.New()
	check(t, st.InTx(ctx, func(tx store.Tx) error {
		return store.Consultas(tx).RegistrarProcessamentos(ctx, dbsqlc.RegistrarProcessamentosParams{
			EventIds: []uuid.UUID{a}, Tipos: []string{"agenda.item_disponível"}, Sequences: []int64{1}, Agoras: []time.Time{at(0)},
			OffsetTipos: []string{"agenda.item_disponível"}, OffsetSequences: []int64{1}, OffsetAgoras: []time.Time{at(0)},
		})
	}))
	err := st.InTx(ctx, func(tx store.Tx) error {
		var (
			l      store.Leituras
			trava  dbsqlc.AdvisoryLockSorteioRow
			ja     []uuid.UUID
			nenhum error
			pid    int32
			vazias int
			depois bool
		)
		l.Ler(func(tx store.Tx) (err error) {
			trava, err = store.Consultas(tx).AdvisoryLockSorteio(ctx, 77)
			return err
		})
		l.Ler(func(tx store.Tx) (err error) {
			ja, err = store.Consultas(tx).EventosJaProcessados(ctx, []uuid.UUID{a, b})
			return err
		})
		l.Ler(func(tx store.Tx) error {
			_, err := store.Consultas(tx).BuscarConselheiroPorId(ctx, uuid.New())
			if errors.Is(err, pgx.ErrNoRows) {
				nenhum = err
				return nil
			}
			return err
		})
		l.Ler(func(tx store.Tx) error { vazias++; return nil }) // reads nothing: runs once
		check(t, l.Enviar(ctx, tx))
		check(t, store.Conexao(tx).QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid))
		if trava.Pid != pid || !trava.Descartou {
			t.Fatalf("AdvisoryLockSorteio read %+v on backend %d", trava, pid)
		}
		if len(ja) != 1 || ja[0] != a {
			t.Fatalf("EventosJaProcessados read %v, want [%v]", ja, a)
		}
		if nenhum == nil || vazias != 1 {
			t.Fatalf("no row: %v; a function that reads nothing ran %d times, want 1", nenhum, vazias)
		}

		l.Ler(func(tx store.Tx) error { return store.Conexao(tx).QueryRow(ctx, `SELECT 1/0`).Scan(new(int)) })
		l.Ler(func(tx store.Tx) (err error) {
			_, err = store.Consultas(tx).EventosJaProcessados(ctx, []uuid.UUID{a})
			depois = err == nil
			return err
		})
		err := l.Enviar(ctx, tx)
		var pg *pgconn.PgError
		if !errors.As(err, &pg) || pg.Code != "22012" || !strings.HasPrefix(err.Error(), "SELECT 1/0: ") || depois {
			t.Fatalf("Enviar: %v (the next read ran: %v), want a division by zero named by its statement", err, depois)
		}
		return err
	})
	if err == nil {
		t.Fatal("a failed read did not fail its transaction")
	}
	check(t, st.InTx(ctx, func(tx store.Tx) error {
		var l store.Leituras
		l.Ler(func(tx store.Tx) error {
			if _, err := store.Consultas(tx).EventosJaProcessados(ctx, []uuid.UUID{a}); err != nil {
				return err
			}
			_, err := store.Consultas(tx).EventosJaProcessados(ctx, []uuid.UUID{b})
			return err
		})
		if err := l.Enviar(ctx, tx); !errors.Is(err, store.ErrLeitura) {
			t.Fatalf("a function running two statements: %v, want ErrLeitura", err)
		}
		return nil
	}))
}

// InTxPipelined is one transaction: BEGIN goes with the opening reads,
// COMMIT with the queued writes; a failed write or a failing fn leaves
// nothing, and the pool's connection stays usable.
func TestInTxPipelined(t *testing.T) {
	ctx, st, _ := open(t)
	txid := func(tx store.Tx) (n int64, err error) {
		err = store.Conexao(tx).QueryRow(ctx, `SELECT txid_current()`).Scan(&n)
		return n, err
	}
	a, b, c := uuid.New(), uuid.New(), uuid.New()
	var (
		abertura store.Leituras
		primeiro int64
	)
	abertura.Ler(func(tx store.Tx) (err error) { primeiro, err = txid(tx); return err })
	check(t, st.InTxPipelined(ctx, &abertura, func(tx store.Tx, p *store.Pipeline) error {
		if n, err := txid(tx); err != nil || n != primeiro {
			t.Fatalf("opening read in transaction %d, fn in %d (%v): BEGIN did not open one transaction", primeiro, n, err)
		}
		return store.Consultas(p.Tx()).RegistrarProcessamentos(ctx, inbox(a, 1))
	}))
	if ja := val(store.Consultas(st.Read()).EventosJaProcessados(ctx, []uuid.UUID{a})).must(t); len(ja) != 1 {
		t.Fatal("the queued write did not commit")
	}

	// b, then a again: the unique violation comes before COMMIT.
	err := st.InTxPipelined(ctx, nil, func(tx store.Tx, p *store.Pipeline) error {
		check(t, store.Consultas(p.Tx()).RegistrarProcessamentos(ctx, inbox(b, 2)))
		return store.Consultas(p.Tx()).RegistrarProcessamentos(ctx, inbox(a, 3))
	})
	var pg *pgconn.PgError
	if !errors.As(err, &pg) || pg.Code != "23505" {
		t.Fatalf("InTxPipelined: %v, want the unique violation", err)
	}
	errFn := errors.New("fn failed")
	if err := st.InTxPipelined(ctx, nil, func(tx store.Tx, p *store.Pipeline) error {
		check(t, store.Consultas(tx).RegistrarProcessamentos(ctx, inbox(c, 4)))
		return errFn
	}); !errors.Is(err, errFn) {
		t.Fatalf("InTxPipelined: %v, want fn's error", err)
	}
	for i := 0; i < 5; i++ { // every connection of the pool, reused
		if ja := val(store.Consultas(st.Read()).EventosJaProcessados(ctx, []uuid.UUID{b, c})).must(t); len(ja) != 0 {
			t.Fatalf("%d rows of failed transactions committed", len(ja))
		}
	}
}

// A Tx behind a pipeline (Apos) sends the queued writes before each of its
// statements, in the same round trip: a row read (QueryRow), rows
// (Query), a batch of reads (Leituras) and a write each see what was
// queued before them, and the pipeline is empty after; a queued write that
// fails is reported, with its name, by the statement that carried it.
func TestApos(t *testing.T) {
	ctx, st, _ := open(t)
	ids := []uuid.UUID{uuid.New(), uuid.New(), uuid.New(), uuid.New()}
	err := st.InTx(ctx, func(tx store.Tx) error {
		p := store.NewPipeline()
		atras := tx.Apos(p).Tx()
		// Query (many rows).
		check(t, store.Consultas(p.Tx()).RegistrarProcessamentos(ctx, inbox(ids[0], 1)))
		if ja := val(store.Consultas(atras).EventosJaProcessados(ctx, ids)).must(t); len(ja) != 1 {
			t.Fatalf("Query after one queued write sees %d rows, want 1", len(ja))
		}
		// QueryRow, then a QueryRow with nothing queued and no row.
		check(t, store.Consultas(p.Tx()).RegistrarProcessamentos(ctx, inbox(ids[1], 2)))
		if ja := val(atras.Processado(ctx, ids[1])).must(t); !ja {
			t.Fatal("QueryRow does not see the write queued before it")
		}
		if ja := val(atras.Processado(ctx, ids[3])).must(t); ja {
			t.Fatal("an event never written reads as processed")
		}
		// Leituras (a batch of reads).
		check(t, store.Consultas(p.Tx()).RegistrarProcessamentos(ctx, inbox(ids[2], 3)))
		var l store.Leituras
		var ja []uuid.UUID
		l.Ler(func(tx store.Tx) (err error) {
			ja, err = store.Consultas(tx).EventosJaProcessados(ctx, ids)
			return err
		})
		check(t, l.Enviar(ctx, atras))
		if len(ja) != 3 {
			t.Fatalf("Leituras after three queued writes see %d rows, want 3", len(ja))
		}
		// Nothing is sent twice: the pipeline is empty once carried.
		check(t, p.Enviar(ctx, tx))
		// A queued write that fails (the same event again) is named by
		// the read that carried it.
		check(t, store.Consultas(p.Tx()).RegistrarProcessamentos(ctx, inbox(ids[0], 4)))
		_, err := atras.Processado(ctx, ids[3])
		var pg *pgconn.PgError
		if !errors.As(err, &pg) || pg.Code != "23505" || !strings.HasPrefix(err.Error(), "RegistrarProcessamentos: ") {
			t.Fatalf("the read after a failing write: %v, want a unique violation named RegistrarProcessamentos", err)
		}
		return err
	})
	if err == nil {
		t.Fatal("the transaction committed after a failed write")
	}
}

// Reads carried by an Atras (Levar) go after the statements of a round
// trip that carries writes and see them all, the writes queued before and
// the statement itself; Levada holds only while that round trip is the
// last one and nothing was queued after it.
func TestAposLevar(t *testing.T) {
	ctx, st, _ := open(t)
	ids := []uuid.UUID{uuid.New(), uuid.New(), uuid.New()}
	check(t, st.InTx(ctx, func(tx store.Tx) error {
		p := store.NewPipeline()
		atras := tx.Apos(p)
		var vistos []int
		levar := func() {
			var l store.Leituras
			l.Ler(func(tx store.Tx) error {
				ja, err := store.Consultas(tx).EventosJaProcessados(ctx, ids)
				if err == nil { // not the recording run (Leituras)
					vistos = append(vistos, len(ja))
				}
				return err
			})
			atras.Levar(&l)
		}
		levar()
		// Nothing queued: the read goes alone, carrying nothing.
		check(t, val(atras.Tx().Processado(ctx, ids[0])).err)
		if len(vistos) != 0 || atras.Levada() {
			t.Fatalf("reads carried by a round trip without writes: %v, Levada %v", vistos, atras.Levada())
		}
		// A queued write, then a write of the caller's own: the carried
		// read sees both.
		check(t, store.Consultas(p.Tx()).RegistrarProcessamentos(ctx, inbox(ids[0], 1)))
		check(t, store.Consultas(atras.Tx()).RegistrarProcessamentos(ctx, inbox(ids[1], 2)))
		if len(vistos) != 1 || vistos[0] != 2 || !atras.Levada() {
			t.Fatalf("carried read saw %v rows (want [2]), Levada %v", vistos, atras.Levada())
		}
		// A write queued after it: no longer what a read would give.
		check(t, store.Consultas(p.Tx()).RegistrarProcessamentos(ctx, inbox(ids[2], 3)))
		if atras.Levada() {
			t.Fatal("Levada with a write queued after the carried read")
		}
		// Carried again with the next read, which sees all three.
		check(t, val(atras.Tx().Processado(ctx, ids[2])).err)
		if len(vistos) != 2 || vistos[1] != 3 || !atras.Levada() {
			t.Fatalf("carried read saw %v rows (want [2 3]), Levada %v", vistos, atras.Levada())
		}
		// Another round trip after it, carrying nothing.
		check(t, val(atras.Tx().Processado(ctx, ids[1])).err)
		if atras.Levada() {
			t.Fatal("Levada after a later round trip")
		}
		atras.Levar(nil)
		return nil
	}))
}

// inbox is the inbox row of agenda item id at stream sequence seq.
func inbox(id uuid.UUID, seq int64) dbsqlc.RegistrarProcessamentosParams {
	return dbsqlc.RegistrarProcessamentosParams{
		EventIds: []uuid.UUID{id}, Tipos: []string{"agenda.item_disponível"}, Sequences: []int64{seq}, Agoras: []time.Time{at(0)},
		OffsetTipos: []string{"agenda.item_disponível"}, OffsetSequences: []int64{seq}, OffsetAgoras: []time.Time{at(0)},
	}
}
