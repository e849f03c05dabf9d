// Package decisao is what each input decides, as pure functions from what
// a decision reads to what it changes:
//
//   - Passo: what an input does to a counsellor (spec 3.10–3.12, 4.6, 4.8,
//     the console's inactivation and reactivation), from Visao and Entrada
//     to Efeitos;
//   - Sortear: what a draw request does once spec 4.3 has answered (spec
//     4.4, 5.4): the draw and its winner's state, or the pending queue and
//     sorteio.sem_candidatos, from VisaoSorteio and Semente to
//     EfeitosSorteio.
//
// The executor (internal/atribuicao, internal/entradas, internal/console,
// internal/manutencao) reads the view from PostgreSQL, runs the step and
// writes its effects; the replay (internal/replay) builds the view from the
// log's records, runs the same step, compares what it gives with what each
// record shows and applies its effects. A change to one of these rules is
// one edit here.
//
// Who is eligible (spec 4.3) is elegibilidade.Filtrar, the shuffle
// internal/sorteio, the queue's order (spec 4.7) internal/fila.
package decisao

import (
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
)

// Tipo is the kind of input a step takes.
type Tipo int

// The inputs that change a counsellor's state.
const (
	// Cadastro is conselheiro.cadastrado (spec 3.10).
	Cadastro Tipo = iota + 1
	// CicloConcluido is conselheiro.ciclo_concluído (spec 3.11).
	CicloConcluido
	// Recusa is conselheiro.atribuicao_recusada (spec 3.12).
	Recusa
	// Suspensao is the suspension a refusal decides (spec 3.12 step 4):
	// the executor meets it inside Recusa's step, the replay as its own
	// d6a.suspensao record.
	Suspensao
	// SuspensaoExpirada is a suspension's end reached (spec 4.8).
	SuspensaoExpirada
	// Inativacao and Reativacao are the console's (spec 4.6:
	// administrative, the only way in and out of inativo).
	Inativacao
	Reativacao
	// Liberacao is the boot's release of an occupied counsellor without
	// an active assignment.
	Liberacao
)

// Conselheiro is a counsellor's state as a decision reads it.
type Conselheiro struct {
	Status string
	// Ate is the end of the counsellor's latest suspension (nil: none).
	Ate *time.Time
}

// Visao is what a step reads.
type Visao struct {
	// Aplicada: the input was applied before (a redelivery): no effect.
	Aplicada bool
	// Conselheiro is the input's counsellor (nil: not registered).
	Conselheiro *Conselheiro
	// Ativa is the demand of the counsellor's active assignment (nil:
	// none; there is at most one, by a unique index).
	Ativa *uuid.UUID
	// Recusas is how many refusals count since the counsellor's last
	// acceptance (Recusa with Regras only).
	Recusas int64
}

// Regras are the parameters in force a refusal is counted under
// (d6a.config).
type Regras struct {
	NRecusasSuspensao int
	TSuspensao        time.Duration
}

// Entrada is one input, as both sides know it.
type Entrada struct {
	Tipo Tipo
	// Demanda is the demand a cycle end or a refusal names.
	Demanda uuid.UUID
	// Status is the registration's status as the event gives it.
	Status string
	// RiscoPessoal: a refusal for personal risk is not counted.
	RiscoPessoal bool
	// Regras, on a refusal, count it and may suspend (nil: not counted;
	// the replay, which meets the suspension as its own record).
	Regras *Regras
	// Ate is a Suspensao's end.
	Ate time.Time
	// Agora is when the step runs: a suspension is lifted only after its
	// end (spec 4.6).
	Agora time.Time
}

// Efeitos is what a step changes.
type Efeitos struct {
	// Registrar: the input leaves its record in the log, showing Status.
	Registrar bool
	// Cadastrar: a new counsellor, with Status.
	Cadastrar bool
	// Encerrar: the counsellor's active assignment of the input's demand
	// ends (concluida on a cycle end, recusada on a refusal).
	Encerrar bool
	// OutraAtiva: a cycle end names another demand than the one the
	// counsellor holds; they keep it and stay ocupado.
	OutraAtiva bool
	// Status is the counsellor's status after the step ("": unknown
	// counsellor). Mudou says whether it is written: a transition spec
	// 4.6 forbids is kept, and Proibida says so.
	Status   string
	Mudou    bool
	Proibida bool
	// FimDaSuspensao is the end of a suspension the step lifted: its
	// conselheiro.suspensao_expirada is published once.
	FimDaSuspensao *time.Time
	// Recusas is the refusal just counted, consecutive (0: not counted).
	Recusas int64
	// SuspensoAte is a suspension decided by the step: on a refusal,
	// after Status (which the refusal's own record shows), it makes the
	// counsellor suspenso. SuspensaoProibida: one was due, but spec 4.6
	// forbids it from the status the refusal left.
	SuspensoAte       *time.Time
	SuspensaoProibida bool
	// Resortear: the refused demand is drawn again without its refuser
	// (spec 3.12 step 5).
	Resortear bool
}

