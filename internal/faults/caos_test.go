//go:build faults

package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/formigueiro/d6a/internal/natslocal"
)

// segredo is the HS256 key of the session tokens (D6A_JWT_SECRET).
const segredo = "faults-segredo-hs256-com-32-bytes-ou-mais"

// falha is one scheduled fault of the chaos run.
type falha struct {
	em   time.Duration
	tipo string // "kill", "nats", "nats-kill9", "pg"
}

// placar counts what the fault goroutine did.
type placar struct {
	mu         sync.Mutex
	kills      int
	mortos     map[string]int
	nats       int
	pgFora     []time.Duration
	linhaTempo []string
}

func (p *placar) anotar(inicio time.Time, format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.linhaTempo = append(p.linhaTempo, fmt.Sprintf("%6.1fs ", time.Since(inicio).Seconds())+fmt.Sprintf(format, args...))
}

// agenda returns the faults of a run over a stream of length janela: NATS
// restarts and PostgreSQL outages at fixed points, kills at random moments
// outside the outages (a kill during an outage tests nothing more and only
// stretches the run).
func agendaFalhas(r *rand.Rand, janela time.Duration) []falha {
	var fs []falha
	var janelas [][2]time.Duration
	for i := 0; i < par.quedasNATS; i++ {
		em := time.Duration(float64(janela) * (0.3 + 0.5*float64(i)/float64(max(par.quedasNATS, 1))))
		tipo := "nats"
		if i%2 == 1 {
			tipo = "nats-kill9"
		}
		fs = append(fs, falha{em, tipo})
		janelas = append(janelas, [2]time.Duration{em - 2*time.Second, em + 8*time.Second})
	}
	for i := 0; i < par.quedasPG; i++ {
		em := time.Duration(float64(janela) * (0.65 + 0.3*float64(i)/float64(max(par.quedasPG, 1))))
		fs = append(fs, falha{em, "pg"})
		// Messages that arrive during the outage spend up to four deliveries
		// on it (1+2+5+10 s of backoff); a kill while they are in hand on the
		// fifth would dead-letter them. That is the bug TestQuedaLongaDoPostgres
		// shows on its own; here the kills keep off until they are through.
		janelas = append(janelas, [2]time.Duration{em - 2*time.Second, em + par.pgFora + 20*time.Second})
	}
	for k := 0; k < par.kills; k++ {
		for tentativa := 0; ; tentativa++ {
			em := time.Duration(float64(janela) * (0.05 + 0.8*r.Float64()))
			livre := true
			for _, j := range janelas {
				if em >= j[0] && em <= j[1] {
					livre = false
				}
			}
			if livre || tentativa > 50 {
				fs = append(fs, falha{em, "kill"})
				break
			}
		}
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].em < fs[j].em })
	return fs
}

