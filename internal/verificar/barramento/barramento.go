// Package barramento checks the bus against the database: it compares what
// the bus says d6a did with what PostgreSQL holds (`d6a verify
// --consistencia`, and the check `d6a serve` runs at boot). After a failover
// to an asynchronous standby the last commits can be gone while their
// results are on the bus and their inputs acknowledged: nothing would ever
// redeliver those inputs, and the bus would name assignments the database
// does not have. docs/reliability.md, "Asynchronous standby", has the
// procedure.
package barramento

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/bus"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/sorteio"
)

// Barramento is what the check reads from the bus.
type Barramento interface {
	// Ultima returns the first and last sequences of stream.
	Ultima(ctx context.Context, stream string) (primeira, ultima uint64, err error)
	// Ler hands every message of stream from desde on to fn.
	Ler(ctx context.Context, stream string, desde uint64, fn func(bus.Mensagem) error) error
	// Confirmados is each consumed type's ack floor and last delivered
	// sequence.
	Confirmados(ctx context.Context) (piso, entregue map[evento.Tipo]uint64, err error)
}

// Config names the streams and the subject prefix.
type Config struct {
	Stream, DLQ, Prefix string
	// SoPiso counts an input as acknowledged only at or below its
	// consumer's ack floor, so an input in flight is never reported (the
	// boot check beside running instances). Otherwise every delivered
	// input counts: acks are individual, and an instance killed with
	// messages in hand holds the floor below inputs acknowledged after
	// them, which the floor alone would hide (`d6a verify --consistencia`;
	// an input still in flight is then reported until processed, and
	// applying it in a repair is harmless: the inbox makes its redelivery a
	// no-op).
	SoPiso bool
}

// Tipos of divergence.
const (
	// ResultadoSemOutbox: a result d6a published has no d6a.outbox row.
	ResultadoSemOutbox = "resultado-sem-outbox"
	// SorteadoSemAtribuicao: a conselheiro.sorteado on the bus has no
	// d6a.atribuicoes row.
	SorteadoSemAtribuicao = "sorteado-sem-atribuicao"
	// EntradaSemInbox: an input delivered to its consumer (at or below the
	// ack floor with Config.SoPiso), not dead-lettered, has no
	// d6a.eventos_processados row.
	EntradaSemInbox = "entrada-confirmada-sem-inbox"
)

// Divergencia is one disagreement between bus and database.
type Divergencia struct {
	Tipo    string
	Seq     uint64
	EventID uuid.UUID
	Subject string
}

func (d Divergencia) String() string {
	return fmt.Sprintf("%s seq=%d event_id=%s subject=%s", d.Tipo, d.Seq, d.EventID, d.Subject)
}

// Resultado is a result d6a published, as the bus holds it.
type Resultado struct {
	Seq          uint64
	EventID      uuid.UUID
	Tipo         evento.Tipo
	Subject      string
	CorrelacaoID *string
	Envelope     []byte
	// EntradaSeq is the input whose unit of work produced it (header
	// D6a-Entrada-Seq; 0 when absent, as on results published before it).
	EntradaSeq uint64
	// Rodada is a draw's beacon round (header D6a-Beacon-Rodada; 0: a
	// draw before the beacon rule).
	Rodada uint64
}

// SorteadoPerdido is a conselheiro.sorteado whose assignment the database
// lost, with what the bus also knows about it.
type SorteadoPerdido struct {
	Resultado
	ConselheiroID, DemandaID, UC uuid.UUID
	Seed, ListaHash, Timestamp   string
	Total, Posicao               int
	// Agenda is the demand's agenda.item_disponível before the draw (nil
	// when outside the window read): the assignment's demand snapshot.
	Agenda *evento.AgendaItemDisponivelPayload
	// Base and BaseSeq: the message whose event_id, with Timestamp,
	// recomputes the published seed (empty when none in the 256 before).
	Base    string
	BaseSeq uint64
	// AgendaEventID and AgendaSeq name that agenda item on the bus.
	AgendaEventID uuid.UUID
	AgendaSeq     uint64
}

// EntradaPerdida is an input acknowledged without its inbox row.
type EntradaPerdida struct {
	Seq    uint64
	Evento evento.Evento
}

