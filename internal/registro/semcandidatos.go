package registro

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
)

// Registravel is what can be a record of the log: a draw (Registro) or a
// record of another kind (CONTRACT §7), which starts with the key "tipo".
type Registravel interface {
	// Bytes is the record's canonical encoding, its leaf's content.
	Bytes() ([]byte, error)
	// chaves are the ids the log's routes look it up by: the published
	// event's id and the demand's.
	Chaves() (evento, demanda uuid.UUID)
}

func (r Registro) Chaves() (uuid.UUID, uuid.UUID) { return r.EventIDSorteio, r.DemandaID }

// TipoSemCandidatos is the "tipo" of a sorteio.sem_candidatos record.
const TipoSemCandidatos = "sorteio.sem_candidatos"

// SemCandidatos is the record of a sorteio.sem_candidatos outcome: nobody
// on the demand's chain was eligible, with the counts the motive follows
// from (spec 4.3 step 5), so "nobody was eligible" is in the public log as
// a draw is. The field order is the key order and must not change.
type SemCandidatos struct {
	Tipo            string    `json:"tipo"`
	EventID         uuid.UUID `json:"event_id"`
	DemandaID       uuid.UUID `json:"demanda_id"`
	UnidadeCivicaID uuid.UUID `json:"unidade_civica_id"`
	// GatilhoSequence is the stream sequence of the consumed message the
	// decision follows (null for the console's and the boot's).
	GatilhoSequence *int64     `json:"gatilho_sequence"`
	Timestamp       string     `json:"timestamp"`
	Motivo          string     `json:"motivo"`
	Cadeia          []string   `json:"cadeia"`
	Cadastrados     int64      `json:"cadastrados"`
	Ocupados        int64      `json:"ocupados"`
	Excluido        *uuid.UUID `json:"excluido"`
}

func (r SemCandidatos) Chaves() (uuid.UUID, uuid.UUID) { return r.EventID, r.DemandaID }

// Bytes is the canonical encoding, as Registro.Bytes.
func (r SemCandidatos) Bytes() ([]byte, error) {
	if r.Cadeia == nil {
		r.Cadeia = []string{}
	}
	return codificarRapido(r)
}

// NovoSemCandidatos builds the record of a sorteio.sem_candidatos.
func NovoSemCandidatos(eventID, demanda, uc uuid.UUID, gatilho *int64, timestamp, motivo string, cadeia []uuid.UUID, cadastrados, ocupados int, excluido *uuid.UUID) SemCandidatos {
	c := make([]string, len(cadeia))
	for i, u := range cadeia {
		c[i] = u.String()
	}
	return SemCandidatos{
		Tipo: TipoSemCandidatos, EventID: eventID, DemandaID: demanda, UnidadeCivicaID: uc, GatilhoSequence: gatilho,
		Timestamp: timestamp, Motivo: motivo, Cadeia: c, Cadastrados: int64(cadastrados), Ocupados: int64(ocupados), Excluido: excluido,
	}
}

// LerRegistravel parses a record of any kind and checks it is canonical: a
// Registro, or a *SemCandidatos.
func LerRegistravel(data []byte) (Registravel, error) {
	if r, ok := lerRapido(data); ok {
		return r, nil
	}
	return lerRegistravelLento(data)
}

// lerRegistravelLento is LerRegistravel through encoding/json: it accepts
// what the fast path does and more only where the fast path declines (a
// string with an escape), and names every failure.
func lerRegistravelLento(data []byte) (Registravel, error) {
	var k struct {
		Tipo *string `json:"tipo"`
	}
	// The kind from the canonical prefix (CONTRACT §7: a record of another
	// kind than the draw starts with "tipo", a draw with its event id;
	// the parse below checks the rest is canonical), else from a parse.
	if t, ok := tipoCanonico(data); ok {
		k.Tipo = t
	} else if err := json.Unmarshal(data, &k); err != nil {
		return nil, NovaFalha("registro", UmaLinha(err.Error()), "the JSON record of CONTRACT §7")
	}
	switch {
	case k.Tipo == nil:
		return LerRegistro(data)
	case *k.Tipo == TipoSemCandidatos:
		var r SemCandidatos
		if err := lerCanonico(data, &r, func() ([]byte, error) { return r.Bytes() }, "the JSON sorteio.sem_candidatos record of docs/verificacao.md"); err != nil {
			return nil, err
		}
		return r, nil
	case *k.Tipo == TipoHierarquia:
		var r Hierarquia
		if err := lerCanonico(data, &r, func() ([]byte, error) { return r.Bytes() }, "the JSON hierarquia.uc record of docs/verificacao.md"); err != nil {
			return nil, err
		}
		return r, nil
	case *k.Tipo == TipoRegrasSorteio:
		var r RegrasSorteio
		if err := lerCanonico(data, &r, func() ([]byte, error) { return r.Bytes() }, "the JSON d6a.regras_sorteio record of docs/verificacao.md"); err != nil {
			return nil, err
		}
		return r, nil
	case *k.Tipo == TipoEliminacao:
		var r Eliminacao
		if err := lerCanonico(data, &r, func() ([]byte, error) { return r.Bytes() }, "the JSON d6a.eliminacao record of docs/verificacao.md"); err != nil {
			return nil, err
		}
		return r, nil
	case *k.Tipo == TipoListaSorteio:
		var r ListaSorteio
		if err := lerCanonico(data, &r, func() ([]byte, error) { return r.Bytes() }, "the JSON d6a.lista_sorteio record of docs/verificacao.md"); err != nil {
			return nil, err
		}
		return r, nil
	case *k.Tipo == TipoCompromisso:
		var r Compromisso
		if err := lerCanonico(data, &r, func() ([]byte, error) { return r.Bytes() }, "the JSON d6a.compromisso record of docs/verificacao.md"); err != nil {
			return nil, err
		}
		return r, nil
	case *k.Tipo == TipoCossinaturas:
		var r CossinaturasRegistro
		if err := lerCanonico(data, &r, func() ([]byte, error) { return r.Bytes() }, "the JSON d6a.cossinaturas record of docs/verificacao.md"); err != nil {
			return nil, err
		}
		return r, nil
	case slices.Contains(tiposEntrada, *k.Tipo):
		var r Entrada
		if err := lerCanonico(data, &r, func() ([]byte, error) { return r.Bytes() }, "the JSON "+*k.Tipo+" record of docs/verificacao.md"); err != nil {
			return nil, err
		}
		return r, nil
	default:
		return nil, NovaFalha("registro.tipo", *k.Tipo, "a kind of record this verifier knows (a draw, "+TipoSemCandidatos+", "+TipoHierarquia+", "+TipoRegrasSorteio+", "+TipoEliminacao+", "+TipoListaSorteio+", "+TipoCompromisso+", "+TipoCossinaturas+" or an input of docs/verificacao.md §0.1)")
	}
}

