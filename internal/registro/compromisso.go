package registro

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	fnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"

	"github.com/formigueiro/d6a/internal/sorteio"
)

// With witnesses (a d6a.regras_sorteio record with quorum K > 0) a draw's
// commitment time C is not T, which the bus operator stamps, but the time
// independent witnesses first saw a log holding the trigger (CONTRACT §4a):
// the input's d6a.compromisso record is appended and committed before its
// decision; for each witness w, c_w is the earliest cosignature by w of a
// checkpoint whose size covers that record; C is the K-th smallest c_w.
// The cosigned checkpoints are themselves records (d6a.cossinaturas), so a
// verifier of the log alone recomputes C.

// TipoCompromisso is the record of an input committed before it is
// applied.
const TipoCompromisso = "d6a.compromisso"

// TipoCossinaturas is the record of a checkpoint as the witnesses
// cosigned it.
const TipoCossinaturas = "d6a.cossinaturas"

// Compromisso is that record. The field order is the key order and must
// not change.
type Compromisso struct {
	Tipo string `json:"tipo"`
	// EventID is the record's own id (IDCompromisso of the input's).
	EventID uuid.UUID `json:"event_id"`
	// Gatilho is the input's event_id, GatilhoSequence its stream
	// sequence and Timestamp the time the bus stored it (T).
	Gatilho         uuid.UUID `json:"gatilho"`
	GatilhoSequence int64     `json:"gatilho_sequence"`
	Timestamp       string    `json:"timestamp"`
}

func (r Compromisso) Chaves() (uuid.UUID, uuid.UUID) { return r.EventID, uuid.Nil }

// Bytes is the canonical encoding, as Registro.Bytes.
func (r Compromisso) Bytes() ([]byte, error) { return codificarRapido(r) }

var nsCompromisso = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/formigueiro/d6a/transparencia/compromisso"))

// IDCompromisso is the id of the commitment record of input gatilho: one
// per input, whoever appends it.
func IDCompromisso(gatilho uuid.UUID) uuid.UUID { return uuid.NewSHA1(nsCompromisso, gatilho[:]) }

// NovoCompromisso is the commitment record of an input stored at
// armazenado with stream sequence seq.
func NovoCompromisso(gatilho uuid.UUID, seq int64, armazenado time.Time) Compromisso {
	return Compromisso{Tipo: TipoCompromisso, EventID: IDCompromisso(gatilho), Gatilho: gatilho, GatilhoSequence: seq, Timestamp: sorteio.FormatTimestamp(armazenado)}
}

func conferirCompromisso(r Compromisso) error {
	if r.EventID != IDCompromisso(r.Gatilho) {
		return NovaFalha("registro.event_id", r.EventID, IDCompromisso(r.Gatilho).String()+" (from gatilho)")
	}
	if _, err := sorteio.ParseTimestamp(r.Timestamp); err != nil {
		return NovaFalha("registro.timestamp", r.Timestamp, "an ISO timestamp in milliseconds")
	}
	return nil
}

// CossinaturasRegistro is the record of one checkpoint and its signatures, the
// log's and the witnesses' (the lines of a C2SP signed note, "name
// base64", without the leading "— "). The field order is the key order
// and must not change.
type CossinaturasRegistro struct {
	Tipo    string    `json:"tipo"`
	EventID uuid.UUID `json:"event_id"`
	Origem  string    `json:"origem"`
	Tamanho int64     `json:"tamanho"`
	Hash    string    `json:"hash"`
	// Assinaturas are the note's signature lines.
	Assinaturas []string `json:"assinaturas"`
}

func (r CossinaturasRegistro) Chaves() (uuid.UUID, uuid.UUID) { return r.EventID, uuid.Nil }

// Bytes is the canonical encoding, as Registro.Bytes.
func (r CossinaturasRegistro) Bytes() ([]byte, error) {
	if r.Assinaturas == nil {
		r.Assinaturas = []string{}
	}
	return codificarRapido(r)
}

var nsCossinaturas = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/formigueiro/d6a/transparencia/cossinaturas"))

// NovasCossinaturas is the record of a cosigned checkpoint note (the log's
// checkpoint with the witnesses' lines appended); its id is a function of
// the note, so the same note is one record.
func NovasCossinaturas(nota string) (CossinaturasRegistro, error) {
	texto, assinaturas, ok := strings.Cut(nota, "\n\n")
	if !ok {
		return CossinaturasRegistro{}, errors.New("checkpoint note without signatures")
	}
	c, err := LerCheckpoint(texto + "\n")
	if err != nil {
		return CossinaturasRegistro{}, err
	}
	r := CossinaturasRegistro{Tipo: TipoCossinaturas, Origem: c.Origem, Tamanho: c.Tamanho, Hash: base64.StdEncoding.EncodeToString(c.Raiz[:])}
	for _, l := range strings.Split(strings.TrimSuffix(assinaturas, "\n"), "\n") {
		r.Assinaturas = append(r.Assinaturas, strings.TrimPrefix(l, "— "))
	}
	slices.Sort(r.Assinaturas)
	r.Assinaturas = slices.Compact(r.Assinaturas)
	r.EventID = uuid.NewSHA1(nsCossinaturas, []byte(r.Nota()))
	return r, nil
}

