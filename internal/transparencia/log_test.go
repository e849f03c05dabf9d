package transparencia_test

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/formigueiro/d6a/internal/historico"
	"github.com/formigueiro/d6a/internal/pgtest"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/transparencia"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// memoria is the reference tree: tlog over an in-memory slice.
type memoria []tlog.Hash

func (m memoria) ReadHashes(idx []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(idx))
	for i, x := range idx {
		out[i] = m[x]
	}
	return out, nil
}

func (m *memoria) anexar(t *testing.T, data []byte) {
	t.Helper()
	hs, err := tlog.StoredHashes(contar(*m), data, *m)
	if err != nil {
		t.Fatal(err)
	}
	*m = append(*m, hs...)
}

// contar is the number of records of a stored-hash slice.
func contar(m memoria) int64 {
	var n int64
	for tlog.StoredHashCount(n) < int64(len(m)) {
		n++
	}
	return n
}

// The stored tree equals tlog's own over the same records, whatever the
// batch sizes, and its proofs check.
func TestAnexarIgualAoTlogEmMemoria(t *testing.T) {
	ctx := context.Background()
	st := pgtest.New(t)
	var ref memoria
	i := 0
	for _, lote := range []int{1, 1, 3, 64, 1, 17, 2, 100} {
		regs := historico.Registros("teste", i, i+lote)
		historico.Anexar(t, st, regs)
		for _, r := range regs {
			b, _ := r.Bytes()
			ref.anexar(t, b)
		}
		i += lote
	}
	n, err := transparencia.Tamanho(ctx, st.Pool)
	if err != nil || n != int64(i) {
		t.Fatalf("size %d, %v; want %d", n, err, i)
	}
	db := transparencia.Leitor(ctx, st.Pool)
	for _, m := range []int64{1, 2, 5, 70, int64(i)} {
		want, _ := tlog.TreeHash(m, ref)
		got, err := tlog.TreeHash(m, db)
		if err != nil || got != want {
			t.Fatalf("root of %d: %x, %v; want %x", m, got, err, want)
		}
	}
	root, _ := tlog.TreeHash(n, db)
	for _, k := range []int64{0, 1, 63, n - 1} {
		f, err := transparencia.Folhas(ctx, st.Pool, k, k+1, 1)
		if err != nil || len(f) != 1 {
			t.Fatal(f, err)
		}
		if f[0].HashFolha != tlog.RecordHash(f[0].Registro) {
			t.Fatalf("leaf %d: stored hash is not the record's", k)
		}
		p, err := tlog.ProveRecord(n, k, db)
		if err != nil {
			t.Fatal(err)
		}
		if err := tlog.CheckRecord(p, n, root, k, f[0].HashFolha); err != nil {
			t.Fatalf("leaf %d: %v", k, err)
		}
		if k > 0 {
			old, _ := tlog.TreeHash(k, db)
			tp, err := tlog.ProveTree(n, k, db)
			if err != nil {
				t.Fatal(err)
			}
			if err := tlog.CheckTree(tp, n, root, k, old); err != nil {
				t.Fatalf("consistency %d→%d: %v", k, n, err)
			}
		}
	}
}

// A failed draw transaction leaves no leaf behind, and the next append
// takes the same index.
func TestAnexarDesfeitoComATransacao(t *testing.T) {
	ctx := context.Background()
	st := pgtest.New(t)
	historico.Anexar(t, st, historico.Registros("teste", 0, 2))
	erro := errors.New("draw failed")
	err := pgx.BeginTxFunc(ctx, st.Pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if err := transparencia.Anexar(ctx, tx, historico.Registros("teste", 2, 5)); err != nil {
			return err
		}
		return erro
	})
	if !errors.Is(err, erro) {
		t.Fatal(err)
	}
	if n, _ := transparencia.Tamanho(ctx, st.Pool); n != 2 {
		t.Fatalf("size %d after rollback, want 2", n)
	}
	historico.Anexar(t, st, historico.Registros("teste", 2, 3))
	f, err := transparencia.FolhaPorEvento(ctx, st.Pool, historico.Registros("teste", 2, 3)[0].EventIDSorteio)
	if err != nil || f.Indice != 2 {
		t.Fatalf("leaf %+v, %v; want index 2", f, err)
	}
}

// An append computed from a state another transaction moved fails, even
// queued (it cannot check a row count): the tree keeps the other's leaves
// only.
func TestAnexarComEstadoVelhoFalha(t *testing.T) {
	ctx := context.Background()
	st := pgtest.New(t)
	historico.Anexar(t, st, historico.Registros("teste", 0, 2))
	err := pgx.BeginTxFunc(ctx, st.Pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		e, err := transparencia.LerEstado(ctx, tx)
		if err != nil {
			return err
		}
		historico.Anexar(t, st, historico.Registros("teste", 2, 4)) // another transaction, committed
		return e.Anexar(ctx, tx, historico.Registros("teste", 10, 11))
	})
	var pg *pgconn.PgError
	if !errors.As(err, &pg) || pg.Code != "23502" {
		t.Fatalf("append from a moved state: %v, want a not-null violation", err)
	}
	if n, _ := transparencia.Tamanho(ctx, st.Pool); n != 4 {
		t.Fatalf("size %d, want 4", n)
	}
	historico.Anexar(t, st, historico.Registros("teste", 4, 5))
	f, err := transparencia.FolhaPorEvento(ctx, st.Pool, historico.Registros("teste", 4, 5)[0].EventIDSorteio)
	if err != nil || f.Indice != 4 {
		t.Fatalf("leaf %+v, %v; want index 4", f, err)
	}
}

// Records are canonical and recompute; any edited field is caught.
func TestRegistroConferir(t *testing.T) {
	r := historico.RegistroSintetico("teste", 13)
	b, err := r.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), `{"event_id_sorteio":"`) || !strings.HasSuffix(string(b), `"excluido":null}`) {
		t.Fatalf("record bytes: %s", b)
	}
	lido, err := registro.LerRegistro(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := registro.Conferir(lido); err != nil {
		t.Fatal(err)
	}
	casos := map[string]func(s string) string{
		"registro.seed": func(s string) string { return strings.Replace(s, lido.Seed, strings.Repeat("0", 64), 1) },
		"registro.conselheiro_id": func(s string) string {
			return strings.Replace(s, `"conselheiro_id":"`+lido.ConselheiroID.String(), `"conselheiro_id":"`+lido.Ordenados[1], 1)
		},
		"registro.canonico": func(s string) string { return strings.Replace(s, `,"seed"`, `, "seed"`, 1) },
	}
	for campo, mudar := range casos {
		m := mudar(string(b))
		r2, err := registro.LerRegistro([]byte(m))
		if err == nil {
			err = registro.Conferir(r2)
		}
		var f *registro.Falha
		if !errors.As(err, &f) || f.Campo != campo {
			t.Errorf("%s: got %v", campo, err)
		}
	}
}

func tlogRecordHash64(b []byte) string {
	h := tlog.RecordHash(b)
	return base64.StdEncoding.EncodeToString(h[:])
}

// The verifier key derived from a signer key is the one note made with it
// (base64 keys may hold '+', the field separator).
func TestChaveVerificadoraDerivada(t *testing.T) {
	for range 64 {
		skey, vkey, err := transparencia.GerarChave(registro.OrigemPadrao)
		if err != nil {
			t.Fatal(err)
		}
		c, err := transparencia.NovaChave(skey)
		if err != nil || c.Verificador != vkey {
			t.Fatalf("%s: derived %q, %v; want %q", skey, c.Verificador, err, vkey)
		}
	}
}
