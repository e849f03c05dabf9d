package replay

import (
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/registro"
)

// Estado is a Replay's state as JSON, what a monitor keeps between
// runs (CONTRACT §7 "Monitor"): the maps the replay checks decisions
// against, mirrored field by field. It holds no divergence (a monitor
// keeps only a state that had none) and no counsellor's own check.
type Estado struct {
	Conselheiros  map[uuid.UUID]EstadoConselheiro `json:"conselheiros"`
	PorUC         map[uuid.UUID][]uuid.UUID       `json:"por_uc"`
	Desconhecidos []uuid.UUID                     `json:"desconhecidos"`
	Decisoes      int64                           `json:"decisoes"`
	Registro      int64                           `json:"registro"`
	UltimoT       time.Time                       `json:"ultimo_t"`
	// The bus side (barramento): the demand each counsellor holds, the
	// input records' event ids, the last stream sequence a record named
	// and the counts so far. The messages themselves are read again from
	// the sequence after Ultima.
	Ativas map[uuid.UUID]uuid.UUID `json:"ativas"`
	// Vistos are the input records' event ids, 16 bytes each (base64 in
	// the JSON): the largest part of the state, one per input record.
	Vistos      []byte `json:"vistos"`
	Ultima      uint64 `json:"ultima_sequencia"`
	Mensagens   int64  `json:"mensagens"`
	Registradas int64  `json:"registradas"`
	SemEfeito   int64  `json:"sem_efeito"`
	Invalidas   int64  `json:"invalidas"`
	Mortas      int64  `json:"mortas"`
	// The hierarchy and the queue (fila.go): the recorded links, the
	// waiting demands in entry order, each decided demand's unit.
	Pais      map[uuid.UUID]EstadoElo           `json:"pais"`
	Fila      []EstadoEspera                    `json:"fila"`
	UCDemanda map[uuid.UUID]uuid.UUID           `json:"uc_demanda"`
	Portoes   elegibilidade.Portoes             `json:"portoes"`
	Fase2     map[uuid.UUID]elegibilidade.Fase2 `json:"fase2,omitempty"`
	// Regras is the draw rule in force, PrimeirasRegras the first one
	// (regras.go).
	Regras          *registro.RegrasSorteio `json:"regras_sorteio,omitempty"`
	PrimeirasRegras *registro.RegrasSorteio `json:"primeiras_regras_sorteio,omitempty"`
	// Compromissos are the latest commitments and cosignatures, for the
	// draws after them (registro.RegrasEmVigor).
	Compromissos *registro.EstadoCompromissos `json:"compromissos,omitempty"`
}

// EstadoElo is a recorded parent link and the record that states it.
type EstadoElo struct {
	Parent *uuid.UUID `json:"parent"`
	Indice int64      `json:"indice"`
}

// EstadoEspera is a waiting demand: its unit, its chain when it entered
// and the record it entered with.
type EstadoEspera struct {
	Demanda uuid.UUID   `json:"demanda"`
	UC      uuid.UUID   `json:"uc"`
	Cadeia  []uuid.UUID `json:"cadeia"`
	Indice  int64       `json:"indice"`
}

// EstadoConselheiro is one counsellor's replayed state.
type EstadoConselheiro struct {
	UC          uuid.UUID  `json:"uc"`
	Status      string     `json:"status"`
	Capacitacao bool       `json:"capacitacao"`
	Ate         *time.Time `json:"ate,omitempty"`
}

// Estado is r's state, to be restored by Restaurar.
func (r *Replay) Estado() Estado {
	e := Estado{
		Conselheiros: make(map[uuid.UUID]EstadoConselheiro, len(r.conselheiros)),
		PorUC:        r.porUC, Decisoes: r.Decisoes, Registro: r.indice, UltimoT: r.ultimoT,
		Ativas: r.ativas, Ultima: r.ultima,
		Mensagens: r.Mensagens, Registradas: r.Registradas, SemEfeito: r.SemEfeito, Invalidas: r.Invalidas, Mortas: r.Mortas,
	}
	for id, c := range r.conselheiros {
		e.Conselheiros[id] = EstadoConselheiro{UC: c.uc, Status: c.status, Capacitacao: c.capacitacao, Ate: c.ate}
	}
	for id := range r.desconhecidos {
		e.Desconhecidos = append(e.Desconhecidos, id)
	}
	e.Pais = make(map[uuid.UUID]EstadoElo, len(r.pais))
	for uc, l := range r.pais {
		e.Pais[uc] = EstadoElo{Parent: l.parent, Indice: l.indice}
	}
	for _, w := range r.fila.por {
		e.Fila = append(e.Fila, EstadoEspera{Demanda: w.demanda, UC: w.uc, Cadeia: w.cadeia, Indice: w.indice})
	}
	slices.SortFunc(e.Fila, func(a, b EstadoEspera) int { return int(a.Indice - b.Indice) })
	e.UCDemanda, e.Portoes, e.Fase2 = r.ucDemanda, r.portoes, r.fase2
	e.Regras, e.PrimeirasRegras = r.regras.Regras, r.regras.Primeira
	e.Compromissos = r.regras.EstadoCompromissos()
	if r.vistos == nil {
		return e // SemBarramento: no ids kept
	}
	e.Vistos = make([]byte, 0, 16*len(r.vistos))
	for id := range r.vistos {
		e.Vistos = append(e.Vistos, id[:]...)
	}
	return e
}

// Restaurar is a replay that goes on from e, as the one Estado was
// taken from would (no counsellor's own check).
func Restaurar(e Estado) *Replay {
	r := Novo(uuid.Nil)
	for id, c := range e.Conselheiros {
		r.conselheiros[id] = &estadoConselheiro{uc: c.UC, status: c.Status, capacitacao: c.Capacitacao, ate: c.Ate}
	}
	if e.PorUC != nil {
		r.porUC = e.PorUC
	}
	for _, id := range e.Desconhecidos {
		r.desconhecidos[id] = true
	}
	r.Decisoes, r.indice, r.ultimoT = e.Decisoes, e.Registro, e.UltimoT
	if e.Ativas != nil {
		r.ativas = e.Ativas
	}
	r.vistos = make(map[uuid.UUID]bool, len(e.Vistos)/16)
	for i := 0; i+16 <= len(e.Vistos); i += 16 {
		r.vistos[uuid.UUID(e.Vistos[i:i+16])] = true
	}
	r.ultima = e.Ultima
	for uc, l := range e.Pais {
		r.pais[uc] = eloReplay{parent: l.Parent, indice: l.Indice}
	}
	// Entered again in entry order, so each unit's list keeps the FIFO.
	for _, w := range e.Fila {
		r.fila.entrar(w.Demanda, w.UC, w.Cadeia, w.Indice)
	}
	if e.UCDemanda != nil {
		r.ucDemanda = e.UCDemanda
	}
	r.portoes, r.fase2 = e.Portoes, e.Fase2
	r.regras.Regras, r.regras.Primeira = e.Regras, e.PrimeirasRegras
	r.regras.RestaurarCompromissos(e.Compromissos)
	r.Mensagens, r.Registradas, r.SemEfeito, r.Invalidas, r.Mortas = e.Mensagens, e.Registradas, e.SemEfeito, e.Invalidas, e.Mortas
	return r
}