// TestCaos streams D6A_FAULTS_EVENTS mixed events (default 1,000) plus the
// hostile messages of every consumed subject into two `d6a serve` instances
// on the same database and bus, while it kills them with SIGKILL
// D6A_FAULTS_KILLS times (default 10), restarts NATS and stops PostgreSQL
// for 10 s; then it waits for the colony to catch up and checks every
// invariant (docs/reliability.md).
func TestCaos(t *testing.T) {
	inicioTeste := time.Now()
	r := rand.New(rand.NewPCG(par.seed, 0xfa17))
	dbURL := novoBanco(t, "caos")
	srv := novoNATS(t, "caos")
	cli := conectar(t, srv.URL())
	m := novoModelo(par.seed, par.eventos)

	ctx := context.Background()
	pool := poolComHierarquia(t, ctx, dbURL, m)

	env := func() map[string]string {
		return map[string]string{
			"D6A_DATABASE_URL": dbURL, "D6A_NATS_URL": srv.URL(), "D6A_JWT_SECRET": segredo,
			"D6A_MAX_ENTREGAS": "5", "D6A_THROTTLE_POR_MINUTO": "6000", "D6A_TRUSTED_PROXIES": "127.0.0.1",
			"D6A_LOG_LEVEL": "info", "D6A_LOG_FORMAT": "json", "D6A_OUTBOX_POLL": "200ms", "D6A_FETCH_TIMEOUT": "250ms",
		}
	}
	// Two instances on the same database and bus for the whole run, sharing
	// the durables. The second starts once the first has migrated: starting
	// both at the same instant is TestArranque's (a failed migration there
	// crashes the process, which would only blur this test's figures).
	insts := []*instancia{novaInstancia(t, "a", env())}
	if err := insts[0].pronta(120 * time.Second); err != nil {
		t.Fatal(err)
	}
	insts = append(insts, novaInstancia(t, "b", env()))
	if err := insts[1].pronta(120 * time.Second); err != nil {
		t.Fatal(err)
	}
	t.Logf("both instances ready after %s", time.Since(inicioTeste).Round(time.Millisecond))

	segCtx, pararSeguidor := context.WithCancel(ctx)
	defer pararSeguidor()
	go cli.seguirSorteados(segCtx, m.aprender)

	// Hostile messages at random steps of the stream.
	N := par.eventos
	hostilPorPasso := map[int][]mensagem{}
	for _, h := range hostis(m.ucsDem[0]) {
		p := N/10 + r.IntN(N*8/10)
		hostilPorPasso[p] = append(hostilPorPasso[p], h)
	}

	// Faults.
	inicio := time.Now()
	pl := &placar{mortos: map[string]int{}}
	falhas := agendaFalhas(r, par.janela)
	var wgFalhas sync.WaitGroup
	rFalhas := rand.New(rand.NewPCG(par.seed, 0xdead))
	wgFalhas.Go(func() { executarFalhas(t, inicio, falhas, insts, srv, pl, rFalhas) })

	// The stream.
	intervalo := par.janela / time.Duration(N)
	pubCtx, cancelPub := context.WithTimeout(ctx, par.janela+5*time.Minute)
	defer cancelPub()
	publicar := func(msg mensagem) (uint64, bool) {
		seq, err := cli.publicar(pubCtx, msg.subject, msg.msgID, msg.data)
		if err != nil {
			t.Errorf("publishing %s: %v", msg.nome, err)
			return 0, false
		}
		m.registrar(msg, seq)
		return seq, true
	}
	dedupe := 0
	for k := 0; k < N; k++ {
		if d := time.Until(inicio.Add(time.Duration(k) * intervalo)); d > 0 {
			time.Sleep(d)
		}
		if k == N/5 {
			soltos, pares := m.validosDesconhecidos()
			for _, msg := range soltos {
				m.adiar(k+1+r.IntN(N*6/10), msg)
			}
			for _, par := range pares {
				p := k + 1 + r.IntN(N/2)
				m.adiar(p, par[0])
				m.adiar(p+10+r.IntN(20), par[1])
			}
		}
		msg := m.proxima(k, N)
		seq, ok := publicar(msg)
		// Now and then the producer re-sends within the duplicate window
		// under the same Nats-Msg-Id: the stream must drop it.
		if ok && r.IntN(150) == 0 {
			msg.efeito = nil
			if seq2, err := cli.publicar(pubCtx, msg.subject, msg.msgID, msg.data); err != nil || seq2 != seq {
				t.Errorf("re-publish of %s under the same Nats-Msg-Id: seq %d then %d (%v): the stream's duplicate window did not drop it", msg.nome, seq, seq2, err)
			}
			dedupe++
		}
		for _, h := range hostilPorPasso[k] {
			publicar(h)
		}
	}
	// Out-of-order partners not yet due go out now.
	for k := N; ; k++ {
		m.mu.Lock()
		resta := len(m.adiados)
		m.mu.Unlock()
		if resta == 0 {
			break
		}
		msg := m.proxima(k, N)
		publicar(msg)
	}
	fimStream := time.Since(inicio)
	t.Logf("stream done in %s (%d good messages, %d hostile, %d same-id re-publishes)", fimStream.Round(time.Millisecond), N, len(hostis(m.ucsDem[0])), dedupe)
	wgFalhas.Wait()

	// Catch up: every good message processed, every hostile one
	// dead-lettered, the outbox empty and the durables drained.
	limite := 3 * time.Minute
	if par.soak {
		limite = 6 * time.Minute
	}
	inicioEspera := time.Now()
	qctx, cancelQ := context.WithTimeout(ctx, limite)
	ultimoLog := time.Now()
	var estado string
	quieto := esperar(qctx, func() bool {
		ok, e := quiescente(qctx, pool, cli, m)
		estado = e
		if time.Since(ultimoLog) > 10*time.Second {
			t.Logf("catching up: %s", e)
			ultimoLog = time.Now()
		}
		return ok
	})
	cancelQ()
	espera := time.Since(inicioEspera)
	if !quieto {
		t.Errorf("the colony did not catch up within %s of the end of the stream: %s", limite, estado)
	} else {
		t.Logf("caught up %s after the end of the stream", espera.Round(time.Millisecond))
	}

	// The HTTP view agrees with the database for the caller, and only the
	// caller.
	vs := novasViolacoes(t)
	conferirSituacao(t, ctx, pool, insts[0], vs)

	// Drain on SIGTERM: exit 0.
	var saidas []string
	for _, i := range insts {
		saida, dur := i.encerrar(60 * time.Second)
		saidas = append(saidas, fmt.Sprintf("%s:%s in %s", i.nome, saida, dur.Round(time.Millisecond)))
		if saida != "exit 0" {
			vs.add("d6a serve drains and exits 0 on SIGTERM", "%s: %s after %s", i.nome, saida, dur)
		}
	}
	pararSeguidor()

	icx, cancelI := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelI()
	res, v := verificarInvariantes(t, icx, pool, cli, m, dbURL)
	for _, n := range vs.nomes {
		for _, ex := range vs.exs[n] {
			v.add(n, "%s", ex)
		}
	}

	// No process panicked, hit a fatal error or a data race.
	var arquivos []string
	var encarn []string
	var saidasPorTipo []string
	for _, i := range insts {
		arquivos = append(arquivos, i.arquivos()...)
		n, _, s := i.estatisticas()
		encarn = append(encarn, fmt.Sprintf("%s:%d", i.nome, n))
		for k, c := range s {
			saidasPorTipo = append(saidasPorTipo, fmt.Sprintf("%s %s×%d", i.nome, k, c))
		}
	}
	sort.Strings(saidasPorTipo)
	for _, p := range procurarPanico(arquivos, 20) {
		v.add("no d6a process panicked, hit a fatal error or a data race", "%s", p)
	}

	pl.mu.Lock()
	kills, natsR, pgFora := pl.kills, pl.nats, pl.pgFora
	var porInstancia []string
	for _, i := range insts {
		porInstancia = append(porInstancia, fmt.Sprintf("%s:%d", i.nome, pl.mortos[i.nome]))
	}
	linha := append([]string(nil), pl.linhaTempo...)
	pl.mu.Unlock()
	if kills < par.kills {
		t.Errorf("only %d of %d kills happened (no instance was running at the chosen moments)", kills, par.kills)
	}
	t.Logf("fault timeline:\n  %s", strings.Join(linha, "\n  "))

	invs := "ok"
	if v.total() > 0 {
		invs = fmt.Sprintf("BROKEN(%d)", len(v.nomes))
	}
	pgTxt := make([]string, len(pgFora))
	for i, d := range pgFora {
		pgTxt[i] = fmt.Sprintf("%.1fs", d.Seconds())
	}
	linhas := []string{
		fmt.Sprintf("faults: kills=%d events=%d lost=%d doubled=%d dlq=%d invariants=%s",
			kills, res.eventos, res.perdidas, res.duplicadas, res.dlq, invs),
		fmt.Sprintf("faults: instances=2 kills_per_instance=%s incarnations=%s nats_restarts=%d pg_outages=[%s] hostile=%d dead_lettered=%d processed=%d (unknown-entity/out-of-order=%d, re-sent event_ids=%d, same-id re-publishes dropped=%d)",
			strings.Join(porInstancia, ","), strings.Join(encarn, ","), natsR, strings.Join(pgTxt, " "), res.hostis, res.dlq, res.processados, res.desconhecidos, res.reenvios, dedupe),
		fmt.Sprintf("faults: assignments=%d (ativa=%d concluida=%d recusada=%d) sorteado=%d verified=%d seed_fallbacks=%d sem_candidatos=%d refusals_counted=%d suspended=%d",
			res.atribuicoes, res.ativas, res.concluidas, res.recusadas, res.sorteados, res.verificados, res.fallbacks, res.semCandidatos, res.recusasContadas, res.suspensos),
		fmt.Sprintf("faults: demands=%d assigned=%d pending=%d aggregated_away=%d lost_demands=%d good_dead_lettered=%d",
			res.atribuidas+res.pendentes+res.agregadas+res.perdidasDemandas, res.atribuidas, res.pendentes, res.agregadas, res.perdidasDemandas, res.bonsNaDLQ),
		fmt.Sprintf("faults: %s", res.verifyCLI),
		fmt.Sprintf("faults: exits %s; SIGTERM drain: %s", strings.Join(saidasPorTipo, ", "), strings.Join(saidas, ", ")),
		fmt.Sprintf("faults: stream %s, caught up %s later, whole test %s (seed %d, race=%v)",
			fimStream.Round(time.Second), espera.Round(time.Second), time.Since(inicioTeste).Round(time.Second), par.seed, par.race),
	}
	for _, l := range linhas {
		t.Log(l)
		fmt.Println(l)
	}
	v.relatar()
}

