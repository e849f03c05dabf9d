package evento

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// TamanhoMaximo is the largest message body D-6a accepts, in bytes (CONTRACT §3).
const TamanhoMaximo = 64 * 1024

// ErrInutilizavel is matched by errors.Is for every *Inutilizavel error.
var ErrInutilizavel = errors.New("evento inutilizável")

// Inutilizavel is the error of a message that can never be processed: it goes
// to the dead-letter stream and is acknowledged, never retried (CONTRACT §3).
type Inutilizavel struct {
	// Motivo is the one-line reason, written for the operator who reads the
	// D6a-Erro header.
	Motivo string
}

// Error returns the reason.
func (e *Inutilizavel) Error() string { return e.Motivo }

// Is makes errors.Is(err, ErrInutilizavel) true.
func (e *Inutilizavel) Is(target error) bool { return target == ErrInutilizavel }

func inutilizavel(format string, args ...any) error {
	return &Inutilizavel{Motivo: fmt.Sprintf(format, args...)}
}

// Envelope is the common part of every bus message (CONTRACT §3).
type Envelope struct {
	EventID uuid.UUID
	// Tipo is the canonical type (with diacritics), whatever spelling arrived.
	Tipo         Tipo
	Origem       string
	VersaoSchema string
	// CorrelacaoID is nil when the field is absent, null or empty.
	CorrelacaoID *string
	Timestamp    string
	// Payload is the raw payload object.
	Payload json.RawMessage
}

// Evento is a decoded message. Payload holds the typed payload of the type
// (for example AgendaItemDisponivelPayload) and shadows Envelope.Payload,
// which keeps the raw bytes. Published types carry their raw payload as a
// json.RawMessage.
type Evento struct {
	Envelope
	Payload any
	// Armazenado is when the bus server stored the message (its JetStream
	// timestamp), set by whoever read it from the stream: a decision that
	// follows this event takes it as its T (CONTRACT §4). Zero when the
	// event did not come from the stream.
	Armazenado time.Time
}

// versoes lists the schema versions accepted per type (spec 3.1–3.8).
var versoes = map[Tipo][]string{
	AgendaItemDisponivel:    {"1.0.0"},
	ConselheiroCadastrado:   {"1.0.0", "1.1.0"},
	CicloConcluido:          {"1.0.0"},
	AtribuicaoRecusada:      {"1.0.0", "1.1.0"},
	ElegibilidadeAtualizada: {"1.0.0"},
	DuplicidadeAgregada:     {"1.0.0"},
	ConselheiroSorteado:     {"1.0.0"},
	SorteioSemCandidatos:    {"1.0.0"},
	DemandaIniciada:         {"1.0.0"},
	SuspensaoExpirada:       {"1.0.0"},
	Varredura:               {"1.0.0"},
	CapacitacaoConcluida:    {"1.0.0"},
	VinculoValidado:         {"1.0.0"},
	ProgressaoHabilitada:    {"1.0.0"},
}

