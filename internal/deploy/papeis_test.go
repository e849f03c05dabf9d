package deploy

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/formigueiro/d6a/internal/pgtest"
	"github.com/formigueiro/d6a/internal/store"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// psqlVar is a psql variable reference: :"name" (an identifier) or
// :'name' (a literal).
var psqlVar = regexp.MustCompile(`:"([a-z_]+)"|:'([a-z_]+)'`)

// scriptPsql reads a script of deploy/postgres and interpolates its psql
// variables as `psql -v name=value` would; a variable not given fails the
// test (psql would leave it as is and fail on the server).
func scriptPsql(t *testing.T, nome string, vars map[string]string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "postgres", nome))
	if err != nil {
		t.Fatal(err)
	}
	return psqlVar.ReplaceAllStringFunc(string(b), func(m string) string {
		sub := psqlVar.FindStringSubmatch(m)
		if v, ok := vars[sub[1]]; ok && sub[1] != "" {
			return pgx.Identifier{v}.Sanitize()
		}
		if v, ok := vars[sub[2]]; ok && sub[2] != "" {
			return "'" + strings.ReplaceAll(v, "'", "''") + "'"
		}
		t.Fatalf("%s: psql variable %s not set", nome, m)
		return ""
	})
}

func comUsuario(t *testing.T, base, usuario, senha string) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(usuario, senha)
	return u.String()
}

func execSQL(t *testing.T, ctx context.Context, dsn, sql string) {
	t.Helper()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, sql); err != nil {
		t.Fatalf("%v\n%s", err, sql)
	}
}

