package colonia_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/bus"
	"github.com/formigueiro/d6a/internal/colonia"
	"github.com/formigueiro/d6a/internal/config"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/pgtest"
	"github.com/formigueiro/d6a/internal/sorteio"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }

// relogio is the injected clock: tests move time (90-day suspensions).
type relogio struct {
	mu sync.Mutex
	t  time.Time
	// parado: every reading gives the same time (the determinism test:
	// two runs make different numbers of readings).
	parado bool
}

func (r *relogio) Now() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.parado {
		return r.t
	}
	// Advance a millisecond per reading so draws and rows keep their order.
	r.t = r.t.Add(time.Millisecond)
	return r.t
}

func (r *relogio) Avancar(d time.Duration) {
	r.mu.Lock()
	r.t = r.t.Add(d)
	r.mu.Unlock()
}

// harness is one running colony on a real PostgreSQL database and a real
// embedded JetStream server.
type harness struct {
	t        *testing.T
	dbURL    string
	natsDir  string
	natsAddr string
	srv      *server.Server
	nc       *nats.Conn
	js       jetstream.JetStream
	pool     *pgxpool.Pool
	clock    *relogio
	cfg      config.Config
	w        *colonia.Instancia
	cancel   context.CancelFunc
	done     chan error
	base     atribuicao.Barramento
	opcoes   opcoes
}

type opcoes struct {
	maxEntregas int
	nRecusas    int
	// base replaces bus.Base (colonia.Options.Base).
	base atribuicao.Barramento
	// embaralhar replaces the draw (colonia.Options.Embaralhar).
	embaralhar func(base, timestamp, randomness string, elegiveis []string) (sorteio.Resultado, error)
	// semBeacon draws by the rule before the beacon (colonia.Options.SemBeacon).
	semBeacon bool
}

func novaColonia(t *testing.T, o opcoes) *harness {
	t.Helper()
	c := &harness{t: t, dbURL: pgtest.URL(t), natsDir: t.TempDir(), clock: &relogio{t: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}}
	c.natsAddr = "127.0.0.1:" + strconv.Itoa(freePort(t))
	c.startNATS()
	var err error
	if c.pool, err = pgxpool.New(context.Background(), c.dbURL); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.pool.Close)
	c.cfg, err = config.Parse(func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	c.cfg.DatabaseURL = c.dbURL
	c.cfg.NATSURL = "nats://" + c.natsAddr
	c.cfg.HTTPAddr = "127.0.0.1:0"
	c.cfg.OutboxPollInterval = 50 * time.Millisecond
	// Tests read /metrics right after a draw: no gauge cache.
	c.cfg.ValidadeMetricas = 0
	c.cfg.ConsumerFetchTimeout = 100 * time.Millisecond
	c.cfg.MaxEntregas = 3
	if o.maxEntregas > 0 {
		c.cfg.MaxEntregas = o.maxEntregas
	}
	if o.nRecusas > 0 {
		c.cfg.NRecusasSuspensao = o.nRecusas
	}
	c.cfg.JWTSecret = "segredo-de-teste"
	c.base = o.base
	c.opcoes = o
	// The transparency log's development key lives here, shared by every
	// instance of the colony.
	c.cfg.DataDir = t.TempDir()
	t.Cleanup(c.parar)
	// Runs before c.parar (cleanups run last first): the bus and the
	// database are still there (contrato_test.go).
	t.Cleanup(c.validarPublicados)
	return c
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// subirServidor starts the embedded server on the colony's address and store,
// so a restart finds the stream it had.
func (c *harness) subirServidor() *server.Server {
	c.t.Helper()
	srv, err := bus.StartEmbedded(c.natsAddr, filepath.Join(c.natsDir, "js"))
	if err != nil {
		c.t.Fatal(err)
	}
	c.srv = srv
	return srv
}

func (c *harness) startNATS() {
	c.t.Helper()
	srv := c.subirServidor()
	var err error
	if c.nc, err = nats.Connect("nats://"+c.natsAddr, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond)); err != nil {
		c.t.Fatal(err)
	}
	if c.js, err = jetstream.New(c.nc); err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { c.nc.Close(); srv.Shutdown(); srv.WaitForShutdown() })
}

