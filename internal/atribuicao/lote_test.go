package atribuicao_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/atribuicaotest"
	"github.com/formigueiro/d6a/internal/entradas"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/hierarquia"
	"github.com/formigueiro/d6a/internal/pgtest"
)

// The batch executor's outcome is exactly serial execution's (issue 11):
// random sequences of seven consumed types, run one unit per transaction
// (batches of 1: the reference), then through batches of 7 and 256, where
// a unit decides on what the units before it in the batch decided and did
// not write yet, with a fixed clock (or one that moves on every reading,
// below), fixed seed base and fixed ids, leave every d6a table and every
// published payload byte-identical.
func TestLoteIgualAoSerial(t *testing.T) {
	t.Parallel()
	sementes := []uint64{1, 2, 3}
	if testing.Short() {
		sementes = sementes[:1]
	}
	for _, semente := range sementes {
		evs := gerarEventos(rand.New(rand.NewPCG(semente, 11)), 400)
		var ref, refNome string
		for _, lote := range []int{1, 7, 256} {
			nome := fmt.Sprintf("semente %d lote %d", semente, lote)
			if lote == 1 {
				nome = fmt.Sprintf("semente %d serial", semente)
			}
			got := rodarEmLotes(t, evs, lote, relogioParado)
			if ref == "" {
				ref, refNome = got, nome
				if !strings.Contains(got, `"conselheiro.sorteado"`) || !strings.Contains(got, `"sorteio.sem_candidatos"`) {
					t.Fatalf("%s: the sequence drew nothing or always drew; it exercises too little:\n%s", nome, got)
				}
				continue
			}
			if got != ref {
				t.Fatalf("%s differs from %s:\n%s", nome, refNome, primeiraDiferenca(ref, got))
			}
		}
	}
}

// With a clock that moves on every reading, suspensions end in the middle
// of a run of agenda items: a run's eligibility, read once at its start
// (lerElegiveis), must still decide each draw as at the draw's own time.
func TestLoteIgualAoSerialComRelogioAndando(t *testing.T) {
	t.Parallel()
	sementes := []uint64{4, 5, 6, 7}
	if testing.Short() {
		sementes = sementes[:2]
	}
	for _, semente := range sementes {
		evs := gerarEventos(rand.New(rand.NewPCG(semente, 11)), 400)
		ref := rodarEmLotes(t, evs, 1, time.Hour)
		for _, lote := range []int{7, 256} {
			if got := rodarEmLotes(t, evs, lote, time.Hour); got != ref {
				t.Fatalf("semente %d lote %d differs from serial:\n%s", semente, lote, primeiraDiferenca(ref, got))
			}
		}
	}
}

// suspensao is 90 days on a clock that stands still, and about twenty
// readings on one that moves, so suspensions end within the sequence.
func suspensao(passo time.Duration) time.Duration {
	if passo == 0 {
		return 90 * 24 * time.Hour
	}
	return 20 * passo
}

// relogioParado: every reading of the clock gives the same time.
const relogioParado time.Duration = 0

// relogioAndando moves passo forward after every reading.
type relogioAndando struct {
	mu    sync.Mutex
	t     time.Time
	passo time.Duration
}

func (r *relogioAndando) Now() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.t
	r.t = r.t.Add(r.passo)
	return t
}

func primeiraDiferenca(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d:\n  serial: %s\n  batch:  %s", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("lengths %d and %d lines", len(la), len(lb))
}

// Units of the scene: a state, two cities, three neighbourhoods each.
var (
	ucEstado  = uuid.MustParse("00000000-0000-4000-8000-000000000001")
	ucCidades = []uuid.UUID{
		uuid.MustParse("00000000-0000-4000-8000-000000000011"),
		uuid.MustParse("00000000-0000-4000-8000-000000000012"),
	}
)

func ucBairro(cidade, i int) uuid.UUID {
	return uuid.MustParse(fmt.Sprintf("00000000-0000-4000-8000-0000000001%d%d", cidade+1, i+1))
}

// todasUCs lists the scene's units, each with its parent (nil for the
// state).
func todasUCs() (ucs []uuid.UUID, pais []*uuid.UUID) {
	ucs, pais = append(ucs, ucEstado), append(pais, nil)
	for c, cidade := range ucCidades {
		ucs, pais = append(ucs, cidade), append(pais, &ucEstado)
		for i := range 3 {
			ucs, pais = append(ucs, ucBairro(c, i)), append(pais, &ucCidades[c])
		}
	}
	return ucs, pais
}

