// Package banco checks one draw against the database (`d6a verify
// --event-id`): it recomputes the draw from its audit record
// (d6a.auditoria_sorteios) and checks that the audit, the assignment row,
// the published event and the bus all tell the same story
// (docs/verificacao.md §3 and §5, CONTRACT §4).
//
// The checks run in this order and the first failure is reported:
//
//  1. the audit record on its own (docs §3.1): canonical input (lowercase,
//     strictly ascending), the excluded refuser not in it, the winning step
//     in the chain, conselheiro_id = selecionado;
//  2. the arithmetic (docs §3.2–3.5): seed, ordenados, selecionado and
//     lista_elegiveis_hash recomputed from base, T and the input with
//     [sorteio.Verificar];
//  3. the assignment row keyed by event_id_sorteio;
//  4. the conselheiro.sorteado envelope of the outbox;
//  5. the bus (docs §3.7): the message at base_sequence carries the base,
//     and T lies between its bus time and the bus time of the published
//     conselheiro.sorteado. Skipped, with a note, without a bus.
package banco

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/sorteio"
	"github.com/formigueiro/d6a/internal/store"
)

// Barramento is what the time-window check needs from the bus: the raw
// message stored at a stream sequence, its subject and its bus time.
// (*bus.Bus).MsgPorSequencia satisfies it.
type Barramento interface {
	MsgPorSequencia(ctx context.Context, seq uint64) (data []byte, subject string, t time.Time, err error)
}

// Banco is what the verifier reads of the database, through store's
// domain methods (store.Tx over the pool, from Store.Read).
type Banco interface {
	AuditoriaPorSorteio(ctx context.Context, eventIDSorteio uuid.UUID) (store.AuditoriaDoSorteio, bool, error)
	AtribuicaoPorSorteio(ctx context.Context, eventIDSorteio uuid.UUID) (store.AtribuicaoDoSorteio, bool, error)
	// OutboxPorEvento reads the queued event, here conselheiro.sorteado.
	OutboxPorEvento(ctx context.Context, eventID uuid.UUID) (store.EventoNoOutbox, bool, error)
	// SegueGatilho: the draw's record was logged under the trigger's rule
	// (CONTRACT §4).
	SegueGatilho(ctx context.Context, eventIDSorteio uuid.UUID) (bool, error)
	// RegrasDoSorteio reads the d6a.regras_sorteio record recorded last,
	// RegrasSorteioAntes the last one before a leaf.
	RegrasDoSorteio(ctx context.Context) (gatilhoDesde int64, registro []byte, err error)
	RegrasSorteioAntes(ctx context.Context, antes int64) ([]byte, error)
	// IndicesDoLog and FolhasDoLog read the log's records: a rule with
	// witnesses has C checked against the cosignatures recorded there.
	IndicesDoLog(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]int64, error)
	FolhasDoLog(ctx context.Context, inicio, fim int64, limite int) ([]store.FolhaDoLog, error)
}

// FolgaPadrao is the clock skew allowed between D-6a's clock (T) and the
// bus server's (docs/verificacao.md §3.7).
const FolgaPadrao = time.Second

// NotaSemBarramento is printed when the time window could not be checked.
const NotaSemBarramento = "janela de tempo: não verificada (barramento indisponível)"

// ErrNaoEncontrado: no audit record has that event_id_sorteio.
var ErrNaoEncontrado = errors.New("no such draw")

// Opcoes of a verification.
type Opcoes struct {
	// Barramento is the bus; nil skips the time window with a note.
	Barramento Barramento
	// Folga is the clock skew allowed on each side of the window; zero
	// means FolgaPadrao, a negative value none.
	Folga time.Duration
}

func (o Opcoes) folga() time.Duration {
	switch {
	case o.Folga == 0:
		return FolgaPadrao
	case o.Folga < 0:
		return 0
	}
	return o.Folga
}

// divergencia is the first disagreement found, as registro.Falha, the one
// type of a failed check: campo names the source and the field, e.g.
// "auditoria.seed", "auditoria.ordenados[2]", "atribuicao.conselheiro_id",
// "outbox.payload.seed_publico", "barramento.base", "janela.inicio";
// encontrado is the value the source holds, esperado what it should hold
// (recomputed, or read from the audit record).
func divergencia(campo string, encontrado, esperado any) *registro.Falha {
	return registro.NovaFalha(campo, encontrado, esperado)
}

