// Package elegibilidade is the eligibility filter in steps of spec 4.3, as
// pure logic: given the ascending UC chain and the counsellors registered on
// it, it returns the eligible of the first step that has any, or the motive
// why nobody qualifies.
package elegibilidade

import (
	"bytes"
	"slices"
	"time"

	"github.com/google/uuid"
)

// Statuses of a counsellor (spec 4.6).
const (
	Disponivel = "disponivel"
	Ocupado    = "ocupado"
	Suspenso   = "suspenso"
	Inativo    = "inativo"
)

// Motives of sorteio.sem_candidatos (spec 3.8, 4.3 step 5).
const (
	NenhumCadastrado = "nenhum_cadastrado"
	TodosOcupados    = "todos_ocupados"
	TodosInativos    = "todos_inativos"
)

// Candidato is a counsellor registered on one unit of the chain.
type Candidato struct {
	ID           uuid.UUID
	UC           uuid.UUID
	Status       string
	Capacitacao  bool
	SuspensaoAte *time.Time
	// Ocupado: holds an active assignment (spec 4.3 step 3).
	Ocupado bool
	// SemVinculo: D6A_EXIGIR_VINCULO is on and the counsellor has no valid
	// link to UC (Portoes.Aplicar, CONTRACT §8).
	SemVinculo bool
}

// Resultado of the filter. Elegiveis are sorted by id ascending, the
// canonical input order of the draw (CONTRACT §4).
type Resultado struct {
	Elegiveis []uuid.UUID
	Degrau    uuid.UUID // winning step; zero when nobody qualifies
	Motivo    string    // set when nobody qualifies
	// Cadastrados and Ocupados are the counts Motivo follows from: the
	// chain's registered counsellors and those holding an assignment.
	Cadastrados, Ocupados int
	// Vencidos are those of Elegiveis still marked suspenso, whose
	// suspension ended at the time given: a draw that takes one of them
	// ends that suspension and must publish it (CONTRACT §3).
	Vencidos map[uuid.UUID]time.Time
}

// Filtrar walks the chain from the exact unit up and stops at the first
// step with eligible counsellors (spec 4.3). excluir is the refusing
// counsellor of a re-draw (spec 3.12 step 5), or nil. It is the one rule:
// the executor runs it on the rows it reads (Subir), the replay on the
// state it rebuilds from the records.
func Filtrar(cadeia []uuid.UUID, candidatos []Candidato, excluir *uuid.UUID, agora time.Time) Resultado {
	for _, degrau := range cadeia {
		var (
			elegiveis []uuid.UUID
			vencidos  map[uuid.UUID]time.Time
		)
		for _, c := range candidatos {
			if c.UC == degrau && Elegivel(c, agora) && (excluir == nil || c.ID != *excluir) {
				elegiveis = append(elegiveis, c.ID)
				if c.Status == Suspenso {
					if vencidos == nil {
						vencidos = map[uuid.UUID]time.Time{}
					}
					vencidos[c.ID] = *c.SuspensaoAte
				}
			}
		}
		if len(elegiveis) > 0 {
			// The bytes' order is the canonical text's (CONTRACT §4): lower-case
			// hex keeps each nibble's order and the dashes sit at fixed places.
			slices.SortFunc(elegiveis, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
			return Resultado{Elegiveis: elegiveis, Degrau: degrau, Vencidos: vencidos}
		}
	}
	ocupados := Ocupados(candidatos)
	return Resultado{Motivo: MotivoPorContagem(len(candidatos), ocupados), Cadastrados: len(candidatos), Ocupados: ocupados}
}

// Degrau is what a read of the chain returns (Subir): the position in the
// chain of the first step at or above the one asked for that holds any
// registered counsellor, and those counsellors, whatever their status.
// Posicao is len(cadeia) when no step above holds anyone.
type Degrau struct {
	Posicao    int
	Candidatos []Candidato
}

// Subir is Filtrar over a chain read one step at a time, from the
// demand's unit up: ler(desde) returns the first step at or above position
// desde holding registered counsellors (structure, not eligibility). The
// walk reads a further step only while the steps read hold nobody eligible,
// so a draw reads its winning step (and, when nobody qualifies, the whole
// chain the motive counts), never the counsellors above it. leituras is how
// many calls of ler the walk made.
func Subir(cadeia []uuid.UUID, excluir *uuid.UUID, agora time.Time, ler func(desde int) (Degrau, error)) (r Resultado, leituras int, err error) {
	var lidos []Candidato
	for desde := 0; desde < len(cadeia); {
		d, err := ler(desde)
		leituras++
		if err != nil {
			return Resultado{}, leituras, err
		}
		if d.Posicao < desde || d.Posicao >= len(cadeia) {
			break
		}
		lidos = append(lidos, d.Candidatos...)
		if r := Filtrar(cadeia[:d.Posicao+1], d.Candidatos, excluir, agora); len(r.Elegiveis) > 0 {
			return r, leituras, nil
		}
		desde = d.Posicao + 1
	}
	return Filtrar(cadeia, lidos, excluir, agora), leituras, nil
}

// Elegivel applies the per-step exclusions of spec 4.3: trained, not under a
// current suspension, no active assignment, and (phase 2) a valid link
// where the gate asks for one. A counsellor whose suspension
// date has passed is eligible even while its row still reads `suspenso`
// (CONTRACT §5, spec 4.6).
func Elegivel(c Candidato, agora time.Time) bool {
	if !c.Capacitacao || c.Ocupado || c.SemVinculo {
		return false
	}
	switch c.Status {
	case Disponivel:
		return c.SuspensaoAte == nil || c.SuspensaoAte.Before(agora)
	case Suspenso:
		return SuspensaoVencida(c.SuspensaoAte, agora)
	default:
		return false
	}
}

// SuspensaoVencida reports a suspension whose date has passed.
func SuspensaoVencida(ate *time.Time, agora time.Time) bool {
	return ate != nil && ate.Before(agora)
}

// StatusEfetivo is the status a reader should see: an expired suspension
// reads as disponivel before the boot reactivation rewrites it (spec 4.6).
func StatusEfetivo(status string, ate *time.Time, agora time.Time) string {
	if status == Suspenso && SuspensaoVencida(ate, agora) {
		return Disponivel
	}
	return status
}

// Motivo classifies an empty result over the whole chain (spec 4.3 step
// 5): nobody registered, everyone holding an active assignment, or the rest
// (suspended, untrained, inactive, or the excluded refuser).
func Motivo(candidatos []Candidato) string {
	return MotivoPorContagem(len(candidatos), Ocupados(candidatos))
}

// Ocupados counts the candidates holding an active assignment: with the
// registered ones, what the motive follows from.
func Ocupados(candidatos []Candidato) int {
	n := 0
	for _, c := range candidatos {
		if c.Ocupado {
			n++
		}
	}
	return n
}

// MotivoPorContagem is Motivo from the chain's counts: registered
// counsellors and those holding an active assignment.
func MotivoPorContagem(cadastrados, ocupados int) string {
	switch {
	case cadastrados == 0:
		return NenhumCadastrado
	case ocupados == cadastrados:
		return TodosOcupados
	default:
		return TodosInativos
	}
}