// gerarEventos draws a sequence over a small universe (12 citizens, 30
// demands) so refusals and cycles often hit real assignments, with some
// redeliveries of earlier events.
func gerarEventos(r *rand.Rand, n int) []evento.Evento {
	ucs, _ := todasUCs()
	id := func(prefixo string, i int) uuid.UUID {
		return uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "%s-%d", prefixo, i))
	}
	cidadao := func() uuid.UUID { return id("cidadao", r.IntN(12)) }
	demanda := func() uuid.UUID { return id("demanda", r.IntN(30)) }
	uc := func() uuid.UUID { return ucs[r.IntN(len(ucs))] }
	evs := make([]evento.Evento, 0, n)
	for i := range n {
		if i > 10 && r.IntN(20) == 0 {
			evs = append(evs, evs[r.IntN(len(evs))]) // redelivery
			continue
		}
		ev := evento.Evento{Envelope: evento.Envelope{
			EventID: id("evento", i), Origem: "teste", VersaoSchema: "1.0.0", Timestamp: "2026-11-29T14:03:07.123Z",
		}}
		switch k := r.IntN(100); {
		case k < 15:
			c := cidadao()
			status := "disponivel"
			if r.IntN(8) == 0 {
				status = "inativo"
			}
			ev.Tipo = evento.ConselheiroCadastrado
			ev.Payload = evento.ConselheiroCadastradoPayload{
				ConselheiroID: c, CidadaoID: c, UnidadeCivicaID: uc(), NivelAtuacao: 1,
				Status: status, CapacitacaoConcluida: r.IntN(6) != 0,
			}
		case k < 55:
			ev.Tipo = evento.AgendaItemDisponivel
			ev.Payload = evento.AgendaItemDisponivelPayload{
				DemandaID: demanda(), UnidadeCivicaID: uc(), CategoriaID: "SAU",
				NivelPrecedencia: 1 + r.IntN(5), ScoreFinal: float64(r.IntN(10000)) / 100,
			}
		case k < 70:
			u := uc()
			ev.Tipo = evento.CicloConcluido
			ev.Payload = evento.ConselheiroCicloConcluidoPayload{
				ConselheiroID: cidadao(), DemandaID: demanda(), MotivoEncerramento: "resolvida", UnidadeCivicaID: &u,
			}
		case k < 88:
			motivo := evento.RecusaExplicita
			if r.IntN(4) == 0 {
				motivo = evento.RiscoPessoal
			}
			ev.Tipo = evento.AtribuicaoRecusada
			ev.Payload = evento.ConselheiroAtribuicaoRecusadaPayload{
				ConselheiroID: cidadao(), DemandaID: demanda(), UnidadeCivicaID: uc(), Motivo: motivo,
				Timestamp: "2026-11-29T14:03:07.123Z",
			}
		case k < 92:
			ev.Tipo = evento.DemandaIniciada
			ev.Payload = evento.DemandaIniciadaPayload{ConselheiroID: cidadao(), DemandaID: demanda(), Timestamp: "2026-11-29T14:05:00Z"}
		case k < 96:
			membros := []uuid.UUID{demanda(), demanda(), demanda()}
			ev.Tipo = evento.DuplicidadeAgregada
			ev.Payload = evento.DuplicidadeAgregadaPayload{
				AgregadoID: id("agregado", i), RepresentanteDemandaID: membros[0], Membros: membros,
			}
		default:
			ev.Tipo = evento.ElegibilidadeAtualizada
			ev.Payload = evento.ConselheiroElegibilidadeAtualizadaPayload{UnidadeCivicaID: uc(), VersaoParametros: "2"}
		}
		evs = append(evs, ev)
	}
	return evs
}

