package main

// `d6a-bench replay` (issue 37): the replay of a burst's own log. The
// draws mode loads its counsellors with COPY, so its log holds no
// registration and `d6a verify --all --replay` cannot replay it. This mode
// registers them through the bus instead (conselheiro.cadastrado, spec
// 3.2), runs rounds of demands mixed with cycle ends and refusals of the
// assignments the last round left (so demands wait in the fila de
// pendentes and releases serve them), waits until the service has consumed
// every input, then runs the real `d6a verify --url BASE --all --replay`
// with the bus reachable (D6A_NATS_URL). It fails unless the verifier
// exits 0 with divergencias=0 and accounts for every input published.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/transparencia"
	"github.com/formigueiro/d6a/internal/verificar/log"
)

type opcoesReplay struct {
	conselheiros, m, rodadas int
	seed                     uint64
	dir, bin                 string
	manter, ramo             bool
}

func lerFlagsReplay(args []string) (opcoesReplay, error) {
	fs := flag.NewFlagSet("d6a-bench replay", flag.ContinueOnError)
	var o opcoesReplay
	fs.IntVar(&o.conselheiros, "conselheiros", 1000, "counsellors registered by conselheiro.cadastrado over the synthetic country's biggest city (dense shape: 1% on its state, 9% on the city, 90% on its neighbourhoods)")
	fs.IntVar(&o.m, "m", 3000, "agenda.item_disponível events, split over the rounds")
	fs.IntVar(&o.rodadas, "rounds", 4, "rounds: each publishes its share of demands mixed with a cycle end for 70% of the assignments the last round left active and a refusal for a tenth")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the synthetic country, counsellors, demands and releases")
	fs.StringVar(&o.dir, "dir", "", "work directory (default: a fresh temporary directory)")
	fs.StringVar(&o.bin, "d6a", "", "the d6a binary (default: built from ./cmd/d6a)")
	fs.BoolVar(&o.manter, "keep", false, "keep the work directory")
	fs.BoolVar(&o.ramo, "branch-only", false, "load only the city's branch of the country into core.uc_polygons (the country, its state, the city and the units below it), not the 255,598 units")
	if _, err := analisarFlags(fs, args); err != nil {
		return o, err
	}
	if o.conselheiros < 1 || o.m < 1 || o.rodadas < 1 {
		return o, errors.New("-conselheiros, -m and -rounds must be at least 1")
	}
	return o, nil
}

// rajadaReplay is a burst's service, left running so its log can be
// verified (and, in the test, rigged).
type rajadaReplay struct {
	*base
	e     *execucao
	conn  *pgx.Conn
	bin   string
	chave transparencia.Chave
	// publicadas counts the inputs published, by type.
	publicadas map[evento.Tipo]int
	// sorteados and semCandidatos count the demands' results on the bus.
	sorteados, semCandidatos int
	// esperaram are the demands whose result was sorteio.sem_candidatos.
	esperaram []uuid.UUID
}

// URL is the service's public API, where its log is served.
func (r *rajadaReplay) URL() string { return "http://" + r.e.srv.http }

func (r *rajadaReplay) fechar(manter bool) {
	if r.conn != nil {
		_ = r.conn.Close(context.Background())
	}
	if r.e != nil {
		if err := r.e.parar(); err != nil {
			logf("d6a serve exit: %v", err)
		}
	}
	if r.base != nil {
		r.base.fechar(manter)
	}
}

// mensagem is one input envelope (spec 3) for barramento.publicar.
func mensagem(rng *rand.Rand, tipo evento.Tipo, versao string, payload map[string]any) *demanda {
	d := &demanda{eventID: uuidDe(rng).String(), assunto: tipo.Subject("eventos")}
	agora := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	d.dados, _ = json.Marshal(map[string]any{
		"event_id": d.eventID, "tipo": string(tipo), "origem": "d6a-bench", "versao_schema": versao,
		"correlacao_id": nil, "timestamp": agora, "payload": payload,
	})
	return d
}

