package registro

// The canonical form without encoding/json's reflection (issue 39): at ten
// million records, decoding each record and encoding it again to prove it
// canonical was most of the verifier's CPU. lerRapido parses a record with
// a scanner of the few shapes records have, encodes the value again with a
// hand-written encoder (acrescentar*, equal to codificar: the differential
// tests in canonico_test.go), and accepts the bytes only when they come
// back identical, as lerCanonico does. Anything the fast path does not
// know (an escape in a string, an unknown key, a value of another shape,
// bytes that differ) goes to lerCanonico, which accepts or names the
// failure exactly as before: the fast path never accepts what the slow
// one refuses, it only answers sooner for the bytes it would accept.

import (
	"bytes"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/google/uuid"
)

// bufCanonico holds the buffers lerRapido encodes into.
var bufCanonico = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// lerRapido is LerRegistravel's fast path: ok false sends data to the slow
// one.
func lerRapido(data []byte) (r Registravel, ok bool) {
	t, canonico := tipoCanonico(data)
	if !canonico {
		return nil, false
	}
	p := bufCanonico.Get().(*[]byte)
	defer bufCanonico.Put(p)
	buf := (*p)[:0]
	switch {
	case t == nil:
		var v Registro
		if !lerObjeto(data, v.campo) {
			return nil, false
		}
		buf, ok = v.acrescentar(buf)
		r = v
	case *t == TipoSemCandidatos:
		var v SemCandidatos
		if !lerObjeto(data, v.campo) {
			return nil, false
		}
		buf, ok = v.acrescentar(buf)
		r = v
	case *t == TipoHierarquia:
		var v Hierarquia
		if !lerObjeto(data, v.campo) {
			return nil, false
		}
		buf, ok = v.acrescentar(buf)
		r = v
	case slices.Contains(tiposEntrada, *t):
		var v Entrada
		if !lerObjeto(data, v.campo) {
			return nil, false
		}
		buf, ok = v.acrescentar(buf)
		r = v
	case *t == TipoRegrasSorteio:
		var v RegrasSorteio
		if !lerObjeto(data, v.campo) {
			return nil, false
		}
		buf, ok = v.acrescentar(buf)
		r = v
	case *t == TipoEliminacao:
		var v Eliminacao
		if !lerObjeto(data, v.campo) {
			return nil, false
		}
		buf, ok = v.acrescentar(buf)
		r = v
	case *t == TipoListaSorteio:
		var v ListaSorteio
		if !lerObjeto(data, v.campo) {
			return nil, false
		}
		buf, ok = v.acrescentar(buf)
		r = v
	case *t == TipoCompromisso:
		var v Compromisso
		if !lerObjeto(data, v.campo) {
			return nil, false
		}
		buf, ok = v.acrescentar(buf)
		r = v
	case *t == TipoCossinaturas:
		var v CossinaturasRegistro
		if !lerObjeto(data, v.campo) {
			return nil, false
		}
		buf, ok = v.acrescentar(buf)
		r = v
	default:
		return nil, false
	}
	*p = buf
	if !ok || !bytes.Equal(buf, data) {
		return nil, false
	}
	return r, true
}

// codificarRapido is Bytes through the hand-written encoder, codificar
// where that one declines (a string it would have to escape).
func codificarRapido(v interface {
	acrescentar([]byte) ([]byte, bool)
}) ([]byte, error) {
	if b, ok := v.acrescentar(make([]byte, 0, 1024)); ok {
		return b, nil
	}
	return codificar(v)
}

// scanner is the fast path's reader of one compact JSON object.
type scanner struct {
	b []byte
	i int
}

// lerObjeto reads data as one JSON object with nothing after it, giving
// each key to campo to read its value; false when any of it is not what
// the fast path reads.
func lerObjeto(data []byte, campo func(s *scanner, chave []byte) bool) bool {
	s := &scanner{b: data}
	if !s.byte('{') {
		return false
	}
	if s.byte('}') {
		return s.i == len(s.b)
	}
	for {
		k, ok := s.str()
		if !ok || !s.byte(':') || !campo(s, k) {
			return false
		}
		if s.byte(',') {
			continue
		}
		return s.byte('}') && s.i == len(s.b)
	}
}