// rodarEmLotes applies evs through one service whose batches carry at most
// lote units (1: one unit per transaction, serial), on a fresh
// database, with a clock that moves passo after every reading, and returns every d6a table and every published payload as
// text.
func rodarEmLotes(t *testing.T, evs []evento.Evento, lote int, passo time.Duration) string {
	t.Helper()
	ctx := context.Background()
	st := atribuicaotest.AbrirStore(t, pgtest.URL(t))
	ucs, pais := todasUCs()
	for i, u := range ucs {
		if _, err := st.Pool.Exec(ctx, `INSERT INTO core.uc_polygons (id, parent_uc_id) VALUES ($1, $2)`, u, pais[i]); err != nil {
			t.Fatal(err)
		}
	}
	clk := &relogioAndando{t: atribuicaotest.NovoRelogio().Now(), passo: passo}
	if passo != 0 {
		// Suspended counsellors whose suspensions end one after the other
		// along the sequence (about 600 readings of the clock), some
		// 'suspenso', some 'disponivel' with a suspension date.
		for i := range 16 {
			c := uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "suspenso-%d", i))
			status := []string{"suspenso", "disponivel"}[i%2]
			if _, err := st.Pool.Exec(ctx, `INSERT INTO d6a.conselheiros (id, cidadao_id, unidade_civica_id, nivel_atuacao, status,
				capacitacao_concluida, data_cadastro, data_suspensao_ate, event_id_cadastro, event_id_ultima_alteracao, atualizado_em)
				VALUES ($1, $1, $2, 1, $3, true, $4, $5, $1, $1, $4)`,
				c, ucs[i%len(ucs)], status, clk.t, clk.t.Add(time.Duration(20+i*30)*passo)); err != nil {
				t.Fatal(err)
			}
		}
	}
	var n atomic.Int64
	var (
		mu         sync.Mutex
		publicados []string
	)
	hier := hierarquia.New(st.CarregarHierarquia, time.Hour, atribuicaotest.NovoRelogio().Now)
	svc := atribuicao.New(atribuicao.Options{
		// The cache's clock is its own: its readings must not move the
		// service's.
		Store: st, Hierarquia: hier, Entradas: entradas.New(hier),
		Barramento: atribuicaotest.BarramentoFixo{ID: atribuicaotest.BaseFixa, Seq: atribuicaotest.SeqFixa}, SubjectPrefix: "eventos",
		NRecusasSuspensao: 2, TSuspensao: suspensao(passo), Now: clk.Now, Logger: slog.Default(),
		MaxLote: lote,
		NovoID: func() uuid.UUID {
			return uuid.NewSHA1(uuid.NameSpaceURL, fmt.Appendf(nil, "id-%d", n.Add(1)))
		},
		Publicado: func(s []atribuicao.Saida) {
			mu.Lock()
			defer mu.Unlock()
			for _, m := range s {
				publicados = append(publicados, m.Subject+" "+m.EventID.String()+" "+string(m.Envelope))
			}
		},
	})
	defer svc.Close()
	seqs := make([]uint64, len(evs))
	for i := range seqs {
		seqs[i] = uint64(100 + i)
	}
	errs := svc.HandleLote(ctx, evs, seqs)

	var b strings.Builder
	for i, err := range errs {
		if err != nil {
			fmt.Fprintf(&b, "erro evento %d: %v\n", i, err)
		}
	}
	// The spec's tables give fila_pendentes and contador_recusas a random
	// surrogate id (gen_random_uuid()); nothing refers to it.
	for _, q := range []string{
		`SELECT row_to_json(c)::text FROM d6a.conselheiros c ORDER BY id`,
		`SELECT row_to_json(a)::text FROM d6a.atribuicoes a ORDER BY event_id_sorteio`,
		`SELECT (to_jsonb(f) - 'id')::text FROM d6a.fila_pendentes f ORDER BY ordem_entrada`,
		`SELECT (to_jsonb(r) - 'id')::text FROM d6a.contador_recusas r ORDER BY evento_id_recusa`,
		`SELECT row_to_json(a)::text FROM d6a.auditoria_sorteios a ORDER BY event_id_sorteio`,
		`SELECT row_to_json(i)::text FROM d6a.atribuicoes_iniciadas i ORDER BY atribuicao_id`,
		`SELECT (to_jsonb(s) - 'id')::text FROM d6a.suspensoes s ORDER BY id`,
		`SELECT row_to_json(o)::text FROM d6a.outbox o ORDER BY id`,
		`SELECT row_to_json(e)::text FROM d6a.eventos_processados e ORDER BY event_id`,
		`SELECT row_to_json(o)::text FROM d6a.consumer_offset o ORDER BY tipo_evento`,
		// The transparency log: leaf n is the n-th draw, in both modes.
		`SELECT indice || ' ' || encode(registro, 'escape') || ' ' || encode(hash_folha, 'hex') FROM d6a.transparencia_registros ORDER BY indice`,
		`SELECT indice || ' ' || encode(hash, 'hex') FROM d6a.transparencia_hashes ORDER BY indice`,
	} {
		rows, err := st.Pool.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			b.WriteString(s)
			b.WriteByte('\n')
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range publicados {
		b.WriteString(p)
		b.WriteByte('\n')
	}
	return b.String()
}