// recortar is p's view of one city: its state, itself, and the units
// below it (ids and parents stay the country's), so the demands and
// counsellors of a small run meet in one subtree where most demands find
// someone and the rest wait. The city is the one with most micro-areas in
// the state with most.
func recortar(p *pais) *pais {
	acima := func(i int32, nivel int) int32 {
		for int(p.nivel[i]) > nivel {
			i = p.parent[i]
		}
		return i
	}
	maior := func(nivel int, dentro func(int32) bool) int32 {
		n := map[int32]int{}
		melhor := int32(-1)
		for _, m := range p.porNivel[nivelMicroarea] {
			if u := acima(m, nivel); dentro(u) {
				if n[u]++; melhor < 0 || n[u] > n[melhor] {
					melhor = u
				}
			}
		}
		return melhor
	}
	estado := maior(nivelEstado, func(int32) bool { return true })
	cidade := maior(nivelMunicipio, func(u int32) bool { return acima(u, nivelEstado) == estado })
	r := &pais{ids: p.ids, parent: p.parent, nivel: p.nivel}
	r.porNivel[nivelEstado], r.porNivel[nivelMunicipio] = []int32{estado}, []int32{cidade}
	for nivel := nivelBairro; nivel < nNiveis; nivel++ {
		for _, i := range p.porNivel[nivel] {
			if acima(i, nivelMunicipio) == cidade {
				r.porNivel[nivel] = append(r.porNivel[nivel], i)
			}
		}
	}
	return r
}

// ramo is r (a recortar view) as a country of its own: the country, the
// state, the city and the units below it, re-indexed, so core.uc_polygons
// holds only the branch the burst climbs (-branch-only: the test's
// smaller load).
func ramo(r *pais) *pais {
	novo := map[int32]int32{}
	out := &pais{}
	add := func(i int32, nivel int) {
		novo[i] = int32(len(out.ids))
		pai := int32(-1)
		if r.parent[i] >= 0 {
			pai = novo[r.parent[i]]
		}
		out.ids, out.parent, out.nivel = append(out.ids, r.ids[i]), append(out.parent, pai), append(out.nivel, int8(nivel))
		out.porNivel[nivel] = append(out.porNivel[nivel], novo[i])
	}
	add(r.parent[r.porNivel[nivelEstado][0]], nivelPais)
	for nivel := nivelEstado; nivel < nNiveis; nivel++ {
		for _, i := range r.porNivel[nivel] {
			add(i, nivel)
		}
	}
	return out
}

// cadastros are k conselheiro.cadastrado over r in the dense shape.
func cadastros(rng *rand.Rand, r *pais, k int) []*demanda {
	out := make([]*demanda, k)
	limite, acum := 0, 0.0
	dist := formas["dense"]
	j := 0
	for i := range out {
		for i >= limite && j < len(dist) {
			acum += dist[j].fracao
			limite = int(math.Round(acum * float64(k)))
			j++
		}
		ucs := r.porNivel[dist[j-1].nivel]
		cidadao := uuidDe(rng)
		out[i] = mensagem(rng, evento.ConselheiroCadastrado, "1.0.0", map[string]any{
			"conselheiro_id": uuidDe(rng), "cidadao_id": cidadao, "unidade_civica_id": r.ids[ucs[rng.IntN(len(ucs))]],
			"nivel_atuacao": 1, "status": "disponivel", "capacitacao_concluida": true,
		})
		out[i].id = cidadao
	}
	return out
}

// liberacoes are a cycle end for about 70% of the active assignments
// (for 40%, without the unit) and a refusal for about a tenth, read from the service's database (d6a
// serve is idle then: every input is consumed).
func (r *rajadaReplay) liberacoes(ctx context.Context, rng *rand.Rand) ([]*demanda, error) {
	rows, err := r.conn.Query(ctx, `SELECT conselheiro_id, demanda_id, unidade_civica_id FROM d6a.atribuicoes WHERE status = 'ativa' ORDER BY event_id_sorteio`)
	if err != nil {
		return nil, err
	}
	var out []*demanda
	var c, d, uc uuid.UUID
	_, err = pgx.ForEachRow(rows, []any{&c, &d, &uc}, func() error {
		switch x := rng.IntN(10); {
		case x < 7:
			p := map[string]any{
				"conselheiro_id": c, "demanda_id": d, "unidade_civica_id": uc, "motivo_encerramento": "demanda_concluida",
				"total_atualizacoes": 3, "data_inicio": "2026-01-01T00:00:00Z", "data_fim": "2026-02-01T00:00:00Z",
			}
			if x < 4 {
				// Without the unit, the release sweeps the counsellor's own
				// coverage (spec 3.11 step 5), not the demand's micro-area:
				// the oldest of many waiting demands is due.
				delete(p, "unidade_civica_id")
			}
			out = append(out, mensagem(rng, evento.CicloConcluido, "1.0.0", p))
		case x == 7:
			out = append(out, mensagem(rng, evento.AtribuicaoRecusada, "1.1.0", map[string]any{
				"conselheiro_id": c, "demanda_id": d, "unidade_civica_id": uc, "motivo": "recusa_explicita",
				"timestamp": time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
			}))
		}
		return nil
	})
	return out, err
}

