package registro

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/beacon"
	"github.com/formigueiro/d6a/internal/sorteio"
)

// TipoRegrasSorteio is the record of the draw's rules (CONTRACT §4a): from
// its index on, every draw mixes in its beacon round; it also states where
// the trigger rule (CONTRACT §4) began, so a verifier takes both from the
// log and never from an unsigned route.
const TipoRegrasSorteio = "d6a.regras_sorteio"

// RegrasSorteio is that record. The field order is the key order and must
// not change.
type RegrasSorteio struct {
	Tipo    string    `json:"tipo"`
	EventID uuid.UUID `json:"event_id"`
	// GatilhoDesde is the first index whose draws follow their trigger
	// (base and T exactly the trigger's); it is at most the record's own
	// index.
	GatilhoDesde int64 `json:"gatilho_desde"`
	// Privado: the chain is the service's own beacon, not a public one.
	Privado bool `json:"privado"`
	// Cadeia is the chain's hash (informative), ChavePublica its key (hex),
	// which identifies it.
	Cadeia       string `json:"cadeia"`
	ChavePublica string `json:"chave_publica"`
	Periodo      int64  `json:"periodo"`
	Genesis      int64  `json:"genesis"`
	// MargemMs is D6A_BEACON_MARGEM: the round is the first published
	// strictly later than the commitment time plus it.
	MargemMs int64 `json:"margem_ms"`
	// Testemunhas are the witnesses' verifier keys, Quorum the K of
	// D6A_LOG_QUORUM (0 without witnesses: the commitment time is T).
	Testemunhas []string `json:"testemunhas"`
	Quorum      int64    `json:"quorum"`
}

func (r RegrasSorteio) Chaves() (uuid.UUID, uuid.UUID) { return r.EventID, uuid.Nil }

// Bytes is the canonical encoding, as Registro.Bytes.
func (r RegrasSorteio) Bytes() ([]byte, error) {
	if r.Testemunhas == nil {
		r.Testemunhas = []string{}
	}
	return codificarRapido(r)
}

// nsRegrasSorteio is the namespace of the ids of draw-rule records.
var nsRegrasSorteio = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/formigueiro/d6a/transparencia/regras_sorteio"))

// NovasRegrasSorteio is the record of the beacon rule a start runs with;
// its id is a function of what it states.
func NovasRegrasSorteio(gatilhoDesde int64, privado bool, c beacon.Cadeia, margem time.Duration, testemunhas []string, quorum int) RegrasSorteio {
	r := RegrasSorteio{
		Tipo: TipoRegrasSorteio, GatilhoDesde: gatilhoDesde, Privado: privado, Cadeia: c.Hash,
		ChavePublica: hex.EncodeToString(c.ChavePublica), Periodo: int64(c.Periodo / time.Second), Genesis: c.Genesis,
		MargemMs: margem.Milliseconds(), Testemunhas: append([]string{}, testemunhas...), Quorum: int64(quorum),
	}
	b, _ := r.Bytes()
	r.EventID = uuid.NewSHA1(nsRegrasSorteio, b)
	return r
}

// Mesma tells whether o states the same rule as r (ids aside).
func (r RegrasSorteio) Mesma(o RegrasSorteio) bool {
	r.EventID, o.EventID = uuid.Nil, uuid.Nil
	a, _ := r.Bytes()
	b, _ := o.Bytes()
	return string(a) == string(b)
}

// CadeiaBeacon is the chain the record names.
func (r RegrasSorteio) CadeiaBeacon() (beacon.Cadeia, error) {
	k, err := beacon.ChaveHex(r.ChavePublica)
	if err != nil {
		return beacon.Cadeia{}, err
	}
	return beacon.Cadeia{ChavePublica: k, Periodo: time.Duration(r.Periodo) * time.Second, Genesis: r.Genesis, Hash: r.Cadeia, Esquema: beacon.Esquema}, nil
}

// Margem is the record's margin.
func (r RegrasSorteio) Margem() time.Duration { return time.Duration(r.MargemMs) * time.Millisecond }

