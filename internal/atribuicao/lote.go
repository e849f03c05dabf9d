package atribuicao

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/store"
)

// diferido holds what the batch's units decided and has not written yet:
// draws, pending rows, outbox rows (issue 11: decide in memory, serially;
// write set-based). It is the one way those rows are written: no unit
// writes them itself, the executor does (gravar), at the end of the
// transaction. The units' reads see it: the eligibility query leaves out
// the counsellors drawn here, the guards look at the demands drawn or
// queued and the outbox rows queued here. A unit outside the run of agenda
// items (boot, console, repair, the rarer inputs) also reads the database
// as it is through its handlers, so the executor writes the batch's
// decisions before it as well; a cycle end, a refusal, a start and a
// registration instead ask before the reads those could change
// (Unidade.Ver).
type diferido struct {
	sorteios  []linhaSorteio
	pendentes []linhaPendente
	outbox    []linhaOutbox

	ocupados    map[uuid.UUID]bool // counsellors drawn
	atribuidas  map[uuid.UUID]bool
	pendentesDe map[uuid.UUID]int // demand → index in pendentes
	porEvento   map[uuid.UUID]bool
	correlacoes map[string]bool // sorteio.sem_candidatos queued (spec 5.4)
	// guardas are the database side of the agenda items' guards, read for
	// the run of agenda items ahead; nil once another unit wrote.
	guardas map[uuid.UUID]store.GuardaAgenda
	// elegiveis are the steps holding registered counsellors read for the
	// run's chains, by the demand's unit: the first ones with the guards
	// (lerElegiveis), the ones above when a draw needs them (lerAcima).
	// Rows, not decisions, so they serve a draw at any time of the run.
	elegiveis map[uuid.UUID]*degrauLido
}

func (d *diferido) vazio() bool {
	return len(d.sorteios) == 0 && len(d.pendentes) == 0 && len(d.outbox) == 0
}

type linhaSorteio struct {
	AtribuicaoID       uuid.UUID  `json:"atribuicao_id"`
	EventIDSorteio     uuid.UUID  `json:"event_id_sorteio"`
	ConselheiroID      uuid.UUID  `json:"conselheiro_id"`
	DemandaID          uuid.UUID  `json:"demanda_id"`
	UnidadeCivicaID    uuid.UUID  `json:"unidade_civica_id"`
	Seed               string     `json:"seed"`
	PosicaoSorteada    int32      `json:"posicao_sorteada"`
	TotalElegiveis     int32      `json:"total_elegiveis"`
	ListaElegiveisHash string     `json:"lista_elegiveis_hash"`
	DataSorteio        time.Time  `json:"data_sorteio"`
	ScoreFinal         float64    `json:"score_final"`
	CategoriaID        string     `json:"categoria_id"`
	NivelPrecedencia   int32      `json:"nivel_precedencia"`
	GrupoID            *uuid.UUID `json:"grupo_id"`
	Base               string     `json:"base"`
	BaseSequence       int64      `json:"base_sequence"`
	TimestampSorteio   string     `json:"timestamp_sorteio"`
	ElegiveisEntrada   []string   `json:"elegiveis_entrada"`
	Ordenados          []string   `json:"ordenados"`
	Degrau             uuid.UUID  `json:"degrau"`
	Cadeia             []string   `json:"cadeia"`
	Excluido           *uuid.UUID `json:"excluido"`
	Agora              time.Time  `json:"agora"`
	// Status is the winner's status after the draw
	// (elegibilidade.StatusAposSorteio).
	Status string `json:"status"`
	// The beacon round (CONTRACT §4a; null before its rule).
	Rodada           *int64  `json:"rodada"`
	AssinaturaRodada *string `json:"assinatura_rodada"`
	Compromisso      *string `json:"compromisso"`
}

type linhaPendente struct {
	DemandaID        uuid.UUID  `json:"demanda_id"`
	UnidadeCivicaID  uuid.UUID  `json:"unidade_civica_id"`
	CategoriaID      string     `json:"categoria_id"`
	NivelPrecedencia int32      `json:"nivel_precedencia"`
	ScoreFinal       float64    `json:"score_final"`
	GrupoID          *uuid.UUID `json:"grupo_id"`
	Agora            time.Time  `json:"agora"`
	EventIDOrigem    uuid.UUID  `json:"event_id_origem"`
	Tentativas       int32      `json:"tentativas"`
}

type linhaOutbox struct {
	EventID         uuid.UUID       `json:"event_id"`
	Tipo            string          `json:"tipo"`
	Subject         string          `json:"subject"`
	CorrelacaoID    string          `json:"correlacao_id"`
	Envelope        json.RawMessage `json:"envelope"`
	CriadoEm        time.Time       `json:"criado_em"`
	EntradaSequence *int64          `json:"entrada_sequence"`
	BeaconRodada    *int64          `json:"beacon_rodada"`
}

