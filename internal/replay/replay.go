package replay

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/decisao"
	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/sorteio"
)

// Replay rebuilds, from the log's records alone and in log order, the
// state eligibility depends on (CONTRACT §7 "Replay"), and checks every
// decision against it with the executor's own rule of spec 4.3
// (elegibilidade.Filtrar): a draw's winning step and eligible list, a
// sorteio.sem_candidatos's counts and motive. It holds one state view, not
// the log.
//
// A counsellor that a decision names but no registration record does (a
// log begun before the input records) is unknown: the checks it takes part
// in are left out and counted (Desconhecidos), never guessed.
type Replay struct {
	conselheiros map[uuid.UUID]*estadoConselheiro
	// porUC indexes conselheiros by unit: a decision reads its chain's
	// units only, so the replay costs the chain, not the country.
	porUC         map[uuid.UUID][]uuid.UUID
	desconhecidos map[uuid.UUID]bool
	// Decisoes counts the draws and sorteio.sem_candidatos checked.
	Decisoes int64
	// Divergencias are the decisions that do not follow from the records
	// before them, in log order (registro.Falha with its Motivo).
	Divergencias []*registro.Falha
	// alvo, when set, is the counsellor whose own check is kept (Linha).
	alvo    uuid.UUID
	Linha   []Acontecimento
	Deixado []Acontecimento
	// indice is the latest record applied.
	indice int64
	// ultimoT is the latest decision's T: the time an input record's
	// status is judged at (records carry no time of their own).
	ultimoT time.Time
	// pais are the links the hierarquia.uc records made public; fila the
	// pending queue; aberta the sweep the records being replayed follow;
	// ucDemanda each decided demand's unit (fila.go).
	pais      map[uuid.UUID]eloReplay
	fila      filaReplay
	aberta    *aberta
	devida    *varreduraDevida
	ucDemanda map[uuid.UUID]uuid.UUID
	// AlvoDemanda, when set, is the demand whose own check is kept
	// (--demanda): LinhaDemanda its timeline, Passada the sweeps that
	// passed it over.
	AlvoDemanda  uuid.UUID
	LinhaDemanda []Acontecimento
	Passada      []Acontecimento
	barramento
	estadoFase2                        // the phase-2 gates and inputs (elegibilidade_externa.go)
	regras      registro.RegrasEmVigor // the draw rule (regras.go)
	// listas holds a long draw's list records until its draw.
	listas registro.Listas
}

type estadoConselheiro struct {
	uc          uuid.UUID
	status      string
	capacitacao bool
	ate         *time.Time
}

// Acontecimento is a line of a counsellor's timeline (--conselheiro).
type Acontecimento struct {
	Indice int64
	// EventID is the decision that served a demand in a sweep's line of
	// --demanda (uuid.Nil otherwise): what `--event-id` checks next.
	EventID uuid.UUID
	Tipo    string
	Texto   string
}

// Novo starts an empty replay; alvo (uuid.Nil: none) is the
// counsellor whose timeline and coverage are kept.
func Novo(alvo uuid.UUID) *Replay {
	return &Replay{conselheiros: map[uuid.UUID]*estadoConselheiro{}, porUC: map[uuid.UUID][]uuid.UUID{}, desconhecidos: map[uuid.UUID]bool{}, alvo: alvo,
		pais: map[uuid.UUID]eloReplay{}, ucDemanda: map[uuid.UUID]uuid.UUID{},
		barramento: barramento{ativas: map[uuid.UUID]uuid.UUID{}, vistos: map[uuid.UUID]bool{}, omitidas: map[uuid.UUID]*registro.Falha{}}}
}

// Desconhecidos is how many counsellors decisions named without a
// registration record.
func (r *Replay) Desconhecidos() int { return len(r.desconhecidos) }

// Eliminado tells the replay that the record at indice was eliminated
// (or cannot be read) and is not applied: a long draw after it may have
// lost a list record, and is then checked without its list.
func (r *Replay) Eliminado(indice int64) { r.listas.Aplicar(nil) }