// Relatorio is what one check found.
type Relatorio struct {
	Desde, Ate   uint64
	Resultados   int
	Entradas     int
	Divergencias []Divergencia
	// SemOutbox are the results without their outbox row; Perdidos the
	// conselheiro.sorteado among them without their assignment too.
	SemOutbox []Resultado
	Perdidos  []SorteadoPerdido
	// EntradasPerdidas are the inputs acknowledged without their inbox row
	// (those that decode), in stream order.
	EntradasPerdidas []EntradaPerdida
	// ReplayDesde is, per consumed type, the lowest sequence of an input
	// acknowledged without its inbox row; `d6a replay --from-seq` the lowest.
	ReplayDesde map[evento.Tipo]uint64
}

// Diverge reports whether anything disagrees.
func (r Relatorio) Diverge() bool { return len(r.Divergencias) > 0 }

// Replays are the `d6a replay` commands the divergences call for: one, from
// the lowest sequence, since one durable carries every consumed type.
func (r Relatorio) Replays() []string {
	if m := r.ReplayMinimo(); m > 0 {
		return []string{fmt.Sprintf("d6a replay --from-seq %d", m)}
	}
	return nil
}

// ReplayMinimo is the lowest sequence any replay must start from (0: none).
func (r Relatorio) ReplayMinimo() uint64 {
	var m uint64
	for _, s := range r.ReplayDesde {
		if m == 0 || s < m {
			m = s
		}
	}
	return m
}

// String is the report printed by `d6a verify --consistencia`.
func (r Relatorio) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "window: stream sequences %d..%d, %d results of d6a, %d consumed inputs\n", r.Desde, r.Ate, r.Resultados, r.Entradas)
	for _, d := range r.Divergencias {
		fmt.Fprintf(&b, "DIVERGENCE %s\n", d)
	}
	if !r.Diverge() {
		b.WriteString("consistent: every result on the bus has its rows, every acknowledged input its inbox row\n")
		return b.String()
	}
	fmt.Fprintf(&b, "%d divergences: %d results without their outbox row (%d conselheiro.sorteado without their assignment), %d acknowledged inputs without their inbox row\n",
		len(r.Divergencias), len(r.SemOutbox), len(r.Perdidos), len(r.Divergencias)-len(r.SemOutbox)-len(r.Perdidos))
	if m := r.ReplayMinimo(); m > 0 {
		fmt.Fprintf(&b, "replay needed from stream sequence %d\n", m)
	}
	if len(r.SemOutbox) > 0 {
		// A plain replay would draw again the demands the bus shows drawn.
		b.WriteString("results are on the bus without their rows: repair with d6a verify --consistencia --desde " + strconv.FormatUint(r.Desde, 10) + " --reparar (not with d6a replay alone)\n")
	} else if len(r.ReplayDesde) > 0 {
		b.WriteString("no result is missing, so replaying the inputs is enough:\n")
		for _, c := range r.Replays() {
			fmt.Fprintf(&b, "  %s\n", c)
		}
	}
	return b.String()
}

// Banco is what the check reads of the database (store.Tx, on the pool):
// which of a page of event ids it holds.
type Banco interface {
	ResultadosNoOutbox(ctx context.Context, ids []uuid.UUID) ([]uuid.UUID, error)
	SorteiosComAtribuicao(ctx context.Context, ids []uuid.UUID) ([]uuid.UUID, error)
	JaProcessados(ctx context.Context, ids []uuid.UUID) ([]uuid.UUID, error)
}