// pararNATS stops the bus server (outage); reiniciarNATS brings it back on
// the same address and store.
func (c *harness) pararNATS() {
	c.srv.Shutdown()
	c.srv.WaitForShutdown()
}

func (c *harness) reiniciarNATS() {
	c.t.Helper()
	srv := c.subirServidor()
	c.t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
}

// iniciar starts the worker and waits for /readyz.
func (c *harness) iniciar() {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := colonia.New(ctx, c.cfg, colonia.Options{Now: c.clock.Now, Backoff: []time.Duration{20 * time.Millisecond}, Base: c.base, Embaralhar: c.opcoes.embaralhar, SemBeacon: c.opcoes.semBeacon})
	if err != nil {
		cancel()
		c.t.Fatal(err)
	}
	c.w, c.cancel, c.done = w, cancel, make(chan error, 1)
	go func() { c.done <- w.Run(ctx) }()
	c.eventually("worker ready", func() bool { return w.Ready(context.Background()) == nil })
}

// parar drains the worker (SIGTERM path).
func (c *harness) parar() {
	if c.cancel == nil {
		return
	}
	c.cancel()
	select {
	case err := <-c.done:
		if err != nil {
			c.t.Errorf("worker Run: %v", err)
		}
	case <-time.After(20 * time.Second):
		c.t.Errorf("worker did not stop within 20 s")
	}
	c.cancel = nil
}

func (c *harness) eventually(what string, cond func() bool) {
	c.t.Helper()
	c.eventuallyEm(20*time.Second, what, cond)
}

