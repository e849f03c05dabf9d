package registro

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
)

// TipoListaSorteio is the record that carries one part of a long draw's
// eligible list (CONTRACT §7, docs/verificacao.md): a C2SP entry holds at
// most 65,535 bytes, and a draw record with both lists inline takes about
// 78 bytes per counsellor, so a draw among more than ElegiveisEmLinha
// counsellors is written as its list records, in order, right before a
// draw record whose elegiveis_entrada and ordenados are empty. ordenados
// is not stored at all: anyone recomputes it from the seed and the list,
// and lista_elegiveis_hash still commits to it.
const TipoListaSorteio = "d6a.lista_sorteio"

// LimiteRegistro is the largest record a leaf can hold: a C2SP entry
// bundle writes each entry's length as a uint16.
const LimiteRegistro = 0xFFFF

// ElegiveisEmLinha is the longest list a draw record still carries inline,
// both lists as ever (400 × 78 bytes is about 31 KB): the draws of every
// log written before list records keep their single record.
const ElegiveisEmLinha = 400

// ElegiveisPorParte is how many ids a list record holds: 1,500 × 39 bytes
// is about 58.5 KB, under LimiteRegistro with the record's other keys.
const ElegiveisPorParte = 1500

// ListaSorteio is one part of a draw's elegiveis_entrada. The field order
// is the key order and must not change.
type ListaSorteio struct {
	Tipo string `json:"tipo"`
	// EventID is the record's own id, a function of the draw's id and the
	// part (IDListaSorteio): each leaf has its own id in the log.
	EventID        uuid.UUID `json:"event_id"`
	EventIDSorteio uuid.UUID `json:"event_id_sorteio"`
	// Parte counts from 0; Partes is how many list records the draw has.
	Parte     int64    `json:"parte"`
	Partes    int64    `json:"partes"`
	Elegiveis []string `json:"elegiveis"`
}

// Chaves: no demand, so a demand's draws (GET /sorteios?demanda_id) stay
// its decisions.
func (r ListaSorteio) Chaves() (uuid.UUID, uuid.UUID) { return r.EventID, uuid.Nil }

// Bytes is the canonical encoding, as Registro.Bytes.
func (r ListaSorteio) Bytes() ([]byte, error) {
	if r.Elegiveis == nil {
		r.Elegiveis = []string{}
	}
	return codificarRapido(r)
}

// nsListaSorteio is the namespace of the ids of list records.
var nsListaSorteio = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/formigueiro/d6a/transparencia/lista_sorteio"))

// IDListaSorteio is the id of part parte of the draw's list.
func IDListaSorteio(sorteio uuid.UUID, parte int64) uuid.UUID {
	var b [24]byte
	copy(b[:16], sorteio[:])
	binary.BigEndian.PutUint64(b[16:], uint64(parte))
	return uuid.NewSHA1(nsListaSorteio, b[:])
}

// Partido tells whether the draw's lists are carried by list records (a
// draw always has at least its winner in the list, so an empty one is
// never a draw's own).
func (r Registro) Partido() bool { return len(r.ElegiveisEntrada) == 0 }

// Partir is what the executor appends for a draw: the record itself when
// its list has at most ElegiveisEmLinha ids; else its list records, then
// the draw with both lists empty.
func Partir(r Registro) []Registravel {
	n := len(r.ElegiveisEntrada)
	if n <= ElegiveisEmLinha {
		return []Registravel{r}
	}
	partes := int64((n + ElegiveisPorParte - 1) / ElegiveisPorParte)
	out := make([]Registravel, 0, partes+1)
	for p := range partes {
		ini := int(p) * ElegiveisPorParte
		out = append(out, ListaSorteio{
			Tipo: TipoListaSorteio, EventID: IDListaSorteio(r.EventIDSorteio, p), EventIDSorteio: r.EventIDSorteio,
			Parte: p, Partes: partes, Elegiveis: r.ElegiveisEntrada[ini:min(ini+ElegiveisPorParte, n)],
		})
	}
	r.ElegiveisEntrada, r.Ordenados = []string{}, []string{}
	return append(out, r)
}