// Verificar reads the bus from sequence desde (1 when 0) to its end and
// compares it with the database. Order matters for a running colony: the
// ack floors are read first and the database last, so an input acked or a
// result published meanwhile was committed before it was read.
func Verificar(ctx context.Context, db Banco, b Barramento, cfg Config, desde uint64) (Relatorio, error) {
	r := Relatorio{ReplayDesde: map[evento.Tipo]uint64{}}
	confirmados, entregues, err := b.Confirmados(ctx)
	if err != nil {
		return r, err
	}
	if !cfg.SoPiso {
		confirmados = entregues
	}
	primeira, ultima, err := b.Ultima(ctx, cfg.Stream)
	if err != nil {
		return r, err
	}
	r.Desde, r.Ate = max(desde, primeira, 1), ultima
	if ultima < r.Desde {
		return r, nil
	}

	mortos := map[uint64]bool{}
	if err := b.Ler(ctx, cfg.DLQ, 1, func(m bus.Mensagem) error {
		if n, err := strconv.ParseUint(m.Header.Get(bus.HeaderSeqOriginal), 10, 64); err == nil {
			mortos[n] = true
		}
		return nil
	}); err != nil {
		return r, err
	}

	type entrada struct {
		seq     uint64
		tipo    evento.Tipo
		id      uuid.UUID
		subject string
		data    []byte
		em      time.Time
	}
	var entradas []entrada
	var resultados []Resultado
	ids := map[uint64]string{} // seq -> event_id, for the seed's base
	type agendaLida struct {
		p   evento.AgendaItemDisponivelPayload
		id  uuid.UUID
		seq uint64
	}
	agendas := map[uuid.UUID]agendaLida{}
	perdidosPorSeq := map[uint64]*SorteadoPerdido{}
	var perdidos []*SorteadoPerdido
	sorteado := evento.ConselheiroSorteado.Subject(cfg.Prefix)
	sem := evento.SorteioSemCandidatos.Subject(cfg.Prefix)
	agenda := evento.AgendaItemDisponivel.Subject(cfg.Prefix)

	err = b.Ler(ctx, cfg.Stream, r.Desde, func(m bus.Mensagem) error {
		if m.Seq > ultima {
			return nil
		}
		id, ok := evento.LerEventID(m.Data)
		if !ok {
			return nil
		}
		ids[m.Seq] = id
		uid, err := uuid.Parse(id)
		if err != nil {
			return nil
		}
		switch m.Subject {
		case sorteado, sem:
			var env struct {
				CorrelacaoID *string `json:"correlacao_id"`
			}
			_ = json.Unmarshal(m.Data, &env)
			tipo := evento.SorteioSemCandidatos
			if m.Subject == sorteado {
				tipo = evento.ConselheiroSorteado
			}
			res := Resultado{Seq: m.Seq, EventID: uid, Tipo: tipo, Subject: m.Subject, CorrelacaoID: env.CorrelacaoID, Envelope: m.Data}
			res.EntradaSeq, _ = strconv.ParseUint(m.Header.Get(bus.HeaderEntradaSeq), 10, 64)
			res.Rodada, _ = strconv.ParseUint(m.Header.Get(bus.HeaderBeaconRodada), 10, 64)
			resultados = append(resultados, res)
			if tipo == evento.ConselheiroSorteado {
				p, err := lerSorteado(m.Data)
				if err != nil {
					return nil
				}
				p.Resultado = res
				if a, ok := agendas[p.DemandaID]; ok {
					p.Agenda, p.AgendaEventID, p.AgendaSeq = &a.p, a.id, a.seq
				}
				perdidosPorSeq[m.Seq] = p
			}
			return nil
		}
		tipo, ok := evento.TipoDoSubject(cfg.Prefix, m.Subject)
		if !ok || !tipo.Consumido() || mortos[m.Seq] {
			return nil
		}
		entradas = append(entradas, entrada{m.Seq, tipo, uid, m.Subject, m.Data, m.Em})
		if m.Subject == agenda {
			if ev, err := evento.Decodificar(tipo, m.Data); err == nil {
				if p, ok := ev.AgendaItemDisponivel(); ok {
					agendas[p.DemandaID] = agendaLida{p, uid, m.Seq}
				}
			}
		}
		return nil
	})
	if err != nil {
		return r, err
	}
	r.Resultados, r.Entradas = len(resultados), len(entradas)

	// The database, last.
	resIDs := make([]uuid.UUID, len(resultados))
	var sorteadoIDs []uuid.UUID
	for i, res := range resultados {
		resIDs[i] = res.EventID
		if res.Tipo == evento.ConselheiroSorteado {
			sorteadoIDs = append(sorteadoIDs, res.EventID)
		}
	}
	comOutbox, err := existentes(ctx, resIDs, db.ResultadosNoOutbox)
	if err != nil {
		return r, err
	}
	comAtribuicao, err := existentes(ctx, sorteadoIDs, db.SorteiosComAtribuicao)
	if err != nil {
		return r, err
	}
	entIDs := make([]uuid.UUID, len(entradas))
	for i, e := range entradas {
		entIDs[i] = e.id
	}
	processados, err := existentes(ctx, entIDs, db.JaProcessados)
	if err != nil {
		return r, err
	}

	for _, res := range resultados {
		if !comOutbox[res.EventID] {
			r.SemOutbox = append(r.SemOutbox, res)
			r.Divergencias = append(r.Divergencias, Divergencia{ResultadoSemOutbox, res.Seq, res.EventID, res.Subject})
		}
		if res.Tipo == evento.ConselheiroSorteado && !comAtribuicao[res.EventID] {
			r.Divergencias = append(r.Divergencias, Divergencia{SorteadoSemAtribuicao, res.Seq, res.EventID, res.Subject})
			if p := perdidosPorSeq[res.Seq]; p != nil {
				p.Base, p.BaseSeq = acharBase(ids, res, p.Timestamp, p.Seed)
				perdidos = append(perdidos, p)
			}
		}
	}
	for _, p := range perdidos {
		r.Perdidos = append(r.Perdidos, *p)
	}
	for _, e := range entradas {
		if processados[e.id] || e.seq > confirmados[e.tipo] {
			continue
		}
		r.Divergencias = append(r.Divergencias, Divergencia{EntradaSemInbox, e.seq, e.id, e.subject})
		if s, ok := r.ReplayDesde[e.tipo]; !ok || e.seq < s {
			r.ReplayDesde[e.tipo] = e.seq
		}
		ev, err := evento.Decodificar(e.tipo, e.data)
		if err != nil {
			continue
		}
		ev.Armazenado = e.em
		r.EntradasPerdidas = append(r.EntradasPerdidas, EntradaPerdida{Seq: e.seq, Evento: ev})
	}
	sort.SliceStable(r.Divergencias, func(i, j int) bool { return r.Divergencias[i].Seq < r.Divergencias[j].Seq })
	return r, nil
}

