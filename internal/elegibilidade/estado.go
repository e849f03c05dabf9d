package elegibilidade

import "time"

// The counsellor state machine of spec 4.6: which transitions are
// allowed. What each input does with it is decisao.Passo.

// Transicao reports whether spec 4.6 allows from → to on an input of the
// bus. Forbidden: suspenso → ocupado, inativo → anything (only the console
// lifts it, see TransicaoAdministrativa), ocupado → suspenso.
func Transicao(from, to string) bool {
	if from == to {
		return true
	}
	switch from {
	case Inativo:
		return false
	case Disponivel:
		return to == Ocupado || to == Suspenso
	case Ocupado:
		return to == Disponivel
	case Suspenso:
		return to == Disponivel
	}
	return false
}

// TransicaoAdministrativa reports whether the console may move a
// counsellor from → to (spec 4.6: inativo is "administrativo", the only way
// in and out). In: from disponivel or suspenso, never from ocupado, so
// "ocupado iff an active assignment" holds (the operator times the
// assignment out first). Out: from inativo to disponivel or suspenso, the
// one StatusReativado gives. Staying put is no administrative transition.
func TransicaoAdministrativa(from, to string) bool {
	switch to {
	case Inativo:
		return from == Disponivel || from == Suspenso
	case Disponivel, Suspenso:
		return from == Inativo
	}
	return false
}

// Permitido is Transicao at time t: a current suspension is lifted only by
// its date, never by a cycle or a refusal.
func Permitido(from string, ate *time.Time, to string, t time.Time) bool {
	if from == Suspenso && to == Disponivel {
		return SuspensaoVencida(ate, t)
	}
	return Transicao(from, to)
}

// StatusAposSorteio is the winner's status after a draw at t: ocupado
// (spec 4.4 step 4). A winner still marked suspenso whose suspension has
// ended is released by the draw first (CONTRACT §3, the executor publishes
// the end before the draw). ok is false where the machine forbids it (an
// inativo, a current suspension, one already ocupado): Filtrar never picks
// such a counsellor, so the executor refuses to write it, and the replay,
// which follows what was done, has already named the draw divergent.
func StatusAposSorteio(status string, ate *time.Time, t time.Time) (depois string, ok bool) {
	de := StatusEfetivo(status, ate, t)
	return Ocupado, de != Ocupado && Permitido(de, ate, Ocupado, t)
}

// PodeSuspender reports whether a suspension applies to status (spec 3.12
// step 4, 4.6): to a disponivel one, or a suspended one rescheduled.
func PodeSuspender(status string) bool { return status == Disponivel || status == Suspenso }

// StatusReativado is the status the console's reactivation gives an
// inativo counsellor (spec 4.6): suspenso while a suspension decided
// before the inactivation has not ended at t, else disponivel.
func StatusReativado(ate *time.Time, t time.Time) string {
	if ate != nil && !SuspensaoVencida(ate, t) {
		return Suspenso
	}
	return Disponivel
}