// consumido waits until d6a serve has consumed and acknowledged every
// input on its durable, published its outbox and signed a checkpoint of
// every record, the three stable over two polls: then the served log is
// the burst's whole log.
func (r *rajadaReplay) consumido(ctx context.Context) (int64, error) {
	cons, err := r.e.bus.js.Consumer(ctx, "EVENTOS", evento.DurableEntradas)
	if err != nil {
		return 0, err
	}
	cli := &log.Cliente{Base: r.URL(), Chave: r.chave.Verificador}
	var antes string
	for fim := time.Now().Add(2 * time.Minute); time.Now().Before(fim); time.Sleep(250 * time.Millisecond) {
		if err := r.e.srv.Exited(); err != nil {
			return 0, err
		}
		info, err := cons.Info(ctx)
		if err != nil {
			return 0, err
		}
		var pendentes int
		if err := r.conn.QueryRow(ctx, `SELECT count(*) FROM d6a.outbox WHERE publicado_em IS NULL`).Scan(&pendentes); err != nil {
			return 0, err
		}
		var folhas int64
		if err := r.conn.QueryRow(ctx, `SELECT count(*) FROM d6a.transparencia_registros`).Scan(&folhas); err != nil {
			return 0, err
		}
		cp, _, err := cli.Checkpoint(ctx)
		var h *log.ErrHTTP
		if errors.As(err, &h) && h.Status == http.StatusNotFound {
			err = nil // nothing signed yet
		}
		if err != nil {
			return 0, err
		}
		estado := fmt.Sprintf("%d/%d/%d/%d/%d", info.NumPending, info.NumAckPending, pendentes, cp.Tamanho, info.AckFloor.Stream)
		if info.NumPending == 0 && info.NumAckPending == 0 && pendentes == 0 && cp.Tamanho == folhas && estado == antes {
			return cp.Tamanho, nil
		}
		antes = estado
	}
	return 0, fmt.Errorf("d6a serve did not consume every input within 2 min (pending/ack pending/outbox/checkpoint/ack floor %s)", antes)
}

