package replay

import (
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/fila"
	"github.com/formigueiro/d6a/internal/registro"
)

// The replay's side of CONTRACT §7 "Hierarchy" and "Queue order": the
// civic-unit links the log made public, the pending queue the records
// give, and which waiting demand each sweep had to serve (spec 4.7: the
// one that entered first among those whose chain holds the swept unit).

// esperando is a demand in the replayed pending queue.
type esperando struct {
	demanda uuid.UUID
	uc      uuid.UUID
	// cadeia is the demand's chain by the recorded links when it entered:
	// the units whose sweeps may serve it.
	cadeia []uuid.UUID
	indice int64 // the record it entered with
	fora   bool
}

// filaReplay is the pending queue in entry order, indexed by every unit
// of each demand's chain, so a sweep finds its due demand without walking
// the whole queue.
type filaReplay struct {
	por   map[uuid.UUID]*esperando
	porUC map[uuid.UUID][]*esperando
}

func (f *filaReplay) entrar(d, uc uuid.UUID, cadeia []uuid.UUID, indice int64) {
	if f.por == nil {
		f.por, f.porUC = map[uuid.UUID]*esperando{}, map[uuid.UUID][]*esperando{}
	}
	if _, ja := f.por[d]; ja {
		return // a demand keeps its place (spec 4.7: another failed attempt)
	}
	e := &esperando{demanda: d, uc: uc, cadeia: cadeia, indice: indice}
	f.por[d] = e
	// Each unit's list stays in the executor's FIFO order (fila.Antes: the
	// log carries no data_entrada, and the order of the records that
	// queued the demands is ordem_entrada's), so its head is what
	// fila.Devida picks.
	espera := e.espera()
	for _, u := range cadeia {
		l := f.porUC[u]
		i := len(l)
		for i > 0 && fila.Antes(espera, l[i-1].espera()) {
			i--
		}
		f.porUC[u] = slices.Insert(l, i, e)
	}
}

// espera is the demand as the FIFO rule takes it.
func (e *esperando) espera() fila.Espera {
	return fila.Espera{Demanda: e.demanda, UC: e.uc, Ordem: e.indice}
}

func (f *filaReplay) sair(d uuid.UUID) {
	if e, ok := f.por[d]; ok {
		e.fora = true
		delete(f.por, d)
	}
}

// devida is the demand a sweep of uc serves: the oldest waiting whose
// chain holds uc (nil: none).
func (f *filaReplay) devida(uc uuid.UUID) *esperando {
	l := f.porUC[uc]
	for len(l) > 0 && l[0].fora {
		l = l[1:]
	}
	if len(l) == 0 {
		delete(f.porUC, uc)
		return nil
	}
	f.porUC[uc] = l
	return l[0]
}

// aberta is the sweep (or a refusal's re-draw) whose trigger the records
// being replayed follow: the next decision under the same trigger must
// serve what it names, and none may leave a due demand unserved while a
// counsellor of its chain was eligible.
type aberta struct {
	seq     *int64
	indice  int64
	nome    string
	uc      *uuid.UUID // a sweep of this unit's queue
	demanda *uuid.UUID // a sweep of this demand, or the re-draw of it
	// excluido is the refusing counsellor of a re-draw (spec 3.12 step 5).
	excluido *uuid.UUID
	redraw   bool
	devida   *esperando
	servida  bool
}