// Decodificar decodes a message that arrived on the subject of subjectTipo.
// Every failure is an *Inutilizavel naming the first problem found; the
// function never panics, whatever the input.
func Decodificar(subjectTipo Tipo, data []byte) (Evento, error) {
	var ev Evento
	if t, ok := ParseTipo(string(subjectTipo)); ok {
		subjectTipo = t // a caller may name it without diacritics
	}
	aceitas, ok := versoes[subjectTipo]
	if !ok {
		return ev, inutilizavel("tipo do subject desconhecido: %s", curto(string(subjectTipo)))
	}
	campos, err := objetoRaiz(data)
	if err != nil {
		return ev, err
	}
	env := objeto{campos: campos}

	tipoTexto, err := env.texto("tipo")
	if err != nil {
		return ev, err
	}
	tipo, ok := ParseTipo(tipoTexto)
	if !ok || tipo != subjectTipo {
		return ev, inutilizavel("tipo %s não corresponde ao subject (%s)", curto(tipoTexto), subjectTipo)
	}
	ev.Tipo = tipo

	if ev.EventID, err = env.uuid("event_id"); err != nil {
		return ev, err
	}
	if ev.VersaoSchema, err = env.texto("versao_schema"); err != nil {
		return ev, err
	}
	if !contem(aceitas, ev.VersaoSchema) {
		return ev, inutilizavel("versao_schema %s desconhecida para %s", curto(ev.VersaoSchema), tipo)
	}
	if ev.CorrelacaoID, err = env.textoOpcional("correlacao_id"); err != nil {
		return ev, err
	}
	if ev.CorrelacaoID != nil && *ev.CorrelacaoID == "" {
		// An empty correlation would be propagated as is; absent lets the
		// handler fall back to the demanda_id (CONTRACT §3).
		ev.CorrelacaoID = nil
	}
	if ev.Origem, err = env.textoOuVazio("origem"); err != nil {
		return ev, err
	}
	if ev.Timestamp, err = env.textoOuVazio("timestamp"); err != nil {
		return ev, err
	}

	bruto, ok := env.valor("payload")
	if !ok {
		return ev, inutilizavel("payload ausente")
	}
	if bruto[0] != '{' {
		return ev, inutilizavel("payload não é objeto")
	}
	var pcampos map[string]json.RawMessage
	if err := json.Unmarshal(bruto, &pcampos); err != nil {
		return ev, inutilizavel("payload não é objeto: %s", curto(err.Error()))
	}
	ev.Envelope.Payload = bruto
	p := objeto{campos: pcampos, prefixo: "payload."}

	switch tipo {
	case AgendaItemDisponivel:
		ev.Payload, err = decodificarAgenda(p)
	case ConselheiroCadastrado:
		ev.Payload, err = decodificarCadastro(p)
	case CicloConcluido:
		ev.Payload, err = decodificarCiclo(p)
	case AtribuicaoRecusada:
		ev.Payload, err = decodificarRecusa(p)
	case ElegibilidadeAtualizada:
		ev.Payload, err = decodificarElegibilidade(p)
	case DuplicidadeAgregada:
		ev.Payload, err = decodificarDuplicidade(p)
	case DemandaIniciada:
		ev.Payload, err = decodificarInicio(p)
	case SuspensaoExpirada:
		ev.Payload, err = decodificarSuspensaoExpirada(p)
	case Varredura:
		ev.Payload, err = decodificarVarredura(p)
	case CapacitacaoConcluida:
		ev.Payload, err = decodificarCapacitacao(p)
	case VinculoValidado:
		ev.Payload, err = decodificarVinculo(p)
	case ProgressaoHabilitada:
		ev.Payload, err = decodificarProgressao(p)
	default:
		ev.Payload = bruto
	}
	if err != nil {
		return Evento{}, err
	}
	return ev, nil
}

// LerEventID returns the event_id of an envelope without validating the rest,
// for callers that only need the id (the draw seed base, CONTRACT §4). It
// reports false when data is not a JSON object with a UUID event_id.
func LerEventID(data []byte) (string, bool) {
	campos, err := objetoRaiz(data)
	if err != nil {
		return "", false
	}
	o := objeto{campos: campos}
	s, err := o.texto("event_id")
	if err != nil {
		return "", false
	}
	if _, err := parseUUID(s); err != nil {
		return "", false
	}
	return s, true
}

func objetoRaiz(data []byte) (map[string]json.RawMessage, error) {
	if len(data) > TamanhoMaximo {
		return nil, inutilizavel("mensagem maior que 64 KiB (%d bytes)", len(data))
	}
	if !utf8.Valid(data) {
		return nil, inutilizavel("mensagem não é UTF-8 válido")
	}
	t := bytes.TrimLeft(data, " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		return nil, inutilizavel("mensagem não é um objeto JSON")
	}
	var campos map[string]json.RawMessage
	if err := json.Unmarshal(data, &campos); err != nil {
		return nil, inutilizavel("mensagem não é um objeto JSON: %s", curto(err.Error()))
	}
	return campos, nil
}

func contem(lista []string, s string) bool {
	for _, v := range lista {
		if v == s {
			return true
		}
	}
	return false
}

// curto quotes a value for a reason, bounded so that a hostile field cannot
// make the D6a-Erro header long or multi-line.
func curto(s string) string {
	const max = 80
	if len(s) > max {
		corte := max
		for corte > 0 && !utf8.RuneStart(s[corte]) {
			corte--
		}
		s = s[:corte] + "…"
	}
	return strconv.Quote(s)
}

// objeto reads fields of a JSON object with exact (case-sensitive) names;
// encoding/json's struct decoding would match keys case-insensitively and
// silently accept wrong types for some fields.
type objeto struct {
	campos  map[string]json.RawMessage
	prefixo string
}