// subirRajada starts PostgreSQL, the country, d6a serve on an embedded
// bus, and runs the burst. The returned burst (even with an error) must be
// closed.
func subirRajada(ctx context.Context, o opcoesReplay) (r *rajadaReplay, err error) {
	r = &rajadaReplay{publicadas: map[evento.Tipo]int{}}
	if r.base, err = abrirBase(ctx, o.dir, nil); err != nil {
		return r, err
	}
	t0 := time.Now()
	r.bin = o.bin
	if r.bin == "" {
		r.bin = filepath.Join(r.dir, "bin", "d6a")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", r.bin, "./cmd/d6a")
		cmd.Dir = r.raiz
		if _, err := comSaida(cmd, "go build ./cmd/d6a"); err != nil {
			return r, err
		}
	}
	logf("replay: d6a built in %s", time.Since(t0).Round(time.Millisecond))
	if err := r.pg.CreateDatabase(ctx, "d6a", ""); err != nil {
		return r, err
	}
	url := r.pg.URL("d6a")
	st, err := store.Open(ctx, url)
	if err != nil {
		return r, err
	}
	err = store.Migrate(ctx, st.Pool)
	st.Close()
	if err != nil {
		return r, err
	}
	if r.conn, err = pgx.Connect(ctx, url); err != nil {
		return r, err
	}
	p := gerarPais(o.seed)
	cidade := recortar(p)
	if o.ramo {
		p = ramo(cidade)
		cidade = p
	}
	if err := criarHierarquia(ctx, r.conn, p, func(int) {}); err != nil {
		return r, err
	}
	logf("replay: core.uc_polygons of %d units; the burst runs in the country's biggest city: %d neighbourhoods, %d micro-areas",
		p.Tamanho(), len(cidade.porNivel[nivelBairro]), len(cidade.porNivel[nivelMicroarea]))
	if r.e, err = subirServe(r.base, r.bin); err != nil {
		return r, err
	}
	if r.chave, err = transparencia.CarregarChave(filepath.Join(r.dir, transparencia.ArquivoChaveDev)); err != nil {
		return r, err
	}
	rng := rand.New(rand.NewPCG(o.seed, 0x7e91a1))
	publicar := func(ms []*demanda) error {
		for _, m := range ms {
			r.publicadas[tipoDe(m.assunto)]++
		}
		_, err := r.e.bus.publicar(ctx, "", ms, 0, func(int) {})
		return err
	}

	t := time.Now()
	if err := publicar(cadastros(rng, cidade, o.conselheiros)); err != nil {
		return r, err
	}
	if _, err := r.consumido(ctx); err != nil {
		return r, err
	}
	logf("replay: %d counsellors registered through the bus in %s", o.conselheiros, time.Since(t).Round(time.Millisecond))
	for rodada := range o.rodadas {
		n := o.m / o.rodadas
		if rodada == o.rodadas-1 {
			n = o.m - n*(o.rodadas-1)
		}
		ds := gerarDemandas(rng, cidade, n)
		for _, d := range ds {
			d.assunto = assuntoAgenda
		}
		r.e.bus.registrar(ds)
		libs, err := r.liberacoes(ctx, rng)
		if err != nil {
			return r, err
		}
		// The releases among the demands, in random order.
		todas := append(ds, libs...)
		rng.Shuffle(len(todas), func(i, j int) { todas[i], todas[j] = todas[j], todas[i] })
		if err := publicar(todas); err != nil {
			return r, err
		}
		if got := r.e.bus.esperar(ctx, ds, time.Minute, func(int) {}); got != len(ds) {
			return r, fmt.Errorf("round %d: %d of %d demands have a result on the bus", rodada+1, got, len(ds))
		}
		tamanho, err := r.consumido(ctx)
		if err != nil {
			return r, err
		}
		var s, sc int
		for _, d := range ds {
			switch d.tipo.Load() {
			case sorteado:
				s++
			case semCandidatos:
				sc++
				r.esperaram = append(r.esperaram, d.id)
			}
		}
		r.sorteados, r.semCandidatos = r.sorteados+s, r.semCandidatos+sc
		var fila int
		if err := r.conn.QueryRow(ctx, `SELECT count(*) FROM d6a.fila_pendentes`).Scan(&fila); err != nil {
			return r, err
		}
		logf("replay: round %d: %d demands (%d drawn, %d sem_candidatos) and %d releases; %d waiting in the fila de pendentes; log of %d records",
			rodada+1, len(ds), s, sc, len(libs), fila, tamanho)
	}
	logf("replay: burst done in %s", time.Since(t).Round(time.Millisecond))
	return r, nil
}

// subirServe starts d6a serve on b's database d6a with its embedded bus
// and connects to it.
func subirServe(b *base, bin string) (*execucao, error) {
	e := &execucao{medidos: processosMedidos{pgDir: b.pg.Dir}}
	var err error
	if e.srv, err = iniciarServe(bin, b.dir, "d6a-serve.log", b.pg.URL("d6a"), "", false); err != nil {
		return e, err
	}
	e.medidos.d6a = e.srv.Pid()
	e.bus, err = conectar(e.srv.nats, "")
	return e, err
}

// tipoDe is the consumed type of a subject of the default prefix.
func tipoDe(assunto string) evento.Tipo {
	for _, t := range evento.Consumidos {
		if t.Subject("eventos") == assunto {
			return t
		}
	}
	return evento.Tipo(assunto)
}