// tipoCanonico reads a canonical record's kind from its first key: nil for
// a draw; ok false when the record does not start as a canonical one does.
func tipoCanonico(data []byte) (tipo *string, ok bool) {
	const prefixoTipo, prefixoSorteio = `{"tipo":"`, `{"event_id_sorteio":"`
	switch {
	case bytes.HasPrefix(data, []byte(prefixoSorteio)):
		return nil, true
	case bytes.HasPrefix(data, []byte(prefixoTipo)):
		resto := data[len(prefixoTipo):]
		fim := bytes.IndexByte(resto, '"')
		if fim < 0 || bytes.IndexByte(resto[:fim], '\\') >= 0 {
			return nil, false
		}
		t := string(resto[:fim])
		return &t, true
	}
	return nil, false
}

// ConferirRegistravel checks what a record of any kind proves by itself: a
// draw recomputes (Conferir); a sorteio.sem_candidatos's motive follows
// from its counts (spec 4.3 step 5) and its chain starts at the demand's
// unit.
func ConferirRegistravel(f Registravel) error {
	switch r := f.(type) {
	case Registro:
		if r.Partido() {
			// Its list is in the records before it: Listas joins them
			// in log order, then Conferir recomputes the draw.
			return conferirSemLista(r)
		}
		return Conferir(r)
	case SemCandidatos:
		if len(r.Cadeia) == 0 || r.Cadeia[0] != r.UnidadeCivicaID.String() {
			return NovaFalha("registro.cadeia[0]", strings.Join(r.Cadeia, ","), r.UnidadeCivicaID.String()+" (the demand's unit first)")
		}
		if r.Cadastrados < 0 || r.Ocupados < 0 || r.Ocupados > r.Cadastrados {
			return NovaFalha("registro.ocupados", fmt.Sprintf("%d of %d", r.Ocupados, r.Cadastrados), "0 ≤ ocupados ≤ cadastrados")
		}
		if want := elegibilidade.MotivoPorContagem(int(r.Cadastrados), int(r.Ocupados)); r.Motivo != want {
			return NovaFalha("registro.motivo", r.Motivo, want+" (from cadastrados and ocupados, spec 4.3)")
		}
		return nil
	case Entrada:
		return conferirEntrada(r)
	case Hierarquia:
		return conferirHierarquia(r)
	case RegrasSorteio:
		return conferirRegrasSorteio(r)
	case Eliminacao:
		return conferirEliminacao(r)
	case ListaSorteio:
		return conferirListaSorteio(r)
	case Compromisso:
		return conferirCompromisso(r)
	case CossinaturasRegistro:
		if r.EventID != uuid.NewSHA1(nsCossinaturas, []byte(r.Nota())) {
			return NovaFalha("registro.event_id", r.EventID, "the id of the note it holds")
		}
		return nil
	}
	return NovaFalha("registro", fmt.Sprintf("%T", f), "a record of CONTRACT §7")
}

// lerCanonico decodes data into v, refusing unknown keys, and checks that
// bytesDe (v's own encoding, called after the decode: a closure, since a
// method value would copy v before it) gives data back: one record, one
// leaf hash.
func lerCanonico(data []byte, v any, bytesDe func() ([]byte, error), esperado string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return NovaFalha("registro", UmaLinha(err.Error()), esperado)
	}
	canon, err := bytesDe()
	if err != nil {
		return err
	}
	if !bytes.Equal(canon, data) {
		return NovaFalha("registro.canonico", resumo(data), "compact JSON, lowercase UUIDs, keys in their documented order")
	}
	return nil
}

// codificar is a record's canonical encoding: compact UTF-8 JSON, keys in
// the struct's order, no HTML escaping (JSON.stringify writes the same).
func codificar(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
