// Package registro is what one record of D-6a's public transparency log
// (CONTRACT §7) is and what it proves: the formats of every record (a
// draw, a draw without candidates, each input the service consumed, the
// civic-unit tree, the rules in force), their canonical bytes, the
// signed checkpoint's text and its witnesses' cosignatures, the check of
// one record by itself and against the bus message that triggered it, and
// the rules in force that decide the next records (RegrasEmVigor). The
// replay that runs the decision rules over the records in log order is
// internal/replay. It does no I/O of its own (the bus is read through
// Barramento): the verifier, the page and a third party run it without
// PostgreSQL, pgx or fiber.
package registro

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/sorteio"
)

// Registro is one leaf: the public, recomputable account of one draw. The
// field order is the key order of CONTRACT §7 and must not change.
type Registro struct {
	EventIDSorteio  uuid.UUID `json:"event_id_sorteio"`
	DemandaID       uuid.UUID `json:"demanda_id"`
	UnidadeCivicaID uuid.UUID `json:"unidade_civica_id"`
	ConselheiroID   uuid.UUID `json:"conselheiro_id"`
	Base            string    `json:"base"`
	BaseSequence    *int64    `json:"base_sequence"`
	Timestamp       string    `json:"timestamp"`
	// Rodada, AssinaturaRodada and Compromisso are the beacon round the
	// seed mixes in and the commitment time C it follows from (CONTRACT
	// §4a); absent in the draws before the d6a.regras_sorteio record.
	Rodada             *int64     `json:"rodada,omitempty"`
	AssinaturaRodada   string     `json:"assinatura_rodada,omitempty"`
	Compromisso        string     `json:"compromisso,omitempty"`
	Seed               string     `json:"seed"`
	ElegiveisEntrada   []string   `json:"elegiveis_entrada"`
	Ordenados          []string   `json:"ordenados"`
	ListaElegiveisHash string     `json:"lista_elegiveis_hash"`
	Degrau             uuid.UUID  `json:"degrau"`
	Cadeia             []string   `json:"cadeia"`
	Excluido           *uuid.UUID `json:"excluido"`
}

// Bytes is the record's canonical encoding: compact UTF-8 JSON, keys in
// the contract's order, no HTML escaping (JSON.stringify writes the same).
func (r Registro) Bytes() ([]byte, error) {
	if r.ElegiveisEntrada == nil {
		r.ElegiveisEntrada = []string{}
	}
	if r.Ordenados == nil {
		r.Ordenados = []string{}
	}
	if r.Cadeia == nil {
		r.Cadeia = []string{}
	}
	return codificarRapido(r)
}

// NovoRegistro builds the record of a draw from its inputs and outcome.
func NovoRegistro(eventID, demanda, uc uuid.UUID, base string, baseSeq *int64, timestamp string,
	res sorteio.Resultado, degrau uuid.UUID, cadeia []uuid.UUID, excluido *uuid.UUID) (Registro, error) {
	sel, err := uuid.Parse(res.Selecionado)
	if err != nil {
		return Registro{}, fmt.Errorf("transparencia: selecionado %q: %w", res.Selecionado, err)
	}
	c := make([]string, len(cadeia))
	for i, u := range cadeia {
		c[i] = u.String()
	}
	return Registro{
		EventIDSorteio: eventID, DemandaID: demanda, UnidadeCivicaID: uc, ConselheiroID: sel,
		Base: base, BaseSequence: baseSeq, Timestamp: timestamp, Seed: res.Seed,
		ElegiveisEntrada: res.Entrada, Ordenados: res.Ordenados, ListaElegiveisHash: res.ListaHash,
		Degrau: degrau, Cadeia: c, Excluido: excluido,
	}, nil
}

// Falha is a record that fails a check, the one type of a failed check
// wherever it runs. A check of the record's own fields (by itself, against
// the bus or the database) names the first field that fails: Campo (for
// example "registro.seed", "registro.ordenados[3]", "registro.canonico"),
// what was found and what was expected; whoever read the record names its
// index ("registro 12: …"). The replay's check (internal/replay), of a
// decision against the records before it, says why in Motivo and names the
// record itself: Indice.
type Falha struct {
	Campo      string
	Encontrado string
	Esperado   string
	// Motivo is the replay's reason, Indice the record it fails at, and
	// Conselheiro the counsellor left out of, or wrongly in, the decision,
	// when that is the difference.
	Motivo      string
	Indice      int64
	Conselheiro *uuid.UUID
}

func (f *Falha) Error() string {
	if f.Motivo != "" {
		return fmt.Sprintf("registro %d: %s", f.Indice, f.Motivo)
	}
	return fmt.Sprintf("%s: found %q, expected %q", f.Campo, f.Encontrado, f.Esperado)
}