// resultadoReplay is what `d6a verify --all --replay` printed.
type resultadoReplay struct {
	rodada
	codigo                                                        int
	registros, decisoes, divergencias                             int64
	mensagens, registradas, semEfeito, mortas, invalidas, adiante int64
	// erro is the failed run's error: its output and stderr's last lines.
	erro string
}

var (
	reLinhaReplay = regexp.MustCompile(`replay: registros=(\d+) decisoes=(\d+) divergencias=(\d+) `)
	reEntradas    = regexp.MustCompile(`entradas: mensagens=(\d+) registradas=(\d+) sem_efeito=(\d+) mortas=(\d+) invalidas=(\d+) adiante=(\d+)`)
)

// Tardias are the input messages whose record the replay met only after
// a record of a later trigger (it clears such a message when its record
// turns up: "a redelivery out of order"). Each is an input that took
// effect after a decision its stream order put after it (CONTRACT §3
// "Stream order"): the service consumed it out of order. Not a
// divergence the verifier reports; the mode prints it.
func (v resultadoReplay) Tardias() int64 {
	return v.mensagens - v.registradas - v.semEfeito - v.mortas - v.invalidas - v.adiante
}

// verificarReplay runs `d6a verify --url base --all --replay` with the
// bus at natsURL, pinned to chave.
func verificarReplay(ctx context.Context, bin, base, natsURL, chave string) (resultadoReplay, error) {
	var res resultadoReplay
	var err error
	res.rodada, err = rodarD6aEnv(ctx, []string{"D6A_NATS_URL=" + natsURL}, bin, "verify", "--url", base, "--all", "--replay", "--chave", chave)
	var sai *exec.ExitError
	if errors.As(err, &sai) {
		res.codigo, res.erro = sai.ExitCode(), err.Error()
	} else if err != nil {
		return res, err
	}
	m := reLinhaReplay.FindStringSubmatch(res.saida)
	e := reEntradas.FindStringSubmatch(res.saida)
	if m == nil || e == nil {
		return res, fmt.Errorf("verify --all --replay (exit %d): no replay or entradas line in\n%s%v", res.codigo, res.saida, err)
	}
	n := func(s string) int64 { x, _ := strconv.ParseInt(s, 10, 64); return x }
	res.registros, res.decisoes, res.divergencias = n(m[1]), n(m[2]), n(m[3])
	res.mensagens, res.registradas, res.semEfeito, res.mortas, res.invalidas, res.adiante = n(e[1]), n(e[2]), n(e[3]), n(e[4]), n(e[5]), n(e[6])
	return res, nil
}

// conferir is the mode's verdict: exit 0, no divergence, the whole log
// replayed, and every input the bench published accounted for on the bus.
func (r *rajadaReplay) conferir(v resultadoReplay, tamanho int64) error {
	// Inputs that change eligibility (CONTRACT §7): the registrations and
	// releases published. d6a publishes none of its own in a burst (a
	// response timeout takes 72 h, a suspension days); none is left
	// "ahead".
	publicadas := int64(r.publicadas[evento.ConselheiroCadastrado] + r.publicadas[evento.CicloConcluido] + r.publicadas[evento.AtribuicaoRecusada])
	switch {
	case v.codigo != 0 || v.divergencias != 0:
		return fmt.Errorf("verify --all --replay: exit %d, divergencias=%d\n%s", v.codigo, v.divergencias, cmp.Or(v.erro, v.saida))
	case v.registros != tamanho:
		return fmt.Errorf("verify replayed %d records, the served checkpoint has %d", v.registros, tamanho)
	case v.mensagens != publicadas || v.mortas != 0 || v.invalidas != 0 || v.adiante != 0 || v.Tardias() < 0:
		return fmt.Errorf("verify counted %d eligibility messages (%d recorded, %d without effect, %d dead, %d invalid, %d ahead); %d were published\n%s",
			v.mensagens, v.registradas, v.semEfeito, v.mortas, v.invalidas, v.adiante, publicadas, v.saida)
	case v.decisoes < int64(r.sorteados+r.semCandidatos):
		return fmt.Errorf("verify replayed %d decisions; the demands alone had %d results", v.decisoes, r.sorteados+r.semCandidatos)
	}
	return nil
}