// NomeCadeia names the chain for people: quicknet (the League of
// Entropy's, built in), private (the service's own) or another public one.
func (r RegrasSorteio) NomeCadeia() string {
	switch {
	case r.ChavePublica == beacon.QuicknetChave:
		return "quicknet (League of Entropy, https://api.drand.sh/" + beacon.QuicknetHash + ")"
	case r.Privado:
		return "PRIVADO (o beacon do próprio serviço: não é aleatoriedade pública)"
	}
	return "cadeia " + r.Cadeia
}

func conferirRegrasSorteio(r RegrasSorteio) error {
	if _, err := r.CadeiaBeacon(); err != nil {
		return NovaFalha("registro.chave_publica", r.ChavePublica, "a BLS12-381 G2 public key in hex")
	}
	if r.Periodo < 1 {
		return NovaFalha("registro.periodo", r.Periodo, "≥ 1 second")
	}
	if r.MargemMs < 0 {
		return NovaFalha("registro.margem_ms", r.MargemMs, "≥ 0")
	}
	if r.GatilhoDesde < 0 {
		return NovaFalha("registro.gatilho_desde", r.GatilhoDesde, "≥ 0")
	}
	if r.Quorum < 0 || r.Quorum > int64(len(r.Testemunhas)) || (len(r.Testemunhas) > 0 && r.Quorum == 0) {
		return NovaFalha("registro.quorum", r.Quorum, fmt.Sprintf("1 to %d (the witnesses named)", len(r.Testemunhas)))
	}
	if r.Quorum > 0 && r.MargemMs < MargemMinimaTestemunhas.Milliseconds() {
		return NovaFalha("registro.margem_ms", r.MargemMs, "≥ 1000 with witnesses: a cosignature's time is in whole seconds, so C may read up to a second early")
	}
	return nil
}

// MargemMinimaTestemunhas is the least margin a rule with witnesses takes:
// a cosignature's time is in whole seconds, so the witnesses' C may read
// up to a second before they saw the input, and a smaller margin could
// let a round published before that count.
const MargemMinimaTestemunhas = time.Second

// RodadaDevida is the round a commitment time c owes (CONTRACT §4a): the
// first of the chain published strictly later than c + margem. The
// executor draws with it and every verifier checks it, through this one
// function.
func RodadaDevida(cadeia beacon.Cadeia, c time.Time, margem time.Duration) uint64 {
	return cadeia.PrimeiraApos(c.Add(margem))
}

// RegrasEmVigor is the draw rule the records state as a walk through the
// log meets them: the record in force and the first one, whose
// gatilho_desde every later one repeats. The replay and the verifier's
// walk both keep one.
type RegrasEmVigor struct {
	Regras, Primeira *RegrasSorteio
	rodadas          Rodadas
	compromissos     compromissos // with witnesses (compromisso.go)
}

// Aplicar takes the rule record at indice; the error names what it breaks
// (the trigger rule cannot begin after the record that states it, nor move
// once stated). The record is in force either way, as the executor
// appended it.
func (v *RegrasEmVigor) Aplicar(indice int64, f RegrasSorteio) error {
	var err error
	switch {
	case f.GatilhoDesde > indice:
		err = NovaFalha("registro.gatilho_desde", f.GatilhoDesde, fmt.Sprintf("≤ %d: the trigger rule cannot begin after the record that states it", indice))
	case v.Primeira != nil && f.GatilhoDesde != v.Primeira.GatilhoDesde:
		err = NovaFalha("registro.gatilho_desde", f.GatilhoDesde, fmt.Sprintf("%d, as the first d6a.regras_sorteio record (%s) stated", v.Primeira.GatilhoDesde, v.Primeira.EventID))
	}
	if v.Primeira == nil {
		v.Primeira = &f
	}
	v.Regras = &f
	return err
}

// ConferirSorteio checks a draw's beacon round under the rule in force
// (ConferirRodada), each round verified once.
func (v *RegrasEmVigor) ConferirSorteio(r Registro) error {
	if v.Regras != nil && v.Regras.Quorum > 0 && r.Compromisso != "" {
		if err := v.conferirCompromisso(r); err != nil {
			return err
		}
	}
	return ConferirRodada(v.Regras, r, &v.rodadas)
}

