//go:build faults && cluster

package faults

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/natslocal"
	"github.com/formigueiro/d6a/internal/pglocal"
)

// The production topology of docs/reliability.md ("Cluster"): three
// nats-server processes in one JetStream cluster with EVENTOS at three
// replicas, a PostgreSQL primary with a streaming standby, and two
// `d6a serve` given every NATS URL and a multi-host database URL.

// natsCluster is three servers of one JetStream cluster, each a natslocal
// server (separate processes, so kill -9 is a crash).
type natsCluster struct {
	nos   map[string]*natslocal.Server // by server_name
	nomes []string
}

func novoNATSCluster(t *testing.T) *natsCluster {
	t.Helper()
	c := &natsCluster{nos: map[string]*natslocal.Server{}}
	rotas := make([]int, 3)
	for i := range rotas {
		rotas[i] = porta(t)
	}
	for i := range 3 {
		nome := fmt.Sprintf("n%d", i+1)
		var rs []string
		for j, p := range rotas {
			if j != i {
				rs = append(rs, fmt.Sprintf("nats-route://127.0.0.1:%d", p))
			}
		}
		// natslocal's sync_interval: always: an acknowledged publish is on
		// disk on a quorum (Jepsen's NATS 2.12.1 report: the default
		// 2-minute fsync loses acknowledged writes when servers crash
		// together).
		conf := fmt.Sprintf("server_name: %s\ncluster {\n  name: d6a\n  listen: 127.0.0.1:%d\n  routes: [%s]\n}\n", nome, rotas[i], strings.Join(rs, ", "))
		c.nos[nome] = iniciarNATS(t, natslocal.Options{Dir: filepath.Join(raiz, "cluster", nome), Config: conf})
		c.nomes = append(c.nomes, nome)
	}
	return c
}

func (c *natsCluster) url() string {
	var us []string
	for _, n := range c.nomes {
		us = append(us, c.nos[n].URL())
	}
	return strings.Join(us, ",")
}

// criarStreams creates EVENTOS and D6A_DLQ at three replicas before d6a
// starts (d6a never alters an existing stream, CONTRACT §3), retrying until
// the cluster has elected its meta leader.
func criarStreams(ctx context.Context, js jetstream.JetStream) error {
	for _, cfg := range []jetstream.StreamConfig{
		{Name: streamBus, Subjects: []string{prefixo + ".>"}, Storage: jetstream.FileStorage, Replicas: 3, Duplicates: 2 * time.Minute},
		{Name: streamDLQ, Subjects: []string{evento.PrefixoDLQ + ".>"}, Storage: jetstream.FileStorage, Replicas: 3, Duplicates: 2 * time.Minute},
	} {
		for {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, err := js.CreateStream(cctx, cfg)
			cancel()
			if err == nil || errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
				break
			}
			if ctx.Err() != nil {
				return fmt.Errorf("creating %s: %w", cfg.Name, err)
			}
			time.Sleep(300 * time.Millisecond)
		}
	}
	return nil
}

// liderStream names the server leading EVENTOS.
func liderStream(ctx context.Context, js jetstream.JetStream) (string, error) {
	s, err := js.Stream(ctx, streamBus)
	if err != nil {
		return "", err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return "", err
	}
	if info.Cluster == nil || info.Cluster.Leader == "" {
		return "", errors.New("no stream leader")
	}
	return info.Cluster.Leader, nil
}

