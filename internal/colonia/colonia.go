// Package colonia is where the colony (the running d6a service, CONTRACT §1
// `d6a serve`) is assembled, and nothing else: the one place that knows the
// order of its parts.
//
//   - Configuration: [New] reads config.Config and turns a bad value into a
//     [ConfigError] that names the variable.
//   - Construction: [New] opens the store (migrating), connects the bus, and
//     builds the draw executor, the outbox relay, the log's signer and
//     witnesses, the metrics and the HTTP app, starting none of them.
//   - Running: [Instancia.Run] starts the background parts, runs the boot
//     protocol (spec 4.5) and the bus consumers, and the periodic jobs
//     (manutencao.go).
//   - Shutdown: Run drains in reverse: consumers stop fetching, the
//     executor finishes the draw in flight, the outbox is flushed and the
//     last checkpoint signed, HTTP shuts down, connections close.
//
// cmd/d6a and the integration tests of this package run the very same
// assembly.
package colonia

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/mod/sumdb/note"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/bus"
	"github.com/formigueiro/d6a/internal/config"
	"github.com/formigueiro/d6a/internal/console"
	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/entradas"
	"github.com/formigueiro/d6a/internal/estatisticas"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/hierarquia"
	"github.com/formigueiro/d6a/internal/httpapi"
	"github.com/formigueiro/d6a/internal/metrics"
	"github.com/formigueiro/d6a/internal/outbox"
	"github.com/formigueiro/d6a/internal/sorteio"
	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/testemunha"
	"github.com/formigueiro/d6a/internal/transparencia"
)

// ConfigError is a start-up failure the operator fixes in configuration
// (exit status 2); Var names the variable.
type ConfigError struct {
	Var string
	Err error
}