// Aplicar takes the record at indice (nil body: eliminated, spec 2.2) and
// checks it if it is a decision, then applies it.
func (r *Replay) Aplicar(indice int64, reg registro.Registravel) {
	// A long draw's list records are part of the draw that follows them:
	// no decision, no input, not the end of a sweep. The draw comes back
	// with its list joined, and is recomputed here, since no check of a
	// record by itself could.
	f, err := r.listas.Aplicar(reg)
	if err != nil && !errors.Is(err, registro.ErrListaEliminada) {
		r.divergir(indice, nil, "%v", err)
	}
	if _, ok := reg.(registro.ListaSorteio); ok {
		return
	}
	if s, ok := f.(registro.Registro); ok && err == nil && s.Partido() != reg.(registro.Registro).Partido() {
		if err := registro.Conferir(s); err != nil {
			r.divergir(indice, nil, "sorteio %s: %v", s.EventIDSorteio, err)
		}
		reg = s
	}
	r.indice = indice
	r.passar(indice, reg)
	r.antesDe(reg)
	switch f := reg.(type) {
	case registro.Registro:
		r.sorteio(indice, f)
	case registro.SemCandidatos:
		r.semCandidatos(indice, f)
	case registro.Entrada:
		r.entrada(indice, f)
	case registro.Hierarquia:
		r.registrarHierarquia(indice, f)
	case registro.RegrasSorteio:
		r.regrasSorteio(indice, f)
	case registro.Compromisso, registro.CossinaturasRegistro:
		if err := r.regras.Anotar(indice, f); err != nil {
			r.divergir(indice, nil, "%s: %v", registro.TipoCossinaturas, err)
		}
	case registro.Eliminacao:
		// No decision: the records it names were blanked before it was
		// appended, so they can only be earlier ones.
		if n := len(f.Indices); n > 0 && f.Indices[n-1] >= indice {
			r.divergir(indice, nil, "d6a.eliminacao: índice %d eliminado, mas o registro de eliminação é o %d: só registros anteriores podem ter sido apagados", f.Indices[n-1], indice)
		}
	}
}

func (r *Replay) divergir(indice int64, c *uuid.UUID, formato string, args ...any) {
	r.Divergencias = append(r.Divergencias, &registro.Falha{Indice: indice, Conselheiro: c, Motivo: fmt.Sprintf(formato, args...)})
}

// candidatos are the known counsellors registered on the chain, as
// elegibilidade.Filtrar takes them.
func (r *Replay) candidatos(cadeia []uuid.UUID) []elegibilidade.Candidato {
	var out []elegibilidade.Candidato
	for _, uc := range cadeia {
		for _, id := range r.porUC[uc] {
			out = append(out, r.candidato(id, r.conselheiros[id]))
		}
	}
	slices.SortFunc(out, func(a, b elegibilidade.Candidato) int { return strings.Compare(a.ID.String(), b.ID.String()) })
	return out
}

func uuids(ss []string) []uuid.UUID {
	out := make([]uuid.UUID, 0, len(ss))
	for _, s := range ss {
		if u, err := uuid.Parse(s); err == nil {
			out = append(out, u)
		}
	}
	return out
}

// recalcular is a decision's eligibility from the records before it: the
// rule of spec 4.3 over the replayed state of its chain, at its T (ok false
// when T cannot be read), and the counsellor's own check on it. lista is
// the decision's eligible list (nil for a sorteio.sem_candidatos).
func (r *Replay) recalcular(indice int64, nome, timestamp string, cadeiaTxt []string, excluido *uuid.UUID, lista []uuid.UUID) (esperado elegibilidade.Resultado, cands []elegibilidade.Candidato, ok bool) {
	r.Decisoes++
	T, err := sorteio.ParseTimestamp(timestamp)
	if err != nil {
		r.divergir(indice, nil, "%s: timestamp %q ilegível", nome, timestamp)
		return esperado, nil, false
	}
	r.ultimoT = T
	cadeia := uuids(cadeiaTxt)
	// The chain must follow the recorded links; where it does not, the
	// decision is judged on the recorded chain (so a counsellor a forged
	// chain skipped is found left out).
	if len(cadeia) > 0 && !r.conferirCadeia(indice, nome, cadeia) {
		if registrada, ok := r.cadeiaRegistrada(cadeia[0]); ok {
			cadeia = registrada
		}
	}
	cands = r.candidatos(cadeia)
	esperado = elegibilidade.Filtrar(cadeia, cands, excluido, T)
	r.cobertura(indice, cadeia, esperado, lista, excluido, T, nome)
	return esperado, cands, true
}