// Janela is the checked time window: base bus time ≤ T ≤ publication bus
// time. Inicio is zero for a fallback draw (no base on the bus).
type Janela struct {
	Inicio time.Time
	T      time.Time
	Fim    time.Time
}

// Relatorio summarises a verified draw.
type Relatorio struct {
	EventID      uuid.UUID
	Selecionado  uuid.UUID
	Total        int
	Degrau       uuid.UUID
	Base         string
	BaseFallback bool
	BaseSequence *int64
	Timestamp    string
	// Gatilho: the draw follows the trigger's rule (CONTRACT §4); base and
	// T were checked exactly when Janela is set.
	Gatilho bool
	// Janela is set when the window (or, under Gatilho, the trigger) was
	// checked.
	Janela *Janela
	// Notas are what was not (fully) checked, one line each.
	Notas []string
	// Rodada is the beacon round checked (nil: a draw before its rule),
	// Cadeia the chain the rule record names.
	Rodada *int64
	Cadeia string
}

// String is the report d6a verify prints on success.
func (r Relatorio) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "OK event_id=%s selecionado=%s total=%d degrau=%s\n", r.EventID, r.Selecionado, r.Total, r.Degrau)
	if r.BaseFallback {
		fmt.Fprintf(&b, "base: %s (fallback: UUID gerado pelo D-6a, sem âncora no barramento)\n", r.Base)
	} else if r.BaseSequence != nil {
		fmt.Fprintf(&b, "base: %s (sequence %d)\n", r.Base, *r.BaseSequence)
	}
	if j := r.Janela; j != nil && r.Gatilho {
		fmt.Fprintf(&b, "gatilho: base e T=%s são os da mensagem %d do barramento (armazenada em %s)\n", r.Timestamp, *r.BaseSequence, sorteio.FormatTimestamp(j.Inicio))
	} else if j != nil {
		ini := "—"
		if !j.Inicio.IsZero() {
			ini = sorteio.FormatTimestamp(j.Inicio)
		}
		fmt.Fprintf(&b, "janela de tempo: %s ≤ T=%s ≤ %s", ini, r.Timestamp, sorteio.FormatTimestamp(j.Fim))
		if !j.Inicio.IsZero() {
			fmt.Fprintf(&b, " (largura %s)", j.Fim.Truncate(time.Millisecond).Sub(j.Inicio.Truncate(time.Millisecond)))
		}
		b.WriteByte('\n')
	}
	if r.Rodada != nil {
		fmt.Fprintf(&b, "beacon: rodada %d da cadeia %s: assinatura, randomness e escolha da rodada conferidas\n", *r.Rodada, r.Cadeia)
	}
	for _, n := range r.Notas {
		b.WriteString(n)
		b.WriteByte('\n')
	}
	return b.String()
}

