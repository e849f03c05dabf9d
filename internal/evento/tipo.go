// Package evento defines the event types of the D-6a bus, their subjects and
// durable consumer names, and decodes incoming envelopes into typed payloads.
//
// The package does no I/O: it turns bytes into values and says, with a one-line
// reason, when a message cannot be used (CONTRACT §3).
package evento

import "strings"

// Tipo is an event type written as in the specification, with diacritics
// (for example "agenda.item_disponível"). Subjects and consumer names use its
// ASCII form.
type Tipo string

// Event types of spec section 3.
const (
	// AgendaItemDisponivel is the primary trigger (spec 3.1).
	AgendaItemDisponivel Tipo = "agenda.item_disponível"
	// ConselheiroCadastrado announces a new counsellor (spec 3.2).
	ConselheiroCadastrado Tipo = "conselheiro.cadastrado"
	// CicloConcluido frees a counsellor at the end of a cycle (spec 3.3).
	CicloConcluido Tipo = "conselheiro.ciclo_concluído"
	// AtribuicaoRecusada is a counsellor's refusal of an assignment (spec 3.4).
	AtribuicaoRecusada Tipo = "conselheiro.atribuicao_recusada"
	// ElegibilidadeAtualizada is D-17's change of a unit's eligibility
	// criteria (spec 3.5, CONTRACT §8): recorded and the unit's queue swept.
	ElegibilidadeAtualizada Tipo = "conselheiro.elegibilidade_atualizada"
	// DuplicidadeAgregada removes aggregated demands from the queue (spec 3.6).
	DuplicidadeAgregada Tipo = "duplicidade.agregada"
	// ConselheiroSorteado is published after a successful draw (spec 3.7).
	ConselheiroSorteado Tipo = "conselheiro.sorteado"
	// SorteioSemCandidatos is published when a draw finds nobody (spec 3.8).
	SorteioSemCandidatos Tipo = "sorteio.sem_candidatos"
	// DemandaIniciada tells that a counsellor started the assigned demand
	// (spec §9; CONTRACT §3): the response timeout stops counting.
	DemandaIniciada Tipo = "conselheiro.demanda_iniciada"
	// SuspensaoExpirada is published when a suspension ends (spec 8.2,
	// CONTRACT §3), so a notification colony can tell the citizen.
	SuspensaoExpirada Tipo = "conselheiro.suspensao_expirada"
	// CapacitacaoConcluida is the training colony's record of a completed
	// training (spec 8.3, CONTRACT §8).
	CapacitacaoConcluida Tipo = "capacitação.concluída"
	// VinculoValidado is D-9's validation (or revocation) of a
	// counsellor's link to a unit (spec 8.3, CONTRACT §8).
	VinculoValidado Tipo = "vínculo.validado"
	// ProgressaoHabilitada is D-17's progression of a counsellor to a
	// larger unit (spec 8.3, CONTRACT §8).
	ProgressaoHabilitada Tipo = "progressão.habilitada"
	// Varredura is a sweep D-6a decided on its own (the boot's sweep of the
	// pending queue, the console's draw of a pending demand or a
	// reactivation): published first and drawn when consumed back, so the
	// draw has a trigger on the bus like any other (CONTRACT §4).
	Varredura Tipo = "d6a.varredura"
)

// Consumidos lists the consumed types, one durable consumer each (CONTRACT §3).
var Consumidos = []Tipo{
	AgendaItemDisponivel,
	ConselheiroCadastrado,
	CicloConcluido,
	AtribuicaoRecusada,
	ElegibilidadeAtualizada,
	DuplicidadeAgregada,
	DemandaIniciada,
	// Phase-2 eligibility inputs (CONTRACT §8).
	CapacitacaoConcluida,
	VinculoValidado,
	ProgressaoHabilitada,
	// D-6a's own actions, consumed back (CONTRACT §4): the sweep after a
	// suspension ends, and the sweeps it decides on its own.
	SuspensaoExpirada,
	Varredura,
}

