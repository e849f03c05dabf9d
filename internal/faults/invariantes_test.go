//go:build faults

package faults

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/sorteio"
)

// Dead-letter stream and headers (CONTRACT §3).
const (
	streamDLQ         = "D6A_DLQ"
	hErro             = "D6a-Erro"
	hSubjectOriginal  = "D6a-Subject-Original"
	hSeqOriginal      = "D6a-Seq-Original"
	maxExemplos       = 5
	nRecusasSuspensao = 3
)

// violacoes collects the broken invariants; each one is reported once with
// up to maxExemplos examples.
type violacoes struct {
	t      *testing.T
	nomes  []string
	contas map[string]int
	exs    map[string][]string
}

func novasViolacoes(t *testing.T) *violacoes {
	return &violacoes{t: t, contas: map[string]int{}, exs: map[string][]string{}}
}

func (v *violacoes) add(invariante string, format string, args ...any) {
	if _, ok := v.contas[invariante]; !ok {
		v.nomes = append(v.nomes, invariante)
	}
	v.contas[invariante]++
	if len(v.exs[invariante]) < maxExemplos {
		v.exs[invariante] = append(v.exs[invariante], fmt.Sprintf(format, args...))
	}
}

func (v *violacoes) total() int {
	n := 0
	for _, c := range v.contas {
		n += c
	}
	return n
}

func (v *violacoes) relatar() {
	v.t.Helper()
	for _, n := range v.nomes {
		v.t.Errorf("INVARIANT BROKEN: %s (%d cases), e.g.:\n    %s", n, v.contas[n], strings.Join(v.exs[n], "\n    "))
	}
}

// resumo holds the figures printed at the end of a run.
type resumo struct {
	eventos, hostis, processados, dlq                      int
	atribuicoes, ativas, concluidas, recusadas             int
	sorteados, semCandidatos, verificados, verificadosCLI  int
	verifyCLI                                              string
	fallbacks                                              int
	atribuidas, pendentes, agregadas, perdidas, duplicadas int
	suspensos, recusasContadas                             int
	reenvios, desconhecidos                                int
	// perdidas counts good messages never processed (a good message
	// dead-lettered is one of them, and also counted in bonsNaDLQ);
	// perdidasDemandas the demands in no final state.
	perdidasDemandas, bonsNaDLQ int
	// reconciliados are draws re-created from the bus (d6a.reconciliacoes).
	reconciliados int
}

type linhaAtribuicao struct {
	id, conselheiro, demanda, uc uuid.UUID
	seed                         string
	posicao, total               int32
	hash                         *string
	status                       string
	sorteio                      uuid.UUID
	encerramento                 *uuid.UUID
}

type linhaAuditoria struct {
	eventID                  uuid.UUID
	base                     string
	fallback                 bool
	baseSeq                  *int64
	ts, seed, hash           string
	entrada, ordenados       []string
	selecionado, conselheiro uuid.UUID
	// assinatura is the beacon round's signature (CONTRACT §4a; "" before
	// the rule): its SHA-256 is the value the seed mixes in.
	assinatura string
}