// sorteio checks a draw. One still carried apart (a list record of it
// eliminated, or its list records wrong: said by Aplicar) has no list to
// compare: only its effects are applied.
func (r *Replay) sorteio(indice int64, s registro.Registro) {
	r.conferirRodada(indice, s)
	semLista := s.Partido()
	lista := uuids(s.ElegiveisEntrada)
	for _, id := range lista {
		if _, ok := r.conselheiros[id]; !ok {
			r.desconhecidos[id] = true
		}
	}
	esperado, _, ok := r.recalcular(indice, "sorteio "+s.EventIDSorteio.String()+" (demanda "+s.DemandaID.String()+")", s.Timestamp, s.Cadeia, s.Excluido, lista)
	if !ok {
		return
	}
	// A divergent list still takes its demand out of the queue and its
	// winner busy, as the executor did: the records after it follow from
	// what was done, so one divergence does not cascade.
conferir:
	switch {
	case semLista:
	case len(esperado.Elegiveis) == 0 && !r.temDesconhecido(lista):
		quem, regra := r.foraDaLista(lista) // a phase-2 gate's exclusion, named
		r.divergir(indice, quem, "sorteio %s: pelos registros anteriores ninguém era elegível na cadeia (motivo %s), mas a lista tem %d%s", s.EventIDSorteio, esperado.Motivo, len(lista), regra)
	case len(esperado.Elegiveis) > 0 && esperado.Degrau != s.Degrau:
		r.divergir(indice, nil, "sorteio %s: degrau %s, mas pelos registros anteriores o primeiro degrau com elegíveis é %s", s.EventIDSorteio, s.Degrau, esperado.Degrau)
	case len(esperado.Elegiveis) > 0:
		for _, id := range esperado.Elegiveis {
			if !slices.Contains(lista, id) {
				r.divergir(indice, &id, "sorteio %s: conselheiro %s estava disponível no degrau %s e ficou fora da lista", s.EventIDSorteio, id, s.Degrau)
				break conferir
			}
		}
		for _, id := range lista {
			if !slices.Contains(esperado.Elegiveis, id) && !r.desconhecidos[id] {
				c := r.conselheiros[id]
				regra := ""
				if m := r.foraPorRegra(id, c); m != "" {
					regra = ", " + m
				}
				r.divergir(indice, &id, "sorteio %s: conselheiro %s está na lista, mas pelos registros anteriores não era elegível no degrau (status %s, unidade %s%s)", s.EventIDSorteio, id, c.status, c.uc, regra)
				break conferir
			}
		}
	}
	// What the draw does is the executor's step (decisao.Sortear) over
	// what was done: the recorded list and shuffle (registro.Conferir
	// checks that shuffle against the seed; a divergent list has been
	// named above), so one divergence does not cascade.
	ef := r.passoSorteio(&s, lista, esperado.Vencidos)
	r.decidida(indice, s.EventIDSorteio, s.DemandaID, s.UnidadeCivicaID, s.BaseSequence, "sorteio "+s.EventIDSorteio.String(), ef,
		fmt.Sprintf("sorteada para o conselheiro %s (sorteio %s, %s)", s.ConselheiroID, s.EventIDSorteio, s.Timestamp))
	if c, ok := r.conselheiros[s.ConselheiroID]; ok && ef.Sorteado {
		c.status = ef.Status
	}
	r.ativas[s.ConselheiroID] = s.DemandaID
	if s.ConselheiroID == r.alvo {
		r.Linha = append(r.Linha, Acontecimento{indice, uuid.Nil, "sorteado", fmt.Sprintf("sorteado para a demanda %s (sorteio %s, %s)", s.DemandaID, s.EventIDSorteio, s.Timestamp)})
	}
}