func (s *scanner) byte(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) literal(l string) bool {
	if len(s.b)-s.i >= len(l) && string(s.b[s.i:s.i+len(l)]) == l {
		s.i += len(l)
		return true
	}
	return false
}

// str reads a string without escapes (one with any goes to the slow path).
func (s *scanner) str() ([]byte, bool) {
	if !s.byte('"') {
		return nil, false
	}
	fim := bytes.IndexByte(s.b[s.i:], '"')
	if fim < 0 {
		return nil, false
	}
	v := s.b[s.i : s.i+fim]
	if bytes.IndexByte(v, '\\') >= 0 {
		return nil, false
	}
	s.i += fim + 1
	return v, true
}

func (s *scanner) texto(dst *string) bool {
	v, ok := s.str()
	*dst = string(v)
	return ok
}

func (s *scanner) id(dst *uuid.UUID) bool {
	v, ok := s.str()
	if !ok {
		return false
	}
	u, err := uuid.ParseBytes(v)
	*dst = u
	return err == nil
}

func (s *scanner) idOuNulo(dst **uuid.UUID) bool {
	if s.literal("null") {
		*dst = nil
		return true
	}
	var u uuid.UUID
	if !s.id(&u) {
		return false
	}
	*dst = &u
	return true
}

func (s *scanner) inteiro(dst *int64) bool {
	ini := s.i
	s.byte('-')
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	if s.i == ini || s.i-ini > 19 {
		return false
	}
	n, err := strconv.ParseInt(string(s.b[ini:s.i]), 10, 64)
	*dst = n
	return err == nil
}

func (s *scanner) inteiroOuNulo(dst **int64) bool {
	if s.literal("null") {
		*dst = nil
		return true
	}
	var n int64
	if !s.inteiro(&n) {
		return false
	}
	*dst = &n
	return true
}

func (s *scanner) boolOuNulo(dst **bool) bool {
	var v bool
	switch {
	case s.literal("null"):
		*dst = nil
		return true
	case s.literal("true"):
		v = true
	case s.literal("false"):
	default:
		return false
	}
	*dst = &v
	return true
}

// lista reads an array, each element by elem; an empty one is non-nil, as
// encoding/json decodes it.
func lista[T any](s *scanner, dst *[]T, elem func(*T) bool) bool {
	if s.literal("null") {
		*dst = nil
		return true
	}
	if !s.byte('[') {
		return false
	}
	out := make([]T, 0, 8)
	if !s.byte(']') {
		for {
			var v T
			if !elem(&v) {
				return false
			}
			out = append(out, v)
			if s.byte(',') {
				continue
			}
			if !s.byte(']') {
				return false
			}
			break
		}
	}
	*dst = out
	return true
}

func (v *Registro) campo(s *scanner, k []byte) bool {
	switch string(k) {
	case "event_id_sorteio":
		return s.id(&v.EventIDSorteio)
	case "demanda_id":
		return s.id(&v.DemandaID)
	case "unidade_civica_id":
		return s.id(&v.UnidadeCivicaID)
	case "conselheiro_id":
		return s.id(&v.ConselheiroID)
	case "base":
		return s.texto(&v.Base)
	case "base_sequence":
		return s.inteiroOuNulo(&v.BaseSequence)
	case "timestamp":
		return s.texto(&v.Timestamp)
	case "rodada":
		return s.inteiroOuNulo(&v.Rodada)
	case "assinatura_rodada":
		return s.texto(&v.AssinaturaRodada)
	case "compromisso":
		return s.texto(&v.Compromisso)
	case "seed":
		return s.texto(&v.Seed)
	case "elegiveis_entrada":
		return lista(s, &v.ElegiveisEntrada, s.texto)
	case "ordenados":
		return lista(s, &v.Ordenados, s.texto)
	case "lista_elegiveis_hash":
		return s.texto(&v.ListaElegiveisHash)
	case "degrau":
		return s.id(&v.Degrau)
	case "cadeia":
		return lista(s, &v.Cadeia, s.texto)
	case "excluido":
		return s.idOuNulo(&v.Excluido)
	}
	return false
}