// Verificar checks the draw whose conselheiro.sorteado has event_id
// eventID. It returns the report and nil when everything agrees, a
// *registro.Falha for the first disagreement, ErrNaoEncontrado when there is
// no such draw, or another error when the database cannot be read.
func Verificar(ctx context.Context, st *store.Store, eventID uuid.UUID, o Opcoes) (Relatorio, error) {
	var q Banco = st.Read()
	aud, achou, err := q.AuditoriaPorSorteio(ctx, eventID)
	if err != nil {
		return Relatorio{}, fmt.Errorf("reading d6a.auditoria_sorteios: %w", err)
	} else if !achou {
		return Relatorio{}, fmt.Errorf("%w: event_id_sorteio %s is not in d6a.auditoria_sorteios", ErrNaoEncontrado, eventID)
	}
	rel := Relatorio{
		EventID: eventID, Selecionado: aud.Selecionado, Total: len(aud.ElegiveisEntrada), Degrau: aud.Degrau,
		Base: aud.Base, BaseFallback: aud.BaseFallback, BaseSequence: aud.BaseSequence, Timestamp: aud.TimestampSorteio,
	}

	// 1 + 2: the audit record alone.
	T, err := conferirAuditoria(aud)
	if err != nil {
		return rel, err
	}
	// The beacon round (CONTRACT §4a), under the rule in force at the
	// draw: the log's last d6a.regras_sorteio record before it.
	if aud.Rodada != nil {
		regras, j, err := regrasEmVigor(ctx, q, eventID)
		if err != nil {
			return rel, err
		}
		if err := conferirRodada(ctx, q, regras, aud, j); err != nil {
			return rel, err
		}
		rel.Rodada, rel.Cadeia = aud.Rodada, regras.NomeCadeia()
		if regras.Quorum > 0 {
			rel.Notas = append(rel.Notas, fmt.Sprintf("compromisso: C=%s, a %dª primeira cossinatura das testemunhas registrada no log", deref(aud.Compromisso), regras.Quorum))
		}
	}

	// 3: the assignment row.
	at, achou, err := q.AtribuicaoPorSorteio(ctx, eventID)
	if err != nil {
		return rel, fmt.Errorf("reading d6a.atribuicoes: %w", err)
	} else if !achou {
		return rel, divergencia("atribuicao", "no row with event_id_sorteio "+eventID.String(), "the assignment of the draw")
	}
	if err := conferirAtribuicao(aud, at, T); err != nil {
		return rel, err
	}

	// 4: the published event, as queued in the outbox.
	ob, achou, err := q.OutboxPorEvento(ctx, eventID)
	if err != nil {
		return rel, fmt.Errorf("reading d6a.outbox: %w", err)
	} else if !achou {
		return rel, divergencia("outbox", "no conselheiro.sorteado with event_id "+eventID.String(), "the published event of the draw")
	}
	if err := conferirEnvelope(aud, ob.Envelope, "outbox"); err != nil {
		return rel, err
	}

	// 5: the bus. A draw logged under the trigger's rule (CONTRACT §4) is
	// checked exactly against its trigger; an earlier one by its window.
	gatilho, err := q.SegueGatilho(ctx, eventID)
	if err != nil {
		return rel, fmt.Errorf("reading d6a.transparencia_regras: %w", err)
	}
	if gatilho && aud.BaseSequence != nil {
		rel.Gatilho = true
		if o.Barramento == nil {
			rel.Notas = append(rel.Notas, NotaSemBarramento)
			return rel, nil
		}
		data, _, t0, err := o.Barramento.MsgPorSequencia(ctx, uint64(*aud.BaseSequence))
		if err != nil {
			rel.Notas = append(rel.Notas, NotaSemBarramento, "  barramento: "+err.Error())
			return rel, nil
		}
		if id, _ := evento.LerEventID(data); id != aud.Base {
			return rel, divergencia("gatilho.base", aud.Base, id+fmt.Sprintf(" (event_id of the trigger at sequence %d)", *aud.BaseSequence))
		}
		if t := sorteio.FormatTimestamp(t0); t != aud.TimestampSorteio {
			return rel, divergencia("gatilho.timestamp", aud.TimestampSorteio, t+fmt.Sprintf(" (bus time of the trigger at sequence %d)", *aud.BaseSequence))
		}
		rel.Janela = &Janela{Inicio: t0, T: T, Fim: t0}
		return rel, nil
	}
	if err := conferirJanela(ctx, aud, ob, T, o, &rel); err != nil {
		return rel, err
	}
	return rel, nil
}

