package elegibilidade

import "github.com/google/uuid"

// The phase-2 eligibility inputs (spec 8.3, CONTRACT §8) as pure rules: the
// two gates of spec 4.3 they add and the effect of each input on a
// counsellor's state. The executor's handlers and draw (Aplicar on the rows
// it reads) and the replay verifier (transparencia.Replay) both run these,
// so a decision the gates do not give is a divergence.

// Portoes are the gates in force (CONTRACT §2): D6A_CAPACITACAO_EXTERNA and
// D6A_EXIGIR_VINCULO. The zero value, both off, is the MVP's rule.
type Portoes struct {
	// CapacitacaoExterna: only capacitação.concluída makes a counsellor
	// trained; the registration's self-declared flag no longer counts.
	CapacitacaoExterna bool `json:"capacitacao_externa"`
	// ExigirVinculo: a counsellor is eligible only at a unit with a valid
	// link (vínculo.validado, or a progression to it).
	ExigirVinculo bool `json:"exigir_vinculo"`
}

// Reasons a gate leaves a counsellor out (the counsellor's own check,
// `d6a verify --url … --conselheiro`).
const (
	ForaSemCapacitacao = "capacitação não registrada"
	ForaSemVinculo     = "sem vínculo validado com a UC"
)

// Fase2 is a counsellor's state the gates read, as the executor stores it
// and the replay rebuilds it from the records.
type Fase2 struct {
	// Autodeclarada is the registration's capacitacao_concluida.
	Autodeclarada bool
	// Externa: a capacitação.concluída was recorded for the counsellor.
	Externa bool
	// Vinculos is the latest link per unit: true valid, false revoked;
	// absent, never validated.
	Vinculos map[uuid.UUID]bool
}

// Capacitado is the training rule of spec 4.3 under the gate: with it, the
// external record alone; without, the self-declared flag or the external
// record (which sets the flag, CONTRACT §8).
func (p Portoes) Capacitado(f Fase2) bool {
	if p.CapacitacaoExterna {
		return f.Externa
	}
	return f.Autodeclarada || f.Externa
}

// Vinculado reports whether the link gate lets the counsellor be eligible at
// uc, their unit of action: always without the gate; with it, only a valid
// link to that very unit (a link to another unit changes nothing there).
func (p Portoes) Vinculado(f Fase2, uc uuid.UUID) bool {
	return !p.ExigirVinculo || f.Vinculos[uc]
}

// Aplicar sets the candidate's training and link from the gates: what
// Filtrar and Elegivel read.
func (p Portoes) Aplicar(c Candidato, f Fase2) Candidato {
	c.Capacitacao = p.Capacitado(f)
	c.SemVinculo = !p.Vinculado(f, c.UC)
	return c
}

// Fora is why the gates leave the counsellor out at uc, or "" when they do
// not.
func (p Portoes) Fora(f Fase2, uc uuid.UUID) string {
	switch {
	case !p.Capacitado(f):
		return ForaSemCapacitacao
	case !p.Vinculado(f, uc):
		return ForaSemVinculo
	}
	return ""
}

// AposCapacitacao is the state after a capacitação.concluída.
func AposCapacitacao(f Fase2) Fase2 {
	f.Externa = true
	return f
}

// AposVinculo is the state after a vínculo.validado for uc. A revocation
// never ends an active assignment (CONTRACT §8): it only changes who is
// eligible from then on.
func AposVinculo(f Fase2, uc uuid.UUID, valido bool) Fase2 {
	v := make(map[uuid.UUID]bool, len(f.Vinculos)+1)
	for k, x := range f.Vinculos {
		v[k] = x
	}
	v[uc] = valido
	f.Vinculos = v
	return f
}

// AposProgressao is the state after a progressão.habilitada to uc: the unit
// of action becomes uc (the coverage is uc and every unit below it), and
// the progression counts as a valid link to it. Status, training,
// suspension and refusal count carry over.
func AposProgressao(f Fase2, uc uuid.UUID) (novaUC uuid.UUID, depois Fase2) {
	return uc, AposVinculo(f, uc, true)
}

// VarreApos reports whether an input can make someone eligible, and so
// sweeps its unit's queue (spec 4.7): a training record, a valid link, a
// progression and a criteria update do; a revoked link does not.
func VarreApos(revogacao bool) bool { return !revogacao }