// eventuallyEm is eventually with its own deadline.
func (c *harness) eventuallyEm(d time.Duration, what string, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// env is an incoming envelope.
type env struct {
	EventID      string `json:"event_id"`
	Tipo         string `json:"tipo"`
	Origem       string `json:"origem"`
	VersaoSchema string `json:"versao_schema"`
	CorrelacaoID any    `json:"correlacao_id"`
	Timestamp    string `json:"timestamp"`
	Payload      any    `json:"payload"`
}

// publicar sends an envelope of tipo on its subject with Nats-Msg-Id =
// event_id, and returns the event id and stream sequence.
func (c *harness) publicar(tipo evento.Tipo, versao string, payload any) (uuid.UUID, uint64) {
	c.t.Helper()
	id := uuid.New()
	e := env{EventID: id.String(), Tipo: string(tipo), Origem: "teste", VersaoSchema: versao, Timestamp: "2026-11-29T12:00:00.000Z", Payload: payload}
	data, _ := json.Marshal(e)
	return id, c.publicarBytes(tipo.Subject(c.cfg.SubjectPrefix), id.String(), data)
}

func (c *harness) publicarBytes(subject, msgID string, data []byte) uint64 {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ack, err := c.js.Publish(ctx, subject, data, jetstream.WithMsgID(msgID))
	if err != nil {
		c.t.Fatalf("publish %s: %v", subject, err)
	}
	return ack.Sequence
}

// processar publishes and waits until the worker applied the event.
func (c *harness) processar(tipo evento.Tipo, versao string, payload any) uuid.UUID {
	c.t.Helper()
	id, _ := c.publicar(tipo, versao, payload)
	c.esperarProcessado(id)
	return id
}

func (c *harness) esperarProcessado(id uuid.UUID) {
	c.t.Helper()
	c.eventually("event "+id.String()+" processed", func() bool {
		var ok bool
		_ = c.pool.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM d6a.eventos_processados WHERE event_id = $1)`, id).Scan(&ok)
		return ok
	})
	c.esperarOutboxVazio()
}

func (c *harness) esperarOutboxVazio() {
	c.t.Helper()
	c.eventually("outbox published", func() bool {
		var n int
		_ = c.pool.QueryRow(context.Background(), `SELECT count(*) FROM d6a.outbox WHERE publicado_em IS NULL`).Scan(&n)
		return n == 0
	})
}

// publicados returns the envelopes on the bus for a published type, in
// stream order.
func (c *harness) publicados(tipo evento.Tipo) []map[string]any {
	c.t.Helper()
	return c.lerStream(c.cfg.Stream, tipo.Subject(c.cfg.SubjectPrefix))
}

func (c *harness) lerStream(stream, subject string) []map[string]any {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := c.js.Stream(ctx, stream)
	if err != nil {
		c.t.Fatalf("stream %s: %v", stream, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		c.t.Fatal(err)
	}
	var out []map[string]any
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			continue
		}
		if subject != "" && m.Subject != subject {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal(m.Data, &v); err != nil {
			v = map[string]any{"_raw": string(m.Data)}
		}
		for k, hv := range m.Header {
			v["_h_"+k] = hv[0]
		}
		v["_seq"] = seq
		v["_em"] = m.Time
		out = append(out, v)
	}
	return out
}

// dlq returns the dead letters (body plus D6a-* headers).
func (c *harness) dlq() []map[string]any {
	c.t.Helper()
	return c.lerStream(bus.DLQStream, "")
}

// Scenes most scenarios start from.

// novaUC inserts a root civic unit and returns its id.
func (c *harness) novaUC() uuid.UUID {
	c.t.Helper()
	id := uuid.New()
	uc(c, id, uuid.Nil)
	return id
}

// coloniaNoBairro is a started colony on one root unit, the neighbourhood
// where the scenario happens.
func coloniaNoBairro(t *testing.T) (*harness, uuid.UUID) {
	t.Helper()
	c := novaColonia(t, opcoes{})
	bairro := c.novaUC()
	c.iniciar()
	return c, bairro
}

// coloniaComDupla is coloniaNoBairro with two counsellors registered in it,
// a before b: the fewest for a refused demand to go to someone else.
func coloniaComDupla(t *testing.T) (c *harness, bairro, a, b uuid.UUID) {
	t.Helper()
	c, bairro = coloniaNoBairro(t)
	a = c.novoConselheiro(bairro)
	b = c.novoConselheiro(bairro)
	return c, bairro, a, b
}

// novoConselheiro processes a complete 1.1.0 registration of a new
// counsellor in ucID and returns the counsellor's id.
func (c *harness) novoConselheiro(ucID uuid.UUID) uuid.UUID {
	c.t.Helper()
	id := uuid.New()
	c.processar(evento.ConselheiroCadastrado, "1.1.0", cadastro(id, ucID))
	return id
}

// novaDemanda processes agenda.item_disponível for a new demand in ucID and
// returns it with the counsellor it was drawn to (uuid.Nil when it queued).
func (c *harness) novaDemanda(ucID uuid.UUID) (demanda, sorteado uuid.UUID) {
	c.t.Helper()
	demanda = uuid.New()
	c.processar(evento.AgendaItemDisponivel, "1.0.0", agenda(demanda, ucID))
	return demanda, c.ativa(demanda)
}

// outro returns whichever of a, b is not x: the one a re-draw must reach.
func outro(x, a, b uuid.UUID) uuid.UUID {
	if x == a {
		return b
	}
	return a
}

// Payload builders.

func uc(c *harness, id, parent uuid.UUID) {
	c.t.Helper()
	var p any
	if parent != uuid.Nil {
		p = parent
	}
	if _, err := c.pool.Exec(context.Background(), `INSERT INTO core.uc_polygons (id, parent_uc_id) VALUES ($1, $2)`, id, p); err != nil {
		c.t.Fatal(err)
	}
}

func cadastro(cidadao, ucID uuid.UUID) map[string]any {
	return map[string]any{
		"conselheiro_id": cidadao, "cidadao_id": cidadao, "unidade_civica_id": ucID,
		"nivel_atuacao": 2, "status": "disponivel", "capacitacao_concluida": true,
	}
}

func agenda(demanda, ucID uuid.UUID) map[string]any {
	return map[string]any{
		"demanda_id": demanda, "unidade_civica_id": ucID, "posicao_no_backlog": 1, "score_final": 87.5,
		"categoria_id": "SAUDE", "nivel_precedencia": 2, "grupo_id": nil, "timestamp": "2026-11-29T12:00:00.000Z",
	}
}

func ciclo(conselheiro, demanda, ucID uuid.UUID) map[string]any {
	return map[string]any{
		"conselheiro_id": conselheiro, "demanda_id": demanda, "unidade_civica_id": ucID,
		"motivo_encerramento": "demanda_concluida", "total_atualizacoes": 3,
		"data_inicio": "2026-11-01T00:00:00.000Z", "data_fim": "2026-11-29T00:00:00.000Z",
	}
}

func recusa(conselheiro, demanda, ucID uuid.UUID, motivo string) map[string]any {
	p := map[string]any{"conselheiro_id": conselheiro, "demanda_id": demanda, "unidade_civica_id": ucID, "timestamp": "2026-11-29T12:00:00.000Z"}
	if motivo != "" {
		p["motivo"] = motivo
	}
	return p
}

// Readers of the colony's state.

func (c *harness) statusConselheiro(id uuid.UUID) string {
	c.t.Helper()
	var s string
	if err := c.pool.QueryRow(context.Background(), `SELECT status FROM d6a.conselheiros WHERE id = $1`, id).Scan(&s); err != nil {
		c.t.Fatalf("conselheiro %s: %v", id, err)
	}
	return s
}

// ativa returns the counsellor holding the active assignment of demanda, or
// uuid.Nil.
func (c *harness) ativa(demanda uuid.UUID) uuid.UUID {
	c.t.Helper()
	var id uuid.UUID
	err := c.pool.QueryRow(context.Background(), `SELECT conselheiro_id FROM d6a.atribuicoes WHERE demanda_id = $1 AND status = 'ativa'`, demanda).Scan(&id)
	if err != nil {
		return uuid.Nil
	}
	return id
}

// agora reads the colony clock without moving it.
func (c *harness) agora() time.Time {
	c.clock.mu.Lock()
	defer c.clock.mu.Unlock()
	return c.clock.t
}

// atribuicao returns status and event_id_encerramento of the latest
// assignment of demanda to conselheiro.
func (c *harness) atribuicao(conselheiro, demanda uuid.UUID) (status string, encerramento *uuid.UUID) {
	c.t.Helper()
	err := c.pool.QueryRow(context.Background(),
		`SELECT status, event_id_encerramento FROM d6a.atribuicoes WHERE conselheiro_id = $1 AND demanda_id = $2 ORDER BY data_sorteio DESC, criado_em DESC LIMIT 1`,
		conselheiro, demanda).Scan(&status, &encerramento)
	if err != nil {
		c.t.Fatalf("atribuição %s/%s: %v", conselheiro, demanda, err)
	}
	return status, encerramento
}

// statusAtribuicao is the status alone of c.atribuicao.
func (c *harness) statusAtribuicao(conselheiro, demanda uuid.UUID) string {
	c.t.Helper()
	s, _ := c.atribuicao(conselheiro, demanda)
	return s
}

func (c *harness) contar(sql string, args ...any) int {
	c.t.Helper()
	var n int
	if err := c.pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		c.t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// porDemanda returns the published envelopes whose payload demanda_id is d.
func porDemanda(pubs []map[string]any, d uuid.UUID) []map[string]any {
	var out []map[string]any
	for _, p := range pubs {
		if payloadDe(p)["demanda_id"] == d.String() {
			out = append(out, p)
		}
	}
	return out
}

func payloadDe(e map[string]any) map[string]any {
	p, _ := e["payload"].(map[string]any)
	return p
}

// Direct edits of the state, standing in for what another service or a
// crash would leave.

// exec runs a statement.
func (c *harness) exec(sql string, args ...any) {
	c.t.Helper()
	if _, err := c.pool.Exec(context.Background(), sql, args...); err != nil {
		c.t.Fatalf("%s: %v", sql, err)
	}
}

// suspender suspends conselheiro until ate.
func (c *harness) suspender(conselheiro uuid.UUID, ate time.Time) {
	c.t.Helper()
	c.exec(`UPDATE d6a.conselheiros SET status = 'suspenso', data_suspensao_ate = $2 WHERE id = $1`, conselheiro, ate)
}

// semDLQ fails when anything was dead-lettered.
func (c *harness) semDLQ() {
	c.t.Helper()
	d := c.dlq()
	must(c.t, len(d) == 0, "%d dead letters, want none: %v", len(d), d)
}

func must(t *testing.T, cond bool, format string, args ...any) {
	t.Helper()
	if !cond {
		t.Fatalf(format, args...)
	}
}

var _ = fmt.Sprintf

// tamanhoLog is the transparency log's size: draws, sem_candidatos and the
// input records (CONTRACT §7).
func (c *harness) tamanhoLog() int64 {
	c.t.Helper()
	return int64(c.contar(`SELECT count(*) FROM d6a.transparencia_registros`))
}