// conferirAuditoria is docs §3.1 (the audit's own part) and §3.2–3.5.
func conferirAuditoria(aud store.AuditoriaDoSorteio) (time.Time, error) {
	T, err := sorteio.ParseTimestamp(aud.TimestampSorteio)
	if err != nil {
		return T, divergencia("auditoria.timestamp_sorteio", aud.TimestampSorteio, "YYYY-MM-DDTHH:MM:SS.mmmZ")
	}
	if len(aud.ElegiveisEntrada) == 0 {
		return T, divergencia("auditoria.elegiveis_entrada", "[]", "at least one eligible counsellor")
	}
	for i, id := range aud.ElegiveisEntrada {
		if id != strings.ToLower(id) {
			return T, divergencia("auditoria.elegiveis_entrada["+strconv.Itoa(i)+"]", id, strings.ToLower(id))
		}
		if i > 0 && aud.ElegiveisEntrada[i-1] >= id {
			return T, divergencia("auditoria.elegiveis_entrada["+strconv.Itoa(i)+"]", id,
				"an id above "+aud.ElegiveisEntrada[i-1]+" (strictly ascending)")
		}
	}
	if aud.Excluido != nil && slices.Contains(aud.ElegiveisEntrada, aud.Excluido.String()) {
		return T, divergencia("auditoria.excluido", aud.Excluido.String(), "a counsellor outside elegiveis_entrada")
	}
	if !slices.Contains(aud.Cadeia, aud.Degrau.String()) {
		return T, divergencia("auditoria.degrau", aud.Degrau.String(), "one of cadeia "+strings.Join(aud.Cadeia, ","))
	}
	if aud.ConselheiroID != aud.Selecionado {
		return T, divergencia("auditoria.conselheiro_id", aud.ConselheiroID, aud.Selecionado)
	}
	if aud.BaseFallback && aud.BaseSequence != nil {
		return T, divergencia("auditoria.base_sequence", ptrTexto(aud.BaseSequence), "null on a fallback draw")
	}
	if !aud.BaseFallback && aud.BaseSequence == nil {
		return T, divergencia("auditoria.base_sequence", "null", "the stream sequence of the base event")
	}

	sel := aud.Selecionado.String()
	_, err = sorteio.Verificar(sorteio.Alegacao{
		Base: aud.Base, Timestamp: aud.TimestampSorteio, Elegiveis: aud.ElegiveisEntrada,
		Randomness: registro.Randomness(deref(aud.AssinaturaRodada)),
		Seed:       &aud.Seed, Ordenados: aud.Ordenados, Selecionado: &sel, ListaHash: &aud.ListaElegiveisHash,
	})
	var d *sorteio.Divergencia
	switch {
	case errors.As(err, &d):
		campo := "auditoria." + d.Campo
		if d.Campo == "ordenados" && d.Posicao >= 0 {
			campo += "[" + strconv.Itoa(d.Posicao) + "]"
		}
		return T, &registro.Falha{Campo: campo, Encontrado: d.Alegado, Esperado: d.Calculado}
	case err != nil:
		return T, &registro.Falha{Campo: "auditoria", Encontrado: err.Error(), Esperado: "a draw that can be recomputed"}
	}
	return T, nil
}

// conferirAtribuicao: the assignment row agrees with the audit.
func conferirAtribuicao(aud store.AuditoriaDoSorteio, at store.AtribuicaoDoSorteio, T time.Time) error {
	hash := ""
	if at.ListaElegiveisHash != nil {
		hash = *at.ListaElegiveisHash
	}
	checks := []struct {
		campo                string
		encontrado, esperado any
	}{
		{"id", at.ID, aud.AtribuicaoID},
		{"conselheiro_id", at.ConselheiroID, aud.Selecionado},
		{"demanda_id", at.DemandaID, aud.DemandaID},
		{"unidade_civica_id", at.UC, aud.UC},
		{"seed_publico", at.SeedPublico, aud.Seed},
		{"lista_elegiveis_hash", hash, aud.ListaElegiveisHash},
		{"total_elegiveis", at.TotalElegiveis, len(aud.ElegiveisEntrada)},
		{"posicao_sorteada", at.PosicaoSorteada, sorteio.PosicaoSorteada},
		{"metodo_sorteio", at.MetodoSorteio, sorteio.Metodo},
	}
	for _, c := range checks {
		if fmt.Sprint(c.encontrado) != fmt.Sprint(c.esperado) {
			return divergencia("atribuicao."+c.campo, c.encontrado, c.esperado)
		}
	}
	// data_sorteio is the service's clock at the decision (it times the
	// response), which comes after its trigger was stored at T (CONTRACT
	// §4) by however long delivery took; centisecond precision (spec 2.3)
	// and the clocks' skew allowed.
	if d := at.DataSorteio.Sub(T); d < -FolgaPadrao {
		return divergencia("atribuicao.data_sorteio", at.DataSorteio.UTC().Format(time.RFC3339Nano), "≥ "+aud.TimestampSorteio+" (after the trigger's bus time)")
	}
	return nil
}

// envelopeSorteado is the published conselheiro.sorteado (CONTRACT §3).
type envelopeSorteado struct {
	EventID      string          `json:"event_id"`
	Tipo         string          `json:"tipo"`
	Origem       string          `json:"origem"`
	VersaoSchema string          `json:"versao_schema"`
	Timestamp    string          `json:"timestamp"`
	Payload      json.RawMessage `json:"payload"`
}