// AdiarAssinaturas hands each draw's round signature to adiar instead of
// verifying it here (the verifier's walk batches them: LoteRodadas); the
// other checks of the round stay immediate, and adiar's error is the
// draw's.
func (v *RegrasEmVigor) AdiarAssinaturas(adiar func(chave []byte, n uint64, assinatura []byte) error) {
	v.rodadas.adiar = adiar
}

// ConferirRodada checks a draw's beacon round under the rule in force at
// its index (regras nil: no beacon rule yet): that the record carries a
// round exactly when a rule is in force, that C is T (without witnesses),
// that the round is the first published strictly later than C + margin,
// and that its signature verifies under the rule's key (verificadas
// remembers the rounds already verified, so each is checked once).
func ConferirRodada(regras *RegrasSorteio, r Registro, verificadas *Rodadas) error {
	if regras == nil {
		if r.Rodada != nil || r.AssinaturaRodada != "" || r.Compromisso != "" {
			return NovaFalha("registro.rodada", r.Rodada, "absent: no d6a.regras_sorteio record precedes this draw")
		}
		return nil
	}
	if r.Rodada == nil || r.AssinaturaRodada == "" || r.Compromisso == "" {
		return NovaFalha("registro.rodada", "(absent)", "a beacon round: a d6a.regras_sorteio record precedes this draw")
	}
	cadeia, err := regras.CadeiaBeacon()
	if err != nil {
		return err
	}
	if regras.Quorum == 0 && r.Compromisso != r.Timestamp {
		return NovaFalha("registro.compromisso", r.Compromisso, r.Timestamp+" (T: the rule names no witnesses)")
	}
	c, err := sorteio.ParseTimestamp(r.Compromisso)
	if err != nil {
		return NovaFalha("registro.compromisso", r.Compromisso, "an ISO timestamp in milliseconds")
	}
	if want := RodadaDevida(cadeia, c, regras.Margem()); uint64(*r.Rodada) != want {
		return NovaFalha("registro.rodada", *r.Rodada, fmt.Sprintf("%d (the first round published after compromisso + %d ms)", want, regras.MargemMs))
	}
	return verificadas.Conferir(cadeia.ChavePublica, uint64(*r.Rodada), r.AssinaturaRodada)
}

// Rodadas remembers which rounds verified under which key: at national
// scale many draws share a round, and a pairing check costs about a
// millisecond. Safe for concurrent use.
type Rodadas struct {
	mu sync.Mutex
	ok map[string]bool // key|round|signature
	// adiar, when set, takes each signature instead of a pairing here
	// (RegrasEmVigor.AdiarAssinaturas).
	adiar func(chave []byte, n uint64, assinatura []byte) error
}

// Conferir verifies round n's signature (hex) under chave, once.
func (v *Rodadas) Conferir(chave []byte, n uint64, assinatura string) error {
	k := string(chave) + "|" + strconv.FormatUint(n, 10) + "|" + assinatura
	v.mu.Lock()
	ja := v.ok[k]
	v.mu.Unlock()
	if ja {
		return nil
	}
	sig, err := hex.DecodeString(assinatura)
	if err != nil {
		return NovaFalha("registro.assinatura_rodada", assinatura, "hex")
	}
	if v.adiar != nil {
		return v.adiar(chave, n, sig)
	}
	rnd := sha256.Sum256(sig)
	if err := beacon.Verificar(chave, beacon.Rodada{Numero: n, Assinatura: sig, Randomness: rnd[:]}); err != nil {
		return NovaFalha("registro.assinatura_rodada", UmaLinha(err.Error()), fmt.Sprintf("round %d signed by the chain of the d6a.regras_sorteio record", n))
	}
	v.mu.Lock()
	if v.ok == nil {
		v.ok = map[string]bool{}
	}
	if len(v.ok) > 1<<20 {
		clear(v.ok) // a bound on memory; a round seen again is verified again
	}
	v.ok[k] = true
	v.mu.Unlock()
	return nil
}

// Randomness is the value a record's round signature gives: SHA-256 of its
// bytes, lowercase hex ("" when the record has none or it is not hex).
func Randomness(assinatura string) string {
	sig, err := hex.DecodeString(assinatura)
	if err != nil || assinatura == "" {
		return ""
	}
	h := sha256.Sum256(sig)
	return hex.EncodeToString(h[:])
}