// TestLoteIgualAoSerialNoMesmoLote: inputs about draws the same batch made
// and has not written (a start, a refusal and a cycle end of the winners,
// a sweep of a demand queued in the batch) leave everything as one unit
// per transaction does: the handlers that run with the batch unwritten
// (Unidade.Ver) see it where it matters.
func TestLoteIgualAoSerialNoMesmoLote(t *testing.T) {
	t.Parallel()
	uc := ucBairro(0, 0)
	a, b := uuid.NewSHA1(uuid.NameSpaceOID, []byte("a")), uuid.NewSHA1(uuid.NameSpaceOID, []byte("b"))
	d := func(i int) uuid.UUID { return uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "demanda-%d", i)) }
	var evs []evento.Evento
	add := func(tipo evento.Tipo, payload any) {
		evs = append(evs, evento.Evento{Envelope: evento.Envelope{
			EventID: uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "evento-%d", len(evs))), Tipo: tipo, Origem: "teste",
			VersaoSchema: "1.0.0", Timestamp: "2026-11-29T14:03:07.123Z",
		}, Payload: payload})
	}
	cadastro := func(c uuid.UUID) {
		add(evento.ConselheiroCadastrado, evento.ConselheiroCadastradoPayload{
			ConselheiroID: c, CidadaoID: c, UnidadeCivicaID: uc, NivelAtuacao: 1, Status: "disponivel", CapacitacaoConcluida: true,
		})
	}
	agenda := func(i int) {
		add(evento.AgendaItemDisponivel, evento.AgendaItemDisponivelPayload{
			DemandaID: d(i), UnidadeCivicaID: uc, CategoriaID: "SAU", NivelPrecedencia: 1, ScoreFinal: float64(i),
		})
	}
	paraAmbos := func(f func(c uuid.UUID)) { f(a); f(b) }
	cadastro(a)
	agenda(1) // a draws it: the only one registered
	add(evento.DemandaIniciada, evento.DemandaIniciadaPayload{ConselheiroID: a, DemandaID: d(1), Timestamp: "2026-11-29T14:05:00Z"})
	add(evento.AtribuicaoRecusada, evento.ConselheiroAtribuicaoRecusadaPayload{
		ConselheiroID: a, DemandaID: d(1), UnidadeCivicaID: uc, Motivo: evento.RecusaExplicita, Timestamp: "2026-11-29T14:06:00Z",
	}) // nobody else: d(1) waits in the queue
	cadastro(b) // its sweep draws d(1) for b
	agenda(2)   // a again
	agenda(3)   // nobody free: queued
	paraAmbos(func(c uuid.UUID) {
		add(evento.CicloConcluido, evento.ConselheiroCicloConcluidoPayload{ConselheiroID: c, DemandaID: d(2), MotivoEncerramento: "resolvida"})
	}) // a's frees a, whose sweep draws d(3)
	paraAmbos(func(c uuid.UUID) {
		add(evento.CicloConcluido, evento.ConselheiroCicloConcluidoPayload{ConselheiroID: c, DemandaID: d(1), MotivoEncerramento: "resolvida"})
	})
	agenda(4)
	ref := rodarEmLotes(t, evs, 1, relogioParado)
	for _, quer := range []string{d(1).String(), d(3).String(), `"iniciada_em":"2026-11-29T14:05:00`} {
		if strings.Count(ref, quer) == 0 {
			t.Fatalf("serial run never shows %s: the scene exercises too little:\n%s", quer, ref)
		}
	}
	if got := rodarEmLotes(t, evs, 256, relogioParado); got != ref {
		t.Fatalf("one batch differs from serial:\n%s", primeiraDiferenca(ref, got))
	}
}
