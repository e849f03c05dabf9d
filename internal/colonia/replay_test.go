package colonia_test

import (
	"errors"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/formigueiro/d6a/internal/config"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/httpapi"
	"github.com/formigueiro/d6a/internal/pgtest"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/replay"
	"github.com/formigueiro/d6a/internal/sorteio"
	"github.com/formigueiro/d6a/internal/transparencia"
	"github.com/formigueiro/d6a/internal/verificar/log"
)

// historia runs a colony through registrations, draws, a queue, cycle ends
// and refusals, every input by the bus, and returns its log's records in
// order, with the two counsellors of the unit where a cycle end frees the
// only counsellor for the next demand (so and uc).
func historia(t *testing.T) (c *harness, regs []registro.Registravel, so, bairro uuid.UUID) {
	t.Helper()
	c, bairro = coloniaNoBairro(t)
	a := c.novoConselheiro(bairro)
	b := c.novoConselheiro(bairro)
	d1, x1 := c.novaDemanda(bairro)
	d2, x2 := c.novaDemanda(bairro)
	must(t, x1 != uuid.Nil && x2 != uuid.Nil && x1 != x2, "two draws to %v, %v", x1, x2)
	d3, x3 := c.novaDemanda(bairro) // both busy: queued
	must(t, x3 == uuid.Nil, "third demand drawn to %v", x3)
	c.processar(evento.CicloConcluido, "1.0.0", ciclo(x1, d1, bairro)) // frees x1, the sweep draws d3
	c.eventually("d3 drawn by the sweep", func() bool { return c.ativa(d3) == x1 })
	c.processar(evento.AtribuicaoRecusada, "1.1.0", recusa(x2, d2, bairro, "risco_pessoal")) // re-draw: nobody else free
	c.processar(evento.CicloConcluido, "1.0.0", ciclo(x1, d3, bairro))
	c.eventually("d2 drawn again", func() bool { return c.ativa(d2) != uuid.Nil })
	_ = a
	_ = b

	// A unit with one counsellor: a cycle end frees them for the next item.
	so = c.novaUC()
	m := c.novoConselheiro(so)
	e1, y1 := c.novaDemanda(so)
	must(t, y1 == m, "drawn to %v", y1)
	c.processar(evento.CicloConcluido, "1.0.0", ciclo(m, e1, so))
	_, y2 := c.novaDemanda(so)
	must(t, y2 == m, "drawn to %v", y2)
	c.novaDemanda(c.novaUC()) // nobody registered there: sem_candidatos
	c.esperarOutboxVazio()

	return c, c.registrosDoLog(), so, bairro
}

// registrosDoLog reads every record of the colony's log, in order.
func (c *harness) registrosDoLog() (regs []registro.Registravel) {
	t := c.t
	t.Helper()
	rows, err := c.pool.Query(t.Context(), `SELECT registro FROM d6a.transparencia_registros ORDER BY indice`)
	must(t, err == nil, "%v", err)
	defer rows.Close()
	for rows.Next() {
		var b []byte
		must(t, rows.Scan(&b) == nil, "scan")
		f, err := registro.LerRegistravel(b)
		must(t, err == nil, "record %s: %v", b, err)
		regs = append(regs, f)
	}
	return regs
}

// servirAdulterado publishes regs as a log of their own, the tree rebuilt
// and its checkpoint signed with the colony's own key (what an operator
// could serve), through the real public API, and replays it as `d6a
// verify --url --all --replay` does with D6A_NATS_URL set, trusting that
// key. alvo, when set, is the counsellor of `--conselheiro`.
func (c *harness) servirAdulterado(regs []registro.Registravel, alvo uuid.UUID) log.ResumoReplay {
	return c.servirEm(regs, replay.Novo(alvo))
}