// Passo is what e does, given v.
func Passo(v Visao, e Entrada) Efeitos {
	var ef Efeitos
	if v.Aplicada {
		return ef
	}
	c := v.Conselheiro
	switch e.Tipo {
	case Cadastro:
		// A citizen registered before (id = cidadao_id) is a duplicate,
		// left as it is.
		if c == nil {
			ef.Cadastrar, ef.Registrar, ef.Mudou = true, true, true
			ef.Status = elegibilidade.Disponivel
			if e.Status == elegibilidade.Inativo {
				ef.Status = elegibilidade.Inativo
			}
		}
	case CicloConcluido:
		if c == nil {
			return ef
		}
		ef.Registrar = true
		ef.Encerrar = v.Ativa != nil && *v.Ativa == e.Demanda
		// ocupado iff an active assignment exists: a cycle end naming
		// another demand does not release the counsellor.
		if ef.OutraAtiva = v.Ativa != nil && !ef.Encerrar; ef.OutraAtiva {
			ef.Status = c.Status
			return ef
		}
		ef.transitar(*c, elegibilidade.Disponivel, e.Agora)
	case Recusa:
		if v.Ativa == nil || *v.Ativa != e.Demanda {
			return ef
		}
		ef.Encerrar, ef.Resortear = true, true
		var depois Conselheiro
		if c != nil {
			ef.Registrar = true
			// A busy refuser goes back to disponivel; a suspended one is
			// not released.
			ef.Status = c.Status
			if c.Status == elegibilidade.Ocupado {
				ef.transitar(*c, elegibilidade.Disponivel, e.Agora)
			}
			depois = Conselheiro{Status: ef.Status, Ate: c.Ate}
		}
		if e.Regras == nil || e.RiscoPessoal {
			return ef
		}
		ef.Recusas = v.Recusas + 1
		if ef.Recusas > int64(e.Regras.NRecusasSuspensao) && c != nil {
			s := suspender(depois, e.Agora.Add(e.Regras.TSuspensao))
			ef.SuspensoAte, ef.SuspensaoProibida = s.SuspensoAte, s.Proibida
		}
	case Suspensao:
		if c != nil {
			ef = suspender(*c, e.Ate)
			ef.Registrar = true
		}
	case SuspensaoExpirada:
		if c != nil {
			ef.Registrar, ef.Mudou = true, true
			ef.Status = c.Status
			if c.Status == elegibilidade.Suspenso {
				ef.Status = elegibilidade.Disponivel
			}
		}
	case Inativacao:
		// Never from ocupado nor with an active assignment: the operator
		// times it out first, so "ocupado iff an active assignment" holds.
		if c != nil {
			ef.administrar(*c, elegibilidade.Inativo, v.Ativa == nil)
		}
	case Reativacao:
		if c != nil {
			ef.administrar(*c, elegibilidade.StatusReativado(c.Ate, e.Agora), true)
		}
	case Liberacao:
		if c != nil {
			ef.Registrar, ef.Mudou, ef.Status = true, true, elegibilidade.Disponivel
		}
	}
	return ef
}

// transitar moves c to status `to` where spec 4.6 allows it at agora, and
// keeps it otherwise. Lifting a suspension publishes its end.
func (ef *Efeitos) transitar(c Conselheiro, to string, agora time.Time) {
	if !elegibilidade.Permitido(c.Status, c.Ate, to, agora) {
		ef.Status, ef.Proibida = c.Status, true
		return
	}
	ef.Status, ef.Mudou = to, true
	if c.Status == elegibilidade.Suspenso && to == elegibilidade.Disponivel && c.Ate != nil {
		ef.FimDaSuspensao = c.Ate
	}
}

// administrar is the console's transition of c to `to` (spec 4.6).
func (ef *Efeitos) administrar(c Conselheiro, to string, semAtiva bool) {
	if !semAtiva || !elegibilidade.TransicaoAdministrativa(c.Status, to) {
		ef.Status, ef.Proibida = c.Status, true
		return
	}
	ef.Registrar, ef.Mudou, ef.Status = true, true, to
}

// suspender is spec 3.12 step 4: a disponivel counsellor is suspended
// until ate, a suspended one rescheduled (spec 3.13); any other keeps
// their status.
func suspender(c Conselheiro, ate time.Time) Efeitos {
	if !elegibilidade.PodeSuspender(c.Status) {
		return Efeitos{Status: c.Status, Proibida: true}
	}
	return Efeitos{Status: elegibilidade.Suspenso, Mudou: true, SuspensoAte: &ate}
}

// Possiveis are the statuses the replay accepts for e's record. A record
// carries no time of its own, so where the outcome turns on whether the
// counsellor's suspension had ended, the step is run on both sides of its
// end.
func Possiveis(v Visao, e Entrada) []string {
	ef := Passo(v, e)
	out := []string{ef.Status}
	if c := v.Conselheiro; c != nil && c.Ate != nil {
		for _, t := range []time.Time{c.Ate.Add(-time.Nanosecond), c.Ate.Add(time.Nanosecond)} {
			e.Agora = t
			if s := Passo(v, e).Status; s != out[0] {
				out = append(out, s)
			}
		}
	}
	return out
}