func (e *ConfigError) Error() string { return e.Var + ": " + e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// Options are test seams; the zero value is production.
type Options struct {
	// Now is the service clock (default time.Now).
	Now func() time.Time
	// Backoff overrides the redelivery delays of the bus.
	Backoff []time.Duration
	// Listener replaces listening on cfg.HTTPAddr.
	Listener net.Listener
	// Base replaces the bus as where a draw outside any event (Sortear)
	// takes its base.
	Base atribuicao.Barramento
	// Assinante replaces the log key's signer (tests: a signer that fails).
	Assinante note.Signer
	// Embaralhar replaces the draw (tests: a biased lottery for the
	// fairness page; atribuicao.Options.Embaralhar).
	Embaralhar func(base, timestamp, randomness string, elegiveis []string) (sorteio.Resultado, error)
	// SemBeacon draws by the rule before the beacon: the attack test's
	// control run and the catch-up bench's yardstick arm only (no
	// production path sets it).
	SemBeacon bool
}

// Instancia is one assembled instance of the colony.
type Instancia struct {
	Cfg   config.Config
	Store *store.Store
	// Publico is the public routes' pool (D6A_DB_CONEXOES_PUBLICAS).
	Publico *store.Store
	Bus     *bus.Bus
	Servico *atribuicao.Servico
	// Console is the operators' console over Servico (httpapi serves it).
	Console *console.Console
	Relay   *outbox.Relay
	Metrics *metrics.Metrics
	App     *fiber.App
	Addr    net.Addr
	// Cache serves situacao without the database; nil when
	// D6A_SITUACAO_CACHE=0.
	Cache *httpapi.Cache
	// Assinador signs the transparency log's checkpoints.
	Assinador *transparencia.Assinador
	// Testemunhas submits them to the log's witnesses (D6A_LOG_TESTEMUNHAS).
	Testemunhas *testemunha.Enviador
	// Beacon is the draws' public randomness (nil: SemBeacon).
	Beacon      *atribuicao.Beacon
	pararBeacon func()

	log    *slog.Logger
	ln     net.Listener
	booted atomic.Bool
	// falhaAssinatura is the latest failure to sign a checkpoint, until a
	// signature succeeds: results wait for it, and /readyz says so.
	falhaAssinatura atomic.Pointer[error]
	// divergente: the boot found results on the bus the database lost, and
	// the boot steps that draw wait for the repair (retomarAposReparo).
	divergente atomic.Bool
	// pararFundo ends the HTTP app's background work (JWKS refresh).
	pararFundo context.CancelFunc
	// ultimoLote is when a handler call last ended (Unix ns): the fairness
	// fold waits for the executor to be idle (apurarEstatisticas).
	ultimoLote atomic.Int64
}

// New opens the database (migrating when cfg.Migrate), connects to the bus
// (starting the embedded server when cfg.NATSURL is empty) and builds the
// parts. It starts nothing; Run does.
func New(ctx context.Context, cfg config.Config, o Options) (_ *Instancia, err error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	// w is not the named result: `return nil, err` must not nil it before
	// the deferred close runs.
	w := &Instancia{Cfg: cfg, log: slog.Default()}
	defer func() {
		if err != nil {
			w.close()
		}
	}()
	if w.Store, err = store.Open(ctx, cfg.DatabaseURL); err != nil {
		return nil, &ConfigError{Var: "D6A_DATABASE_URL", Err: err}
	}
	if cfg.Migrate {
		if err := store.Migrate(ctx, w.Store.Pool); err != nil {
			return nil, err
		}
	}
	// The public routes read through a pool of their own, so a flood of
	// them never takes the executor's connections (issue 50 item 4).
	conexoes := cfg.ConexoesPublicas
	if conexoes <= 0 {
		conexoes = httpapi.ConexoesPublicas
	}
	if w.Publico, err = w.Store.Publico(ctx, conexoes); err != nil {
		return nil, &ConfigError{Var: "D6A_DATABASE_URL", Err: err}
	}
	w.Bus, err = bus.Connect(ctx, bus.Config{
		URL: cfg.NATSURL, EmbeddedAddr: cfg.NATSEmbeddedAddr, DataDir: cfg.DataDir,
		Stream: cfg.Stream, Prefix: cfg.SubjectPrefix, MaxEntregas: cfg.MaxEntregas,
		Espera: cfg.ConsumerFetchTimeout, Backoff: o.Backoff,
		AoMorrer: func(t evento.Tipo) {
			if w.Metrics != nil {
				w.Metrics.DeadLetters.WithLabelValues(string(t)).Inc()
			}
		},
		AoReceber: func(atraso time.Duration) {
			if w.Metrics != nil {
				w.Metrics.EntregaAtraso.Observe(atraso.Seconds())
			}
		},
		AoLerLacuna: func(n int) {
			if w.Metrics != nil {
				w.Metrics.EntregasLidasDoStream.Add(float64(n))
			}
		},
	})
	if err != nil {
		if cfg.NATSURL != "" {
			return nil, &ConfigError{Var: "D6A_NATS_URL", Err: err}
		}
		return nil, &ConfigError{Var: "D6A_NATS_EMBEDDED_ADDR", Err: fmt.Errorf("embedded NATS on %s: %w", cfg.NATSEmbeddedAddr, err)}
	}
	// One durable carries every consumed type (CONTRACT §3): one series,
	// tipo="entradas".
	lag := func(ctx context.Context) (map[string]uint64, error) {
		n, err := w.Bus.Pending(ctx)
		return map[string]uint64{"entradas": n}, err
	}
	w.Metrics = metrics.New(metrics.StoreFonte(w.Publico, lag))
	w.Metrics.SetValidadeGauges(cfg.ValidadeMetricas)
	w.Metrics.AcompanharEntregas(w.Bus.SemEntrega)
	tipos := make([]string, len(evento.Consumidos))
	for i, t := range evento.Consumidos {
		tipos[i] = string(t)
	}
	w.Metrics.Preparar(tipos...)
	w.Metrics.RegistrarOperacao(metrics.StoreFonteOperacao(w.Publico, o.Now), console.TiposAcao)
	st := w.Store
	hier := hierarquia.New(st.CarregarHierarquia, cfg.HierarquiaTTL, o.Now)
	w.Relay = outbox.New(st, w.Bus, cfg.OutboxPollInterval, o.Now)
	w.Relay.OnPublicados = func(n int) { w.Metrics.OutboxPublicados.Add(float64(n)) }
	w.Cache = httpapi.NovoCache(cfg.SituacaoCache)
	chave, err := chaveLog(cfg, w.log)
	if err != nil {
		return nil, err
	}
	if o.Assinante != nil {
		chave.Signer = o.Assinante
	}
	w.Assinador = transparencia.NovoAssinador(st.Pool, chave, cfg.LogOrigin, w.log)
	ts, err := testemunha.Analisar(cfg.LogTestemunhas)
	if err != nil {
		return nil, &ConfigError{Var: "D6A_LOG_TESTEMUNHAS", Err: err}
	}
	w.Testemunhas = &testemunha.Enviador{DB: st.Pool, Testemunhas: ts, Log: w.log, Observador: w.Metrics.Testemunhas(), Now: o.Now}
	w.Assinador.Assinado = w.Testemunhas.Acordar
	w.Relay.AntesDaVarredura = func(ctx context.Context) error {
		_, err := transparencia.Assinar(ctx, st.Pool, chave, cfg.LogOrigin)
		w.assinatura(err)
		return err
	}
	var base atribuicao.Barramento = w.Bus
	if o.Base != nil {
		base = o.Base
	}
	portoes := elegibilidade.Portoes{CapacitacaoExterna: cfg.CapacitacaoExterna, ExigirVinculo: cfg.ExigirVinculo}
	var farol *atribuicao.Beacon
	if !o.SemBeacon {
		if farol, w.pararBeacon, err = abrirBeacon(ctx, cfg, w.log); err != nil {
			return nil, err
		}
		w.Metrics.AcompanharBeacon(farol.Atraso)
	}
	w.Beacon = farol
	w.Servico = atribuicao.New(atribuicao.Options{
		Beacon: farol,
		Store:  st, Hierarquia: hier, Entradas: entradas.New(hier), Barramento: base, SubjectPrefix: cfg.SubjectPrefix,
		NRecusasSuspensao: cfg.NRecusasSuspensao, TSuspensao: cfg.TSuspensao, TimeoutResposta: cfg.TimeoutResposta, Now: o.Now,
		Portoes:   portoes,
		Publicado: publicar(w.Relay), Alterados: w.Cache.Esquecer, Observador: observador{w.Metrics}, Logger: w.log,
		Anexado: func() { w.Assinador.Acordar(); w.Testemunhas.Acordar() }, ChaveLog: &chave, OrigemLog: cfg.LogOrigin, Assinatura: w.assinatura, Embaralhar: o.Embaralhar,
	})
	w.Console = console.New(console.Options{
		Executor: w.Servico, Store: st, Hierarquia: hier, Now: o.Now, Logger: w.log,
		Portoes: portoes,
	})
	fundo, pararFundo := context.WithCancel(context.Background())
	w.pararFundo = pararFundo
	if httpapi.SemWasm() {
		w.log.Warn("compilado sem o WebAssembly da página do verificador (make wasm): a página em /d6a/transparencia/ não consegue conferir")
	}
	if w.App, err = httpapi.New(httpapi.Options{Config: cfg, Store: st, Publico: w.Publico, Metrics: w.Metrics, Now: o.Now, Ready: w.Ready, Cache: w.Cache, Admin: w.Console, Contexto: fundo,
		ChaveLog: chave.Verificador}); err != nil {
		return nil, err
	}
	w.ln = o.Listener
	if w.ln == nil {
		if w.ln, err = net.Listen("tcp", cfg.HTTPAddr); err != nil {
			return nil, &ConfigError{Var: "D6A_HTTP_ADDR", Err: err}
		}
	}
	w.Addr = w.ln.Addr()
	return w, nil
}

// Ready is /readyz: boot done, database and bus (with its six consumers)
// reachable (CONTRACT §6).
// Each failure is an *httpapi.NaoPronto: the public sees its reason, the
// log its error (hosts, users, URLs).
func (w *Instancia) Ready(ctx context.Context) error {
	if !w.booted.Load() {
		return &httpapi.NaoPronto{Motivo: "boot em andamento"}
	}
	if err := w.Store.Pool.Ping(ctx); err != nil {
		return &httpapi.NaoPronto{Motivo: "banco de dados indisponível", Err: err}
	}
	if err := w.falhaAssinatura.Load(); err != nil {
		return &httpapi.NaoPronto{Motivo: "log de transparência: checkpoint não assinado, resultados retidos", Err: *err}
	}
	if err := w.Bus.Ready(ctx); err != nil {
		return &httpapi.NaoPronto{Motivo: "barramento indisponível", Err: err}
	}
	return nil
}

// Run serves until ctx ends, then drains: consumers stop fetching and finish
// the message in hand, the executor finishes the draw in flight, the outbox
// is flushed, HTTP shuts down, connections close.
func (w *Instancia) Run(ctx context.Context) error {
	defer w.close()
	httpDone := make(chan error, 1)
	go func() { httpDone <- httpapi.Servir(w.App, w.ln) }()
	w.log.Info("d6a ouvindo", "http", w.Addr.String(), "nats", config.SemCredenciais(w.Bus.Conn().ConnectedUrl()), "stream", w.Cfg.Stream)

	workCtx, cancelWork := context.WithCancel(context.Background())
	defer cancelWork()
	go w.Relay.Run(workCtx)
	go w.Cache.Escutar(workCtx, w.Store.Pool)
	go w.Assinador.Run(workCtx)
	go w.Testemunhas.Run(workCtx)
	go w.apurarEstatisticas(workCtx)
	if w.Cfg.PprofAddr != "" {
		go w.servirPprof(workCtx)
	}

	// Boot protocol (spec 4.5), retried while the database or the bus is
	// unreachable.
	for attempt := 1; ctx.Err() == nil; attempt++ {
		err := w.boot(ctx)
		if err == nil {
			break
		}
		w.log.Error("boot falhou, nova tentativa", "tentativa", attempt, "erro", err)
		select {
		case <-ctx.Done():
		case <-time.After(min(time.Duration(attempt)*time.Second, 10*time.Second)):
		}
	}

	var consumers sync.WaitGroup
	if ctx.Err() == nil {
		w.booted.Store(true)
		w.log.Info("boot concluído; consumindo")
		go w.manter(ctx)
		consumers.Add(1)
		go func() {
			defer consumers.Done()
			if err := w.Bus.Consumir(ctx, instrumentado{w.Servico, w.Metrics, &w.ultimoLote}); err != nil && ctx.Err() == nil {
				w.log.Error("consumo encerrado com erro", "erro", err)
			}
		}()
	}

	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-httpDone:
		w.log.Error("servidor HTTP parou", "erro", runErr)
	}
	w.log.Info("encerrando: drenando consumidores, sorteio em curso e outbox")
	w.booted.Store(false)
	consumers.Wait()
	w.Servico.Close()
	flushCtx, cancelFlush := context.WithTimeout(context.Background(), w.Cfg.ShutdownTimeout/2)
	if err := w.Relay.Flush(flushCtx); err != nil {
		w.log.Warn("outbox não esvaziado no encerramento; será publicado no próximo início", "erro", err)
	}
	w.assinarFinal(flushCtx)
	cancelFlush()
	cancelWork()
	_ = w.App.ShutdownWithTimeout(2 * time.Second)
	w.log.Info("d6a encerrado")
	return runErr
}

