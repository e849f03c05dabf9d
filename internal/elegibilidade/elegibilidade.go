// Package elegibilidade is the eligibility filter in steps of spec 4.3, as
// pure logic: given the ascending UC chain and the counsellors registered on
// it, it returns the eligible of the first step that has any, or the motive
// why nobody qualifies.
package elegibilidade

import (
	"sort"
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
// counsellor of a re-draw (spec 3.12 step 5), or nil.
func Filtrar(cadeia []uuid.UUID, candidatos []Candidato, excluir *uuid.UUID, agora time.Time) Resultado {
	for _, degrau := range cadeia {
		var elegiveis []uuid.UUID
		for _, c := range candidatos {
			if c.UC == degrau && Elegivel(c, agora) && (excluir == nil || c.ID != *excluir) {
				elegiveis = append(elegiveis, c.ID)
			}
		}
		if len(elegiveis) > 0 {
			sort.Slice(elegiveis, func(i, j int) bool { return elegiveis[i].String() < elegiveis[j].String() })
			return Resultado{Elegiveis: elegiveis, Degrau: degrau}
		}
	}
	return Resultado{Motivo: Motivo(candidatos)}
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
	ocupados := 0
	for _, c := range candidatos {
		if c.Ocupado {
			ocupados++
		}
	}
	return MotivoPorContagem(len(candidatos), ocupados)
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