// NovaFalha is the failure of one field: what was found, what was
// expected.
func NovaFalha(campo string, encontrado, esperado any) *Falha {
	return &Falha{Campo: campo, Encontrado: fmt.Sprint(encontrado), Esperado: fmt.Sprint(esperado)}
}

// LerRegistro parses record bytes and checks they are canonical: the
// bytes must be exactly what Bytes writes for the parsed value, so one
// draw has one leaf hash.
func LerRegistro(data []byte) (Registro, error) {
	if f, ok := lerRapido(data); ok {
		if r, ok := f.(Registro); ok {
			return r, nil
		}
	}
	var r Registro
	err := lerCanonico(data, &r, func() ([]byte, error) { return r.Bytes() }, "the JSON record of CONTRACT §7")
	return r, err
}

// Conferir recomputes the draw of a record (CONTRACT §4) with
// internal/sorteio and returns the first disagreement as a *Falha.
func Conferir(r Registro) error {
	if r.Partido() {
		return NovaFalha("registro.elegiveis_entrada", "[]", "the eligible list: inline, or joined from the d6a.lista_sorteio records right before the draw (Juntar)")
	}
	for i, id := range r.ElegiveisEntrada {
		if id != strings.ToLower(id) {
			return NovaFalha(fmt.Sprintf("registro.elegiveis_entrada[%d]", i), id, strings.ToLower(id))
		}
		if i > 0 && r.ElegiveisEntrada[i-1] >= id {
			return NovaFalha(fmt.Sprintf("registro.elegiveis_entrada[%d]", i), id, "an id above "+r.ElegiveisEntrada[i-1]+" (strictly ascending)")
		}
	}
	if r.Excluido != nil && slices.Contains(r.ElegiveisEntrada, r.Excluido.String()) {
		return NovaFalha("registro.excluido", r.Excluido.String(), "a counsellor outside elegiveis_entrada")
	}
	if len(r.Cadeia) == 0 || r.Cadeia[0] != r.UnidadeCivicaID.String() {
		return NovaFalha("registro.cadeia[0]", strings.Join(r.Cadeia, ","), r.UnidadeCivicaID.String()+" (the demand's unit first)")
	}
	if !slices.Contains(r.Cadeia, r.Degrau.String()) {
		return NovaFalha("registro.degrau", r.Degrau.String(), "one of cadeia "+strings.Join(r.Cadeia, ","))
	}
	sel := r.ConselheiroID.String()
	var randomness string
	if r.Rodada != nil || r.AssinaturaRodada != "" {
		if randomness = Randomness(r.AssinaturaRodada); randomness == "" || r.Rodada == nil || r.Compromisso == "" {
			return NovaFalha("registro.assinatura_rodada", r.AssinaturaRodada, "rodada, assinatura_rodada (hex) and compromisso together")
		}
	}
	_, err := sorteio.Verificar(sorteio.Alegacao{
		Base: r.Base, Timestamp: r.Timestamp, Elegiveis: r.ElegiveisEntrada, Randomness: randomness,
		Seed: &r.Seed, Ordenados: r.Ordenados, Selecionado: &sel, ListaHash: &r.ListaElegiveisHash,
	})
	var d *sorteio.Divergencia
	switch {
	case errors.As(err, &d):
		campo := d.Campo
		switch campo {
		case "selecionado":
			campo = "conselheiro_id"
		case "ordenados":
			if d.Posicao >= 0 {
				campo += fmt.Sprintf("[%d]", d.Posicao)
			}
		}
		return &Falha{Campo: "registro." + campo, Encontrado: d.Alegado, Esperado: d.Calculado}
	case err != nil:
		return NovaFalha("registro", UmaLinha(err.Error()), "a draw that can be recomputed")
	}
	return nil
}

// UmaLinha is s up to its first line break: what an error message quotes
// of text a server sent.
func UmaLinha(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	return s
}

// Limpo is s safe to print on a terminal: control characters (C0 but
// tab, DEL, C1, ESC sequences with them), the bidirectional
// overrides that reorder what is shown, and bytes that are not UTF-8 are
// written as Go escapes. A server's text reaches the reader's terminal
// through error messages; it must not move the cursor, recolour, hide
// what the verifier says or add a line of its own.
func Limpo(s string) string {
	if !strings.ContainsFunc(s, perigoso) && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				fmt.Fprintf(&b, "\\x%02x", s[i])
				continue
			}
		}
		switch {
		case !perigoso(r):
			b.WriteRune(r)
		case r < 0x80:
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			fmt.Fprintf(&b, "\\u%04x", r)
		}
	}
	return b.String()
}

func perigoso(r rune) bool {
	return r < 0x20 && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f ||
		r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

func resumo(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "…"
	}
	return string(b)
}