// stepDown asks the JetStream API to move a leader (subject
// $JS.API.STREAM.LEADER.STEPDOWN.<stream> or
// $JS.API.CONSUMER.LEADER.STEPDOWN.<stream>.<consumer>).
func stepDown(ctx context.Context, nc *nats.Conn, subject string) error {
	for {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		resp, err := nc.RequestWithContext(rctx, subject, nil)
		cancel()
		if err == nil {
			var r struct {
				Success bool `json:"success"`
				Error   *struct {
					Description string `json:"description"`
				} `json:"error"`
			}
			if err = json.Unmarshal(resp.Data, &r); err == nil && r.Success {
				return nil
			}
			if err == nil && r.Error != nil {
				err = errors.New(r.Error.Description)
			}
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w", subject, err)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// pgPar is the primary and its standby. The roles swap on a failover; the
// directories and ports stay with their node.
type pgPar struct {
	primario, standby *pglocal.Cluster
	opts              map[*pglocal.Cluster]pglocal.Options
}

func (p *pgPar) url(db string) string {
	// Both hosts, the primary found by target_session_attrs, as an operator
	// gives it to d6a.
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/%s?sslmode=disable&target_session_attrs=read-write&connect_timeout=2",
		p.primario.Port, p.standby.Port, db)
}

func (p *pgPar) parar() {
	for _, c := range []*pglocal.Cluster{p.primario, p.standby} {
		if c != nil {
			_ = c.Stop()
		}
	}
}

// novoPGPar starts a primary (synchronous commit on: the suite's other
// clusters turn it off), creates the d6a database with the stand-in for
// core.uc_polygons, and builds the standby with pg_basebackup -R. With sync
// the primary waits for the standby on every commit
// (synchronous_standby_names = '*').
func novoPGPar(t *testing.T, ctx context.Context, sync bool) *pgPar {
	t.Helper()
	dir := filepath.Join(raiz, "cluster")
	p := &pgPar{opts: map[*pglocal.Cluster]pglocal.Options{}}
	o1 := pglocal.Options{Dir: filepath.Join(dir, "pg1"), Port: porta(t), Settings: map[string]string{
		"max_connections": "300", "synchronous_commit": "on", "wal_keep_size": "256MB",
	}}
	var err error
	if p.primario, err = pglocal.Start(ctx, o1); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.parar)
	if err := p.primario.CreateDatabase(ctx, "d6a", ""); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, p.primario.URL("d6a"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `CREATE SCHEMA core; CREATE TABLE core.uc_polygons(id uuid primary key, parent_uc_id uuid)`); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	o2 := pglocal.Options{Dir: filepath.Join(dir, "pg2"), Port: porta(t), Settings: map[string]string{
		"max_connections": "300", "synchronous_commit": "on", "wal_keep_size": "256MB",
	}}
	if err := p.primario.BaseBackup(ctx, o2.Dir); err != nil {
		t.Fatal(err)
	}
	if p.standby, err = pglocal.Start(ctx, o2); err != nil {
		t.Fatal(err)
	}
	p.opts[p.primario], p.opts[p.standby] = o1, o2
	if sync {
		if err := p.sincrono(ctx, true); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.esperarStreaming(ctx); err != nil {
		t.Fatal(err)
	}
	return p
}

// sincrono sets synchronous_standby_names on the primary (ALTER SYSTEM, so
// it survives the roles swapping).
func (p *pgPar) sincrono(ctx context.Context, on bool) error {
	v := ""
	if on {
		v = "*"
	}
	conn, err := pgx.Connect(ctx, p.primario.URL("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "ALTER SYSTEM SET synchronous_standby_names = '"+v+"'"); err != nil {
		return err
	}
	_, err = conn.Exec(ctx, "SELECT pg_reload_conf()")
	return err
}

// cortarReplicacao makes the standby asynchronous and behind: the primary
// stops waiting for it and its WAL receiver is stopped (primary_conninfo
// emptied), so every commit from now on exists on the primary alone, as the
// last commits before a crash do with an asynchronous standby that lags.
// pg_wal_replay_pause() alone does not do it: the WAL receiver keeps writing
// WAL while replay is paused (a paused startup process does not even act on
// the new primary_conninfo), and the promotion replays all of it.
func (p *pgPar) cortarReplicacao(ctx context.Context) error {
	if err := p.sincrono(ctx, false); err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, p.standby.URL("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for _, q := range []string{"ALTER SYSTEM SET primary_conninfo = ''", "SELECT pg_reload_conf()"} {
		if _, err := conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var n int
	if !esperar(cctx, func() bool {
		return conn.QueryRow(cctx, `SELECT count(*) FROM pg_stat_wal_receiver`).Scan(&n) == nil && n == 0
	}) {
		return fmt.Errorf("the standby's WAL receiver still runs 30s after primary_conninfo was emptied")
	}
	return nil
}

// esperarStreaming waits until the primary sees its standby streaming.
func (p *pgPar) esperarStreaming(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var ultimo error
	if esperar(cctx, func() bool {
		conn, err := pgx.Connect(cctx, p.primario.URL("postgres"))
		if err != nil {
			ultimo = err
			return false
		}
		defer conn.Close(cctx)
		var n int
		ultimo = conn.QueryRow(cctx, `SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'`).Scan(&n)
		return ultimo == nil && n > 0
	}) {
		return nil
	}
	return fmt.Errorf("standby not streaming after 60s: %v", ultimo)
}

// failover kills the primary with SIGKILL, waits depois, promotes the
// standby, and returns the moment of the kill and of the promotion's end.
// durante runs between the kill and the promotion.
func (p *pgPar) failover(ctx context.Context, depois time.Duration, durante func()) (time.Time, time.Time, error) {
	morto := p.primario
	morte := time.Now()
	if err := morto.Kill(); err != nil {
		return morte, morte, err
	}
	if durante != nil {
		durante()
	}
	time.Sleep(time.Until(morte.Add(depois)))
	if err := p.standby.Promote(ctx); err != nil {
		return morte, time.Now(), err
	}
	p.primario, p.standby = p.standby, morto
	return morte, time.Now(), nil
}

// reconstruir turns the dead old primary into a standby of the new one with
// a fresh base backup (its timeline diverged at the crash; pg_rewind would
// need wal_log_hints or checksums, a new copy needs nothing).
func (p *pgPar) reconstruir(ctx context.Context) error {
	velho := p.standby
	o := p.opts[velho]
	if err := os.RemoveAll(o.Dir); err != nil {
		return err
	}
	if err := p.primario.BaseBackup(ctx, o.Dir); err != nil {
		return err
	}
	novo, err := pglocal.Start(ctx, o)
	if err != nil {
		return err
	}
	delete(p.opts, velho)
	p.opts[novo] = o
	p.standby = novo
	return p.esperarStreaming(ctx)
}

// resultado is one result d6a published, with the bus's storage time.
type resultado struct {
	seq uint64
	em  time.Time
}

// lerResultados reads every conselheiro.sorteado and sorteio.sem_candidatos
// from sequence desde on, with the time the stream stored each.
func (c *cliente) lerResultados(ctx context.Context, desde uint64) ([]resultado, error) {
	s, err := c.js.Stream(ctx, streamBus)
	if err != nil {
		return nil, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return nil, err
	}
	last := info.State.LastSeq
	if last < desde {
		return nil, nil
	}
	cfg := jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{evento.ConselheiroSorteado.Subject(prefixo), evento.SorteioSemCandidatos.Subject(prefixo)},
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy, OptStartSeq: max(desde, 1),
	}
	cons, err := c.js.OrderedConsumer(ctx, streamBus, cfg)
	if err != nil {
		return nil, err
	}
	var out []resultado
	vazios := 0
	for {
		lote, err := cons.Fetch(256, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			return nil, err
		}
		n, resta := 0, uint64(1)
		for m := range lote.Messages() {
			n++
			md, err := m.Metadata()
			if err != nil {
				return nil, err
			}
			out = append(out, resultado{md.Sequence.Stream, md.Timestamp})
			resta = md.NumPending
		}
		if n > 0 && resta == 0 {
			return out, nil
		}
		if n == 0 {
			// Nothing yet: a new ordered consumer can take a moment, or
			// there is nothing to read; five empty fetches end it.
			if vazios++; vazios >= 5 {
				return out, nil
			}
		}
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
	}
}

// maiorLacuna is the longest time between consecutive results stored in
// [de, ate], counting from de to the first one.
func maiorLacuna(rs []resultado, de, ate time.Time) time.Duration {
	var maior time.Duration
	ant := de
	for _, r := range rs {
		if r.em.Before(de) || r.em.After(ate) {
			continue
		}
		maior = max(maior, r.em.Sub(ant))
		ant = r.em
	}
	return maior
}

// sondaReadyz polls an instance's /readyz and records what it answered.
type sondaReadyz struct {
	mu      sync.Mutex
	codigos map[int]int
}

func (s *sondaReadyz) uma(base string) int {
	cli := &http.Client{Timeout: time.Second}
	resp, err := cli.Get(base + "/readyz")
	cod := 0
	if err == nil {
		cod = resp.StatusCode
		resp.Body.Close()
	}
	s.mu.Lock()
	s.codigos[cod]++
	s.mu.Unlock()
	return cod
}

// retomadaMaxima is how soon after the stream has a leader again results
// must reach it (issue 38's target): d6a's own part of the pause after a
// stream leader's death.
const retomadaMaxima = 2 * time.Second

// folga is how far past a target a figure may go before the suite fails:
// the targets are printed as met or missed, measurements for
// docs/reliability.md, and only a regression should cross three times one
// on a shared 2-core machine (issue 38).
const folga = 3

// cenarioCluster is one scenario: a fault during a slice of the stream.
type cenarioCluster struct {
	nome string
	// falha runs in its own goroutine from the start of the slice; it
	// returns a description for the figures line.
	falha func(ctx context.Context, inicio time.Time) string
	// alvoLacuna is the longest gap without a result the issue targets;
	// the suite fails past folga times it.
	alvoLacuna time.Duration
	// limiteLacuna, when set, replaces folga × alvoLacuna as the bound:
	// where the target is not issue 38's, the bound the suite had before.
	limiteLacuna time.Duration
	// alvoAlcance, when set, is the target of caught_up, the time from the
	// end of the slice until nothing is pending (folga times it fails).
	alvoAlcance time.Duration
}

// alvo formats a figure against its target: "≤2.0s:met" or "…:missed".
func alvo(v, t time.Duration) string {
	r := "met"
	if v > t {
		r = "missed"
	}
	return fmt.Sprintf("≤%.1fs:%s", t.Seconds(), r)
}

// TestCluster runs the production topology through its failovers under a
// steady stream of every event type, checking the fault suite's invariants
// after each scenario and printing one `cluster:` line each.
func TestCluster(t *testing.T) {
	inicioTeste := time.Now()
	ctx := context.Background()
	if par.amostraVerify > 5 && os.Getenv("D6A_FAULTS_VERIFY_SAMPLE") == "" {
		par.amostraVerify = 5
	}
	fatia := 25 * time.Second
	if s := os.Getenv("D6A_CLUSTER_SLICE"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n >= 10 {
			fatia = time.Duration(n) * time.Second
		}
	}
	const taxa = 5 // events per second

	nc := novoNATSCluster(t)
	cli := conectar(t, nc.url())
	sctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	if err := criarStreams(sctx, cli.js); err != nil {
		t.Fatal(err)
	}
	cancel()
	pctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	pgs := novoPGPar(t, pctx, true)
	cancel()
	dbURL := pgs.url("d6a")
	t.Logf("setup: NATS %s, PostgreSQL primary :%d standby :%d (synchronous), %s", nc.url(), pgs.primario.Port, pgs.standby.Port, time.Since(inicioTeste).Round(time.Millisecond))

	nScenarios := 5
	total := int(fatia.Seconds()) * taxa * (nScenarios + 1)
	m := novoModelo(par.seed, total)
	pool := poolComHierarquia(t, ctx, dbURL, m)

	env := map[string]string{
		"D6A_DATABASE_URL": dbURL, "D6A_NATS_URL": nc.url(), "D6A_JWT_SECRET": segredo,
		"D6A_MAX_ENTREGAS": "5", "D6A_LOG_LEVEL": "info", "D6A_LOG_FORMAT": "json",
		"D6A_OUTBOX_POLL": "200ms", "D6A_FETCH_TIMEOUT": "250ms",
	}
	copia := func() map[string]string {
		out := map[string]string{}
		for k, v := range env {
			out[k] = v
		}
		return out
	}
	a := novaInstancia(t, "a", copia())
	if err := a.pronta(120 * time.Second); err != nil {
		t.Fatal(err)
	}
	b := novaInstancia(t, "b", copia())
	if err := b.pronta(120 * time.Second); err != nil {
		t.Fatal(err)
	}
	insts := []*instancia{a, b}

	// The leader advisories, for the failover timeline (linha_tempo_test.go).
	av := &avisos{}
	pararAvisos, err := av.assinar(cli.nc)
	if err != nil {
		t.Fatal(err)
	}
	defer pararAvisos()
	// marcos are the faults of the running scenario (a step-down's request,
	// a kill), each the t0 of one timeline line; tipoMarco names the
	// advisory that follows them.
	var (
		marcosMu  sync.Mutex
		marcos    []time.Time
		tipoMarco string
	)
	marcar := func(tipo string) {
		marcosMu.Lock()
		marcos, tipoMarco = append(marcos, time.Now()), tipo
		marcosMu.Unlock()
	}

	segCtx, pararSeguidor := context.WithCancel(ctx)
	defer pararSeguidor()
	go cli.seguirSorteados(segCtx, m.aprender)

	pubCtx, cancelPub := context.WithTimeout(ctx, 15*time.Minute)
	defer cancelPub()
	k := 0
	// fluxo publishes at taxa per second for d.
	fluxo := func(d time.Duration) {
		inicio := time.Now()
		n := int(d.Seconds() * taxa)
		for i := range n {
			if w := time.Until(inicio.Add(time.Duration(i) * time.Second / taxa)); w > 0 {
				time.Sleep(w)
			}
			msg := m.proxima(k, total)
			k++
			seq, err := cli.publicar(pubCtx, msg.subject, msg.msgID, msg.data)
			if err != nil {
				t.Errorf("publishing %s: %v", msg.nome, err)
				continue
			}
			m.registrar(msg, seq)
		}
	}
	ultimaSeq := func() uint64 {
		s, err := cli.js.Stream(ctx, streamBus)
		if err != nil {
			return 0
		}
		info, err := s.Info(ctx)
		if err != nil {
			return 0
		}
		return info.State.LastSeq
	}

	// Warm-up: counsellors registered and a few draws before any fault.
	fluxo(fatia / 2)

	stepDownStream := func(ctx context.Context, _ time.Time) string {
		var feitos []string
		for i := range 2 {
			time.Sleep(time.Duration(4+6*i) * time.Second)
			antes, _ := liderStream(ctx, cli.js)
			marcar("stream")
			if err := stepDown(ctx, cli.nc, "$JS.API.STREAM.LEADER.STEPDOWN."+streamBus); err != nil {
				t.Errorf("stream step-down: %v", err)
				continue
			}
			depois := ""
			esperar(ctx, func() bool { depois, _ = liderStream(ctx, cli.js); return depois != "" && depois != antes })
			feitos = append(feitos, antes+"->"+depois)
		}
		return "stream_leader=" + strings.Join(feitos, ",")
	}
	stepDownConsumidores := func(ctx context.Context, _ time.Time) string {
		time.Sleep(4 * time.Second)
		n := 0
		// One durable carries every consumed type (CONTRACT §3): its leader
		// moves four times.
		for range 4 {
			marcar("consumer")
			if err := stepDown(ctx, cli.nc, "$JS.API.CONSUMER.LEADER.STEPDOWN."+streamBus+"."+evento.DurableEntradas); err != nil {
				t.Errorf("consumer step-down %s: %v", evento.DurableEntradas, err)
				continue
			}
			n++
			time.Sleep(2 * time.Second)
		}
		return fmt.Sprintf("consumer_leaders_moved=%d", n)
	}
	// semLider is how long the killed stream leader's group took to elect
	// another, as a client saw it. NATS's raft waits a random 4-9 s before
	// an election and can need a second round: no result can be stored
	// meanwhile, so the gap's target stretches to that time plus
	// retomadaMaxima, d6a's own part.
	var semLider time.Duration
	matarLiderNATS := func(ctx context.Context, _ time.Time) string {
		time.Sleep(5 * time.Second)
		lider, err := liderStream(ctx, cli.js)
		if err != nil {
			t.Errorf("stream leader: %v", err)
			return "stream_leader=?"
		}
		s := nc.nos[lider]
		marcar("stream")
		_ = s.Stop(syscall.SIGKILL)
		morte := time.Now()
		// When the stream has a leader again: nothing reaches it before.
		var (
			eleicao    sync.WaitGroup
			reiniciado atomic.Bool
		)
		eleicao.Go(func() {
			for ctx.Err() == nil {
				lctx, cancel := context.WithTimeout(ctx, time.Second)
				novo, err := liderStream(lctx, cli.js)
				cancel()
				// The killed server may win again once restarted.
				if err == nil && (novo != lider || reiniciado.Load()) {
					semLider = time.Since(morte)
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
		// What instance b's stall gauge says meanwhile (issue 38): printed,
		// not asserted, since whether the durable stalls depends on where
		// its leader was.
		var (
			sonda     sync.WaitGroup
			maxParado atomic.Int64
		)
		sctx, pararSonda := context.WithCancel(ctx)
		sonda.Go(func() {
			for sctx.Err() == nil {
				if v, ok := lerGauge(b.base(), "d6a_entradas_sem_entrega_segundos"); ok && int64(v*1000) > maxParado.Load() {
					maxParado.Store(int64(v * 1000))
				}
				time.Sleep(250 * time.Millisecond)
			}
		})
		// One d6a instance dies during the NATS outage too.
		time.Sleep(3 * time.Second)
		a.matar()
		time.Sleep(time.Until(morte.Add(10 * time.Second)))
		if err := s.Restart(); err != nil {
			t.Errorf("restarting %s: %v", lider, err)
		}
		reiniciado.Store(true)
		eleicao.Wait()
		pararSonda()
		sonda.Wait()
		novo, _ := liderStream(ctx, cli.js)
		return fmt.Sprintf("killed=%s down=%.1fs stream_without_leader=%.1fs new_leader=%s d6a_killed=a b_stall_gauge_max=%.1fs", lider, time.Since(morte).Seconds(), semLider.Seconds(), novo, float64(maxParado.Load())/1000)
	}
	var readyTxt string
	failoverPG := func(ctx context.Context, _ time.Time) string {
		time.Sleep(5 * time.Second)
		sonda := &sondaReadyz{codigos: map[int]int{}}
		viu503 := false
		morte, promovido, err := pgs.failover(ctx, 3*time.Second, func() {
			// While no primary exists: /readyz must say so (503) on the
			// instance that is up, and b dies meanwhile.
			fim := time.Now().Add(2500 * time.Millisecond)
			for time.Now().Before(fim) {
				if sonda.uma(a.base()) == 503 {
					viu503 = true
				}
				time.Sleep(200 * time.Millisecond)
			}
			b.matar()
		})
		if err != nil {
			t.Errorf("failover: %v", err)
			return "failover=FAILED"
		}
		// After the promotion: 200 again (both instances).
		var ate200 time.Duration
		rctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		ok := esperar(rctx, func() bool { return sonda.uma(a.base()) == 200 })
		cancel()
		ate200 = time.Since(promovido)
		if !viu503 {
			t.Errorf("/readyz never answered 503 while the database had no primary (answers: %v)", sonda.codigos)
		}
		if !ok {
			t.Errorf("/readyz not 200 within 60s of the promotion (answers: %v)", sonda.codigos)
		}
		readyTxt = fmt.Sprintf("readyz_without_primary=503:%v readyz_200_after_promotion=%.1fs", viu503, ate200.Seconds())
		// The old primary comes back as the standby, and the pair is
		// synchronous again.
		reconst := time.Now()
		if err := pgs.reconstruir(ctx); err != nil {
			t.Errorf("rebuilding the old primary as standby: %v", err)
		} else if err := pgs.sincrono(ctx, true); err != nil {
			t.Errorf("synchronous_standby_names on the new primary: %v", err)
		}
		return fmt.Sprintf("pg_kill_to_promoted=%.1fs %s standby_rebuilt_in=%.1fs d6a_killed=b",
			promovido.Sub(morte).Seconds(), readyTxt, time.Since(reconst).Seconds())
	}

	cenarios := []cenarioCluster{
		{nome: "stream-leader-stepdown", falha: stepDownStream, alvoLacuna: 2 * time.Second, limiteLacuna: 10 * time.Second},
		// A delivery the old consumer leader had committed but not sent
		// is lost as the leadership moves; the server sends it again after
		// AckWait, which bounds the catch-up (issue 38, docs/reliability.md).
		{nome: "consumer-leader-stepdown", falha: stepDownConsumidores, alvoLacuna: 2 * time.Second, alvoAlcance: 2 * time.Second},
		// The stream without a leader stores nothing: the target is that
		// time plus retomadaMaxima, set once it is known (semLider).
		{nome: "nats-kill9-stream-leader", falha: matarLiderNATS},
		// The kill, 3 s before the promotion, and the reconnection.
		{nome: "pg-kill9-promote", falha: failoverPG, alvoLacuna: 15 * time.Second, limiteLacuna: 30 * time.Second},
	}
	if so, ok := os.LookupEnv("D6A_CLUSTER_CENARIOS"); ok {
		// A comma-separated subset of the failover scenarios, to chase one
		// (empty: none; the asynchronous standby has its own switch).
		cenarios = slices.DeleteFunc(cenarios, func(c cenarioCluster) bool {
			return !slices.Contains(strings.Split(so, ","), c.nome)
		})
	}
	var linhas []string
	// conferir waits for the colony to catch up after a scenario, checks the
	// invariants and prints the scenario's line.
	conferir := func(nome string, inicio time.Time, seq0 uint64, fimFluxo time.Time, alvoLacuna, limiteLacuna, alvoAlcance time.Duration, desc string) {
		qctx, cancelQ := context.WithTimeout(ctx, 2*time.Minute)
		var estado string
		quieto := esperar(qctx, func() bool { ok, e := quiescente(qctx, pool, cli, m); estado = e; return ok })
		cancelQ()
		alcancou := time.Since(fimFluxo)
		if !quieto {
			t.Errorf("%s: did not catch up within 2m: %s", nome, estado)
		}
		rctx, cancelR := context.WithTimeout(ctx, time.Minute)
		rs, err := cli.lerResultados(rctx, seq0)
		cancelR()
		if err != nil || len(rs) == 0 {
			t.Errorf("%s: reading results: %d read, %v", nome, len(rs), err)
		}
		lacuna := maiorLacuna(rs, inicio, time.Now())
		icx, cancelI := context.WithTimeout(ctx, 2*time.Minute)
		res, v := verificarInvariantes(t, icx, pool, cli, m, dbURL)
		cancelI()
		var arquivos []string
		for _, i := range insts {
			arquivos = append(arquivos, i.arquivos()...)
		}
		for _, p := range procurarPanico(arquivos, 10) {
			v.add("no d6a process panicked, hit a fatal error or a data race", "%s", p)
		}
		invs := "ok"
		if v.total() > 0 {
			invs = fmt.Sprintf("BROKEN(%d)", len(v.nomes))
		}
		var metas []string
		if alvoLacuna > 0 {
			metas = append(metas, "gap_target="+alvo(lacuna, alvoLacuna))
			if lacuna > limiteLacuna {
				t.Errorf("%s: longest gap without a result %.1fs, over its bound of %s (target %s)", nome, lacuna.Seconds(), limiteLacuna.Round(100*time.Millisecond), alvoLacuna.Round(100*time.Millisecond))
			}
		}
		if alvoAlcance > 0 {
			metas = append(metas, "caught_up_target="+alvo(alcancou, alvoAlcance))
			if alcancou > folga*alvoAlcance {
				t.Errorf("%s: caught up %.1fs after the slice, over %d× its target of %s", nome, alcancou.Seconds(), folga, alvoAlcance.Round(100*time.Millisecond))
			}
		}
		// demands: every demand so far, and those in a final state (drawn,
		// pending with its sem_candidatos, or aggregated away); doubled
		// covers "once".
		demandas := res.atribuidas + res.pendentes + res.agregadas
		linha := fmt.Sprintf("cluster: scenario=%s lost=%d doubled=%d invariants=%s longest_gap=%.1fs results=%d events=%d demands=%d/%d assignments=%d verified=%d reconciled=%d caught_up=%.1fs %s %s",
			nome, res.perdidas+res.perdidasDemandas, res.duplicadas, invs, lacuna.Seconds(), len(rs), res.eventos, demandas, demandas+res.perdidasDemandas, res.atribuicoes, res.verificados, res.reconciliados, alcancou.Seconds(), strings.Join(metas, " "), desc)
		t.Log(linha)
		fmt.Println(linha)
		linhas = append(linhas, linha)
		marcosMu.Lock()
		t0s, tipo := marcos, tipoMarco
		marcos = nil
		marcosMu.Unlock()
		if len(t0s) > 0 {
			rotulo := "step-down"
			if nome == "nats-kill9-stream-leader" {
				rotulo = "sigkill"
			}
			for _, l := range linhaDoTempo(nome, t0s, rotulo, av, tipo, lerRegistros(arquivos), rs) {
				t.Log(l)
				fmt.Println(l)
			}
		}
		v.relatar()
	}
	for _, c := range cenarios {
		inicio := time.Now()
		seq0 := ultimaSeq() + 1
		var desc string
		var wg sync.WaitGroup
		fctx, cancelF := context.WithTimeout(ctx, 3*time.Minute)
		semLider = 0
		wg.Go(func() { desc = c.falha(fctx, inicio) })
		fluxo(fatia)
		wg.Wait()
		cancelF()
		alvoLacuna, limite := c.alvoLacuna, cmp.Or(c.limiteLacuna, folga*c.alvoLacuna)
		if c.nome == "nats-kill9-stream-leader" {
			// The stream's election, then d6a's part; folga stretches
			// d6a's part only, the election (4-9 s) being NATS's.
			alvoLacuna, limite = semLider+retomadaMaxima, semLider+folga*retomadaMaxima
		}
		conferir(c.nome, inicio, seq0, time.Now(), alvoLacuna, limite, c.alvoAlcance, desc)
	}

	// The asynchronous standby (issue 14, item 2): commits only the primary
	// has, their results on the bus and their inputs acked, then the primary
	// dies and the standby is promoted without them. D6A_CLUSTER_ASSINCRONO=0
	// leaves it out.
	if os.Getenv("D6A_CLUSTER_ASSINCRONO") == "0" {
		t.Log("cluster: pg-async-lost-commits skipped (D6A_CLUSTER_ASSINCRONO=0)")
	} else {
		inicio := time.Now()
		seq0 := ultimaSeq() + 1
		cmdEnv := map[string]string{"D6A_DATABASE_URL": dbURL, "D6A_NATS_URL": nc.url(), "D6A_LOG_LEVEL": "error"}
		if err := pgs.cortarReplicacao(ctx); err != nil {
			t.Fatalf("async standby: %v", err)
		}
		fluxo(8 * time.Second)
		qctx, cancelQ := context.WithTimeout(ctx, 2*time.Minute)
		esperar(qctx, func() bool { ok, _ := quiescente(qctx, pool, cli, m); return ok })
		cancelQ()
		var naJanela int
		_ = pool.QueryRow(ctx, `SELECT count(*) FROM d6a.outbox WHERE sequence >= $1`, int64(seq0)).Scan(&naJanela)
		morte, promovido, err := pgs.failover(ctx, 3*time.Second, nil)
		if err != nil {
			t.Fatalf("async failover: %v", err)
		}
		for _, i := range insts {
			if err := i.pronta(60 * time.Second); err != nil {
				t.Errorf("after the async failover: %v", err)
			}
		}
		// A restarted instance warns at boot.
		a.matar()
		if err := a.pronta(60 * time.Second); err != nil {
			t.Errorf("a after restart: %v", err)
		}
		// logou waits up to 30 s for a's current log to contain texto.
		logou := func(texto string) bool {
			wctx, cancelW := context.WithTimeout(ctx, 30*time.Second)
			defer cancelW()
			return esperar(wctx, func() bool {
				arqs := a.arquivos()
				b, _ := os.ReadFile(arqs[len(arqs)-1])
				return strings.Contains(string(b), texto)
			})
		}
		aviso := logou("DIVERGÊNCIA ENTRE O BARRAMENTO E O BANCO")
		if !aviso {
			t.Errorf("the restarted instance did not log the divergence at boot")
		}
		saida1, out1 := executarD6a(t, 2*time.Minute, cmdEnv, "verify", "--consistencia")
		divergencias, desdeReplay := 0, ""
		for _, l := range strings.Split(out1, "\n") {
			if strings.HasPrefix(l, "DIVERGENCE ") {
				divergencias++
			}
			if rest, ok := strings.CutPrefix(l, "replay needed from stream sequence "); ok {
				desdeReplay = rest
			}
		}
		if saida1 != "exit 1" || divergencias == 0 {
			t.Errorf("d6a verify --consistencia after the async failover: %s with %d divergences (want exit 1 and some):\n%s", saida1, divergencias, out1)
		}
		saida2, out2 := executarD6a(t, 2*time.Minute, cmdEnv, "verify", "--consistencia", "--reparar")
		if saida2 != "exit 0" {
			t.Errorf("d6a verify --consistencia --reparar: %s:\n%s", saida2, out2)
		}
		recriadas := strings.Count(out2, ": recriada")
		qctx, cancelQ = context.WithTimeout(ctx, time.Minute)
		esperar(qctx, func() bool { ok, _ := quiescente(qctx, pool, cli, m); return ok })
		cancelQ()
		saida3, out3 := executarD6a(t, 2*time.Minute, cmdEnv, "verify", "--consistencia")
		if saida3 != "exit 0" {
			t.Errorf("d6a verify --consistencia after the repair: %s:\n%s", saida3, out3)
		}
		// The restarted instance held back its boot sweep on the lost
		// commits; it runs it once a check finds the repair done.
		retomou := logou("de acordo após o reparo")
		if !retomou {
			t.Errorf("the restarted instance did not resume its held boot steps after the repair")
		}
		t.Logf("async: verify before the repair:\n%s\nrepair:\n%s", out1, out2)
		reconst := time.Now()
		if err := pgs.reconstruir(ctx); err != nil {
			t.Errorf("rebuilding the old primary: %v", err)
		} else if err := pgs.sincrono(ctx, true); err != nil {
			t.Errorf("synchronous again: %v", err)
		}
		rebuilt := time.Since(reconst)
		fluxo(fatia / 2)
		desc := fmt.Sprintf("results_in_lost_window=%d pg_kill_to_promoted=%.1fs boot_warning=%v boot_sweep_resumed=%v verify_before=%s divergences=%d replay_from_seq=%s draws_reconciled=%d verify_after_repair=%s standby_rebuilt_in=%.1fs",
			naJanela, promovido.Sub(morte).Seconds(), aviso, retomou, strings.ReplaceAll(saida1, " ", ""), divergencias, desdeReplay, recriadas, strings.ReplaceAll(saida3, " ", ""), rebuilt.Seconds())
		conferir("pg-async-lost-commits", inicio, seq0, time.Now(), 0, 0, 0, desc)
	}

	var saidas []string
	for _, i := range insts {
		saida, dur := i.encerrar(60 * time.Second)
		n, mortes, _ := i.estatisticas()
		saidas = append(saidas, fmt.Sprintf("%s:%s in %.1fs (incarnations=%d kills=%d)", i.nome, saida, dur.Seconds(), n, mortes))
		if saida != "exit 0" {
			t.Errorf("%s: SIGTERM drain ended with %s", i.nome, saida)
		}
	}
	pararSeguidor()
	fim := fmt.Sprintf("cluster: nats=3 (R3, sync_interval always) pg=primary+standby d6a=2 rate=%d/s slice=%s drains=[%s] whole_test=%s seed=%d race=%v",
		taxa, fatia, strings.Join(saidas, ", "), time.Since(inicioTeste).Round(time.Second), par.seed, par.race)
	t.Log(fim)
	fmt.Println(fim)
}