// servirPprof exposes the Go profiler on its own listener, never on the
// public HTTP address.
func (w *Instancia) servirPprof(ctx context.Context) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	srv := &http.Server{Addr: w.Cfg.PprofAddr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	w.log.Info("pprof ouvindo", "addr", w.Cfg.PprofAddr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		w.log.Error("pprof parou", "erro", err)
	}
}

func (w *Instancia) boot(ctx context.Context) error {
	if err := w.Bus.EnsureStream(ctx); err != nil {
		return err
	}
	if err := w.Bus.EnsureConsumers(ctx); err != nil {
		return err
	}
	if err := w.Servico.Boot(ctx); err != nil {
		return err
	}
	// Issue 14: after an asynchronous failover the bus can hold draws the
	// database lost; the steps that draw on their own wait for the repair.
	if w.verificarConsistencia(ctx, true) {
		w.divergente.Store(true)
		return nil
	}
	return w.bootSorteios(ctx)
}

func (w *Instancia) close() {
	if w.pararFundo != nil {
		w.pararFundo()
	}
	if w.Servico != nil {
		w.Servico.Close()
	}
	if w.Bus != nil {
		_ = w.Bus.Close()
	}
	if w.Publico != nil {
		w.Publico.Close()
	}
	if w.Store != nil {
		w.Store.Close()
	}
	if w.pararBeacon != nil {
		w.pararBeacon()
	}
}