// conferirEnvelope is docs §3.1: the event against the audit record. fonte
// names where the bytes came from ("outbox" or "barramento.sorteado").
func conferirEnvelope(aud store.AuditoriaDoSorteio, data []byte, fonte string) error {
	var env envelopeSorteado
	if err := json.Unmarshal(data, &env); err != nil {
		return divergencia(fonte, "an envelope that is not JSON ("+err.Error()+")", "the conselheiro.sorteado envelope")
	}
	var pl map[string]any
	if err := json.Unmarshal(env.Payload, &pl); err != nil || pl == nil {
		return divergencia(fonte+".payload", string(env.Payload), "a JSON object")
	}
	checks := []struct {
		campo                string
		encontrado, esperado any
	}{
		{"event_id", env.EventID, aud.EventIDSorteio.String()},
		{"tipo", env.Tipo, string(evento.ConselheiroSorteado)},
		{"origem", env.Origem, "D-6a"},
		{"timestamp", env.Timestamp, aud.TimestampSorteio},
		{"payload.conselheiro_id", pl["conselheiro_id"], aud.Selecionado.String()},
		{"payload.demanda_id", pl["demanda_id"], aud.DemandaID.String()},
		{"payload.unidade_civica_id", pl["unidade_civica_id"], aud.UC.String()},
		{"payload.metodo_sorteio", pl["metodo_sorteio"], sorteio.Metodo},
		{"payload.seed_publico", pl["seed_publico"], aud.Seed},
		{"payload.lista_elegiveis_hash", pl["lista_elegiveis_hash"], aud.ListaElegiveisHash},
		{"payload.posicao_sorteada", pl["posicao_sorteada"], float64(sorteio.PosicaoSorteada)},
		{"payload.total_elegiveis", pl["total_elegiveis"], float64(len(aud.ElegiveisEntrada))},
		{"payload.timestamp", pl["timestamp"], aud.TimestampSorteio},
	}
	for _, c := range checks {
		if c.encontrado != c.esperado {
			return divergencia(fonte+"."+c.campo, texto(c.encontrado), texto(c.esperado))
		}
	}
	return nil
}

// conferirJanela is docs §3.7: the base is a real bus event and
// t0 ≤ T ≤ t1 within the allowed skew. Without a bus (or when it does not
// answer) the check is skipped with NotaSemBarramento.
func conferirJanela(ctx context.Context, aud store.AuditoriaDoSorteio, ob store.EventoNoOutbox, T time.Time, o Opcoes, rel *Relatorio) error {
	if o.Barramento == nil {
		rel.Notas = append(rel.Notas, NotaSemBarramento)
		return nil
	}
	folga := o.folga()
	j := &Janela{T: T}
	if aud.BaseFallback {
		rel.Notas = append(rel.Notas, "base: fallback, sem evento no barramento; só o fim da janela é verificável")
	} else {
		data, _, t0, err := o.Barramento.MsgPorSequencia(ctx, uint64(*aud.BaseSequence))
		if err != nil {
			rel.Notas = append(rel.Notas, NotaSemBarramento, "  barramento: "+err.Error())
			return nil
		}
		id, _ := evento.LerEventID(data)
		if id != aud.Base {
			return divergencia("barramento.base", id, aud.Base)
		}
		j.Inicio = t0
		// T is truncated to the millisecond; so is t0 (docs §3.7).
		if T.Before(t0.Truncate(time.Millisecond).Add(-folga)) {
			return divergencia("janela.inicio", "T="+aud.TimestampSorteio,
				fmt.Sprintf("T ≥ %s (bus time of the base event, sequence %d, skew %s)", sorteio.FormatTimestamp(t0), *aud.BaseSequence, folga))
		}
	}
	if ob.Sequence == nil {
		rel.Notas = append(rel.Notas, "janela de tempo: fim não verificado (conselheiro.sorteado ainda não publicado)")
		return nil
	}
	data, _, t1, err := o.Barramento.MsgPorSequencia(ctx, uint64(*ob.Sequence))
	if err != nil {
		rel.Notas = append(rel.Notas, NotaSemBarramento, "  barramento: "+err.Error())
		return nil
	}
	if err := conferirEnvelope(aud, data, "barramento.sorteado"); err != nil {
		return err
	}
	j.Fim = t1
	if T.After(t1.Add(folga)) {
		return divergencia("janela.fim", "T="+aud.TimestampSorteio,
			fmt.Sprintf("T ≤ %s (bus time of the published conselheiro.sorteado, sequence %d, skew %s)", sorteio.FormatTimestamp(t1), *ob.Sequence, folga))
	}
	rel.Janela = j
	return nil
}