func (v *SemCandidatos) campo(s *scanner, k []byte) bool {
	switch string(k) {
	case "tipo":
		return s.texto(&v.Tipo)
	case "event_id":
		return s.id(&v.EventID)
	case "demanda_id":
		return s.id(&v.DemandaID)
	case "unidade_civica_id":
		return s.id(&v.UnidadeCivicaID)
	case "gatilho_sequence":
		return s.inteiroOuNulo(&v.GatilhoSequence)
	case "timestamp":
		return s.texto(&v.Timestamp)
	case "motivo":
		return s.texto(&v.Motivo)
	case "cadeia":
		return lista(s, &v.Cadeia, s.texto)
	case "cadastrados":
		return s.inteiro(&v.Cadastrados)
	case "ocupados":
		return s.inteiro(&v.Ocupados)
	case "excluido":
		return s.idOuNulo(&v.Excluido)
	}
	return false
}

func (v *Hierarquia) campo(s *scanner, k []byte) bool {
	switch string(k) {
	case "tipo":
		return s.texto(&v.Tipo)
	case "event_id":
		return s.id(&v.EventID)
	case "gatilho_sequence":
		return s.inteiroOuNulo(&v.GatilhoSequence)
	case "unidade_civica_id":
		return s.id(&v.UnidadeCivicaID)
	case "parent_uc_id":
		return s.idOuNulo(&v.ParentUcID)
	case "nivel":
		return s.inteiro(&v.Nivel)
	}
	return false
}

func (v *Entrada) campo(s *scanner, k []byte) bool {
	switch string(k) {
	case "tipo":
		return s.texto(&v.Tipo)
	case "event_id":
		return s.id(&v.EventID)
	case "gatilho_sequence":
		return s.inteiroOuNulo(&v.GatilhoSequence)
	case "conselheiro_id":
		return s.idOuNulo(&v.ConselheiroID)
	case "unidade_civica_id":
		return s.idOuNulo(&v.UnidadeCivicaID)
	case "nivel_atuacao":
		return s.inteiroOuNulo(&v.NivelAtuacao)
	case "status":
		return s.texto(&v.Status)
	case "capacitacao_concluida":
		return s.boolOuNulo(&v.CapacitacaoConcluida)
	case "demanda_id":
		return s.idOuNulo(&v.DemandaID)
	case "removidas":
		return lista(s, &v.Removidas, s.id)
	case "data_suspensao_ate":
		return s.texto(&v.DataSuspensaoAte)
	case "conferivel_publicamente":
		return s.boolOuNulo(&v.ConferivelPublicamente)
	case "acao":
		return s.texto(&v.Acao)
	case "curso_id":
		return s.texto(&v.CursoID)
	case "valido":
		return s.boolOuNulo(&v.Valido)
	case "versao_parametros":
		return s.texto(&v.VersaoParametros)
	case "capacitacao_externa":
		return s.boolOuNulo(&v.CapacitacaoExterna)
	case "exigir_vinculo":
		return s.boolOuNulo(&v.ExigirVinculo)
	}
	return false
}

// The encoder: what codificar writes, field by field in the struct's
// order. ok false when a string holds what encoding/json escapes (a quote,
// a backslash, a control character, invalid UTF-8, U+2028 or U+2029).

// enc appends a record's keys, keeping the first refusal.
type enc struct {
	b        []byte
	ok       bool
	primeira bool
}

func novoEnc(b []byte) enc { return enc{b: append(b, '{'), ok: true, primeira: true} }

func (e *enc) chave(k string) {
	if !e.primeira {
		e.b = append(e.b, ',')
	}
	e.primeira = false
	e.b = append(e.b, '"')
	e.b = append(e.b, k...)
	e.b = append(e.b, '"', ':')
}