// executarFalhas runs the schedule; it reports with t.Errorf only (it is
// not the test goroutine).
func executarFalhas(t *testing.T, inicio time.Time, fs []falha, insts []*instancia, srv *natslocal.Server, pl *placar, r *rand.Rand) {
	for _, f := range fs {
		if d := time.Until(inicio.Add(f.em)); d > 0 {
			time.Sleep(d)
		}
		switch f.tipo {
		case "kill":
			fim := time.Now().Add(10 * time.Second)
			for {
				i := insts[r.IntN(len(insts))]
				vivo, ok := i.vivaHa()
				if ok && i.matar() {
					pl.mu.Lock()
					pl.kills++
					pl.mortos[i.nome]++
					pl.mu.Unlock()
					pl.anotar(inicio, "kill -9 %s (up %s)", i.nome, vivo.Round(time.Millisecond))
					break
				}
				if time.Now().After(fim) {
					pl.anotar(inicio, "kill skipped: no instance running")
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
		case "nats", "nats-kill9":
			sig := syscall.SIGTERM
			if f.tipo == "nats-kill9" {
				sig = syscall.SIGKILL
			}
			pl.anotar(inicio, "NATS stop (%s)", sig)
			if err := reiniciar(srv, sig, time.Second); err != nil {
				t.Errorf("NATS restart: %v", err)
			}
			pl.mu.Lock()
			pl.nats++
			pl.mu.Unlock()
			pl.anotar(inicio, "NATS started again")
		case "pg":
			pl.anotar(inicio, "PostgreSQL stop")
			parou := time.Now()
			pg.parar()
			time.Sleep(par.pgFora)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			err := pg.reiniciar(ctx)
			cancel()
			if err != nil {
				t.Errorf("PostgreSQL restart: %v", err)
			}
			pl.mu.Lock()
			pl.pgFora = append(pl.pgFora, time.Since(parou))
			pl.mu.Unlock()
			pl.anotar(inicio, "PostgreSQL started again after %s", time.Since(parou).Round(100*time.Millisecond))
		}
	}
}

// poolComHierarquia opens a pool on dbURL for the test and writes m's
// hierarchy of UCs into core.uc_polygons, which d6a reads at boot.
func poolComHierarquia(t *testing.T, ctx context.Context, dbURL string, m *modelo) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	for id, pai := range m.hierarquia {
		if _, err := pool.Exec(ctx, `INSERT INTO core.uc_polygons (id, parent_uc_id) VALUES ($1, $2)`, id, pai); err != nil {
			t.Fatal(err)
		}
	}
	return pool
}

// quiescente reports whether the colony has caught up, and how far it is.
func quiescente(ctx context.Context, pool *pgxpool.Pool, cli *cliente, m *modelo) (bool, string) {
	publicados, _, _, _, _ := m.foto()
	bons := map[uuid.UUID]bool{}
	hostis := 0
	for _, p := range publicados {
		if p.dlq {
			hostis++
		} else {
			bons[p.eventID] = true
		}
	}
	ids := make([]uuid.UUID, 0, len(bons))
	for id := range bons {
		ids = append(ids, id)
	}
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var feitos, outbox int
	if err := pool.QueryRow(qctx, `SELECT count(*) FROM d6a.eventos_processados WHERE event_id = ANY($1)`, ids).Scan(&feitos); err != nil {
		return false, "database: " + err.Error()
	}
	if err := pool.QueryRow(qctx, `SELECT count(*) FROM d6a.outbox WHERE publicado_em IS NULL`).Scan(&outbox); err != nil {
		return false, "database: " + err.Error()
	}
	dlq, err := cli.contarStream(qctx, streamDLQ)
	if err != nil {
		return false, "DLQ: " + err.Error()
	}
	pend, err := cli.pendentesConsumidores(qctx)
	if err != nil {
		return false, "consumers: " + err.Error()
	}
	var pendentes uint64
	var detalhe []string
	for nome, n := range pend {
		if strings.HasPrefix(nome, "d6a-") && n > 0 {
			pendentes += n
			detalhe = append(detalhe, fmt.Sprintf("%s=%d", nome, n))
		}
	}
	sort.Strings(detalhe)
	estado := fmt.Sprintf("processed %d/%d good, DLQ %d (hostile %d), outbox unpublished %d, consumer backlog %d %v", feitos, len(ids), dlq, hostis, outbox, pendentes, detalhe)
	// Settled: every good message processed or (wrongly: the checks report
	// it) dead-lettered, every hostile one dead-lettered, nothing in flight.
	return feitos+int(dlq)-hostis >= len(ids) && dlq >= uint64(hostis) && outbox == 0 && pendentes == 0, estado
}

// conferirSituacao asks GET /d6a/conselheiros/me/situacao, as each of a
// sample of counsellors, and compares with the database.
func conferirSituacao(t *testing.T, ctx context.Context, pool *pgxpool.Pool, i *instancia, v *violacoes) {
	t.Helper()
	rows, err := pool.Query(ctx, `SELECT c.id, c.status, c.data_suspensao_ate IS NOT NULL AND c.data_suspensao_ate < now(),
		(SELECT a.event_id_sorteio FROM d6a.atribuicoes a WHERE a.conselheiro_id = c.id AND a.status = 'ativa')
		FROM d6a.conselheiros c ORDER BY random() LIMIT 40`)
	if err != nil {
		t.Fatal(err)
	}
	type linha struct {
		id      uuid.UUID
		status  string
		vencida bool
		ativa   *uuid.UUID
	}
	var ls []linha
	for rows.Next() {
		var l linha
		if err := rows.Scan(&l.id, &l.status, &l.vencida, &l.ativa); err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	rows.Close()
	if err := i.pronta(60 * time.Second); err != nil {
		v.add("situacao answers after the run", "%v", err)
		return
	}
	cli := &http.Client{Timeout: 10 * time.Second}
	for k, l := range ls {
		tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{
			Subject: l.id.String(), ExpiresAt: jwt.NewNumericDate(time.Now().Add(5 * time.Minute)),
		}).SignedString([]byte(segredo))
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest("GET", i.base()+"/d6a/conselheiros/me/situacao", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("X-Forwarded-For", fmt.Sprintf("192.0.2.%d", k+1))
		resp, err := cli.Do(req)
		if err != nil {
			v.add("situacao answers the caller's own data", "%s: %v", l.id, err)
			continue
		}
		var s struct {
			Cadastrado      bool   `json:"cadastrado"`
			ConselheiroID   string `json:"conselheiro_id"`
			Status          string `json:"status"`
			AtribuicaoAtiva *struct {
				EventIDSorteio string `json:"event_id_sorteio"`
			} `json:"atribuicao_ativa"`
		}
		err = json.NewDecoder(resp.Body).Decode(&s)
		resp.Body.Close()
		status := l.status
		if status == "suspenso" && l.vencida {
			status = "disponivel"
		}
		ativa := ""
		if l.ativa != nil {
			ativa = l.ativa.String()
		}
		got := ""
		if s.AtribuicaoAtiva != nil {
			got = s.AtribuicaoAtiva.EventIDSorteio
		}
		if err != nil || resp.StatusCode != 200 || !s.Cadastrado || s.ConselheiroID != l.id.String() || s.Status != status || got != ativa {
			v.add("situacao answers the caller's own data", "%s: HTTP %d %+v (err %v); database: status %s, active %q", l.id, resp.StatusCode, s, err, status, ativa)
		}
	}
}