// verificarInvariantes reads the database and both streams after the run and
// checks every invariant of docs/reliability.md. cliD6a runs `d6a verify`
// on a sample when the command exists.
func verificarInvariantes(t *testing.T, ctx context.Context, pool *pgxpool.Pool, cli *cliente, m *modelo, dbURL string) (resumo, *violacoes) {
	t.Helper()
	v := novasViolacoes(t)
	var r resumo
	publicados, demandas, terminais, agregados, _ := m.foto()

	// The bus.
	msgs, err := cli.lerStream(ctx, streamBus)
	if err != nil {
		t.Fatalf("reading %s: %v", streamBus, err)
	}
	dlq, err := cli.lerStream(ctx, streamDLQ)
	if err != nil {
		t.Fatalf("reading %s: %v", streamDLQ, err)
	}
	porSeq := make(map[uint64]msgLida, len(msgs))
	subjSorteado := evento.ConselheiroSorteado.Subject(prefixo)
	subjSem := evento.SorteioSemCandidatos.Subject(prefixo)
	type pub struct {
		seq uint64
		env envelopeLido
		p   payloadSorteado
		// rodada is the header D6a-Beacon-Rodada (0: none).
		rodada int64
	}
	sorteados := map[string][]pub{}
	idsPublicados := map[string]int{}
	semPorDemanda := map[string]int{}
	semPorCorrelacao := map[string]int{}
	// d6a's own triggers (d6a.varredura, conselheiro.suspensao_expirada,
	// the timeout refusals) are outbox rows too: counted by event id.
	proprios := map[string]bool{}
	for _, tp := range evento.Publicados {
		proprios[tp.Subject(prefixo)] = true
	}
	for _, mm := range msgs {
		porSeq[mm.Seq] = mm
		if proprios[mm.Subject] && mm.Subject != subjSorteado && mm.Subject != subjSem {
			// Other producers publish refusals too (and re-send their ids
			// on purpose): only d6a's own count.
			var env struct {
				EventID string `json:"event_id"`
				Origem  string `json:"origem"`
			}
			if json.Unmarshal(mm.Data, &env) == nil && env.Origem == "D-6a" {
				idsPublicados[env.EventID]++
			}
		}
		if mm.Subject != subjSorteado && mm.Subject != subjSem {
			continue
		}
		var env envelopeLido
		if err := json.Unmarshal(mm.Data, &env); err != nil {
			v.add("published envelopes are JSON", "seq %d: %v", mm.Seq, err)
			continue
		}
		idsPublicados[env.EventID]++
		if h := mm.Header.Get("Nats-Msg-Id"); h != env.EventID {
			v.add("published with Nats-Msg-Id = event_id", "seq %d: event_id %s, Nats-Msg-Id %q", mm.Seq, env.EventID, h)
		}
		if env.Origem != "D-6a" || env.VersaoSchema != "1.0.0" {
			v.add("published envelope origem D-6a, versao 1.0.0", "seq %d: origem %q versao %q", mm.Seq, env.Origem, env.VersaoSchema)
		}
		if mm.Subject == subjSorteado {
			var p payloadSorteado
			if err := json.Unmarshal(env.Payload, &p); err != nil {
				v.add("sorteado payload is JSON", "seq %d: %v", mm.Seq, err)
				continue
			}
			rodada, _ := strconv.ParseInt(mm.Header.Get("D6a-Beacon-Rodada"), 10, 64)
			sorteados[env.EventID] = append(sorteados[env.EventID], pub{mm.Seq, env, p, rodada})
			r.sorteados++
		} else {
			var p payloadSemCandidatos
			if err := json.Unmarshal(env.Payload, &p); err != nil {
				v.add("sem_candidatos payload is JSON", "seq %d: %v", mm.Seq, err)
				continue
			}
			semPorDemanda[p.DemandaID]++
			if env.CorrelacaoID != nil {
				semPorCorrelacao[*env.CorrelacaoID]++
			}
			r.semCandidatos++
		}
	}
	for id, n := range idsPublicados {
		if n > 1 {
			r.duplicadas += n - 1
			v.add("no event_id published twice", "event_id %s on the bus %d times", id, n)
		}
	}
	for c, n := range semPorCorrelacao {
		if n > 1 {
			r.duplicadas += n - 1
			v.add("one sorteio.sem_candidatos per correlacao_id (spec 5.4 guard)", "correlacao_id %s: %d", c, n)
		}
	}

	// Assignments and their one conselheiro.sorteado each.
	rows, err := pool.Query(ctx, `SELECT id, conselheiro_id, demanda_id, unidade_civica_id, seed_publico, posicao_sorteada,
		total_elegiveis, lista_elegiveis_hash, status, event_id_sorteio, event_id_encerramento FROM d6a.atribuicoes`)
	if err != nil {
		t.Fatal(err)
	}
	var atribs []linhaAtribuicao
	for rows.Next() {
		var a linhaAtribuicao
		if err := rows.Scan(&a.id, &a.conselheiro, &a.demanda, &a.uc, &a.seed, &a.posicao, &a.total, &a.hash, &a.status, &a.sorteio, &a.encerramento); err != nil {
			t.Fatal(err)
		}
		atribs = append(atribs, a)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	r.atribuicoes = len(atribs)
	porSorteio := map[string]linhaAtribuicao{}
	encerradas := map[uuid.UUID]int{}
	for _, a := range atribs {
		switch a.status {
		case "ativa":
			r.ativas++
		case "concluida":
			r.concluidas++
		case "recusada":
			r.recusadas++
		}
		if a.encerramento != nil {
			encerradas[*a.encerramento]++
		}
		porSorteio[a.sorteio.String()] = a
		ps := sorteados[a.sorteio.String()]
		switch {
		case len(ps) == 0:
			v.add("every assignment has its conselheiro.sorteado on the bus", "atribuicao %s (demanda %s, conselheiro %s): no sorteado with event_id %s", a.id, a.demanda, a.conselheiro, a.sorteio)
			continue
		case len(ps) > 1:
			v.add("every assignment has exactly one conselheiro.sorteado", "event_id_sorteio %s published %d times", a.sorteio, len(ps))
		}
		p := ps[0].p
		hash := ""
		if a.hash != nil {
			hash = *a.hash
		}
		if p.ConselheiroID != a.conselheiro.String() || p.DemandaID != a.demanda.String() || p.UnidadeCivicaID != a.uc.String() ||
			p.SeedPublico != a.seed || p.ListaElegiveisHash != hash || int32(p.TotalElegiveis) != a.total || int32(p.PosicaoSorteada) != a.posicao {
			v.add("sorteado payload = assignment row", "event_id %s: payload %+v, row %+v", a.sorteio, p, a)
		}
	}
	for id, ps := range sorteados {
		if _, ok := porSorteio[id]; !ok {
			v.add("every conselheiro.sorteado has its assignment", "sorteado %s (seq %d) has no d6a.atribuicoes row", id, ps[0].seq)
		}
	}
	for id, n := range encerradas {
		if n > 1 {
			r.duplicadas += n - 1
			v.add("an event closes at most one assignment", "event %s closed %d assignments", id, n)
		}
	}

	// Every published draw verifies: the audit record recomputes bit for bit
	// (CONTRACT §4) and agrees with what was published; the base is the
	// event_id of a message really on the bus before the draw.
	aud := map[string]linhaAuditoria{}
	rows, err = pool.Query(ctx, `SELECT event_id_sorteio, base, base_fallback, base_sequence, timestamp_sorteio, seed,
		elegiveis_entrada, ordenados, selecionado, lista_elegiveis_hash, conselheiro_id, coalesce(assinatura_rodada, '') FROM d6a.auditoria_sorteios`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var a linhaAuditoria
		if err := rows.Scan(&a.eventID, &a.base, &a.fallback, &a.baseSeq, &a.ts, &a.seed, &a.entrada, &a.ordenados, &a.selecionado, &a.hash, &a.conselheiro, &a.assinatura); err != nil {
			t.Fatal(err)
		}
		aud[a.eventID.String()] = a
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// A draw re-created from the bus after an asynchronous failover
	// (d6a.reconciliacoes, `d6a verify --consistencia --reparar`) has no
	// audit record, since its eligible list never reached the bus; its seed
	// must still recompute from the base it names.
	reconciliados := map[string]bool{}
	if rrows, err := pool.Query(ctx, `SELECT event_id_sorteio::text, coalesce(base, ''), coalesce(base_sequence, 0) FROM d6a.reconciliacoes`); err == nil {
		for rrows.Next() {
			var id, base string
			var bseq int64
			if err := rrows.Scan(&id, &base, &bseq); err != nil {
				t.Fatal(err)
			}
			reconciliados[id] = true
			r.reconciliados++
			ps := sorteados[id]
			if len(ps) == 0 {
				continue
			}
			bid, _ := evento.LerEventID(porSeq[uint64(bseq)].Data)
			// Under the beacon rule the seed also needs the round's value,
			// which the bus does not carry: the base is then checked alone.
			semente := sorteio.Seed(base, ps[0].p.Timestamp) == ps[0].p.SeedPublico || ps[0].rodada > 0
			if base == "" || bid != base || !semente {
				v.add("a reconciled draw's seed recomputes from the base on the bus", "sorteado %s: base %q at seq %d (bus has %q)", id, base, bseq, bid)
			}
		}
		rrows.Close()
	}
	var amostra []string
	for id, ps := range sorteados {
		p, seq := ps[0].p, ps[0].seq
		if reconciliados[id] {
			continue
		}
		a, ok := aud[id]
		if !ok {
			v.add("every published draw has its audit record", "sorteado %s: no d6a.auditoria_sorteios row", id)
			continue
		}
		res, err := sorteio.SortearComRodada(a.base, a.ts, registro.Randomness(a.assinatura), a.entrada)
		switch {
		case err != nil:
			v.add("every published draw verifies", "sorteado %s: recomputing: %v", id, err)
			continue
		case res.Seed != a.seed || !slices.Equal(res.Ordenados, a.ordenados) || res.Selecionado != a.selecionado.String() || res.ListaHash != a.hash:
			v.add("every published draw verifies", "sorteado %s: audit seed %s ordenados %v selecionado %s hash %s; recomputed %+v", id, a.seed, a.ordenados, a.selecionado, a.hash, res)
			continue
		case p.SeedPublico != res.Seed || p.ListaElegiveisHash != res.ListaHash || p.ConselheiroID != res.Selecionado ||
			p.TotalElegiveis != len(res.Entrada) || p.PosicaoSorteada != sorteio.PosicaoSorteada || p.MetodoSorteio != sorteio.Metodo || p.Timestamp != a.ts:
			v.add("published sorteado = recomputed draw", "sorteado %s: published %+v, recomputed %+v (T %s)", id, p, res, a.ts)
			continue
		}
		if a.fallback {
			// CONTRACT §4 (issue 11): no fallback base, ever.
			r.fallbacks++
			v.add("no draw on a fallback base", "sorteado %s: base %s is a fallback", id, a.base)
		} else if a.baseSeq == nil {
			v.add("audited base names its bus sequence", "sorteado %s: base %s without base_sequence", id, a.base)
		} else if bm, ok := porSeq[uint64(*a.baseSeq)]; !ok {
			v.add("the seed's base is a message of the bus", "sorteado %s: base_sequence %d not in %s", id, *a.baseSeq, streamBus)
		} else if bid, _ := evento.LerEventID(bm.Data); bid != a.base || uint64(*a.baseSeq) >= seq {
			v.add("the seed's base is the event_id of an earlier bus message", "sorteado %s (seq %d): base %s, message %d has event_id %q", id, seq, a.base, *a.baseSeq, bid)
		}
		r.verificados++
		amostra = append(amostra, id)
	}
	r.verifyCLI, r.verificadosCLI = verificarCLI(t, v, dbURL, amostra)

	// At most one active assignment per counsellor and per demand;
	// 'ocupado' iff an active assignment exists.
	for _, q := range []struct{ nome, sql string }{
		{"no counsellor with two active assignments", `SELECT conselheiro_id::text || ': ' || count(*) FROM d6a.atribuicoes WHERE status = 'ativa' GROUP BY conselheiro_id HAVING count(*) > 1`},
		{"no demand with two active assignments", `SELECT demanda_id::text || ': ' || count(*) FROM d6a.atribuicoes WHERE status = 'ativa' GROUP BY demanda_id HAVING count(*) > 1`},
		{"counsellor 'ocupado' iff it holds an active assignment", `SELECT c.id::text || ' status ' || c.status || ', active assignment: ' ||
			EXISTS (SELECT 1 FROM d6a.atribuicoes a WHERE a.conselheiro_id = c.id AND a.status = 'ativa')
			FROM d6a.conselheiros c
			WHERE (c.status = 'ocupado') <> EXISTS (SELECT 1 FROM d6a.atribuicoes a WHERE a.conselheiro_id = c.id AND a.status = 'ativa')`},
		{"no demand both pending and actively assigned", `SELECT f.demanda_id::text FROM d6a.fila_pendentes f
			WHERE EXISTS (SELECT 1 FROM d6a.atribuicoes a WHERE a.demanda_id = f.demanda_id AND a.status = 'ativa')`},
		{"no refusal counted twice", `SELECT evento_id_recusa::text || ': ' || count(*) FROM d6a.contador_recusas GROUP BY evento_id_recusa HAVING count(*) > 1`},
		{"every outbox row published", `SELECT event_id::text || ' ' || tipo FROM d6a.outbox WHERE publicado_em IS NULL`},
		{"a suspended counsellor refused more than D6A_N_RECUSAS_SUSPENSAO times", `SELECT c.id::text || ': ' || (SELECT count(*) FROM d6a.contador_recusas r WHERE r.conselheiro_id = c.id)
			FROM d6a.conselheiros c WHERE c.status = 'suspenso'
			AND (SELECT count(*) FROM d6a.contador_recusas r WHERE r.conselheiro_id = c.id) <= ` + strconv.Itoa(nRecusasSuspensao)},
	} {
		for _, ex := range consultarTextos(t, ctx, pool, q.sql) {
			if strings.Contains(q.nome, "twice") {
				r.duplicadas++
			}
			v.add(q.nome, "%s", ex)
		}
	}

	// The outbox and the bus agree: each row once on the bus, at the
	// sequence the relay recorded.
	rows, err = pool.Query(ctx, `SELECT event_id, sequence FROM d6a.outbox WHERE publicado_em IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id uuid.UUID
		var seq *int64
		if err := rows.Scan(&id, &seq); err != nil {
			t.Fatal(err)
		}
		if idsPublicados[id.String()] != 1 {
			v.add("every published outbox row is on the bus once", "outbox %s: %d messages on the bus", id, idsPublicados[id.String()])
		} else if seq == nil || porSeq[uint64(*seq)].Seq == 0 {
			v.add("outbox sequence names its bus message", "outbox %s: sequence %v", id, seq)
		} else if eid, _ := evento.LerEventID(porSeq[uint64(*seq)].Data); eid != id.String() {
			v.add("outbox sequence names its bus message", "outbox %s: sequence %d holds event %s", id, *seq, eid)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}

	// Every good message processed, exactly once; no unusable one.
	processados := map[uuid.UUID]int64{}
	rows, err = pool.Query(ctx, `SELECT event_id, sequence FROM d6a.eventos_processados`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id uuid.UUID
		var seq int64
		if err := rows.Scan(&id, &seq); err != nil {
			t.Fatal(err)
		}
		processados[id] = seq
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	seqsDe := map[uuid.UUID][]uint64{}
	hostisPorSeq := map[uint64]publicado{}
	for _, p := range publicados {
		if p.dlq {
			r.hostis++
			hostisPorSeq[p.seq] = p
			if id, ok := evento.LerEventID(p.data); ok {
				if _, feito := processados[uuid.MustParse(id)]; feito {
					v.add("an unusable message changes nothing", "%s: its event_id %s is in eventos_processados", p, id)
				}
			}
			continue
		}
		r.eventos++
		if p.reenvio {
			r.reenvios++
		}
		if strings.Contains(p.nome, "desconhecid") || strings.Contains(p.nome, "inexistente") || strings.Contains(p.nome, "antes-do") ||
			strings.Contains(p.nome, "depois-d") || strings.HasPrefix(p.nome, "stub-") || strings.Contains(p.nome, "agenda-tipo-ascii") || strings.Contains(p.nome, "agregada-sem") {
			r.desconhecidos++
		}
		seqsDe[p.eventID] = append(seqsDe[p.eventID], p.seq)
	}
	for id, seqs := range seqsDe {
		seq, ok := processados[id]
		if !ok {
			r.perdidas++
			v.add("every good message is processed (d6a.eventos_processados)", "event_id %s (seqs %v) never processed", id, seqs)
		} else if !slices.Contains(seqs, uint64(seq)) {
			v.add("eventos_processados records the message's sequence", "event_id %s: sequence %d, published at %v", id, seq, seqs)
		}
	}
	r.processados = len(seqsDe) - r.perdidas

	// Dead letters: every unusable message once, with a reason, byte for
	// byte; nothing else.
	vistos := map[uint64]int{}
	for _, d := range dlq {
		r.dlq++
		seq, _ := strconv.ParseUint(d.Header.Get(hSeqOriginal), 10, 64)
		vistos[seq]++
		h, ok := hostisPorSeq[seq]
		if !ok {
			orig := porSeq[seq]
			id, _ := evento.LerEventID(orig.Data)
			r.bonsNaDLQ++
			v.add("only unusable messages are dead-lettered", "DLQ seq %d: original seq %d (%s, event_id %s) dead-lettered: %s", d.Seq, seq, orig.Subject, id, d.Header.Get(hErro))
			continue
		}
		if e := d.Header.Get(hErro); strings.TrimSpace(e) == "" || len(e) > 1024 || strings.ContainsAny(e, "\r\n") {
			v.add("a dead letter says why (D6a-Erro: one line, at most 1 KiB)", "%s: D6a-Erro %q", h, e)
		}
		if d.Header.Get(hSubjectOriginal) != h.subject {
			v.add("a dead letter names its original subject", "%s: D6a-Subject-Original %q", h, d.Header.Get(hSubjectOriginal))
		}
		if want := "d6a.dlq." + h.tipo.ASCII(); d.Subject != want {
			v.add("dead letters go to d6a.dlq.<type>", "%s: subject %s, want %s", h, d.Subject, want)
		}
		if sha256.Sum256(d.Data) != sha256.Sum256(h.data) {
			v.add("a dead letter is a byte copy of the original", "%s: %d bytes in the DLQ, %d published", h, len(d.Data), len(h.data))
		}
	}
	for seq, h := range hostisPorSeq {
		switch n := vistos[seq]; {
		case n == 0:
			v.add("every unusable message is in D6A_DLQ", "%s: not dead-lettered", h)
		case n > 1:
			r.duplicadas += n - 1
			v.add("a message is dead-lettered once", "%s: %d dead letters", h, n)
		}
	}

	// Each cycle or refusal the test sent for a learned assignment was
	// applied to it exactly once (spec 3.11, 3.12): status, closing event,
	// one refusal row unless risco_pessoal.
	contador := map[uuid.UUID]int{}
	rows, err = pool.Query(ctx, `SELECT evento_id_recusa, count(*) FROM d6a.contador_recusas GROUP BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id uuid.UUID
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			t.Fatal(err)
		}
		contador[id] = n
		r.recusasContadas += n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for sorteadoID, term := range terminais {
		a, ok := porSorteio[sorteadoID]
		if !ok {
			v.add("a learned assignment exists", "sorteado %s has no row", sorteadoID)
			continue
		}
		if a.status != term.status || a.encerramento == nil || *a.encerramento != term.eventID {
			v.add("a cycle or refusal closes its assignment once", "assignment %s (sorteado %s): status %s closed by %v; sent %s %s", a.id, sorteadoID, a.status, a.encerramento, term.status, term.eventID)
		}
		if term.status == "recusada" {
			want := 1
			if term.motivo == "risco_pessoal" {
				want = 0
			}
			if contador[term.eventID] != want {
				v.add("one contador_recusas row per refusal (none for risco_pessoal)", "refusal %s (motivo %q): %d rows", term.eventID, term.motivo, contador[term.eventID])
			}
		}
	}

	// No demand lost: assigned (active or concluded), pending with a
	// sorteio.sem_candidatos, or aggregated away (spec 3.6).
	atribuidas := map[uuid.UUID]bool{}
	for _, a := range atribs {
		if a.status == "ativa" || a.status == "concluida" {
			atribuidas[a.demanda] = true
		}
	}
	pendentes := map[uuid.UUID]bool{}
	for _, s := range consultarTextos(t, ctx, pool, `SELECT demanda_id::text FROM d6a.fila_pendentes`) {
		pendentes[uuid.MustParse(s)] = true
	}
	agregadaFora := map[uuid.UUID]bool{}
	for _, g := range agregados {
		for _, d := range g.membros {
			if d != g.rep {
				agregadaFora[d] = true
			}
		}
	}
	ids := make([]uuid.UUID, 0, len(demandas))
	for d := range demandas {
		ids = append(ids, d)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i].String() < ids[j].String() })
	for _, d := range ids {
		switch {
		case atribuidas[d]:
			r.atribuidas++
		case pendentes[d]:
			r.pendentes++
			if semPorDemanda[d.String()] == 0 {
				v.add("a pending demand has its sorteio.sem_candidatos", "demanda %s (uc %s) pending without sem_candidatos", d, demandas[d])
			}
		case agregadaFora[d]:
			r.agregadas++
		default:
			r.perdidasDemandas++
			v.add("no demand lost", "demanda %s (uc %s): not assigned, not pending, not aggregated", d, demandas[d])
		}
	}
	r.suspensos = len(consultarTextos(t, ctx, pool, `SELECT id::text FROM d6a.conselheiros WHERE status = 'suspenso'`))
	return r, v
}