func (e *enc) texto(k, v string) {
	e.chave(k)
	e.valorTexto(v)
}

func (e *enc) valorTexto(v string) {
	for i := 0; i < len(v); {
		c := v[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == '"' || c == '\\' {
				e.ok = false
				return
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(v[i:])
		if r == utf8.RuneError && n == 1 || r == '\u2028' || r == '\u2029' {
			e.ok = false
			return
		}
		i += n
	}
	e.b = append(e.b, '"')
	e.b = append(e.b, v...)
	e.b = append(e.b, '"')
}

func (e *enc) valorID(u uuid.UUID) {
	e.b = append(e.b, '"')
	var s [36]byte
	uuidEmTexto(&s, u)
	e.b = append(e.b, s[:]...)
	e.b = append(e.b, '"')
}

// uuidEmTexto is uuid.UUID.String without its allocation.
func uuidEmTexto(dst *[36]byte, u uuid.UUID) {
	const hexa = "0123456789abcdef"
	j := 0
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst[j] = '-'
			j++
		}
		dst[j], dst[j+1] = hexa[c>>4], hexa[c&0xf]
		j += 2
	}
}

func (e *enc) id(k string, u uuid.UUID) {
	e.chave(k)
	e.valorID(u)
}

func (e *enc) idOuNulo(k string, u *uuid.UUID) {
	e.chave(k)
	if u == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.valorID(*u)
}

func (e *enc) inteiro(k string, n int64) {
	e.chave(k)
	e.b = strconv.AppendInt(e.b, n, 10)
}

func (e *enc) inteiroOuNulo(k string, n *int64) {
	e.chave(k)
	if n == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.b = strconv.AppendInt(e.b, *n, 10)
}

func (e *enc) textos(k string, vs []string) {
	e.chave(k)
	if vs == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.b = append(e.b, '[')
	for i, v := range vs {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.valorTexto(v)
	}
	e.b = append(e.b, ']')
}

// The omitempty keys of Entrada.
func (e *enc) talvezTexto(k, v string) {
	if v != "" {
		e.texto(k, v)
	}
}

func (e *enc) talvezID(k string, u *uuid.UUID) {
	if u != nil {
		e.idOuNulo(k, u)
	}
}

func (e *enc) talvezInteiro(k string, n *int64) {
	if n != nil {
		e.inteiroOuNulo(k, n)
	}
}

func (e *enc) talvezBool(k string, v *bool) {
	if v != nil {
		e.chave(k)
		e.b = strconv.AppendBool(e.b, *v)
	}
}

func (e *enc) fim() ([]byte, bool) {
	e.b = append(e.b, '}')
	return e.b, e.ok
}

func (r Registro) acrescentar(b []byte) ([]byte, bool) {
	vazia := func(v []string) []string {
		if v == nil {
			return []string{}
		}
		return v
	}
	e := novoEnc(b)
	e.id("event_id_sorteio", r.EventIDSorteio)
	e.id("demanda_id", r.DemandaID)
	e.id("unidade_civica_id", r.UnidadeCivicaID)
	e.id("conselheiro_id", r.ConselheiroID)
	e.texto("base", r.Base)
	e.inteiroOuNulo("base_sequence", r.BaseSequence)
	e.texto("timestamp", r.Timestamp)
	if r.Rodada != nil {
		e.inteiro("rodada", *r.Rodada)
	}
	e.talvezTexto("assinatura_rodada", r.AssinaturaRodada)
	e.talvezTexto("compromisso", r.Compromisso)
	e.texto("seed", r.Seed)
	e.textos("elegiveis_entrada", vazia(r.ElegiveisEntrada))
	e.textos("ordenados", vazia(r.Ordenados))
	e.texto("lista_elegiveis_hash", r.ListaElegiveisHash)
	e.id("degrau", r.Degrau)
	e.textos("cadeia", vazia(r.Cadeia))
	e.idOuNulo("excluido", r.Excluido)
	return e.fim()
}