func mesmaSeq(a, b *int64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// registrarHierarquia keeps a recorded link.
func (r *Replay) registrarHierarquia(indice int64, h registro.Hierarquia) {
	r.pais[h.UnidadeCivicaID] = eloReplay{parent: h.ParentUcID, indice: indice}
}

type eloReplay struct {
	parent *uuid.UUID
	indice int64
}

// cadeiaRegistrada is uc's chain by the recorded links (ok false when uc
// itself has none).
func (r *Replay) cadeiaRegistrada(uc uuid.UUID) ([]uuid.UUID, bool) {
	e, ok := r.pais[uc]
	if !ok {
		return []uuid.UUID{uc}, false
	}
	out := []uuid.UUID{uc}
	for e.parent != nil && len(out) <= len(r.pais) {
		p := *e.parent
		out = append(out, p)
		if e, ok = r.pais[p]; !ok {
			break
		}
	}
	return out, true
}

// conferirCadeia checks a decision's chain against the recorded links:
// each unit has its record, each next unit is its recorded parent, and the
// last is a recorded root (CONTRACT §7 "Hierarchy").
func (r *Replay) conferirCadeia(indice int64, nome string, cadeia []uuid.UUID) bool {
	for i, uc := range cadeia {
		e, ok := r.pais[uc]
		switch {
		case !ok:
			r.divergir(indice, nil, "%s: a unidade %s da cadeia não tem registro %s antes da decisão", nome, uc, registro.TipoHierarquia)
			return false
		case i+1 < len(cadeia) && e.parent == nil:
			r.divergir(indice, nil, "%s: a cadeia sobe da unidade %s para %s, mas pelo registro %d a unidade %s é raiz", nome, uc, cadeia[i+1], e.indice, uc)
			return false
		case i+1 < len(cadeia) && *e.parent != cadeia[i+1]:
			r.divergir(indice, nil, "%s: a cadeia sobe da unidade %s para %s, mas pelo registro %d o pai de %s é %s", nome, uc, cadeia[i+1], e.indice, uc, *e.parent)
			return false
		case i+1 == len(cadeia) && e.parent != nil:
			r.divergir(indice, nil, "%s: a cadeia termina na unidade %s, mas pelo registro %d o pai de %s é %s", nome, uc, e.indice, uc, *e.parent)
			return false
		}
	}
	return true
}

// elegivelNaCadeia is the first counsellor spec 4.3 finds eligible on
// cadeia by the replayed state at the latest decision's T (nil: none).
func (r *Replay) elegivelNaCadeia(cadeia []uuid.UUID, excluido *uuid.UUID) *uuid.UUID {
	res := elegibilidade.Filtrar(cadeia, r.candidatos(cadeia), excluido, r.ultimoT)
	if len(res.Elegiveis) == 0 {
		return nil
	}
	return &res.Elegiveis[0]
}

// varreduraDevida is an input that must be followed, under its trigger, by
// its sweep (spec 3.10 step 4, 3.11 step 5): a registration sweeps its
// unit, a cycle end the payload's unit, else its counsellor's.
type varreduraDevida struct {
	seq    *int64
	indice int64
	tipo   string
	// ucs are the units its sweep may name (empty: any, a cycle end whose
	// payload the replay cannot read without the bus).
	ucs []uuid.UUID
}

// esperarVarredura notes that the input record at indice must be followed
// by its sweep.
func (r *Replay) esperarVarredura(indice int64, e registro.Entrada, c *estadoConselheiro) {
	v := &varreduraDevida{seq: e.GatilhoSequence, indice: indice, tipo: e.Tipo}
	switch e.Tipo {
	case registro.TipoCadastro:
		v.ucs = []uuid.UUID{*e.UnidadeCivicaID}
	case registro.TipoCicloConcluido:
		if e.GatilhoSequence != nil && r.mensagens != nil {
			if m, ok := r.mensagemEm(*e.GatilhoSequence); ok && m.EventID == e.EventID {
				v.ucs = []uuid.UUID{m.UC}
				if m.UC == uuid.Nil && c != nil {
					v.ucs = []uuid.UUID{c.uc}
				}
			}
		}
	default:
		return
	}
	r.devida = v
}

// conferirVarredura checks a sweep record against the input it follows.
func (r *Replay) conferirVarredura(indice int64, e registro.Entrada) {
	v := r.devida
	if v == nil || !mesmaSeq(v.seq, e.GatilhoSequence) {
		return
	}
	r.devida = nil
	if len(v.ucs) > 0 && (e.UnidadeCivicaID == nil || !slices.Contains(v.ucs, *e.UnidadeCivicaID)) {
		r.divergir(indice, nil, "%s (registro %d) varre a unidade %v, mas a varredura devida é a da unidade %s (spec 3.10, 3.11)", e.Tipo, v.indice, e.UnidadeCivicaID, v.ucs[0])
	}
}

// semVarredura: the input's trigger ended without its sweep.
func (r *Replay) semVarredura() {
	if v := r.devida; v != nil {
		r.devida = nil
		r.divergir(v.indice, nil, "%s (registro %d) não é seguido da varredura da fila que o handler faz (spec 3.10, 3.11, 4.7)", v.tipo, v.indice)
	}
}

// abrir starts the sweep or re-draw a record announces, closing the one
// before it.
func (r *Replay) abrir(a *aberta) {
	r.fechar()
	if !a.redraw {
		switch {
		case a.demanda != nil:
			a.devida = r.fila.por[*a.demanda]
		case a.uc != nil:
			a.devida = r.fila.devida(*a.uc)
		}
	}
	r.aberta = a
}

// antesDe closes the open sweep, and the wait for a sweep, when a record
// of another trigger comes.
func (r *Replay) antesDe(reg registro.Registravel) {
	if r.aberta != nil && !mesmaSeq(r.aberta.seq, registro.SeqDe(reg)) {
		r.fechar()
	}
	if r.devida != nil && !mesmaSeq(r.devida.seq, registro.SeqDe(reg)) {
		r.semVarredura()
	}
}

// servir checks the decision about demanda (a draw, or a
// sorteio.sem_candidatos) against the open sweep of its trigger.
func (r *Replay) servir(indice int64, evento uuid.UUID, nome string, demanda uuid.UUID, seq *int64) {
	a := r.aberta
	if a == nil || a.servida || !mesmaSeq(a.seq, seq) {
		return
	}
	a.servida = true
	switch {
	case a.redraw && demanda != *a.demanda:
		r.divergir(indice, nil, "%s: a recusa (registro %d) re-sorteia a demanda %s (spec 3.12), não a %s", nome, a.indice, *a.demanda, demanda)
	case a.redraw:
	case a.devida == nil:
		r.divergir(indice, nil, "%s: %s (registro %d) serviu a demanda %s, mas nenhuma demanda da fila era devida", nome, a.nome, a.indice, demanda)
	case a.devida.demanda != demanda:
		r.divergir(indice, nil, "%s: %s (registro %d) serviu a demanda %s, mas a devida era a demanda %s (na fila desde o registro %d)", nome, a.nome, a.indice, demanda, a.devida.demanda, a.devida.indice)
	}
	r.linhaDaVarredura(a, &demanda, indice, evento)
}

// fechar ends the open sweep: one that served nothing must have had no
// eligible counsellor for its due demand; a re-draw that drew nobody puts
// the refused demand back in the queue.
func (r *Replay) fechar() {
	a := r.aberta
	if a == nil {
		return
	}
	r.aberta = nil
	if a.servida {
		return
	}
	if a.redraw {
		d := *a.demanda
		uc, ok := r.ucDemanda[d]
		if !ok {
			return
		}
		cadeia, _ := r.cadeiaRegistrada(uc)
		if c := r.elegivelNaCadeia(cadeia, a.excluido); c != nil {
			r.divergir(a.indice, c, "%s: a demanda %s não foi re-sorteada (spec 3.12), mas o conselheiro %s estava disponível na cadeia", a.nome, d, *c)
		}
		r.fila.entrar(d, uc, cadeia, a.indice)
		return
	}
	if a.devida != nil {
		if c := r.elegivelNaCadeia(a.devida.cadeia, nil); c != nil {
			r.divergir(a.indice, c, "%s não serviu nenhuma demanda, mas a demanda %s era devida (na fila desde o registro %d) e o conselheiro %s estava disponível", a.nome, a.devida.demanda, a.devida.indice, *c)
			r.linhaDaVarredura(a, nil, a.indice, uuid.Nil)
			return
		}
	}
	r.linhaDaVarredura(a, nil, a.indice, uuid.Nil)
}

// linhaDaVarredura keeps, for the demand of --demanda, each sweep that
// could have served it while it waited, what it served, and whether it
// passed the demand over: it served a demand that entered the queue after
// it, or none while it was due and a counsellor of its chain was eligible.
// evento is the decision that served (its event_id), uuid.Nil for none.
func (r *Replay) linhaDaVarredura(a *aberta, servida *uuid.UUID, indice int64, evento uuid.UUID) {
	alvo, ok := r.fila.por[r.AlvoDemanda]
	if r.AlvoDemanda == uuid.Nil || a.redraw {
		return
	}
	if servida != nil && *servida == r.AlvoDemanda {
		return // its own decision, in its timeline already
	}
	if !ok {
		return
	}
	cobre := a.demanda != nil && *a.demanda == r.AlvoDemanda || a.uc != nil && slices.Contains(alvo.cadeia, *a.uc)
	if !cobre {
		return
	}
	l := Acontecimento{Indice: a.indice, Tipo: "liberacao"}
	passada := false
	switch {
	case servida == nil:
		l.Texto = fmt.Sprintf("%s: não serviu nenhuma demanda", a.nome)
		if a.devida == alvo {
			if c := r.elegivelNaCadeia(alvo.cadeia, nil); c != nil {
				l.Texto += fmt.Sprintf(" — PASSADA PARA TRÁS: era a vez desta demanda e o conselheiro %s estava disponível", *c)
				passada = true
			}
		}
	default:
		l.EventID = evento
		l.Texto = fmt.Sprintf("%s: serviu a demanda %s (registro %d)", a.nome, *servida, indice)
		if o, ok := r.fila.por[*servida]; !ok || o.indice > alvo.indice {
			l.Texto += " — PASSADA PARA TRÁS: essa demanda entrou na fila depois desta"
			passada = true
		}
	}
	r.LinhaDemanda = append(r.LinhaDemanda, l)
	if passada {
		r.Passada = append(r.Passada, l)
	}
}