func consultarTextos(t *testing.T, ctx context.Context, pool *pgxpool.Pool, sql string) []string {
	t.Helper()
	rows, err := pool.Query(ctx, sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// verificarCLI runs `d6a verify --event-id` on a sample of the draws, and on
// an id that is no draw (exit 2). When the command is not built yet it says
// so and the in-process verification stands alone.
func verificarCLI(t *testing.T, v *violacoes, dbURL string, ids []string) (string, int) {
	t.Helper()
	executar := func(id string) (int, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, binD6a, "verify", "--event-id", id)
		cmd.Env = append(os.Environ(), "D6A_DATABASE_URL="+dbURL, "D6A_LOG_LEVEL=error")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		code := 0
		if err != nil {
			code = -1
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
		}
		return code, strings.TrimSpace(out.String())
	}
	code, out := executar(uuid.NewString())
	if strings.Contains(out, "not built yet") {
		return "d6a verify not built yet: draws verified in-process with sorteio.Sortear from d6a.auditoria_sorteios", 0
	}
	if code != 2 {
		v.add("d6a verify exits 2 for an id that is no draw", "exit %d: %s", code, out)
	}
	sort.Strings(ids)
	n := 0
	for i, id := range ids {
		if par.amostraVerify == 0 {
			break
		}
		if n >= par.amostraVerify {
			break
		}
		// An even spread over the sorted ids.
		if par.amostraVerify < len(ids) && i%(len(ids)/par.amostraVerify) != 0 {
			continue
		}
		n++
		if c, o := executar(id); c != 0 {
			v.add("d6a verify --event-id accepts every published draw", "%s: exit %d: %s", id, c, o)
		}
	}
	return fmt.Sprintf("d6a verify --event-id: %d draws OK (exit 0), unknown id exit 2", n), n
}