// Nota is the signed note the record holds.
func (r CossinaturasRegistro) Nota() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%d\n%s\n\n", r.Origem, r.Tamanho, r.Hash)
	for _, l := range r.Assinaturas {
		b.WriteString("— " + l + "\n")
	}
	return b.String()
}

// Cossinadas opens the record's note with the witnesses' keys and gives
// each valid cosignature (the log's own line is the walk's to check
// against the tree). A line of a named witness that does not verify fails
// the record.
func (r CossinaturasRegistro) Cossinadas(testemunhas []string) ([]Cossinatura, error) {
	var vs []note.Verifier
	chaves := map[string]string{}
	for _, k := range testemunhas {
		v, err := VerificadorTestemunha(k)
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
		chaves[v.Name()+"+"+strconv.FormatUint(uint64(v.KeyHash()), 16)] = k
	}
	n, err := note.Open([]byte(r.Nota()), note.VerifierList(vs...))
	if err != nil {
		return nil, NovaFalha("registro.assinaturas", UmaLinha(err.Error()), "cosignatures that verify under the witnesses of the d6a.regras_sorteio record")
	}
	var cs []Cossinatura
	for _, s := range n.Sigs {
		em, err := fnote.CoSigV1Timestamp(s)
		if err != nil {
			return nil, NovaFalha("registro.assinaturas", s.Name, "a cosignature/v1 with its time")
		}
		cs = append(cs, Cossinatura{Testemunha: s.Name, Chave: chaves[s.Name+"+"+strconv.FormatUint(uint64(s.Hash), 16)], Linha: "— " + s.Name + " " + s.Base64 + "\n", Em: em.UTC()})
	}
	return cs, nil
}

// CossinadaEm is a witness's cosignature of a checkpoint of Tamanho, at Em.
type CossinadaEm struct {
	Chave   string
	Tamanho int64
	Em      time.Time
}

// CossinadasEm is what C is computed from (CompromissoTestemunhado): each
// valid cosignature of the record's checkpoint, with its size.
func (r CossinaturasRegistro) CossinadasEm(testemunhas []string) ([]CossinadaEm, error) {
	cs, err := r.Cossinadas(testemunhas)
	if err != nil {
		return nil, err
	}
	em := make([]CossinadaEm, 0, len(cs))
	for _, c := range cs {
		em = append(em, CossinadaEm{Chave: c.Chave, Tamanho: r.Tamanho, Em: c.Em})
	}
	return em, nil
}

// PrimeirasCossinaturas gives, for each witness key in testemunhas, its
// earliest cosignature among cs of a checkpoint covering record indice
// (Tamanho > indice): the c_w of CONTRACT §4a, with the checkpoint that
// holds it.
func PrimeirasCossinaturas(indice int64, testemunhas []string, cs []CossinadaEm) map[string]CossinadaEm {
	primeira := map[string]CossinadaEm{}
	for _, c := range cs {
		if c.Tamanho <= indice || !slices.Contains(testemunhas, c.Chave) {
			continue
		}
		if p, ok := primeira[c.Chave]; !ok || c.Em.Before(p.Em) {
			primeira[c.Chave] = c
		}
	}
	return primeira
}

// CompromissoTestemunhado is C for the input whose commitment record is
// at indice: the quorum-th smallest of the witnesses' first cosignatures
// covering it (PrimeirasCossinaturas). ok is false while fewer than quorum
// witnesses have cosigned one. The executor decides with it and every
// verifier checks it, through this one function.
func CompromissoTestemunhado(indice int64, quorum int, testemunhas []string, cs []CossinadaEm) (time.Time, bool) {
	primeira := PrimeirasCossinaturas(indice, testemunhas, cs)
	if quorum < 1 || len(primeira) < quorum {
		return time.Time{}, false
	}
	ts := make([]time.Time, 0, len(primeira))
	for _, c := range primeira {
		ts = append(ts, c.Em)
	}
	slices.SortFunc(ts, time.Time.Compare)
	return ts[quorum-1], true
}

// compromissos is what a walk through the log keeps of the commitments
// for the draws after them: each input's commitment record, and the
// witnesses' cosignatures recorded so far. Both are bounded: a draw comes
// within seconds of its commitment.
type compromissos struct {
	indices map[uuid.UUID]compromissoVisto
	ordem   []uuid.UUID
	cs      []CossinadaEm
}

type compromissoVisto struct {
	indice    int64
	timestamp string
}

// maxCompromissos bounds what a walk holds: the commitments of inputs that
// never drew, and cosignatures long past, are forgotten first.
const maxCompromissos = 1 << 18