// observador feeds the business counters.
type observador struct{ m *metrics.Metrics }

func (o observador) Sorteio(d time.Duration) {
	o.m.Sorteios.Inc()
	o.m.SorteioDuracao.Observe(d.Seconds())
}
func (o observador) SemCandidatos(motivo string) { o.m.SemCandidatos.WithLabelValues(motivo).Inc() }
func (o observador) Recusa(motivo string)        { o.m.Recusas.WithLabelValues(motivo).Inc() }
func (o observador) Lote(unidades int)           { o.m.Lote.Observe(float64(unidades)) }
func (o observador) LoteDesfeito()               { o.m.LotesDesfeitos.Inc() }
func (o observador) Elegibilidade(releituras int) {
	o.m.Elegibilidade.Inc()
	o.m.ElegibilidadeReleituras.Add(float64(releituras))
}
func (o observador) Transacao(abertura, decisoes, fechamento time.Duration) {
	o.m.Transacao(abertura, decisoes, fechamento)
}

// instrumentado times every handler call.
type instrumentado struct {
	svc *atribuicao.Servico
	m   *metrics.Metrics
	// fim is set to when each call ends (Instancia.ultimoLote).
	fim *atomic.Int64
}

func (h instrumentado) Handle(ctx context.Context, ev evento.Evento, seq uint64) error {
	start := time.Now()
	err := h.svc.Handle(ctx, ev, seq)
	h.fim.Store(time.Now().UnixNano())
	return h.observar(ev, err, time.Since(start))
}