// existentes asks the database which ids it holds, in chunks.
func existentes(ctx context.Context, ids []uuid.UUID, q func(context.Context, []uuid.UUID) ([]uuid.UUID, error)) (map[uuid.UUID]bool, error) {
	out := make(map[uuid.UUID]bool, len(ids))
	const lote = 5000
	for i := 0; i < len(ids); i += lote {
		achados, err := q(ctx, ids[i:min(i+lote, len(ids))])
		if err != nil {
			return nil, err
		}
		for _, id := range achados {
			out[id] = true
		}
	}
	return out, nil
}

// lerSorteado parses a published conselheiro.sorteado.
func lerSorteado(data []byte) (*SorteadoPerdido, error) {
	var env struct {
		Payload struct {
			ConselheiroID      uuid.UUID `json:"conselheiro_id"`
			DemandaID          uuid.UUID `json:"demanda_id"`
			UnidadeCivicaID    uuid.UUID `json:"unidade_civica_id"`
			SeedPublico        string    `json:"seed_publico"`
			ListaElegiveisHash string    `json:"lista_elegiveis_hash"`
			PosicaoSorteada    int       `json:"posicao_sorteada"`
			TotalElegiveis     int       `json:"total_elegiveis"`
			Timestamp          string    `json:"timestamp"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, err
	}
	p := env.Payload
	return &SorteadoPerdido{
		ConselheiroID: p.ConselheiroID, DemandaID: p.DemandaID, UC: p.UnidadeCivicaID,
		Seed: p.SeedPublico, ListaHash: p.ListaElegiveisHash, Timestamp: p.Timestamp,
		Total: p.TotalElegiveis, Posicao: p.PosicaoSorteada,
	}, nil
}

// acharBase walks back from the draw's sequence for the message whose
// event_id, with the draw's T, gives the published seed (CONTRACT §4).
// Under the beacon rule (§4a) the seed also needs the round's value, which
// the bus does not hold: the base is then the trigger the result's header
// D6a-Entrada-Seq names (the service's own header, as the record's
// base_sequence is; the replay checks it against the record).
func acharBase(ids map[uint64]string, res Resultado, t, seed string) (string, uint64) {
	seq := res.Seq
	if res.Rodada > 0 && res.EntradaSeq > 0 {
		if id, ok := ids[res.EntradaSeq]; ok {
			return id, res.EntradaSeq
		}
		return "", 0
	}
	for s := seq - 1; s >= 1 && seq-s <= 256; s-- {
		if id, ok := ids[s]; ok && sorteio.Seed(id, t) == seed {
			return id, s
		}
	}
	return "", 0
}