func novoDiferido() *diferido {
	return &diferido{
		atribuidas: map[uuid.UUID]bool{}, pendentesDe: map[uuid.UUID]int{}, ocupados: map[uuid.UUID]bool{},
		porEvento: map[uuid.UUID]bool{}, correlacoes: map[string]bool{},
	}
}

// sorteio records a draw decided in memory.
func (d *diferido) sorteio(l linhaSorteio, o linhaOutbox) {
	d.sorteios = append(d.sorteios, l)
	d.outbox = append(d.outbox, o)
	d.ocupados[l.ConselheiroID] = true
	d.atribuidas[l.DemandaID] = true
}

// pendente records a demand entering the queue, or one more failed
// attempt of one queued earlier in the batch.
func (d *diferido) pendente(l linhaPendente) {
	if i, ok := d.pendentesDe[l.DemandaID]; ok {
		d.pendentes[i].Tentativas++
		return
	}
	l.Tentativas = 1
	d.pendentesDe[l.DemandaID] = len(d.pendentes)
	d.pendentes = append(d.pendentes, l)
	d.porEvento[l.EventIDOrigem] = true
}

// descartar forgets the draw eventID decided in the batch: its rows are
// never written and its counsellor and demand are free again. false: no
// such draw waits here.
func (d *diferido) descartar(eventID uuid.UUID) bool {
	i := slices.IndexFunc(d.sorteios, func(l linhaSorteio) bool { return l.EventIDSorteio == eventID })
	if i < 0 {
		return false
	}
	l := d.sorteios[i]
	d.sorteios = slices.Delete(d.sorteios, i, i+1)
	d.outbox = slices.DeleteFunc(d.outbox, func(o linhaOutbox) bool { return o.EventID == eventID })
	delete(d.ocupados, l.ConselheiroID)
	delete(d.atribuidas, l.DemandaID)
	return true
}

// semCandidatos records a sorteio.sem_candidatos to queue.
func (d *diferido) semCandidatos(o linhaOutbox) {
	d.outbox = append(d.outbox, o)
	d.correlacoes[o.CorrelacaoID] = true
}

// naFila reports whether a demand the batch queued waits in one of ucs.
func (d *diferido) naFila(ucs []uuid.UUID) bool {
	for _, l := range d.pendentes {
		if slices.Contains(ucs, l.UnidadeCivicaID) {
			return true
		}
	}
	return false
}

// ocupadosLista is the counsellors drawn in the batch, as a query's array.
func (d *diferido) ocupadosLista() []uuid.UUID {
	ids := make([]uuid.UUID, 0, len(d.sorteios))
	for _, s := range d.sorteios {
		ids = append(ids, s.ConselheiroID)
	}
	return ids
}

// gravar writes everything recorded, in decision order, with one statement
// per table, and forgets it.
func (d *diferido) gravar(ctx context.Context, tx store.Tx) error {
	if len(d.sorteios) > 0 {
		linhas, err := json.Marshal(d.sorteios)
		if err != nil {
			return err
		}
		if err := tx.GravarSorteios(ctx, linhas, d.ocupadosLista()); err != nil {
			return fmt.Errorf("gravar sorteios: %w", err)
		}
	}
	if len(d.pendentes) > 0 {
		if err := gravarJSON(ctx, d.pendentes, tx.GravarPendentes); err != nil {
			return fmt.Errorf("fila de pendentes: %w", err)
		}
	}
	if len(d.outbox) > 0 {
		if err := gravarJSON(ctx, d.outbox, tx.GravarOutbox); err != nil {
			return fmt.Errorf("outbox: %w", err)
		}
	}
	// The guards read before are dropped with the overlay they completed.
	*d = *novoDiferido()
	return nil
}

func gravarJSON[T any](ctx context.Context, linhas []T, q func(context.Context, []byte) error) error {
	data, err := json.Marshal(linhas)
	if err != nil {
		return err
	}
	return q(ctx, data)
}

// marcarOcupados is d with the counsellors drawn earlier in the batch
// holding an active assignment (a copy: d may be what the run read).
func (d *diferido) marcarOcupados(l elegibilidade.Degrau) elegibilidade.Degrau {
	if len(d.ocupados) == 0 {
		return l
	}
	cs := make([]elegibilidade.Candidato, len(l.Candidatos))
	for i, c := range l.Candidatos {
		c.Ocupado = c.Ocupado || d.ocupados[c.ID]
		cs[i] = c
	}
	l.Candidatos = cs
	return l
}