// HandleLote hands a fetched batch to the executor at once; each event's
// latency is the batch's.
func (h instrumentado) HandleLote(ctx context.Context, itens []bus.Item) []error {
	start := time.Now()
	evs := make([]evento.Evento, len(itens))
	seqs := make([]uint64, len(itens))
	for i, it := range itens {
		evs[i], seqs[i] = it.Evento, it.Seq
	}
	errs := h.svc.HandleLote(ctx, evs, seqs)
	d := time.Since(start)
	h.fim.Store(time.Now().UnixNano())
	for i := range errs {
		errs[i] = h.observar(evs[i], errs[i], d)
	}
	return errs
}

// observar records the handler latency and classifies the error for the
// bus: transient (database unreachable, the seed's base unknown) is
// retried in place, a panic is dead-lettered at once.
func (h instrumentado) observar(ev evento.Evento, err error, d time.Duration) error {
	res := "ok"
	if err != nil {
		res = "erro"
		switch {
		case store.Transient(err), errors.Is(err, atribuicao.ErrBaseDesconhecida),
			// A result waits for its signature; it is never dead-lettered for it.
			errors.Is(err, transparencia.ErrAssinatura), errors.Is(err, transparencia.ErrInconsistente):
			err = bus.Transitorio(err)
		case errors.Is(err, atribuicao.ErrPanico):
			err = bus.Permanente(err)
		}
	}
	h.m.HandlerDuracao.WithLabelValues(string(ev.Tipo), res).Observe(d.Seconds())
	return err
}

