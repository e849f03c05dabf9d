package store_test

// Row and advisory locks the generated queries take: the draw's advisory
// lock, the relay's FOR UPDATE SKIP LOCKED and the state machine's FOR
// UPDATE. Ordering is shown with channels and pg_locks, never with sleeps.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// waitFor polls cond until it holds or the deadline passes. Polling only
// waits for a state to be reached; the assertions are on that state.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestAdvisoryLockSorteioSerializa(t *testing.T) {
	t.Parallel()
	ctx, s, q := open(t)
	const chave int64 = 0x0000_1234_5678_9abc // classid 0x1234, objid 0x56789abc in pg_locks

	// advisory reports how many sessions hold (granted) or wait for
	// (!granted) the key; a bigint key shows as classid/objid with
	// objsubid 1.
	advisory := func(pid int32, granted bool) int {
		t.Helper()
		var n int
		check(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks
			WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
			  AND classid::bigint = $1 AND objid::bigint = $2 AND objsubid = 1
			  AND pid = $3 AND granted = $4`, chave>>32, chave&0xffffffff, pid, granted).Scan(&n))
		return n
	}
	backendPID := func(tx store.Tx) (int32, error) {
		var pid int32
		err := store.Conexao(tx).QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid)
		return pid, err
	}

	// First transaction: takes the lock and holds it until released.
	firstPID := make(chan int32, 1)
	release := make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- s.InTx(ctx, func(tx store.Tx) error {
			pid, err := backendPID(tx)
			if err != nil {
				return err
			}
			if _, err := store.Consultas(tx).AdvisoryLockSorteio(ctx, chave); err != nil {
				return err
			}
			firstPID <- pid
			<-release
			return nil
		})
	}()
	var pid1 int32
	select {
	case pid1 = <-firstPID:
	case err := <-first:
		t.Fatalf("first transaction ended early: %v", err)
	}
	if n := advisory(pid1, true); n != 1 {
		t.Fatalf("first transaction holds %d granted advisory locks on the key, want 1", n)
	}

	// Another key is independent: taken and released at once.
	otherCtx, cancelOther := context.WithTimeout(ctx, 10*time.Second)
	defer cancelOther()
	check(t, s.InTx(otherCtx, func(tx store.Tx) error {
		_, err := store.Consultas(tx).AdvisoryLockSorteio(otherCtx, chave+1)
		return err
	}))

	// Second transaction, same key: must wait.
	secondCtx, cancelSecond := context.WithTimeout(ctx, 30*time.Second)
	defer cancelSecond()
	secondPID := make(chan int32, 1)
	second := make(chan error, 1)
	go func() {
		second <- s.InTx(secondCtx, func(tx store.Tx) error {
			pid, err := backendPID(tx)
			if err != nil {
				return err
			}
			secondPID <- pid
			_, err = store.Consultas(tx).AdvisoryLockSorteio(secondCtx, chave)
			return err
		})
	}()
	pid2 := <-secondPID
	waitFor(t, "the second transaction to wait on the advisory lock", func() bool { return advisory(pid2, false) == 1 })
	select {
	case err := <-second:
		t.Fatalf("second AdvisoryLockSorteio returned (%v) while the first transaction holds the lock", err)
	default:
	}
	if n := advisory(pid1, true); n != 1 {
		t.Fatalf("first transaction no longer holds the lock (%d)", n)
	}

	// Commit the first: only now does the second get the lock and return.
	close(release)
	check(t, <-first)
	select {
	case err := <-second:
		if err != nil {
			t.Fatalf("second transaction after the first committed: %v", err)
		}
	case <-secondCtx.Done():
		t.Fatal("second AdvisoryLockSorteio still blocked after the first transaction committed")
	}

	// xact lock: nothing is left once both transactions ended.
	var left int
	check(t, store.Conexao(q).QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&left))
	if left != 0 {
		t.Fatalf("%d advisory locks left after both transactions ended", left)
	}
}

func TestAdvisoryLockSorteioTimeout(t *testing.T) {
	t.Parallel()
	ctx, s, _ := open(t)
	const chave int64 = -42 // negative keys are valid bigint keys too

	check(t, s.InTx(ctx, func(tx store.Tx) error {
		if _, err := store.Consultas(tx).AdvisoryLockSorteio(ctx, chave); err != nil {
			return err
		}
		// While held, a waiter with a deadline gives up with an error
		// instead of proceeding without the lock.
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		err := s.InTx(short, func(tx2 store.Tx) error { _, err := store.Consultas(tx2).AdvisoryLockSorteio(short, chave); return err })
		if err == nil {
			t.Fatal("second AdvisoryLockSorteio acquired a lock held by another transaction")
		}
		return nil
	}))
	// Released at commit: acquired at once afterwards.
	after, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	check(t, s.InTx(after, func(tx store.Tx) error { _, err := store.Consultas(tx).AdvisoryLockSorteio(after, chave); return err }))
}

func TestBuscarOutboxPendentesSkipLocked(t *testing.T) {
	t.Parallel()
	ctx, s, q := open(t)
	var ev []uuid.UUID
	for i := range 5 {
		p := outboxParams("atribuicao.criada", nil, at(time.Duration(i)*time.Minute))
		check(t, gravarOutbox(t, q, p))
		ev = append(ev, p.EventID)
	}
	eventIDs := func(rows []dbsqlc.BuscarOutboxPendentesRow) []uuid.UUID {
		out := []uuid.UUID{}
		for _, r := range rows {
			out = append(out, r.EventID)
		}
		return out
	}

	check(t, s.InTx(ctx, func(tx1 store.Tx) error {
		rows, err := store.Consultas(tx1).BuscarOutboxPendentes(ctx, 2)
		if err != nil {
			return err
		}
		equalIDs(t, "first relay", eventIDs(rows), ev[:2])

		// A second, concurrent relay transaction skips the locked rows
		// instead of waiting for them (a bounded context would fail a
		// blocking query).
		bounded, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		check(t, s.InTx(bounded, func(tx2 store.Tx) error {
			rows, err := store.Consultas(tx2).BuscarOutboxPendentes(bounded, 10)
			if err != nil {
				return err
			}
			equalIDs(t, "second relay", eventIDs(rows), ev[2:])
			rows, err = store.Consultas(tx2).BuscarOutboxPendentes(bounded, 1)
			if err != nil {
				return err
			}
			equalIDs(t, "second relay, limit 1", eventIDs(rows), ev[2:3])
			// It publishes what it took.
			return store.Consultas(tx2).MarcarOutboxPublicados(bounded, dbsqlc.MarcarOutboxPublicadosParams{Agora: at(time.Hour), Ids: []int64{rows[0].ID}, Sequences: []int64{7}})
		}))

		// The first still sees its own rows and, the second's lock gone,
		// the rest minus what the second published.
		rows, err = store.Consultas(tx1).BuscarOutboxPendentes(ctx, 10)
		if err != nil {
			return err
		}
		equalIDs(t, "first relay again", eventIDs(rows), []uuid.UUID{ev[0], ev[1], ev[3], ev[4]})
		return nil
	}))
	if n := val(store.Consultas(q).ContarOutboxPendentes(ctx)).must(t); n != 4 {
		t.Fatalf("ContarOutboxPendentes = %d, want 4", n)
	}
}

func TestBuscarConselheiroPorIdParaAtualizarTravaALinha(t *testing.T) {
	t.Parallel()
	ctx, s, q := open(t)
	id := novoConselheiro(t, q, uuid.New(), "disponivel")
	outro := novoConselheiro(t, q, uuid.New(), "disponivel")

	check(t, s.InTx(ctx, func(tx1 store.Tx) error {
		if _, err := store.Consultas(tx1).BuscarConselheiroPorIdParaAtualizar(ctx, id); err != nil {
			return err
		}
		// The row is locked: another transaction's NOWAIT lock fails with
		// lock_not_available; the other counsellor's row is free.
		err := s.InTx(ctx, func(tx2 store.Tx) error {
			if _, err := store.Conexao(tx2).Exec(ctx, `SELECT 1 FROM d6a.conselheiros WHERE id = $1 FOR UPDATE NOWAIT`, outro); err != nil {
				t.Errorf("other row: %v", err)
				return err
			}
			_, err := store.Conexao(tx2).Exec(ctx, `SELECT 1 FROM d6a.conselheiros WHERE id = $1 FOR UPDATE NOWAIT`, id)
			return err
		})
		if code := pgCode(err); code != "55P03" {
			t.Fatalf("locking the row from a second transaction: %v (SQLSTATE %q), want 55P03", err, code)
		}
		// A plain read is not blocked.
		got, err := store.Consultas(q).BuscarConselheiroPorId(ctx, id)
		if err != nil || got.Status != "disponivel" {
			t.Fatalf("plain read while locked: %+v, %v", got, err)
		}
		return nil
	}))
	// After commit the lock is gone.
	check(t, s.InTx(ctx, func(tx store.Tx) error {
		_, err := store.Conexao(tx).Exec(ctx, `SELECT 1 FROM d6a.conselheiros WHERE id = $1 FOR UPDATE NOWAIT`, id)
		return err
	}))
}

// The unit of work plans for the tables as they are. The pool keeps generic
// plans, built once per connection: built while d6a.atribuicoes held one
// row, the candidates probe scanned the table instead of probing its index,
// and kept doing so while a burst of draws grew it. d6a.ajustar_planos, run by the lock's statement, discards them
// once the table doubled.
func TestUnidadeDeTrabalhoPlanejaParaATabelaAtual(t *testing.T) {
	t.Parallel()
	ctx, s, _ := open(t)
	uc := uuid.New()
	novos := func(n int) {
		t.Helper()
		// n counsellors on uc, each with an active assignment.
		_, err := s.Pool.Exec(ctx, `
			WITH c AS (
				INSERT INTO d6a.conselheiros (id, cidadao_id, unidade_civica_id, event_id_cadastro, event_id_ultima_alteracao)
				SELECT g, g, $1, g, g FROM (SELECT gen_random_uuid() AS g FROM generate_series(1, $2::int)) x
				RETURNING id)
			INSERT INTO d6a.atribuicoes (conselheiro_id, demanda_id, unidade_civica_id, seed_publico, posicao_sorteada, total_elegiveis, event_id_sorteio)
			SELECT id, gen_random_uuid(), $1, 'ab', 0, 1, gen_random_uuid() FROM c`, uc, n)
		if err != nil {
			t.Fatal(err)
		}
	}
	novos(1)
	if _, err := s.Pool.Exec(ctx, `ANALYZE d6a.atribuicoes`); err != nil {
		t.Fatal(err)
	}

	// Both units of work on one connection, which keeps its prepared
	// statements between them.
	conn, err := s.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	unidade := func(fn func(store.Tx) error) {
		t.Helper()
		check(t, pgx.BeginFunc(ctx, conn, func(ptx pgx.Tx) error {
			tx := store.On(ptx)
			if _, err := store.Consultas(tx).AdvisoryLockSorteio(ctx, 42); err != nil {
				return err
			}
			return fn(tx)
		}))
	}
	degrau := func(tx store.Tx) (elegibilidade.Degrau, error) {
		return tx.LerDegrau(ctx, []uuid.UUID{uc}, 0, elegibilidade.Portoes{})
	}
	unidade(func(tx store.Tx) error {
		_, err := degrau(tx)
		return err
	})

	novos(3000) // a burst of draws; no ANALYZE yet
	var plano strings.Builder
	unidade(func(tx store.Tx) error {
		got, err := degrau(tx)
		if err != nil || len(got.Candidatos) != 3001 || !got.Candidatos[0].Ocupado {
			t.Fatalf("LerDegrau = %d counsellors, %v; want 3001 occupied counsellors", len(got.Candidatos), err)
		}
		// The plan that connection's prepared statement runs with now, for
		// the same chain (tamanhos, the two gates, ucs, inicios).
		var nome string
		if err := store.Conexao(tx).QueryRow(ctx, `SELECT name FROM pg_prepared_statements
			WHERE statement LIKE '-- name: BuscarDegrausCadastrados %'`).Scan(&nome); err != nil {
			return err
		}
		rows, err := store.Conexao(tx).Query(ctx, `EXPLAIN EXECUTE `+pgx.Identifier{nome}.Sanitize()+`('{1}', false, false, '{`+uc.String()+`}', '{0}')`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var linha string
			if err := rows.Scan(&linha); err != nil {
				return err
			}
			plano.WriteString(linha + "\n")
		}
		return rows.Err()
	})
	// One index probe by conselheiro_id per candidate: not a scan of the
	// table, nor of an index filtered by conselheiro_id.
	if p := plano.String(); strings.Contains(p, "Seq Scan on atribuicoes") ||
		!(strings.Contains(p, "Index Cond: (conselheiro_id = c.id)") || strings.Contains(p, "Index Cond: ((conselheiro_id = c.id)")) {
		t.Fatalf("candidates plan after the table grew:\n%s\nwant an index probe by conselheiro_id per candidate", p)
	}
	// The pool's generic plans, inside and outside units of work.
	var modo string
	check(t, conn.QueryRow(ctx, `SHOW plan_cache_mode`).Scan(&modo))
	if modo != "force_generic_plan" {
		t.Fatalf("plan_cache_mode = %q, want the pool's force_generic_plan", modo)
	}
	// No JIT: its choice follows the plans' cost estimates, so the
	// statistics (433 ms compiling a 2 ms eligibility read).
	var jit string
	check(t, conn.QueryRow(ctx, `SHOW jit`).Scan(&jit))
	if jit != "off" {
		t.Fatalf("jit = %q, want the pool's off", jit)
	}
}
