package store_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/formigueiro/d6a/internal/store"
)

// A pipeline runs its queued statements in order in one round trip, inside
// the caller's transaction; the first failure names its query and stops the
// rest; a query that reads rows is refused.
func TestPipeline(t *testing.T) {
	ctx, st, _ := open(t)
	a, b := uuid.New(), uuid.New()
	inbox := func(id uuid.UUID, seq int64) store.RegistrarProcessamentosParams {
		return store.RegistrarProcessamentosParams{
			EventIds: []uuid.UUID{id}, Tipos: []string{"agenda.item_disponível"}, Sequences: []int64{seq}, Agoras: []time.Time{at(0)},
			OffsetTipos: []string{"agenda.item_disponível"}, OffsetSequences: []int64{seq}, OffsetAgoras: []time.Time{at(0)},
		}
	}
	err := st.InTx(ctx, func(tx store.Tx) error {
		p := store.NewPipeline()
		check(t, p.Tx().RegistrarProcessamentos(ctx, inbox(a, 1)))
		check(t, p.Tx().RegistrarProcessamentos(ctx, inbox(b, 2)))
		if ja := val(tx.EventosJaProcessados(ctx, []uuid.UUID{a, b})).must(t); len(ja) != 0 {
			t.Fatalf("queued statements ran before Enviar: %v", ja)
		}
		check(t, p.Enviar(ctx, tx))
		if ja := val(tx.EventosJaProcessados(ctx, []uuid.UUID{a, b})).must(t); len(ja) != 2 {
			t.Fatalf("after Enviar the transaction sees %d of 2 rows", len(ja))
		}
		if _, err := p.Tx().EventosJaProcessados(ctx, []uuid.UUID{a}); !errors.Is(err, store.ErrPipeline) {
			t.Fatalf("a query reading rows through the pipeline: %v, want ErrPipeline", err)
		}
		// The same event twice: the inbox's primary key fails the first
		// statement, and the second (a new event) must not run.
		c := uuid.New()
		check(t, p.Tx().RegistrarProcessamentos(ctx, inbox(a, 3)))
		check(t, p.Tx().RegistrarProcessamentos(ctx, inbox(c, 4)))
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
	if ja := val(st.Read().EventosJaProcessados(ctx, []uuid.UUID{a, b})).must(t); len(ja) != 0 {
		t.Fatalf("%d rows survived the rollback", len(ja))
	}
}
