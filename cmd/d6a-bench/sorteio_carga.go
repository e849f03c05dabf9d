package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/formigueiro/d6a/internal/bus"
	"github.com/formigueiro/d6a/internal/latency"
)

// Subjects of CONTRACT §3 (default prefix).
const (
	assuntoAgenda     = "eventos.agenda.item_disponivel"
	assuntoSorteado   = "eventos.conselheiro.sorteado"
	assuntoSemCandida = "eventos.sorteio.sem_candidatos"
)

// Kinds of result on the bus (0: none yet).
const (
	sorteado uint32 = 1 + iota
	semCandidatos
)

// demanda is one published agenda.item_disponível and what came back.
type demanda struct {
	id      uuid.UUID
	dados   []byte
	eventID string
	// assunto, when set, is the subject publicar sends it to (the replay
	// mode mixes input types in one publish).
	assunto string
	pub     time.Time
	recv    atomic.Int64 // arrival of the result, ns since relogioBase; 0 until then
	tipo    atomic.Uint32
	// rodada is the result's beacon round (header D6a-Beacon-Rodada; 0:
	// none).
	rodada atomic.Uint64
}

// relogioBase anchors arrival times to the monotonic clock.
var relogioBase = time.Now()

// barramento is the bench's own connection to the bus: it publishes demands
// and watches the result subjects with core NATS subscriptions.
type barramento struct {
	nc    *nats.Conn
	js    jetstream.JetStream
	mu    sync.RWMutex
	porID map[uuid.UUID]*demanda
	novo  chan struct{}
}

// conectar connects and watches d6a's result subjects, or, when given,
// subject saida instead (the bare loop's).
func conectar(url, saida string) (*barramento, error) {
	nc, err := nats.Connect(url, nats.Name("d6a-bench"), nats.MaxReconnects(-1))
	if err != nil {
		return nil, err
	}
	b := &barramento{nc: nc, porID: map[uuid.UUID]*demanda{}, novo: make(chan struct{}, 1)}
	vigiados := map[string]uint32{assuntoSorteado: sorteado, assuntoSemCandida: semCandidatos}
	if saida != "" {
		vigiados = map[string]uint32{saida: sorteado}
	}
	b.js, err = jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(1024))
	for subj, tipo := range vigiados {
		sub, e := nc.Subscribe(subj, func(m *nats.Msg) { b.resultado(m, tipo) })
		if err = cmp.Or(err, e); e == nil {
			_ = sub.SetPendingLimits(-1, -1)
		}
	}
	if err = cmp.Or(err, nc.Flush()); err != nil {
		nc.Close()
		return nil, err
	}
	return b, nil
}

func (b *barramento) Close() { b.nc.Close() }

// resultado matches a published result to its demand by payload.demanda_id.
func (b *barramento) resultado(m *nats.Msg, tipo uint32) {
	agora := int64(time.Since(relogioBase))
	var e struct {
		Payload struct {
			DemandaID uuid.UUID `json:"demanda_id"`
		} `json:"payload"`
	}
	if json.Unmarshal(m.Data, &e) != nil {
		return
	}
	b.mu.RLock()
	d := b.porID[e.Payload.DemandaID]
	b.mu.RUnlock()
	if d != nil && d.recv.CompareAndSwap(0, agora) {
		d.tipo.Store(tipo)
		if r, err := strconv.ParseUint(m.Header.Get(bus.HeaderBeaconRodada), 10, 64); err == nil {
			d.rodada.Store(r)
		}
		select {
		case b.novo <- struct{}{}:
		default:
		}
	}
}

// gerarDemandas builds m agenda.item_disponível envelopes on random
// micro-areas (payload of spec 3.1 as internal/colonia's harness builds it).
func gerarDemandas(rng *rand.Rand, p *pais, m int) []*demanda {
	micro := p.porNivel[nivelMicroarea]
	out := make([]*demanda, m)
	for i := range out {
		d := &demanda{id: uuidDe(rng)}
		uc := p.ids[micro[rng.IntN(len(micro))]]
		d.eventID = uuidDe(rng).String()
		agora := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
		d.dados, _ = json.Marshal(map[string]any{
			"event_id": d.eventID, "tipo": "agenda.item_disponível", "origem": "D-5", "versao_schema": "1.0.0",
			"correlacao_id": nil, "timestamp": agora,
			"payload": map[string]any{
				"demanda_id": d.id, "unidade_civica_id": uc, "posicao_no_backlog": 1 + rng.IntN(500),
				"score_final": math.Round(rng.Float64()*10000) / 100, "categoria_id": "SAUDE",
				"nivel_precedencia": 1 + rng.IntN(5), "grupo_id": nil, "timestamp": agora,
			},
		})
		out[i] = d
	}
	return out
}