func (c *compromissos) anotar(indice int64, r Compromisso) {
	if c.indices == nil {
		c.indices = map[uuid.UUID]compromissoVisto{}
	}
	if _, ok := c.indices[r.Gatilho]; ok {
		return // the first one counts
	}
	c.indices[r.Gatilho] = compromissoVisto{indice, r.Timestamp}
	c.ordem = append(c.ordem, r.Gatilho)
	if len(c.ordem) > maxCompromissos {
		delete(c.indices, c.ordem[0])
		c.ordem = c.ordem[1:]
	}
}

func (c *compromissos) cossinar(cs []CossinadaEm) {
	c.cs = append(c.cs, cs...)
	if len(c.cs) > maxCompromissos {
		c.cs = c.cs[len(c.cs)-maxCompromissos/2:]
	}
}

// Anotar takes a commitment or a cosigned checkpoint at indice, for the
// draws after it; other records are not its concern.
func (v *RegrasEmVigor) Anotar(indice int64, f Registravel) error {
	switch r := f.(type) {
	case Compromisso:
		v.compromissos.anotar(indice, r)
	case CossinaturasRegistro:
		if r.Tamanho > indice {
			return NovaFalha("registro.tamanho", r.Tamanho, fmt.Sprintf("≤ %d: a checkpoint cannot cover records appended after it is recorded", indice))
		}
		if v.Regras == nil || v.Regras.Quorum == 0 {
			return nil // no rule uses them
		}
		em, err := r.CossinadasEm(v.Regras.Testemunhas)
		if err != nil {
			return err
		}
		v.compromissos.cossinar(em)
	}
	return nil
}

// conferirCompromisso checks a draw's C under a rule with witnesses: its
// trigger's commitment record precedes it with the same T, and C is the
// quorum-th earliest first cosignature covering that record among the
// cosignatures recorded before the draw.
func (v *RegrasEmVigor) conferirCompromisso(r Registro) error {
	g, err := uuid.Parse(r.Base)
	if err != nil {
		return NovaFalha("registro.base", r.Base, "the trigger's event_id")
	}
	visto, ok := v.compromissos.indices[g]
	if !ok {
		return NovaFalha("registro.compromisso", r.Compromisso, "a "+TipoCompromisso+" record of the trigger "+r.Base+" before the draw (the rule names witnesses)")
	}
	if visto.timestamp != r.Timestamp {
		return NovaFalha("registro.timestamp", r.Timestamp, visto.timestamp+" (the trigger's "+TipoCompromisso+" record)")
	}
	c, ok := CompromissoTestemunhado(visto.indice, int(v.Regras.Quorum), v.Regras.Testemunhas, v.compromissos.cs)
	if !ok {
		return NovaFalha("registro.compromisso", r.Compromisso, fmt.Sprintf("cosignatures by %d of the rule's witnesses of a checkpoint covering record %d, recorded before the draw", v.Regras.Quorum, visto.indice))
	}
	if want := sorteio.FormatTimestamp(c); r.Compromisso != want {
		return NovaFalha("registro.compromisso", r.Compromisso, want+fmt.Sprintf(" (the %d-th earliest witness cosignature covering record %d)", v.Regras.Quorum, visto.indice))
	}
	return nil
}

// EstadoCompromissos is what a saved walk keeps of the commitments, so a
// monitor's next run checks a draw whose commitment came before it (at
// most maxEstadoCompromissos of each, the latest).
type EstadoCompromissos struct {
	Compromissos []EstadoCompromisso `json:"compromissos"`
	Cossinaturas []CossinadaEm       `json:"cossinaturas"`
}

// EstadoCompromisso is one input's commitment record.
type EstadoCompromisso struct {
	Gatilho   uuid.UUID `json:"gatilho"`
	Indice    int64     `json:"indice"`
	Timestamp string    `json:"timestamp"`
}

const maxEstadoCompromissos = 1 << 16

// EstadoCompromissos saves what Anotar kept (nil: nothing).
func (v *RegrasEmVigor) EstadoCompromissos() *EstadoCompromissos {
	c := &v.compromissos
	if len(c.ordem) == 0 && len(c.cs) == 0 {
		return nil
	}
	e := &EstadoCompromissos{}
	for _, g := range c.ordem[max(0, len(c.ordem)-maxEstadoCompromissos):] {
		x := c.indices[g]
		e.Compromissos = append(e.Compromissos, EstadoCompromisso{Gatilho: g, Indice: x.indice, Timestamp: x.timestamp})
	}
	e.Cossinaturas = append(e.Cossinaturas, c.cs[max(0, len(c.cs)-maxEstadoCompromissos):]...)
	return e
}

// RestaurarCompromissos takes back what EstadoCompromissos saved.
func (v *RegrasEmVigor) RestaurarCompromissos(e *EstadoCompromissos) {
	if e == nil {
		return
	}
	for _, x := range e.Compromissos {
		v.compromissos.anotar(x.Indice, Compromisso{Gatilho: x.Gatilho, Timestamp: x.Timestamp})
	}
	v.compromissos.cossinar(e.Cossinaturas)
}