// passoSorteio runs the executor's draw step (decisao.Sortear) over a
// decision record: s's draw, or a sorteio.sem_candidatos when s is nil.
// vencidos are the suspensions the replayed state says had ended
// (Filtrar's): a winner among them has that suspension lifted.
func (r *Replay) passoSorteio(s *registro.Registro, lista []uuid.UUID, vencidos map[uuid.UUID]time.Time) decisao.EfeitosSorteio {
	var v decisao.VisaoSorteio
	var sem decisao.Semente
	if s != nil {
		_, v.NaFila = r.fila.por[s.DemandaID]
		if len(lista) == 0 {
			lista = []uuid.UUID{s.ConselheiroID} // a list eliminated: what was done
		}
		v.Filtro = elegibilidade.Resultado{Elegiveis: lista, Degrau: s.Degrau}
		if ate, ok := vencidos[s.ConselheiroID]; ok {
			v.Filtro.Vencidos = map[uuid.UUID]time.Time{s.ConselheiroID: ate}
		}
		sem = decisao.Semente{Base: s.Base, Timestamp: s.Timestamp, Registrado: &sorteio.Resultado{
			Seed: s.Seed, Entrada: s.ElegiveisEntrada, Ordenados: s.Ordenados, Selecionado: s.ConselheiroID.String(), ListaHash: s.ListaElegiveisHash,
		}}
	}
	T := r.ultimoT
	ef, err := decisao.Sortear(v, sem, T)
	if err != nil && s != nil {
		// The machine forbids it (a list divergence said why): the winner
		// is busy all the same.
		ef = decisao.EfeitosSorteio{Sorteado: true, Vencedor: s.ConselheiroID, Status: elegibilidade.Ocupado, SairDaFila: v.NaFila}
	}
	return ef
}

// decidida is what a decision about demanda does to the queue: it is
// checked against the open sweep, then the step's effects apply: a draw
// takes the demand out, a sorteio.sem_candidatos puts it in (keeping its
// place if it waited).
func (r *Replay) decidida(indice int64, evento, demanda, uc uuid.UUID, seq *int64, nome string, ef decisao.EfeitosSorteio, texto string) {
	r.servir(indice, evento, nome, demanda, seq)
	r.ucDemanda[demanda] = uc
	if demanda == r.AlvoDemanda {
		if _, esperava := r.fila.por[demanda]; !esperava && !ef.Sorteado {
			texto += fmt.Sprintf(" desde o registro %d", indice)
		}
		r.LinhaDemanda = append(r.LinhaDemanda, Acontecimento{indice, uuid.Nil, map[bool]string{true: "sorteio", false: "sem_candidatos"}[ef.Sorteado], texto})
	}
	switch {
	case ef.SairDaFila:
		r.fila.sair(demanda)
	case ef.Enfileirar:
		cadeia, _ := r.cadeiaRegistrada(uc)
		r.fila.entrar(demanda, uc, cadeia, indice)
	}
}

func (r *Replay) temDesconhecido(lista []uuid.UUID) bool {
	for _, id := range lista {
		if r.desconhecidos[id] {
			return true
		}
	}
	return false
}

func (r *Replay) semCandidatos(indice int64, s registro.SemCandidatos) {
	esperado, _, ok := r.recalcular(indice, "sem_candidatos "+s.EventID.String()+" (demanda "+s.DemandaID.String()+")", s.Timestamp, s.Cadeia, s.Excluido, nil)
	r.decidida(indice, s.EventID, s.DemandaID, s.UnidadeCivicaID, s.GatilhoSequence, "sem_candidatos "+s.EventID.String(), r.passoSorteio(nil, nil, nil),
		fmt.Sprintf("sem candidatos (%s, %s): na fila de pendentes", s.Motivo, s.Timestamp))
	if !ok {
		return
	}
	if len(esperado.Elegiveis) > 0 {
		id := esperado.Elegiveis[0]
		r.divergir(indice, &id, "sem_candidatos %s: conselheiro %s estava disponível no degrau %s", s.EventID, id, esperado.Degrau)
		return
	}
	// The counts the motive follows from, by the executor's rule (Filtrar).
	if len(r.desconhecidos) == 0 && (int64(esperado.Cadastrados) != s.Cadastrados || int64(esperado.Ocupados) != s.Ocupados) {
		r.divergir(indice, nil, "sem_candidatos %s: %d cadastrados e %d ocupados na cadeia, mas pelos registros anteriores são %d e %d", s.EventID, s.Cadastrados, s.Ocupados, esperado.Cadastrados, esperado.Ocupados)
	}
}

