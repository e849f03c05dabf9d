//go:build faults

package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/formigueiro/d6a/internal/loopback"
	"github.com/formigueiro/d6a/internal/pglocal"
)

// Knobs of a run, read once from the environment (docs/reliability.md).
type parametros struct {
	// soak is D6A_SOAK=1: more events, kills and outages.
	soak bool
	// eventos is the number of good messages streamed (D6A_FAULTS_EVENTS).
	eventos int
	// kills is the number of kill -9 of `d6a serve` (D6A_FAULTS_KILLS).
	kills int
	// seed drives every random choice (D6A_FAULTS_SEED), printed so a run
	// can be repeated.
	seed uint64
	// race builds d6a with the race detector (D6A_FAULTS_RACE, default: as
	// the test binary).
	race bool
	// manter keeps the logs directory even when everything passed
	// (D6A_FAULTS_KEEP=1).
	manter bool
	// amostraVerify is how many draws are also checked with `d6a verify`
	// (D6A_FAULTS_VERIFY_SAMPLE).
	amostraVerify int
	// quedasNATS and quedasPG are the NATS restarts and 10 s PostgreSQL
	// outages injected during the stream.
	quedasNATS, quedasPG int
	// janela is how long the stream of events lasts.
	janela time.Duration
	// pgFora is how long PostgreSQL stays stopped in each outage
	// (D6A_FAULTS_PG_DOWN, seconds; default 10).
	pgFora time.Duration
}

var (
	par parametros
	// binD6a and binNATS are the binaries built once by TestMain.
	binD6a, binNATS string
	// raiz holds binaries, the PostgreSQL cluster, NATS stores and logs.
	raiz string
	// pg is the cluster of this test binary; the chaos test stops it for
	// 10 s and starts it again on the same directory and port.
	pg *clusterPG
)

func TestMain(m *testing.M) {
	os.Exit(principal(m))
}

func principal(m *testing.M) int {
	par = lerParametros()
	var err error
	if raiz, err = os.MkdirTemp("", "d6a-faults-"); err != nil {
		fmt.Fprintln(os.Stderr, "faults:", err)
		return 1
	}
	// PostgreSQL runs as an unprivileged user when the test runs as root: it
	// must be able to traverse the directory.
	_ = os.Chmod(raiz, 0o755)
	fmt.Printf("faults: seed=%d events=%d kills=%d soak=%v race=%v dir=%s\n",
		par.seed, par.eventos, par.kills, par.soak, par.race, raiz)

	if err := construir(); err != nil {
		fmt.Fprintln(os.Stderr, "faults: build:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	pg, err = iniciarPG(ctx, filepath.Join(raiz, "pg"))
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "faults: PostgreSQL:", err)
		return 1
	}
	code := m.Run()
	pg.parar()
	if code == 0 && !par.manter {
		_ = os.RemoveAll(raiz)
	} else {
		fmt.Printf("faults: logs and data kept in %s\n", raiz)
	}
	return code
}

func lerParametros() parametros {
	p := parametros{
		soak:          os.Getenv("D6A_SOAK") == "1",
		eventos:       1000,
		kills:         10,
		seed:          rand.Uint64() % 1_000_000_000,
		race:          raceAtivo,
		manter:        os.Getenv("D6A_FAULTS_KEEP") == "1",
		amostraVerify: 25,
		quedasNATS:    1,
		quedasPG:      1,
	}
	if p.soak {
		p.eventos, p.kills, p.quedasNATS, p.quedasPG = 4000, 40, 3, 2
	}
	inteiro := func(nome string, v *int) {
		if s := os.Getenv(nome); s != "" {
			if n, err := strconv.Atoi(s); err == nil && n >= 0 {
				*v = n
			} else {
				fmt.Fprintf(os.Stderr, "faults: %s=%q ignored (want a non-negative integer)\n", nome, s)
			}
		}
	}
	inteiro("D6A_FAULTS_EVENTS", &p.eventos)
	inteiro("D6A_FAULTS_KILLS", &p.kills)
	inteiro("D6A_FAULTS_VERIFY_SAMPLE", &p.amostraVerify)
	fora := 10
	inteiro("D6A_FAULTS_PG_DOWN", &fora)
	p.pgFora = time.Duration(fora) * time.Second
	if s := os.Getenv("D6A_FAULTS_SEED"); s != "" {
		if n, err := strconv.ParseUint(s, 10, 64); err == nil {
			p.seed = n
		}
	}
	if s := os.Getenv("D6A_FAULTS_RACE"); s != "" {
		p.race = s == "1" || strings.EqualFold(s, "true")
	}
	if p.eventos < 200 {
		p.eventos = 200
	}
	// About 60 ms per event: 1,000 events stream in 60 s, leaving room for
	// the outages and the redeliveries after the last kill.
	p.janela = max(30*time.Second, time.Duration(p.eventos)*60*time.Millisecond)
	return p
}

// construir builds d6a (with -race when asked) and nats-server from the
// module, once.
func construir() error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(raiz, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	binD6a = filepath.Join(bin, "d6a")
	binNATS = filepath.Join(bin, "nats-server")
	args := []string{"build", "-o", binD6a}
	if par.race {
		args = append(args, "-race")
	}
	args = append(args, "github.com/formigueiro/d6a/cmd/d6a")
	for _, b := range [][]string{args, {"build", "-o", binNATS, "github.com/nats-io/nats-server/v2"}} {
		inicio := time.Now()
		cmd := exec.Command(goBin, b...)
		cmd.Env = os.Environ()
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %s: %w\n%s", strings.Join(b, " "), err, out)
		}
		fmt.Printf("faults: built %s in %s\n", filepath.Base(b[2]), time.Since(inicio).Round(time.Millisecond))
	}
	return nil
}

// clusterPG is the PostgreSQL cluster of the suite: pglocal with a fixed
// directory and port, so it can be stopped and started again.
type clusterPG struct {
	opts pglocal.Options
	c    *pglocal.Cluster
}

func iniciarPG(ctx context.Context, dir string) (*clusterPG, error) {
	porta, err := loopback.FreePort()
	if err != nil {
		return nil, err
	}
	p := &clusterPG{opts: pglocal.Options{Dir: dir, Port: porta, Settings: map[string]string{"max_connections": "300"}}}
	if p.c, err = pglocal.Start(ctx, p.opts); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *clusterPG) url(db string) string { return p.c.URL(db) }

func (p *clusterPG) parar() { _ = p.c.Stop() }

// reiniciar starts the cluster again on the same directory and port.
func (p *clusterPG) reiniciar(ctx context.Context) error {
	c, err := pglocal.Start(ctx, p.opts)
	if err != nil {
		return err
	}
	p.c = c
	return nil
}

// novoBanco creates a database with the stand-in for core.uc_polygons that
// d6a reads (CONTRACT §5) and returns its URL.
func novoBanco(t *testing.T, nome string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := pg.c.CreateDatabase(ctx, nome, ""); err != nil {
		t.Fatalf("create database %s: %v", nome, err)
	}
	url := pg.url(nome)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE SCHEMA core; CREATE TABLE core.uc_polygons(id uuid primary key, parent_uc_id uuid)`); err != nil {
		t.Fatalf("core.uc_polygons: %v", err)
	}
	return url
}