// valor returns the field's raw value, reporting false when it is absent or
// null (a null required field counts as missing).
func (o objeto) valor(nome string) (json.RawMessage, bool) {
	v, ok := o.campos[nome]
	if !ok {
		return nil, false
	}
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		return nil, false
	}
	return v, true
}

func (o objeto) nome(n string) string { return o.prefixo + n }

func (o objeto) ausente(nome string) error {
	return inutilizavel("%s ausente", o.nome(nome))
}

// textoOpcional returns nil when the field is absent or null.
func (o objeto) textoOpcional(nome string) (*string, error) {
	v, ok := o.valor(nome)
	if !ok {
		return nil, nil
	}
	if v[0] != '"' {
		return nil, inutilizavel("%s não é string", o.nome(nome))
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return nil, inutilizavel("%s não é string", o.nome(nome))
	}
	// PostgreSQL text cannot hold NUL; a NUL would turn into a retried
	// database error instead of a dead letter.
	if strings.IndexByte(s, 0) >= 0 {
		return nil, inutilizavel("%s contém NUL", o.nome(nome))
	}
	return &s, nil
}

func (o objeto) textoOuVazio(nome string) (string, error) {
	s, err := o.textoOpcional(nome)
	if err != nil || s == nil {
		return "", err
	}
	return *s, nil
}

// texto returns a required, non-empty string.
func (o objeto) texto(nome string) (string, error) {
	s, err := o.textoOpcional(nome)
	if err != nil {
		return "", err
	}
	if s == nil || *s == "" {
		return "", o.ausente(nome)
	}
	return *s, nil
}

func (o objeto) uuid(nome string) (uuid.UUID, error) {
	s, err := o.texto(nome)
	if err != nil {
		return uuid.Nil, err
	}
	u, err := parseUUID(s)
	if err != nil {
		return uuid.Nil, inutilizavel("%s não é UUID: %s", o.nome(nome), curto(s))
	}
	return u, nil
}

func (o objeto) uuidOpcional(nome string) (*uuid.UUID, error) {
	if _, ok := o.valor(nome); !ok {
		return nil, nil
	}
	u, err := o.uuid(nome)
	if err != nil {
		return nil, err
	}
	return &u, nil
}

// parseUUID accepts only the 36-character hyphenated form (any case), the form
// PostgreSQL prints; uuid.Parse alone would also take braces and URNs. The nil
// UUID is refused: no producer mints it, and as an id it would collide.
func parseUUID(s string) (uuid.UUID, error) {
	if len(s) != 36 {
		return uuid.Nil, errors.New("comprimento")
	}
	u, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, err
	}
	if u == uuid.Nil {
		return uuid.Nil, errors.New("uuid nulo")
	}
	return u, nil
}

// inteiroOpcional reads a JSON number written without fraction or exponent.
func (o objeto) inteiroOpcional(nome string) (int64, bool, error) {
	v, ok := o.valor(nome)
	if !ok {
		return 0, false, nil
	}
	if !ehNumero(v) {
		return 0, false, inutilizavel("%s não é número", o.nome(nome))
	}
	if bytes.ContainsAny(v, ".eE") {
		return 0, false, inutilizavel("%s não é inteiro", o.nome(nome))
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return 0, false, inutilizavel("%s fora do intervalo", o.nome(nome))
	}
	return n, true, nil
}

func (o objeto) numeroOpcional(nome string) (float64, bool, error) {
	v, ok := o.valor(nome)
	if !ok {
		return 0, false, nil
	}
	if !ehNumero(v) {
		return 0, false, inutilizavel("%s não é número", o.nome(nome))
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false, inutilizavel("%s fora do intervalo", o.nome(nome))
	}
	return f, true, nil
}

func (o objeto) booleanoOpcional(nome string) (bool, bool, error) {
	v, ok := o.valor(nome)
	if !ok {
		return false, false, nil
	}
	switch string(v) {
	case "true":
		return true, true, nil
	case "false":
		return false, true, nil
	}
	return false, false, inutilizavel("%s não é booleano", o.nome(nome))
}

// ehNumero reports whether a raw JSON value (already validated by
// encoding/json) is a number.
func ehNumero(v json.RawMessage) bool {
	return len(v) > 0 && (v[0] == '-' || (v[0] >= '0' && v[0] <= '9'))
}

func itoa(i int) string { return strconv.Itoa(i) }