// publicar hands a committed batch's outbox rows to the relay, which
// publishes them at once.
func publicar(r *outbox.Relay) func([]atribuicao.Saida) {
	return func(s []atribuicao.Saida) {
		msgs := make([]outbox.Mensagem, len(s))
		for i, m := range s {
			msgs[i] = outbox.Mensagem{EventID: m.EventID, Subject: m.Subject, Envelope: m.Envelope, EntradaSeq: m.EntradaSeq, Rodada: m.Rodada}
		}
		r.Enviar(msgs)
	}
}

// assinatura records a signing's outcome for readiness.
func (w *Instancia) assinatura(err error) {
	if err == nil {
		w.falhaAssinatura.Store(nil)
		return
	}
	w.falhaAssinatura.Store(&err)
}

// apurarEstatisticas keeps the fairness statistics up to date with the
// signed log, so the route reads sums only, and refreshes the p-value's
// metric after each pass that added draws. It yields to the executor
// (esperaDoFold): a pass updates the sums of every counsellor of its
// draws' lists, and at K=1,000,000 dense (18 per list) passes run beside
// a burst halved its draws per second (measured in issue 24).
func (w *Instancia) apurarEstatisticas(ctx context.Context) {
	pValor := w.Metrics.EstatisticaPValor()
	pValor.Set(1)
	ultima, pendente, emDia := time.Time{}, true, time.Now()
	for {
		if espera := esperaDoFold(time.Now(), time.Unix(0, w.ultimoLote.Load()), emDia); espera > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(espera):
			}
			continue
		}
		n, err := estatisticas.Apurar(ctx, w.Store, 0)
		if err != nil && ctx.Err() == nil {
			w.log.Warn("estatísticas de equidade não apuradas; nova tentativa", "erro", err)
		}
		if err == nil && n < estatisticas.Lote {
			emDia = time.Now()
		}
		pendente = pendente || n > 0
		// At most every 10 s: the test reads one row per counsellor.
		if pendente && time.Since(ultima) > 10*time.Second {
			if r, err := estatisticas.Testar(ctx, w.Store); err == nil {
				pValor.Set(r.PValor)
				ultima, pendente = time.Now(), false
			}
		}
		espera := 2 * time.Second
		if n >= estatisticas.Lote {
			espera = 0 // a backlog: go on
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(espera):
		}
	}
}

const (
	// OciosoEstatisticas is how long the executor must have handled
	// nothing before a pass of the fairness fold starts.
	OciosoEstatisticas = time.Second
	// AtrasoEstatisticas bounds how long the fold waits for that: past it
	// since the fold last reached the signed log, passes run beside the
	// executor until it does, so under a load without pauses the
	// statistics stay at most this far behind.
	AtrasoEstatisticas = 30 * time.Second
)

// esperaDoFold is how long the fold waits before its next pass, given when
// the executor last ended a call and when the fold last reached the signed
// log; 0: go now.
func esperaDoFold(agora, ultimoLote, emDia time.Time) time.Duration {
	ocioso := agora.Sub(ultimoLote)
	if ocioso >= OciosoEstatisticas || agora.Sub(emDia) >= AtrasoEstatisticas {
		return 0
	}
	return min(OciosoEstatisticas-ocioso, AtrasoEstatisticas-agora.Sub(emDia))
}