func texto(v any) string {
	switch v := v.(type) {
	case nil:
		return "(absent)"
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func ptrTexto(p *int64) string {
	if p == nil {
		return "null"
	}
	return strconv.FormatInt(*p, 10)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// regrasEmVigor is the d6a.regras_sorteio record in force at the draw
// eventID: the one recorded last, unless the draw's record precedes it
// (a later start changed the rule), then the log's last one before the
// draw. j is the draw's index in the log (0 when it has none).
func regrasEmVigor(ctx context.Context, q Banco, eventID uuid.UUID) (regras registro.RegrasSorteio, j int64, err error) {
	nenhuma := divergencia("regras_sorteio", "none recorded before the draw", "the d6a.regras_sorteio record the round follows")
	_, dados, err := q.RegrasDoSorteio(ctx)
	if err != nil {
		return regras, 0, fmt.Errorf("reading d6a.transparencia_regras: %w", err)
	}
	f, err := registro.LerRegistravel(dados)
	regras, ok := f.(registro.RegrasSorteio)
	if err != nil || !ok {
		return regras, 0, nenhuma
	}
	idx, err := q.IndicesDoLog(ctx, []uuid.UUID{regras.EventID, eventID})
	if err != nil {
		return regras, 0, fmt.Errorf("reading d6a.transparencia_registros: %w", err)
	}
	j, temSorteio := idx[eventID]
	if i, ok := idx[regras.EventID]; !temSorteio || !ok || i < j {
		return regras, j, nil
	}
	if dados, err = q.RegrasSorteioAntes(ctx, j); err != nil {
		return regras, j, fmt.Errorf("reading d6a.transparencia_registros: %w", err)
	}
	f, err = registro.LerRegistravel(dados)
	if regras, ok = f.(registro.RegrasSorteio); err != nil || !ok {
		return regras, j, nenhuma
	}
	return regras, j, nil
}

// folhasPorLeitura is how many records conferirRodada reads at a time
// between a trigger's commitment and its draw.
const folhasPorLeitura = 1000

// conferirRodada checks the audit row's round under regras by the walks'
// own rule (registro.RegrasEmVigor.ConferirSorteio), and with witnesses its
// C: the log's records from the trigger's d6a.compromisso record up to the
// draw at index j are handed to that rule as a walk hands them.
func conferirRodada(ctx context.Context, q Banco, regras registro.RegrasSorteio, aud store.AuditoriaDoSorteio, j int64) error {
	v := registro.RegrasEmVigor{Regras: &regras}
	if gatilho, err := uuid.Parse(aud.Base); err == nil && regras.Quorum > 0 {
		comp := registro.IDCompromisso(gatilho)
		idx, err := q.IndicesDoLog(ctx, []uuid.UUID{comp})
		if err != nil {
			return fmt.Errorf("reading d6a.transparencia_registros: %w", err)
		}
		i, ok := idx[comp]
		for inicio := i; ok && inicio < j; {
			folhas, err := q.FolhasDoLog(ctx, inicio, j, folhasPorLeitura)
			if err != nil {
				return fmt.Errorf("reading d6a.transparencia_registros: %w", err)
			}
			if len(folhas) == 0 {
				break
			}
			for _, f := range folhas {
				inicio = f.Indice + 1
				if lido, err := registro.LerRegistravel(f.Registro); err == nil {
					if err := v.Anotar(f.Indice, lido); err != nil {
						return fmt.Errorf("registro %d: %w", f.Indice, err)
					}
				}
			}
		}
	}
	return v.ConferirSorteio(registro.Registro{Base: aud.Base, Timestamp: aud.TimestampSorteio, Rodada: aud.Rodada,
		AssinaturaRodada: deref(aud.AssinaturaRodada), Compromisso: deref(aud.Compromisso)})
}