func (r SemCandidatos) acrescentar(b []byte) ([]byte, bool) {
	e := novoEnc(b)
	e.texto("tipo", r.Tipo)
	e.id("event_id", r.EventID)
	e.id("demanda_id", r.DemandaID)
	e.id("unidade_civica_id", r.UnidadeCivicaID)
	e.inteiroOuNulo("gatilho_sequence", r.GatilhoSequence)
	e.texto("timestamp", r.Timestamp)
	e.texto("motivo", r.Motivo)
	if r.Cadeia == nil {
		r.Cadeia = []string{}
	}
	e.textos("cadeia", r.Cadeia)
	e.inteiro("cadastrados", r.Cadastrados)
	e.inteiro("ocupados", r.Ocupados)
	e.idOuNulo("excluido", r.Excluido)
	return e.fim()
}

func (r Hierarquia) acrescentar(b []byte) ([]byte, bool) {
	e := novoEnc(b)
	e.texto("tipo", r.Tipo)
	e.id("event_id", r.EventID)
	e.inteiroOuNulo("gatilho_sequence", r.GatilhoSequence)
	e.id("unidade_civica_id", r.UnidadeCivicaID)
	e.idOuNulo("parent_uc_id", r.ParentUcID)
	e.inteiro("nivel", r.Nivel)
	return e.fim()
}

func (r Entrada) acrescentar(b []byte) ([]byte, bool) {
	e := novoEnc(b)
	e.texto("tipo", r.Tipo)
	e.id("event_id", r.EventID)
	e.inteiroOuNulo("gatilho_sequence", r.GatilhoSequence)
	e.talvezID("conselheiro_id", r.ConselheiroID)
	e.talvezID("unidade_civica_id", r.UnidadeCivicaID)
	e.talvezInteiro("nivel_atuacao", r.NivelAtuacao)
	e.talvezTexto("status", r.Status)
	e.talvezBool("capacitacao_concluida", r.CapacitacaoConcluida)
	e.talvezID("demanda_id", r.DemandaID)
	if len(r.Removidas) > 0 {
		e.chave("removidas")
		e.b = append(e.b, '[')
		for i, u := range r.Removidas {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.valorID(u)
		}
		e.b = append(e.b, ']')
	}
	e.talvezTexto("data_suspensao_ate", r.DataSuspensaoAte)
	e.talvezBool("conferivel_publicamente", r.ConferivelPublicamente)
	e.talvezTexto("acao", r.Acao)
	e.talvezTexto("curso_id", r.CursoID)
	e.talvezBool("valido", r.Valido)
	e.talvezTexto("versao_parametros", r.VersaoParametros)
	e.talvezBool("capacitacao_externa", r.CapacitacaoExterna)
	e.talvezBool("exigir_vinculo", r.ExigirVinculo)
	return e.fim()
}

func (v *RegrasSorteio) campo(s *scanner, k []byte) bool {
	switch string(k) {
	case "tipo":
		return s.texto(&v.Tipo)
	case "event_id":
		return s.id(&v.EventID)
	case "gatilho_desde":
		return s.inteiro(&v.GatilhoDesde)
	case "privado":
		var b *bool
		if !s.boolOuNulo(&b) || b == nil {
			return false
		}
		v.Privado = *b
		return true
	case "cadeia":
		return s.texto(&v.Cadeia)
	case "chave_publica":
		return s.texto(&v.ChavePublica)
	case "periodo":
		return s.inteiro(&v.Periodo)
	case "genesis":
		return s.inteiro(&v.Genesis)
	case "margem_ms":
		return s.inteiro(&v.MargemMs)
	case "testemunhas":
		return lista(s, &v.Testemunhas, s.texto)
	case "quorum":
		return s.inteiro(&v.Quorum)
	}
	return false
}