// individuais runs the demand's and the counsellor's own checks (`d6a
// verify --url --demanda` and `--conselheiro`, CONTRACT §7) on the burst's
// log: a demand that waited and was then served by a release, one still
// waiting, and a counsellor drawn more than once. Each must exit 0; it
// returns how many were checked.
func (r *rajadaReplay) individuais(ctx context.Context) (int, error) {
	var servida, esperando, conselheiro uuid.UUID
	err := r.conn.QueryRow(ctx, `SELECT
			(SELECT a.demanda_id FROM d6a.atribuicoes a WHERE a.demanda_id = ANY($1) ORDER BY a.criado_em, a.demanda_id LIMIT 1),
			(SELECT f.demanda_id FROM d6a.fila_pendentes f ORDER BY f.data_entrada, f.demanda_id LIMIT 1),
			(SELECT a.conselheiro_id FROM d6a.atribuicoes a GROUP BY a.conselheiro_id HAVING count(*) > 1 ORDER BY count(*) DESC, a.conselheiro_id LIMIT 1)`,
		r.esperaram).Scan(&servida, &esperando, &conselheiro)
	if err != nil {
		return 0, fmt.Errorf("a waiting demand, a served one and a counsellor drawn twice: %w", err)
	}
	n := 0
	for _, c := range []struct {
		flag, id, ok string
		linhas       int // decisions the timeline lists at least
	}{
		{"--demanda", servida.String(), "nenhuma liberação a passou para trás", 2}, // its queue entry, its draw
		{"--demanda", esperando.String(), "nenhuma liberação a passou para trás", 1},
		{"--conselheiro", conselheiro.String(), "nenhuma decisão o deixou de fora", 2},
	} {
		v, err := rodarD6aEnv(ctx, []string{"D6A_NATS_URL=" + r.e.srv.nats}, r.bin, "verify", "--url", r.URL(), c.flag, c.id, "--chave", r.chave.Verificador)
		if err != nil {
			return n, err
		}
		if !strings.Contains(v.saida, c.ok) || strings.Count(v.saida, "\n  [") < c.linhas {
			return n, fmt.Errorf("verify %s %s: want a timeline of %d or more decisions and %q in\n%s", c.flag, c.id, c.linhas, c.ok, v.saida)
		}
		n++
	}
	return n, nil
}

func executarReplay(ctx context.Context, args []string) (err error) {
	o, err := lerFlagsReplay(args)
	if err != nil {
		return err
	}
	r, err := subirRajada(ctx, o)
	defer func() { r.fechar(o.manter || err != nil) }()
	if err != nil {
		return err
	}
	tamanho, err := r.consumido(ctx)
	if err != nil {
		return err
	}
	v, err := verificarReplay(ctx, r.bin, r.URL(), r.e.srv.nats, r.chave.Verificador)
	if err != nil {
		return err
	}
	fmt.Print(v.saida)
	if err := r.conferir(v, tamanho); err != nil {
		return err
	}
	if t := v.Tardias(); t > 0 {
		fmt.Printf("AVISO ordem: %d de %d entradas registradas depois da decisão de um gatilho posterior (consumidas fora da ordem do stream, CONTRACT §3; o replay as aceita como reentregas)\n", t, v.mensagens)
	}
	n, err := r.individuais(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("verificações individuais: %d (--demanda de uma demanda servida da fila e de uma que espera, --conselheiro de um sorteado mais de uma vez): todas com saída 0\n", n)
	fmt.Printf("replay da rajada: conselheiros=%d demandas=%d sorteados=%d sem_candidatos=%d ciclos=%d recusas=%d registros=%d decisoes=%d divergencias=0 tardias=%d segundos=%.2f registros_por_s=%.0f\n",
		r.publicadas[evento.ConselheiroCadastrado], r.publicadas[evento.AgendaItemDisponivel], r.sorteados, r.semCandidatos,
		r.publicadas[evento.CicloConcluido], r.publicadas[evento.AtribuicaoRecusada], v.registros, v.decisoes, v.Tardias(), v.segundos, float64(v.registros)/v.segundos)
	return nil
}