func (b *barramento) registrar(ds []*demanda) {
	b.mu.Lock()
	for _, d := range ds {
		b.porID[d.id] = d
	}
	b.mu.Unlock()
}

// publicar sends ds to assunto (or each to its own) with asynchronous JetStream publishes
// (Nats-Msg-Id = event_id), as fast as the server acknowledges them when
// taxa is 0, else at taxa per second on a fixed schedule (no coordinated
// omission: a late publish does not push the following ones back). prog is
// told the number published so far.
func (b *barramento) publicar(ctx context.Context, assunto string, ds []*demanda, taxa float64, prog func(int)) (time.Duration, error) {
	inicio := time.Now()
	futuros := make([]jetstream.PubAckFuture, 0, len(ds))
	for i, d := range ds {
		if taxa > 0 {
			alvo := inicio.Add(time.Duration(float64(i) / taxa * float64(time.Second)))
			if w := time.Until(alvo); w > 0 {
				select {
				case <-ctx.Done():
					return 0, ctx.Err()
				case <-time.After(w):
				}
			}
		}
		for {
			d.pub = time.Now()
			f, err := b.js.PublishAsync(cmp.Or(d.assunto, assunto), d.dados, jetstream.WithMsgID(d.eventID))
			if errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
				continue // the window is full: wait for acks
			}
			if err != nil {
				return 0, fmt.Errorf("publish: %w", err)
			}
			futuros = append(futuros, f)
			break
		}
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		if i%64 == 0 {
			prog(i + 1)
		}
	}
	select {
	case <-b.js.PublishAsyncComplete():
	case <-time.After(2 * time.Minute):
		return 0, errors.New("publish acks not received within 2 min")
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	prog(len(ds))
	dur := time.Since(inicio)
	for _, f := range futuros {
		select {
		case err := <-f.Err():
			return dur, fmt.Errorf("publish not acknowledged: %w", err)
		default:
		}
	}
	return dur, nil
}

// esperar waits until every demand of ds has its result on the bus, or until
// none arrives for ocioso. prog is told how many have arrived.
func (b *barramento) esperar(ctx context.Context, ds []*demanda, ocioso time.Duration, prog func(int)) int {
	ultimo, ultimoEm := -1, time.Now()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		n := 0
		for _, d := range ds {
			if d.recv.Load() != 0 {
				n++
			}
		}
		prog(n)
		if n == len(ds) {
			return n
		}
		if n != ultimo {
			ultimo, ultimoEm = n, time.Now()
		} else if time.Since(ultimoEm) > ocioso {
			return n
		}
		select {
		case <-ctx.Done():
			return n
		case <-t.C:
		case <-b.novo:
		}
	}
}

// passe is the outcome of one pass of M demands.
type passe struct {
	M            int
	TaxaOfertada float64       // per second; 0 = as fast as possible
	Publicacao   time.Duration // first publish → last publish ack
	Duracao      time.Duration // first publish → last result
	// Espera is first publish → first result: under the beacon rule
	// (CONTRACT §4a) the wait for the round, latency rather than
	// throughput.
	Espera time.Duration
	// EsperaRodadas is the time between the first result and the last
	// during which every result still to come owed a beacon round not yet
	// published: no service could decide anything then (esperaDeRodadas).
	EsperaRodadas time.Duration
	// AposRodada: each drawn result's time from its demand's publish, or
	// from its round's publish when later, to the result (posRodada): the
	// latency the service adds to the beacon's (zero without rounds).
	AposRodada    latency.Summary
	Recebidos     int
	Sorteados     int
	SemCandidatos int
	Lat           latency.Summary // publish → result, all results
	CPU           usoCPU
	// Quietas: draws during which other processes stayed under
	// limiteQuieto cores (a shared machine's disturbance left out).
	Quietas latency.Summary
	// d6a serve's own histograms over the pass (bucket upper bounds):
	// the handler's p50 and p99, and where the time went.
	Handler [2]time.Duration
	Divisao divisao
	Lotes   lotes // units of work per committed transaction
	Fases   fases
}

// fases is where a pass's mean result went: the input's delivery (stored
// in the stream → the consumer has it), the transaction's opening,
// decisions, writes with COMMIT (the bare loop: its INSERT with COMMIT),
// the result's publish to its ack (the bare loop only: d6a's relay is not
// timed apart), and publish → result on the bus. Means of d6a serve's
// histograms (Δsum ÷ Δcount: per transaction, which at light load carries
// the events of one beacon round) or of the bare loop's timings.
type fases struct {
	Entrega, Abertura, Decisoes, Escrita, Publicacao, Total time.Duration
}

