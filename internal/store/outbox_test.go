package store_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/formigueiro/d6a/internal/pgtest"
	"github.com/formigueiro/d6a/internal/store"
)

// SemEsperarWAL turns synchronous_commit off in the relay's transaction
// only: SET LOCAL does not leak into the session.
func TestBeginDaPassaDesligaSynchronousCommitSoNaTransacao(t *testing.T) {
	t.Parallel()
	base := pgtest.New(t)
	// One connection, synchronous_commit on by default (the test server
	// turns it off globally), so "after" reads the connection the pass used.
	cfg := base.Pool.Config()
	cfg.MaxConns = 1
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "on"
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	st := &store.Store{Pool: pool}
	ctx := context.Background()
	mostrar := func(db interface {
		QueryRow(context.Context, string, ...any) pgx.Row
	}) string {
		t.Helper()
		var v string
		if err := db.QueryRow(ctx, "SHOW synchronous_commit").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := mostrar(st.Pool); v != "on" {
		t.Fatalf("synchronous_commit before = %s, want on", v)
	}
	err = st.InTxWith(ctx, store.SemEsperarWAL, func(tx store.Tx) error {
		if v := mostrar(store.Conexao(tx)); v != "off" {
			t.Errorf("synchronous_commit in the pass's transaction = %s, want off", v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if v := mostrar(st.Pool); v != "on" {
		t.Fatalf("synchronous_commit after the pass = %s, want on (SET LOCAL must not leak into the session)", v)
	}
}