// TestPapeisMenorPrivilegio: deploy/postgres/papeis.sql as the compose file
// runs it, the migrations applied by the owner role, and d6a's runtime role
// doing what the service does (the log's append, its one allowed change,
// a checkpoint, the journal, a sequence, the advisory locks, LISTEN, the
// planner's function, the hierarchy read) but refused what would rewrite
// history: DROP TRIGGER, DISABLE TRIGGER, DELETE, UPDATE of a leaf,
// TRUNCATE, session_replication_role, DDL.
func TestPapeisMenorPrivilegio(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := pgtest.EmptyURL(t)
	au, err := url.Parse(admin)
	if err != nil {
		t.Fatal(err)
	}
	banco := strings.TrimPrefix(au.Path, "/")
	// Roles belong to the cluster, which other tests may share.
	suf := strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	dono, app := "d6a_dono_"+suf, "d6a_app_"+suf
	vars := map[string]string{"banco": banco, "dono": dono, "app": app, "senha_dono": "dono-" + suf, "senha_app": "app-" + suf}
	t.Cleanup(func() {
		ctx := context.Background()
		c, err := pgx.Connect(ctx, admin)
		if err != nil {
			t.Log(err)
			return
		}
		defer c.Close(ctx)
		for _, s := range []string{
			"ALTER DATABASE " + pgx.Identifier{banco}.Sanitize() + " OWNER TO CURRENT_USER",
			// One role per statement: both in one trips PostgreSQL 15 on the
			// default ACL one holds for the other.
			"DROP OWNED BY " + pgx.Identifier{app}.Sanitize() + " CASCADE",
			"DROP OWNED BY " + pgx.Identifier{dono}.Sanitize() + " CASCADE",
			"DROP ROLE " + pgx.Identifier{dono}.Sanitize() + ", " + pgx.Identifier{app}.Sanitize(),
		} {
			if _, err := c.Exec(ctx, s); err != nil {
				t.Logf("cleanup: %s: %v", s, err)
			}
		}
	})
	execSQL(t, ctx, admin, scriptPsql(t, "papeis.sql", vars))

	// The owner migrates (d6a migrate); core.uc_polygons is another
	// system's, granted by its owner.
	urlDono := comUsuario(t, admin, dono, vars["senha_dono"])
	stDono, err := store.Open(ctx, urlDono)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Migrate(ctx, stDono.Pool); err != nil {
		t.Fatalf("migrations as the owner role: %v", err)
	}
	stDono.Close()
	execSQL(t, ctx, admin, pgtest.CoreSchema)
	execSQL(t, ctx, admin, scriptPsql(t, "papeis-core.sql", vars))

	for _, papel := range []string{dono, app} {
		var super, createrole, createdb, bypass bool
		c, err := pgx.Connect(ctx, admin)
		if err != nil {
			t.Fatal(err)
		}
		err = c.QueryRow(ctx, `SELECT rolsuper, rolcreaterole, rolcreatedb, rolbypassrls FROM pg_roles WHERE rolname = $1`, papel).Scan(&super, &createrole, &createdb, &bypass)
		c.Close(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if super || createrole || createdb || bypass {
			t.Errorf("role %s: superuser %v, createrole %v, createdb %v, bypassrls %v; want none", papel, super, createrole, createdb, bypass)
		}
	}

	st, err := store.Open(ctx, comUsuario(t, admin, app, vars["senha_app"]))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// What the service does.
	ev := uuid.New()
	h := func(b byte) []byte { return []byte(strings.Repeat(string(rune(b)), 32)) }
	err = st.InTx(ctx, func(tx store.Tx) error {
		if err := tx.AnexarAoLog(ctx, store.Anexacao{
			Tamanho: 0, Fronteira: []byte{}, NovaFronteira: h('f'),
			Indices: []int64{0}, Eventos: []uuid.UUID{ev}, Demandas: []uuid.UUID{uuid.New()},
			Registros: [][]byte{[]byte(`{"x":1}`)}, HashesFolha: [][]byte{h('a')},
			IndicesHashes: []int64{0}, Hashes: [][]byte{h('a')},
		}); err != nil {
			return fmt.Errorf("append to the log: %w", err)
		}
		if err := tx.TravarAssinatura(ctx, 42); err != nil {
			return fmt.Errorf("advisory lock: %w", err)
		}
		if err := tx.GravarCheckpoint(ctx, store.CheckpointDoLog{Tamanho: 1, Raiz: h('a'), Nota: "nota"}); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		if ok, err := tx.EliminarRegistroDoLog(ctx, ev); err != nil || len(ok) != 1 {
			return fmt.Errorf("elimination of a record's body: %v %w", ok, err)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("runtime role: %v", err)
	}
	for _, s := range []string{
		// an identity column (its sequence) and the journal
		`INSERT INTO d6a.acoes_administrativas (sub, acao, alvo, justificativa, criado_em) VALUES ('op', 'teste', 'x', 'teste de papéis', now())`,
		`INSERT INTO d6a.config (versao, n_recusas_suspensao, t_suspensao_dias, timeout_resposta_horas, sub, justificativa, criado_em) VALUES (1, 3, 90, 72, 'ambiente', 'x', now())`,
		`SELECT d6a.ajustar_planos()`,
		`SELECT pg_advisory_lock(7), pg_advisory_unlock(7)`,
		`LISTEN d6a_teste`,
		`NOTIFY d6a_teste`,
	} {
		if _, err := st.Pool.Exec(ctx, s); err != nil {
			t.Errorf("runtime role: %s: %v", s, err)
		}
	}
	if _, err := st.CarregarHierarquia(ctx); err != nil {
		t.Errorf("runtime role: core.uc_polygons: %v", err)
	}

	// What would rewrite history, or the schema.
	for _, s := range []string{
		`DROP TRIGGER transparencia_registros_somente_insercao ON d6a.transparencia_registros`,
		`DROP TRIGGER acoes_administrativas_somente_insercao ON d6a.acoes_administrativas`,
		`ALTER TABLE d6a.transparencia_registros DISABLE TRIGGER ALL`,
		`ALTER TABLE d6a.transparencia_hashes DISABLE TRIGGER transparencia_hashes_somente_insercao`,
		`ALTER TABLE d6a.acoes_administrativas DISABLE TRIGGER USER`,
		`DELETE FROM d6a.transparencia_registros`,
		`DELETE FROM d6a.transparencia_hashes`,
		`DELETE FROM d6a.transparencia_checkpoints`,
		`DELETE FROM d6a.acoes_administrativas`,
		`DELETE FROM d6a.config`,
		`UPDATE d6a.transparencia_registros SET hash_folha = '\x` + strings.Repeat("00", 32) + `'`,
		`UPDATE d6a.transparencia_registros SET registro = '\x00', eliminado_em = NULL`,
		`UPDATE d6a.transparencia_hashes SET hash = '\x` + strings.Repeat("00", 32) + `'`,
		`UPDATE d6a.transparencia_checkpoints SET nota = 'outra'`,
		`UPDATE d6a.acoes_administrativas SET justificativa = 'outra'`,
		`TRUNCATE d6a.transparencia_registros`,
		`TRUNCATE d6a.acoes_administrativas`,
		`SET session_replication_role = replica`,
		`DROP TABLE d6a.transparencia_registros`,
		`DROP FUNCTION d6a.somente_insercao() CASCADE`,
		`CREATE TABLE d6a.intrusa (x int)`,
		`CREATE TABLE public.intrusa (x int)`,
		`INSERT INTO core.uc_polygons (id) VALUES (gen_random_uuid())`,
	} {
		_, err := st.Pool.Exec(ctx, s)
		var pe *pgconn.PgError
		switch {
		case err == nil:
			t.Errorf("runtime role: %s: accepted, want refused", s)
		case !errors.As(err, &pe) || pe.Code != "42501":
			t.Errorf("runtime role: %s: %v, want insufficient_privilege (42501)", s, err)
		default:
			t.Logf("refused: %s: %s", s, pe.Message)
		}
	}
	var n int
	if err := st.Pool.QueryRow(ctx, `SELECT count(*) FROM d6a.transparencia_registros WHERE registro IS NULL AND hash_folha = $1`, h('a')).Scan(&n); err != nil || n != 1 {
		t.Errorf("the eliminated leaf: %d rows, %v; want 1, its hash intact", n, err)
	}
}