func (r RegrasSorteio) acrescentar(b []byte) ([]byte, bool) {
	t := r.Testemunhas
	if t == nil {
		t = []string{}
	}
	e := novoEnc(b)
	e.texto("tipo", r.Tipo)
	e.id("event_id", r.EventID)
	e.inteiro("gatilho_desde", r.GatilhoDesde)
	e.chave("privado")
	e.b = strconv.AppendBool(e.b, r.Privado)
	e.texto("cadeia", r.Cadeia)
	e.texto("chave_publica", r.ChavePublica)
	e.inteiro("periodo", r.Periodo)
	e.inteiro("genesis", r.Genesis)
	e.inteiro("margem_ms", r.MargemMs)
	e.textos("testemunhas", t)
	e.inteiro("quorum", r.Quorum)
	return e.fim()
}

func (v *Eliminacao) campo(s *scanner, k []byte) bool {
	switch string(k) {
	case "tipo":
		return s.texto(&v.Tipo)
	case "event_id":
		return s.id(&v.EventID)
	case "indices":
		return lista(s, &v.Indices, s.inteiro)
	}
	return false
}

func (r Eliminacao) acrescentar(b []byte) ([]byte, bool) {
	e := novoEnc(b)
	e.texto("tipo", r.Tipo)
	e.id("event_id", r.EventID)
	e.chave("indices")
	e.b = append(e.b, '[')
	for i, x := range r.Indices {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = strconv.AppendInt(e.b, x, 10)
	}
	e.b = append(e.b, ']')
	return e.fim()
}

func (v *ListaSorteio) campo(s *scanner, k []byte) bool {
	switch string(k) {
	case "tipo":
		return s.texto(&v.Tipo)
	case "event_id":
		return s.id(&v.EventID)
	case "event_id_sorteio":
		return s.id(&v.EventIDSorteio)
	case "parte":
		return s.inteiro(&v.Parte)
	case "partes":
		return s.inteiro(&v.Partes)
	case "elegiveis":
		return lista(s, &v.Elegiveis, s.texto)
	}
	return false
}

func (r ListaSorteio) acrescentar(b []byte) ([]byte, bool) {
	l := r.Elegiveis
	if l == nil {
		l = []string{}
	}
	e := novoEnc(b)
	e.texto("tipo", r.Tipo)
	e.id("event_id", r.EventID)
	e.id("event_id_sorteio", r.EventIDSorteio)
	e.inteiro("parte", r.Parte)
	e.inteiro("partes", r.Partes)
	e.textos("elegiveis", l)
	return e.fim()
}

func (v *Compromisso) campo(s *scanner, k []byte) bool {
	switch string(k) {
	case "tipo":
		return s.texto(&v.Tipo)
	case "event_id":
		return s.id(&v.EventID)
	case "gatilho":
		return s.id(&v.Gatilho)
	case "gatilho_sequence":
		return s.inteiro(&v.GatilhoSequence)
	case "timestamp":
		return s.texto(&v.Timestamp)
	}
	return false
}

func (r Compromisso) acrescentar(b []byte) ([]byte, bool) {
	e := novoEnc(b)
	e.texto("tipo", r.Tipo)
	e.id("event_id", r.EventID)
	e.id("gatilho", r.Gatilho)
	e.inteiro("gatilho_sequence", r.GatilhoSequence)
	e.texto("timestamp", r.Timestamp)
	return e.fim()
}

func (v *CossinaturasRegistro) campo(s *scanner, k []byte) bool {
	switch string(k) {
	case "tipo":
		return s.texto(&v.Tipo)
	case "event_id":
		return s.id(&v.EventID)
	case "origem":
		return s.texto(&v.Origem)
	case "tamanho":
		return s.inteiro(&v.Tamanho)
	case "hash":
		return s.texto(&v.Hash)
	case "assinaturas":
		return lista(s, &v.Assinaturas, s.texto)
	}
	return false
}

func (r CossinaturasRegistro) acrescentar(b []byte) ([]byte, bool) {
	a := r.Assinaturas
	if a == nil {
		a = []string{}
	}
	e := novoEnc(b)
	e.texto("tipo", r.Tipo)
	e.id("event_id", r.EventID)
	e.texto("origem", r.Origem)
	e.inteiro("tamanho", r.Tamanho)
	e.texto("hash", r.Hash)
	e.textos("assinaturas", a)
	return e.fim()
}