// cobertura keeps, for the counsellor of --conselheiro, each decision of
// their coverage (the chain holds their unit) made while the records show
// them eligible, and whether they were in the list.
func (r *Replay) cobertura(indice int64, cadeia []uuid.UUID, esperado elegibilidade.Resultado, lista []uuid.UUID, excluido *uuid.UUID, T time.Time, nome string) {
	c, ok := r.conselheiros[r.alvo]
	if r.alvo == uuid.Nil || !ok || !slices.Contains(cadeia, c.uc) || (excluido != nil && *excluido == r.alvo) {
		return
	}
	cand := r.candidato(r.alvo, c)
	if !elegibilidade.Elegivel(cand, T) {
		// Left out by a phase-2 gate alone: said, not a divergence.
		if motivo := r.foraPorRegra(r.alvo, c); motivo != "" {
			cand.Capacitacao, cand.SemVinculo = true, false
			if elegibilidade.Elegivel(cand, T) {
				r.Linha = append(r.Linha, Acontecimento{indice, uuid.Nil, "cobertura", nome + ": fora por regra (" + motivo + ")"})
			}
		}
		return
	}
	// Eligible, on the chain: they belong in the list unless a step below
	// theirs had eligible counsellors.
	passo := slices.Index(cadeia, c.uc)
	if len(esperado.Elegiveis) > 0 && slices.Index(cadeia, esperado.Degrau) < passo {
		return
	}
	a := Acontecimento{indice, uuid.Nil, "cobertura", nome}
	if slices.Contains(lista, r.alvo) {
		a.Texto += ": na lista"
		r.Linha = append(r.Linha, a)
		return
	}
	a.Texto += ": DEIXADO DE FORA (disponível no degrau " + c.uc.String() + ")"
	r.Linha = append(r.Linha, a)
	r.Deixado = append(r.Deixado, a)
}

func (r *Replay) entrada(indice int64, e registro.Entrada) {
	if r.entradaFase2(indice, e) {
		return
	}
	switch e.Tipo {
	case registro.TipoVarredura:
		r.conferirVarredura(indice, e)
		a := &aberta{seq: e.GatilhoSequence, indice: indice, uc: e.UnidadeCivicaID, demanda: e.DemandaID}
		if a.uc != nil {
			a.nome = fmt.Sprintf("a varredura da unidade %s (%s)", *a.uc, e.Acao)
		} else {
			a.nome = fmt.Sprintf("a varredura da demanda %s (%s)", *a.demanda, e.Acao)
		}
		r.abrir(a)
		return
	case registro.TipoAgregacao:
		for _, d := range e.Removidas {
			r.fila.sair(d)
		}
	}
	if e.ConselheiroID == nil {
		return
	}
	id := *e.ConselheiroID
	c := r.conselheiros[id]
	ef := r.passo(indice, e, c)
	if (e.Tipo == registro.TipoCicloConcluido || e.Tipo == registro.TipoRecusa) && e.DemandaID != nil && r.ativas[id] == *e.DemandaID {
		delete(r.ativas, id)
		if e.Tipo == registro.TipoRecusa {
			// The refused demand is drawn again under this trigger,
			// without its refuser (spec 3.12 step 5).
			d := *e.DemandaID
			r.abrir(&aberta{seq: e.GatilhoSequence, indice: indice, demanda: &d, excluido: &id, redraw: true,
				nome: fmt.Sprintf("a recusa de %s", id)})
		} else {
			// A concluded demand is never drawn again: its unit is
			// dropped, so the state holds the open assignments, not
			// every demand the log ever decided (issue 39).
			delete(r.ucDemanda, *e.DemandaID)
		}
	}
	if e.Tipo == registro.TipoCadastro && c == nil || e.Tipo == registro.TipoCicloConcluido {
		r.esperarVarredura(indice, e, c)
	}
	switch e.Tipo {
	case registro.TipoCadastro:
		if c == nil {
			r.porUC[*e.UnidadeCivicaID] = append(r.porUC[*e.UnidadeCivicaID], id)
		}
		r.conselheiros[id] = &estadoConselheiro{uc: *e.UnidadeCivicaID, status: e.Status, capacitacao: *e.CapacitacaoConcluida}
		delete(r.desconhecidos, id)
	case registro.TipoSuspensao:
		if c != nil {
			// conferirStatus named a suspension the machine forbids
			// (PodeSuspender); the state follows what was done.
			c.status = elegibilidade.Suspenso
			if t, err := sorteio.ParseTimestamp(e.DataSuspensaoAte); err == nil {
				c.ate = &t
			}
		}
	case registro.TipoSuspensaoExpirada:
		if c != nil {
			c.status = ef.Status
		}
	case registro.TipoLiberacao:
		// The boot released him because no active assignment of his was
		// left: the replay follows what was done, so a later inactivation
		// is not judged against one.
		delete(r.ativas, id)
		if c != nil {
			c.status = ef.Status
		}
	default: // cycle ends, refusals, the console: the status after them
		if c != nil && e.Status != "" {
			c.status = e.Status
		}
	}
	if id == r.alvo {
		texto := e.Tipo
		if e.DemandaID != nil {
			texto += " (demanda " + e.DemandaID.String() + ")"
		}
		if e.Status != "" {
			texto += " → " + e.Status
		}
		if e.DataSuspensaoAte != "" {
			texto += " até " + e.DataSuspensaoAte
		}
		r.Linha = append(r.Linha, Acontecimento{indice, uuid.Nil, e.Tipo, texto})
	}
}