// servirEm is servirAdulterado into a replay set up by the caller (a
// demand's own check).
func (c *harness) servirEm(regs []registro.Registravel, rp *replay.Replay) log.ResumoReplay {
	t := c.t
	t.Helper()
	base, chave := c.publicarLog(regs)
	cli := &log.Cliente{Base: base, Chave: chave.Verificador, Barramento: c.w.Bus}
	res, err := cli.ReproduzirEm(t.Context(), rp, nil)
	must(t, err == nil && res.Registros == int64(len(regs)), "replay of the rigged log: %v (%d records)", err, res.Registros)
	return res
}

// publicarLog serves regs as a log of their own, the tree rebuilt and its
// checkpoint signed with the colony's own key (what an operator could
// serve), through the real public API and its tiles.
func (c *harness) publicarLog(regs []registro.Registravel) (string, transparencia.Chave) {
	t := c.t
	t.Helper()
	ctx := t.Context()
	st := pgtest.New(t)
	err := pgx.BeginTxFunc(ctx, st.Pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		e, err := transparencia.LerEstado(ctx, tx)
		if err != nil {
			return err
		}
		return e.AnexarRegistraveis(ctx, tx, regs)
	})
	must(t, err == nil, "append the rigged log: %v", err)
	arquivo := c.cfg.LogKeyFile
	if arquivo == "" {
		arquivo = filepath.Join(c.cfg.DataDir, transparencia.ArquivoChaveDev)
	}
	chave, err := transparencia.CarregarChave(arquivo)
	must(t, err == nil, "the colony's key: %v", err)
	_, err = transparencia.Assinar(ctx, st.Pool, chave, c.cfg.LogOrigin)
	must(t, err == nil, "sign the rigged log: %v", err)
	app, err := httpapi.New(httpapi.Options{Config: config.Config{}, Store: st, ChaveLog: chave.Verificador})
	must(t, err == nil, "%v", err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err == nil, "%v", err)
	go func() { _ = httpapi.Servir(app, ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	return "http://" + ln.Addr().String(), chave
}

// CONTRACT §7 "Replay", issue 22: the log of an honest colony replays with
// no divergence, every counsellor known; logs rigged but self-consistent
// (each draw recomputed so that it verifies by itself) are caught, the
// record and the counsellor named, and the counsellor's own check names
// the decision that left them out.
func TestReplayDoLog(t *testing.T) {
	t.Parallel()
	c, regs, so, _ := historia(t)

	// Honest: through the public routes, as `verify --url --all --replay`.
	cli := &log.Cliente{Base: "http://" + c.w.Addr.String(), Barramento: c.w.Bus}
	res, err := cli.Reproduzir(t.Context(), uuid.Nil, nil)
	must(t, err == nil && res.Primeira == nil, "replay: %v / %v", err, res.Primeira)
	rp := res.Replay
	must(t, len(rp.Divergencias) == 0, "honest log diverges: %v", rp.Divergencias)
	must(t, rp.Desconhecidos() == 0 && rp.Decisoes >= 8, "%d unknown counsellors, %d decisions", rp.Desconhecidos(), rp.Decisoes)
	must(t, strings.HasPrefix(res.Linha(), "replay: registros=") && strings.Contains(res.Linha(), " divergencias=0 "), "summary %q", res.Linha())
	sorteios := 0
	for _, r := range regs {
		if _, ok := r.(registro.Registro); ok {
			sorteios++
		}
	}
	must(t, res.Gatilhos == int64(sorteios), "%d triggers checked on the bus, want every draw's (%d)", res.Gatilhos, sorteios)
	must(t, res.Barramento && rp.Mensagens >= 7 && rp.Registradas+rp.SemEfeito == rp.Mensagens && rp.Invalidas == 0,
		"the bus's input messages against the records: checked %v, %d messages, %d recorded, %d without effect, %d invalid", res.Barramento, rp.Mensagens, rp.Registradas, rp.SemEfeito, rp.Invalidas)

	// Each input record is its consumed message: checked on the bus, and a
	// record naming another demand than its message is caught.
	k := slices.IndexFunc(regs, func(r registro.Registravel) bool {
		e, ok := r.(registro.Entrada)
		return ok && e.Tipo == registro.TipoCicloConcluido
	})
	must(t, k >= 0, "no cycle end in the log")
	ciclo := regs[k].(registro.Entrada)
	conferiu, err := registro.ConferirEntrada(t.Context(), c.w.Bus, ciclo)
	must(t, conferiu && err == nil, "the cycle end's record against its message: %v %v", conferiu, err)
	outraDemanda := uuid.New()
	ciclo.DemandaID = &outraDemanda
	var fa *registro.Falha
	_, err = registro.ConferirEntrada(t.Context(), c.w.Bus, ciclo)
	must(t, errors.As(err, &fa) && fa.Campo == "demanda_id", "a cycle end's record naming another demand: %v", err)

	// 1. A draw whose list lacks one available counsellor, ordenados, hash
	// and winner recomputed so the record verifies by itself.
	i := slices.IndexFunc(regs, func(r registro.Registravel) bool {
		s, ok := r.(registro.Registro)
		return ok && len(s.ElegiveisEntrada) >= 2
	})
	must(t, i >= 0, "no draw among two")
	orig := regs[i].(registro.Registro)
	fora := orig.ElegiveisEntrada[0]
	rig := orig
	rig.ElegiveisEntrada = orig.ElegiveisEntrada[1:]
	r, err := sorteio.SortearComRodada(rig.Base, rig.Timestamp, registro.Randomness(rig.AssinaturaRodada), rig.ElegiveisEntrada)
	must(t, err == nil, "%v", err)
	rig.Ordenados, rig.ListaElegiveisHash, rig.Seed = r.Ordenados, r.ListaHash, r.Seed
	rig.ConselheiroID = uuid.MustParse(r.Selecionado)
	must(t, registro.Conferir(rig) == nil, "the rigged draw does not verify by itself")
	rigado := slices.Clone(regs)
	rigado[i] = rig
	rp = c.servirAdulterado(rigado, uuid.Nil).Replay
	must(t, len(rp.Divergencias) > 0 && rp.Divergencias[0].Indice == int64(i) && rp.Divergencias[0].Conselheiro != nil &&
		rp.Divergencias[0].Conselheiro.String() == fora, "list without %s: %v", fora, rp.Divergencias)
	proprio := c.servirAdulterado(rigado, uuid.MustParse(fora)).Replay
	must(t, len(proprio.Deixado) >= 1 && proprio.Deixado[0].Indice == int64(i), "the counsellor's own check: left out of %v, want record %d", proprio.Deixado, i)
	honesto, err := cli.Reproduzir(t.Context(), uuid.MustParse(fora), nil)
	must(t, err == nil && len(honesto.Replay.Deixado) == 0 && len(honesto.Replay.Linha) > 0, "honest log: %v, left out of %v; timeline %v", err, honesto.Replay.Deixado, honesto.Replay.Linha)

	// 2. A sorteio.sem_candidatos that hides an available counsellor: the
	// draw replaced by "everyone busy", counts to match.
	sem := registro.NovoSemCandidatos(orig.EventIDSorteio, orig.DemandaID, orig.UnidadeCivicaID, orig.BaseSequence, orig.Timestamp,
		"todos_ocupados", uuidsDe(orig.Cadeia), 2, 2, orig.Excluido)
	must(t, registro.ConferirRegistravel(sem) == nil, "the rigged sem_candidatos does not verify by itself")
	rigado = slices.Clone(regs)
	rigado[i] = sem
	rp = c.servirAdulterado(rigado, uuid.Nil).Replay
	must(t, len(rp.Divergencias) > 0 && rp.Divergencias[0].Indice == int64(i) && rp.Divergencias[0].Conselheiro != nil,
		"sem_candidatos hiding a counsellor: %v", rp.Divergencias)
	proprio = c.servirAdulterado(rigado, *rp.Divergencias[0].Conselheiro).Replay
	must(t, len(proprio.Deixado) >= 1 && proprio.Deixado[0].Indice == int64(i), "own check of the hidden counsellor: %v", proprio.Deixado)

	// 3. An input applied after a decision whose trigger comes later: the
	// cycle end that freed so's only counsellor moved after the draw that
	// needed them free.
	j := slices.IndexFunc(regs, func(r registro.Registravel) bool {
		e, ok := r.(registro.Entrada)
		return ok && e.Tipo == registro.TipoCicloConcluido && cadeiaDe(regs, e) == so
	})
	must(t, j >= 0 && j+2 < len(regs), "no cycle end in the one-counsellor unit")
	varredura, ok := regs[j+1].(registro.Entrada)
	must(t, ok && varredura.Tipo == registro.TipoVarredura && *varredura.UnidadeCivicaID == so, "record after the cycle end is %v, want the sweep of its unit", regs[j+1])
	_, proximo := regs[j+2].(registro.Registro)
	must(t, proximo, "record after the sweep is %T, want its unit's next draw", regs[j+2])
	rigado = slices.Clone(regs[:j])
	rigado = append(rigado, regs[j+2], regs[j], regs[j+1])
	rigado = append(rigado, regs[j+3:]...)
	rp = c.servirAdulterado(rigado, uuid.Nil).Replay
	must(t, len(rp.Divergencias) > 0 && rp.Divergencias[0].Indice == int64(j), "input after the decision it precedes: %v", rp.Divergencias)

	// 3b. An input dropped: the same cycle end (and its sweep) left out of
	// the log, and the draw it made possible told as "everyone busy". The
	// log is consistent by itself (the replay without the bus finds
	// nothing); the bus has the cycle end, and the check of its input
	// messages names it and the counsellor it freed.
	draw := regs[j+2].(registro.Registro)
	liberado := *regs[j].(registro.Entrada).ConselheiroID
	rigado = slices.Clone(regs[:j])
	rigado = append(rigado, registro.NovoSemCandidatos(draw.EventIDSorteio, draw.DemandaID, draw.UnidadeCivicaID, draw.BaseSequence, draw.Timestamp,
		"todos_ocupados", uuidsDe(draw.Cadeia), 1, 1, nil))
	rigado = append(rigado, regs[j+3:]...)
	sozinho := replay.Novo(uuid.Nil)
	for k, r := range rigado {
		sozinho.Aplicar(int64(k), r)
	}
	sozinho.Fechar()
	must(t, len(sozinho.Divergencias) == 0, "the log without the cycle end, replayed without the bus: %v", sozinho.Divergencias)
	res = c.servirAdulterado(rigado, uuid.Nil)
	rp = res.Replay
	must(t, res.Barramento && len(rp.Divergencias) == 1 && rp.Divergencias[0].Indice == int64(j) && rp.Divergencias[0].Conselheiro != nil &&
		*rp.Divergencias[0].Conselheiro == liberado && strings.Contains(rp.Divergencias[0].Motivo, registro.TipoCicloConcluido),
		"a cycle end dropped from the log: %v, want record %d naming %s", rp.Divergencias, j, liberado)

	// 3c. A cycle end whose record keeps the freed counsellor busy, as if
	// another assignment were active: the state machine, run by the
	// handlers and the replay alike, gives disponivel.
	rigado = slices.Clone(regs)
	ocupado := regs[j].(registro.Entrada)
	ocupado.Status = "ocupado"
	rigado[j] = ocupado
	rp = c.servirAdulterado(rigado, uuid.Nil).Replay
	must(t, len(rp.Divergencias) > 0 && rp.Divergencias[0].Indice == int64(j) && rp.Divergencias[0].Conselheiro != nil &&
		*rp.Divergencias[0].Conselheiro == liberado && strings.Contains(rp.Divergencias[0].Motivo, "spec 4.6"),
		"a cycle end recorded as leaving its counsellor busy: %v", rp.Divergencias)

	// 4. A draw whose T is 1 ms after its trigger's stream time, seed,
	// order and winner recomputed: every record verifies by itself and the
	// replay agrees (T changes no eligibility here), but the trigger on the
	// bus does not.
	rig = orig
	tt, err := sorteio.ParseTimestamp(orig.Timestamp)
	must(t, err == nil, "%v", err)
	rig.Timestamp = sorteio.FormatTimestamp(tt.Add(time.Millisecond))
	r, err = sorteio.SortearComRodada(rig.Base, rig.Timestamp, registro.Randomness(rig.AssinaturaRodada), rig.ElegiveisEntrada)
	must(t, err == nil, "%v", err)
	rig.Ordenados, rig.ListaElegiveisHash, rig.Seed = r.Ordenados, r.ListaHash, r.Seed
	rig.ConselheiroID = uuid.MustParse(r.Selecionado)
	must(t, registro.Conferir(rig) == nil, "the rigged draw does not verify by itself")
	rigado = slices.Clone(regs)
	rigado[i] = rig
	res = c.servirAdulterado(rigado, uuid.Nil)
	must(t, errors.As(res.Primeira, &fa) && fa.Campo == "timestamp" && strings.HasPrefix(res.Primeira.Error(), "registro "+strconv.Itoa(i)+":"),
		"T 1 ms off its trigger: %v", res.Primeira)
	c.semDLQ()
}

func uuidsDe(ss []string) []uuid.UUID {
	out := make([]uuid.UUID, len(ss))
	for i, s := range ss {
		out[i] = uuid.MustParse(s)
	}
	return out
}

// cadeiaDe is the unit of the draw that follows input e and its sweep in
// the log (the unit its sweep drew in), or uuid.Nil.
func cadeiaDe(regs []registro.Registravel, e registro.Entrada) uuid.UUID {
	for k, r := range regs {
		if en, ok := r.(registro.Entrada); ok && en.EventID == e.EventID && k+2 < len(regs) {
			if s, ok := regs[k+2].(registro.Registro); ok {
				return s.UnidadeCivicaID
			}
		}
	}
	return uuid.Nil
}

// None dropped, and bad input is not a drop: a refusal the service
// dead-letters (an unknown motive) has no record, and the replay with the
// bus finds it on the dead-letter stream instead of calling it dropped.
func TestReplayMensagemMortaNaoEOmitida(t *testing.T) {
	t.Parallel()
	c, bairro := coloniaNoBairro(t)
	a := c.novoConselheiro(bairro)
	d, x := c.novaDemanda(bairro)
	must(t, x == a, "drawn to %v", x)
	c.publicar(evento.AtribuicaoRecusada, "1.1.0", recusa(a, d, bairro, "sem_disponibilidade"))
	c.eventually("the refusal dead-lettered", func() bool { return len(c.dlq()) == 1 })
	c.processar(evento.CicloConcluido, "1.0.0", ciclo(a, d, bairro)) // a later record: the dead one is judged
	c.novaDemanda(bairro)
	c.esperarOutboxVazio()
	cli := &log.Cliente{Base: "http://" + c.w.Addr.String(), Barramento: c.w.Bus}
	res, err := cli.Reproduzir(t.Context(), uuid.Nil, nil)
	must(t, err == nil && res.Primeira == nil, "replay: %v / %v", err, res.Primeira)
	rp := res.Replay
	must(t, res.Barramento && len(rp.Divergencias) == 0 && rp.Mortas == 1 && rp.Registradas >= 2,
		"divergences %v; %d dead, %d recorded of %d messages", rp.Divergencias, rp.Mortas, rp.Registradas, rp.Mensagens)
}