// Resto is what the phases do not cover: the input's publish until it is
// stored, d6a's relay, the result's way to the subscriber.
func (f fases) Resto() time.Duration {
	return f.Total - f.Entrega - f.Abertura - f.Decisoes - f.Escrita - f.Publicacao
}

// Vazao is the draw rate: results per second from the first result to the
// last, the rounds' waits left out (the one before the first is Espera,
// those after it EsperaRodadas, both reported beside it); first publish →
// last result when the results came at once.
func (p passe) Vazao() float64 {
	if d := p.Duracao - p.Espera - p.EsperaRodadas; p.Recebidos > 1 && d > 0 && p.Espera > 0 {
		return razao(float64(p.Recebidos-1), d.Seconds())
	}
	return razao(float64(p.Recebidos), p.Duracao.Seconds())
}

// esperaDeRodadas is the time between the first result of ds and the last
// during which every result still to come owed a beacon round that
// publicadaEm says was not yet published (CONTRACT §4a): stream order
// holds each decision until its round is out, so then nothing could be
// decided, however fast the service. Zero without a chain (nil) or
// rounds. The time from a round's publish to its results counts as work:
// fetching and verifying the round is the service's. A result without the
// header (sorteio.sem_candidatos) waited for its round too, which is no
// earlier than the one of the result before it: it takes that one, so
// the wait is never overstated.
func esperaDeRodadas(ds []*demanda, publicadaEm func(uint64) time.Time) time.Duration {
	if publicadaEm == nil {
		return 0
	}
	type resultado struct{ em, pronto time.Time }
	var rs []resultado
	for _, d := range ds {
		t := d.recv.Load()
		if t == 0 {
			continue
		}
		x := resultado{em: relogioBase.Add(time.Duration(t)).Round(0)}
		if r := d.rodada.Load(); r > 0 {
			x.pronto = publicadaEm(r)
		}
		rs = append(rs, x)
	}
	slices.SortStableFunc(rs, func(a, b resultado) int { return a.em.Compare(b.em) })
	for k := 1; k < len(rs); k++ {
		if rs[k].pronto.IsZero() {
			rs[k].pronto = rs[k-1].pronto
		}
	}
	var espera time.Duration
	var pronto time.Time // the earliest round among the results still to come
	for k := len(rs) - 1; k >= 1; k-- {
		if k == len(rs)-1 || rs[k].pronto.Before(pronto) {
			pronto = rs[k].pronto
		}
		if fim := minTempo(pronto, rs[k].em); fim.After(rs[k-1].em) {
			espera += fim.Sub(rs[k-1].em)
		}
	}
	return espera
}

// posRodada is, for each result of ds that names its round, the time
// from the later of its demand's publish and its round's publish to its
// arrival: publish → result with the beacon round's wait left out.
func posRodada(ds []*demanda, publicadaEm func(uint64) time.Time) []time.Duration {
	if publicadaEm == nil {
		return nil
	}
	var out []time.Duration
	for _, d := range ds {
		t, r := d.recv.Load(), d.rodada.Load()
		if t == 0 || r == 0 {
			continue
		}
		desde := d.pub.Round(0)
		if em := publicadaEm(r); em.After(desde) {
			desde = em
		}
		out = append(out, relogioBase.Add(time.Duration(t)).Round(0).Sub(desde))
	}
	return out
}

func minTempo(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// resumir sums up a pass from its demands; ds[0] was published first.
func resumir(ds []*demanda, taxa float64, pub time.Duration) passe {
	p := passe{M: len(ds), TaxaOfertada: taxa, Publicacao: pub}
	var todas []time.Duration
	var soma time.Duration
	for _, d := range ds {
		r := d.recv.Load()
		if r == 0 {
			continue
		}
		todas = append(todas, relogioBase.Add(time.Duration(r)).Sub(d.pub))
		soma += todas[len(todas)-1]
		em := relogioBase.Add(time.Duration(r)).Sub(ds[0].pub)
		p.Duracao = max(p.Duracao, em)
		if p.Espera == 0 || em < p.Espera {
			p.Espera = em
		}
		switch d.tipo.Load() {
		case sorteado:
			p.Sorteados++
		case semCandidatos:
			p.SemCandidatos++
		}
	}
	p.Recebidos = len(todas)
	p.Lat = latency.Summarize(todas)
	if p.Recebidos > 0 {
		p.Fases.Total = soma / time.Duration(p.Recebidos)
	}
	return p
}