// Publicados lists the types D-6a publishes. AtribuicaoRecusada is also
// published, only for a response timeout (CONTRACT §3), and consumed back;
// so are SuspensaoExpirada and Varredura.
var Publicados = []Tipo{ConselheiroSorteado, SorteioSemCandidatos, AtribuicaoRecusada, SuspensaoExpirada, Varredura}

// PrefixoDLQ is the subject prefix of the dead-letter stream (CONTRACT §3).
const PrefixoDLQ = "d6a.dlq"

// dobra folds the accented Latin letters Portuguese uses into ASCII. The set
// of types is fixed, so an explicit table is enough and keeps the package free
// of Unicode normalisation tables.
var dobra = map[rune]rune{
	'á': 'a', 'à': 'a', 'â': 'a', 'ã': 'a', 'ä': 'a',
	'é': 'e', 'è': 'e', 'ê': 'e', 'ë': 'e',
	'í': 'i', 'ì': 'i', 'î': 'i', 'ï': 'i',
	'ó': 'o', 'ò': 'o', 'ô': 'o', 'õ': 'o', 'ö': 'o',
	'ú': 'u', 'ù': 'u', 'û': 'u', 'ü': 'u',
	'ç': 'c', 'ñ': 'n',
	'Á': 'A', 'À': 'A', 'Â': 'A', 'Ã': 'A', 'Ä': 'A',
	'É': 'E', 'È': 'E', 'Ê': 'E', 'Ë': 'E',
	'Í': 'I', 'Ì': 'I', 'Î': 'I', 'Ï': 'I',
	'Ó': 'O', 'Ò': 'O', 'Ô': 'O', 'Õ': 'O', 'Ö': 'O',
	'Ú': 'U', 'Ù': 'U', 'Û': 'U', 'Ü': 'U',
	'Ç': 'C', 'Ñ': 'N',
}

func semDiacriticos(s string) string {
	return strings.Map(func(r rune) rune {
		if a, ok := dobra[r]; ok {
			return a
		}
		return r
	}, s)
}

// ASCII returns the type with diacritics removed, as used in subjects
// (CONTRACT §3: "agenda.item_disponível" → "agenda.item_disponivel").
func (t Tipo) ASCII() string { return semDiacriticos(string(t)) }

// Subject returns the bus subject of the type: prefix + "." + ASCII.
func (t Tipo) Subject(prefix string) string { return prefix + "." + t.ASCII() }

// DurableEntradas is the one durable pull consumer D-6a consumes through,
// filtered on every consumed subject, which delivers in stream order across
// types (CONTRACT §3 "Stream order"). It replaced the per-type durables
// (Durable), which a start migrates (docs/decisions.md).
const DurableEntradas = "d6a-entradas"

// Durable returns the durable consumer name of the type: "d6a-" plus the ASCII
// type with '.' and '_' turned into '-' (CONTRACT §3), the per-type durables
// before DurableEntradas; a start finds and removes them.
func (t Tipo) Durable() string {
	return "d6a-" + strings.NewReplacer(".", "-", "_", "-").Replace(t.ASCII())
}

// DLQSubject returns the dead-letter subject of the type, "d6a.dlq." + ASCII.
func (t Tipo) DLQSubject() string { return PrefixoDLQ + "." + t.ASCII() }

// Consumido reports whether D-6a consumes the type.
func (t Tipo) Consumido() bool {
	for _, c := range Consumidos {
		if c == t {
			return true
		}
	}
	return false
}

// String returns the type as written in the specification.
func (t Tipo) String() string { return string(t) }

// ParseTipo returns the known type (consumed or published) named by s, written
// with or without diacritics; CONTRACT §3 lets producers send either.
func ParseTipo(s string) (Tipo, bool) {
	a := semDiacriticos(s)
	for _, t := range Consumidos {
		if t.ASCII() == a {
			return t, true
		}
	}
	for _, t := range Publicados {
		if t.ASCII() == a {
			return t, true
		}
	}
	return "", false
}

// TipoDoSubject returns the known type whose subject under prefix is subject.
func TipoDoSubject(prefix, subject string) (Tipo, bool) {
	resto, ok := strings.CutPrefix(subject, prefix+".")
	if !ok {
		return "", false
	}
	return ParseTipo(resto)
}