// tiposDecisao are the input records whose status decisao.Passo gives.
var tiposDecisao = map[string]decisao.Tipo{
	registro.TipoCadastro: decisao.Cadastro, registro.TipoCicloConcluido: decisao.CicloConcluido,
	registro.TipoRecusa: decisao.Recusa, registro.TipoSuspensao: decisao.Suspensao,
	registro.TipoSuspensaoExpirada: decisao.SuspensaoExpirada, registro.TipoInativacao: decisao.Inativacao,
	registro.TipoReativacao: decisao.Reativacao, registro.TipoLiberacao: decisao.Liberacao,
}

// passo runs the executor's step (decisao.Passo) for an input record over
// the replayed state, and checks the status the record shows against the
// ones it gives. The refusals' motives are not in the log, so a refusal is
// stepped without its count; the suspension it led to is its own record.
func (r *Replay) passo(indice int64, e registro.Entrada, c *estadoConselheiro) decisao.Efeitos {
	id := *e.ConselheiroID
	var v decisao.Visao
	if c != nil {
		v.Conselheiro = &decisao.Conselheiro{Status: c.status, Ate: c.ate}
	}
	if d, ok := r.ativas[id]; ok {
		v.Ativa = &d
	}
	in := decisao.Entrada{Tipo: tiposDecisao[e.Tipo], Status: e.Status, Agora: r.ultimoT}
	if e.DemandaID != nil {
		in.Demanda = *e.DemandaID
	}
	if in.Tipo == decisao.Suspensao {
		in.Ate, _ = sorteio.ParseTimestamp(e.DataSuspensaoAte)
	}
	ef := decisao.Passo(v, in)
	de := "?"
	if c != nil {
		de = c.status
	}
	switch {
	case in.Tipo == decisao.Cadastro && !ef.Cadastrar:
		r.divergir(indice, &id, "%s: conselheiro %s já estava cadastrado: um cadastro duplicado não é aplicado", e.Tipo, id)
	case c == nil && in.Tipo != decisao.Cadastro:
		// An unknown counsellor's step is left out, never guessed.
	case in.Tipo == decisao.Suspensao && ef.Proibida:
		r.divergir(indice, &id, "%s: conselheiro %s suspenso a partir de %s, que a máquina de estados (spec 4.6) não permite", e.Tipo, id, de)
	case in.Tipo == decisao.Suspensao || in.Tipo == decisao.SuspensaoExpirada:
		// Their records show no status.
	default:
		if possiveis := decisao.Possiveis(v, in); !slices.Contains(possiveis, e.Status) {
			r.divergir(indice, &id, "%s: conselheiro %s fica %s, mas de %s a máquina de estados (spec 4.6) dá %s", e.Tipo, id, e.Status, de, strings.Join(possiveis, " ou "))
		}
	}
	return ef
}