// Juntar is a draw carried apart with its list restored from its list
// records (in log order, all of them): the record Conferir recomputes.
// Ordenados stays nil: Conferir then checks lista_elegiveis_hash, which
// commits to it. The parts must be exactly what Partir writes.
func Juntar(r Registro, partes []ListaSorteio) (Registro, error) {
	if !r.Partido() {
		return r, nil
	}
	if len(r.Ordenados) > 0 {
		return r, NovaFalha("registro.ordenados", len(r.Ordenados), "empty, as elegiveis_entrada (the list is in d6a.lista_sorteio records)")
	}
	if len(partes) == 0 {
		return r, NovaFalha("registro.elegiveis_entrada", "[]", "the list, in the d6a.lista_sorteio records right before the draw")
	}
	var lista []string
	for i, p := range partes {
		switch {
		case p.EventIDSorteio != r.EventIDSorteio:
			return r, NovaFalha("lista_sorteio.event_id_sorteio", p.EventIDSorteio, r.EventIDSorteio.String()+" (the draw after its list records)")
		case p.Parte != int64(i) || p.Partes != int64(len(partes)):
			return r, NovaFalha("lista_sorteio.parte", fmt.Sprintf("%d of %d", p.Parte, p.Partes), fmt.Sprintf("%d of %d (the parts in order, right before the draw)", i, len(partes)))
		case i < len(partes)-1 && len(p.Elegiveis) != ElegiveisPorParte:
			return r, NovaFalha("lista_sorteio.elegiveis", len(p.Elegiveis), fmt.Sprintf("%d ids (every part but the last is full)", ElegiveisPorParte))
		}
		lista = append(lista, p.Elegiveis...)
	}
	if len(lista) <= ElegiveisEmLinha {
		return r, NovaFalha("lista_sorteio.elegiveis", len(lista), fmt.Sprintf("more than %d ids (a shorter list is carried in the draw record)", ElegiveisEmLinha))
	}
	r.ElegiveisEntrada, r.Ordenados = lista, nil
	return r, nil
}

func conferirListaSorteio(r ListaSorteio) error {
	switch {
	case r.EventID != IDListaSorteio(r.EventIDSorteio, r.Parte):
		return NovaFalha("registro.event_id", r.EventID, IDListaSorteio(r.EventIDSorteio, r.Parte).String()+" (from event_id_sorteio and parte)")
	case r.Partes < 1 || r.Parte < 0 || r.Parte >= r.Partes:
		return NovaFalha("registro.parte", fmt.Sprintf("%d of %d", r.Parte, r.Partes), "0 ≤ parte < partes")
	case len(r.Elegiveis) == 0 || len(r.Elegiveis) > ElegiveisPorParte:
		return NovaFalha("registro.elegiveis", len(r.Elegiveis), fmt.Sprintf("1 to %d ids", ElegiveisPorParte))
	}
	for i, id := range r.Elegiveis {
		if u, err := uuid.Parse(id); err != nil || u.String() != id {
			return NovaFalha(fmt.Sprintf("registro.elegiveis[%d]", i), id, "a lowercase UUID")
		}
		if i > 0 && r.Elegiveis[i-1] >= id {
			return NovaFalha(fmt.Sprintf("registro.elegiveis[%d]", i), id, "an id above "+r.Elegiveis[i-1]+" (strictly ascending)")
		}
	}
	return nil
}

// conferirSemLista is what a draw carried apart proves by itself, before
// its list records are joined to it (Juntar, then Conferir).
func conferirSemLista(r Registro) error {
	if len(r.Ordenados) > 0 {
		return NovaFalha("registro.ordenados", len(r.Ordenados), "empty, as elegiveis_entrada (the list is in d6a.lista_sorteio records)")
	}
	if len(r.Cadeia) == 0 || r.Cadeia[0] != r.UnidadeCivicaID.String() {
		return NovaFalha("registro.cadeia[0]", strings.Join(r.Cadeia, ","), r.UnidadeCivicaID.String()+" (the demand's unit first)")
	}
	return nil
}

// ErrListaEliminada: a draw's list cannot be joined because a record just
// before it was eliminated (spec 2.2): the draw is checked without its list,
// as an eliminated record is not checked at all.
var ErrListaEliminada = errors.New("registro: a list record of the draw was eliminated")

// Listas gathers, in log order, the list records before a draw carried
// apart; the walk, the replay and the page give it every record.
type Listas struct {
	partes []ListaSorteio
	// eliminada: a record since the first part was eliminated.
	eliminada bool
}

// Aplicar takes the next record (nil: eliminated). For a draw carried
// apart it returns the draw with its list joined (Juntar); any other
// record comes back as it is. err names list records not followed by
// their draw, or a draw whose list cannot be joined (ErrListaEliminada
// when a record before it was eliminated).
func (l *Listas) Aplicar(f Registravel) (Registravel, error) {
	switch r := f.(type) {
	case nil:
		l.eliminada = true
		return nil, nil
	case ListaSorteio:
		var err error
		if r.Parte == 0 {
			err = l.sobra()
			l.partes, l.eliminada = l.partes[:0], false
		}
		l.partes = append(l.partes, r)
		return r, err
	case Registro:
		if !r.Partido() {
			break
		}
		defer l.limpar()
		if l.eliminada {
			return r, ErrListaEliminada
		}
		return Juntar(r, l.partes)
	}
	err := l.sobra()
	l.limpar()
	return f, err
}

func (l *Listas) limpar() { l.partes, l.eliminada = l.partes[:0], false }

// sobra is the failure of list records left without their draw.
func (l *Listas) sobra() error {
	if len(l.partes) == 0 {
		return nil
	}
	return NovaFalha("lista_sorteio", l.partes[0].EventIDSorteio, "its draw right after its list records")
}

// Pendente is the failure of list records at the end of the records read.
func (l *Listas) Pendente() error { return l.sobra() }
