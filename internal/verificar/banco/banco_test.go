package banco_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/entradas"
	"github.com/formigueiro/d6a/internal/hierarquia"
	"github.com/formigueiro/d6a/internal/pgtest"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/sorteio"
	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/verificar/banco"
)

func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.DiscardHandler))
	os.Exit(pgtest.Run(m))
}

// The draw time of every test: T = 2026-11-29T14:03:07.123Z.
var agora = time.Date(2026, 11, 29, 14, 3, 7, 123_456_789, time.UTC)

const (
	seqBase      = 7
	seqPublicado = 9
)

type baseFixa struct{ id string }

func (b baseFixa) LastEventID(context.Context) (string, uint64, error) { return b.id, seqBase, nil }

// sorteioReal is one draw made by the real service on a fresh database.
type sorteioReal struct {
	ctx  context.Context
	st   *store.Store
	base string
	r    atribuicao.Resultado
}

func novoSorteio(t *testing.T, b atribuicao.Barramento, n int) *sorteioReal {
	t.Helper()
	ctx := context.Background()
	st := pgtest.New(t)
	if b == nil {
		// A fixed base and the clock: a record of the rule before the
		// trigger's (CONTRACT §4), checked by its window.
		if _, err := st.Pool.Exec(ctx, `UPDATE d6a.transparencia_regras SET desde_indice = 1000000 WHERE regra = 'gatilho'`); err != nil {
			t.Fatal(err)
		}
	}
	cidade, bairro := uuid.New(), uuid.New()
	if _, err := st.Pool.Exec(ctx, `INSERT INTO core.uc_polygons (id, parent_uc_id) VALUES ($1, NULL), ($2, $1)`, cidade, bairro); err != nil {
		t.Fatal(err)
	}
	cadastrar(t, st, cidade, n, agora.Add(-time.Hour))
	base := uuid.NewString()
	if b == nil {
		b = baseFixa{id: base}
	}
	hier := hierarquia.New(st.CarregarHierarquia, time.Hour, func() time.Time { return agora })
	svc := atribuicao.New(atribuicao.Options{
		Store: st, Hierarquia: hier, Entradas: entradas.New(hier), Barramento: b, SubjectPrefix: "eventos",
		NRecusasSuspensao: 3, TSuspensao: 90 * 24 * time.Hour, Now: func() time.Time { return agora },
		Logger: slog.Default(),
	})
	t.Cleanup(svc.Close)
	demanda := uuid.New()
	r, err := svc.Sortear(ctx, atribuicao.Pedido{
		UC: bairro, DemandaID: demanda,
		Dados: atribuicao.DadosDemanda{ScoreFinal: 50, CategoriaID: "SAU", NivelPrecedencia: 1,
			CorrelacaoID: demanda.String(), EventIDOrigem: uuid.New()},
	})
	if err != nil || !r.Sucesso {
		t.Fatalf("draw: %+v, %v", r, err)
	}
	return &sorteioReal{ctx: ctx, st: st, base: base, r: r}
}

// cadastrar registers n available, trained counsellors at uc, as the
// conselheiro.cadastrado handler writes them (id = cidadao_id), in plain
// SQL: the verifier under test reads through store's domain methods.
func cadastrar(t *testing.T, st *store.Store, uc uuid.UUID, n int, em time.Time) {
	t.Helper()
	for range n {
		id, evento := uuid.New(), uuid.New()
		if _, err := st.Pool.Exec(context.Background(), `INSERT INTO d6a.conselheiros (
			id, cidadao_id, unidade_civica_id, nivel_atuacao, status, capacitacao_concluida,
			data_cadastro, event_id_cadastro, event_id_ultima_alteracao, atualizado_em
		) VALUES ($1, $1, $2, 1, 'disponivel', true, $3, $4, $4, $3)`, id, uc, em, evento); err != nil {
			t.Fatal(err)
		}
	}
}

func (s *sorteioReal) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	tag, err := s.st.Pool.Exec(s.ctx, sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	if tag.RowsAffected() != 1 {
		t.Fatalf("%q changed %d rows", sql, tag.RowsAffected())
	}
}

// publicar does what the relay does once the event is on the bus.
func (s *sorteioReal) publicar(t *testing.T) {
	t.Helper()
	s.exec(t, `UPDATE d6a.outbox SET sequence = $2, publicado_em = $3 WHERE event_id = $1`, s.r.EventIDSorteio, seqPublicado, agora)
}

func (s *sorteioReal) envelope(t *testing.T) []byte {
	t.Helper()
	o, achou, err := s.st.Read().OutboxPorEvento(s.ctx, s.r.EventIDSorteio)
	if err != nil || !achou {
		t.Fatalf("the draw's outbox row: %v, %v", achou, err)
	}
	return o.Envelope
}

func (s *sorteioReal) verificar(o banco.Opcoes) (banco.Relatorio, error) {
	return banco.Verificar(s.ctx, s.st, s.r.EventIDSorteio, o)
}

func divergencia(t *testing.T, err error, campo string) {
	t.Helper()
	var d *registro.Falha
	if !errors.As(err, &d) {
		t.Fatalf("err = %v, want a Divergencia on %s", err, campo)
	}
	if d.Campo != campo {
		t.Fatalf("mismatch on %q (%v), want %q", d.Campo, d, campo)
	}
	if !strings.HasPrefix(d.Error(), campo+": ") {
		t.Errorf("message %q does not name %s", d.Error(), campo)
	}
}

func TestSorteioRealVerifica(t *testing.T) {
	t.Parallel()
	s := novoSorteio(t, nil, 4)
	rel, err := s.verificar(banco.Opcoes{})
	if err != nil {
		t.Fatalf("a genuine draw does not verify: %v", err)
	}
	if rel.EventID != s.r.EventIDSorteio || rel.Selecionado != s.r.ConselheiroID || rel.Total != 4 ||
		rel.Degrau != s.r.Degrau || rel.Base != s.base || rel.BaseFallback || rel.Timestamp != sorteio.FormatTimestamp(agora) {
		t.Errorf("report %+v does not describe the draw %+v", rel, s.r)
	}
	if rel.Janela != nil || len(rel.Notas) != 1 || rel.Notas[0] != banco.NotaSemBarramento {
		t.Errorf("without a bus: janela %v, notas %q", rel.Janela, rel.Notas)
	}
	out := rel.String()
	for _, want := range []string{
		"OK event_id=" + s.r.EventIDSorteio.String(), "selecionado=" + s.r.ConselheiroID.String(),
		"total=4", "degrau=" + s.r.Degrau.String(), banco.NotaSemBarramento,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report %q lacks %q", out, want)
		}
	}
}

func TestSorteioInexistente(t *testing.T) {
	t.Parallel()
	s := novoSorteio(t, nil, 1)
	_, err := banco.Verificar(s.ctx, s.st, uuid.New(), banco.Opcoes{})
	if !errors.Is(err, banco.ErrNaoEncontrado) {
		t.Fatalf("err = %v, want ErrNaoEncontrado", err)
	}
}

func TestAdulteracoes(t *testing.T) {
	t.Parallel()
	casos := []struct {
		nome   string
		campo  string
		sql    string // $1 = event_id_sorteio
		outroP bool   // $2 = another uuid
	}{
		{"auditoria_seed", "auditoria.seed",
			`UPDATE d6a.auditoria_sorteios SET seed = md5('x') || md5('y') WHERE event_id_sorteio = $1`, false},
		{"auditoria_ordenados", "auditoria.ordenados[0]",
			`UPDATE d6a.auditoria_sorteios SET ordenados = ordenados[2:2] || ordenados[1:1] || ordenados[3:] WHERE event_id_sorteio = $1`, false},
		{"auditoria_selecionado", "auditoria.selecionado",
			`UPDATE d6a.auditoria_sorteios SET selecionado = ordenados[2]::uuid, conselheiro_id = ordenados[2]::uuid WHERE event_id_sorteio = $1`, false},
		{"auditoria_hash", "auditoria.lista_elegiveis_hash",
			`UPDATE d6a.auditoria_sorteios SET lista_elegiveis_hash = md5('x') || md5('y') WHERE event_id_sorteio = $1`, false},
		{"auditoria_entrada_fora_de_ordem", "auditoria.elegiveis_entrada[1]",
			`UPDATE d6a.auditoria_sorteios SET elegiveis_entrada = elegiveis_entrada[2:2] || elegiveis_entrada[1:1] || elegiveis_entrada[3:] WHERE event_id_sorteio = $1`, false},
		{"auditoria_base", "auditoria.seed",
			`UPDATE d6a.auditoria_sorteios SET base = $2::text WHERE event_id_sorteio = $1`, true},
		{"auditoria_excluido_na_entrada", "auditoria.excluido",
			`UPDATE d6a.auditoria_sorteios SET excluido = elegiveis_entrada[1]::uuid WHERE event_id_sorteio = $1`, false},
		{"auditoria_degrau_fora_da_cadeia", "auditoria.degrau",
			`UPDATE d6a.auditoria_sorteios SET degrau = $2 WHERE event_id_sorteio = $1`, true},
		{"atribuicao_conselheiro", "atribuicao.conselheiro_id",
			`UPDATE d6a.atribuicoes SET conselheiro_id = $2 WHERE event_id_sorteio = $1`, true},
		{"atribuicao_seed", "atribuicao.seed_publico",
			`UPDATE d6a.atribuicoes SET seed_publico = 'abc' WHERE event_id_sorteio = $1`, false},
		{"atribuicao_total", "atribuicao.total_elegiveis",
			`UPDATE d6a.atribuicoes SET total_elegiveis = total_elegiveis + 1 WHERE event_id_sorteio = $1`, false},
		{"atribuicao_posicao", "atribuicao.posicao_sorteada",
			`UPDATE d6a.atribuicoes SET posicao_sorteada = 1 WHERE event_id_sorteio = $1`, false},
		{"atribuicao_hash", "atribuicao.lista_elegiveis_hash",
			`UPDATE d6a.atribuicoes SET lista_elegiveis_hash = NULL WHERE event_id_sorteio = $1`, false},
		{"atribuicao_ausente", "atribuicao",
			`DELETE FROM d6a.atribuicoes WHERE event_id_sorteio = $1`, false},
		{"outbox_payload_seed", "outbox.payload.seed_publico",
			`UPDATE d6a.outbox SET envelope = jsonb_set(envelope, '{payload,seed_publico}', '"00"') WHERE event_id = $1`, false},
		{"outbox_payload_conselheiro", "outbox.payload.conselheiro_id",
			`UPDATE d6a.outbox SET envelope = jsonb_set(envelope, '{payload,conselheiro_id}', to_jsonb($2::text)) WHERE event_id = $1`, true},
		{"outbox_payload_total", "outbox.payload.total_elegiveis",
			`UPDATE d6a.outbox SET envelope = jsonb_set(envelope, '{payload,total_elegiveis}', '99') WHERE event_id = $1`, false},
		{"outbox_payload_timestamp", "outbox.payload.timestamp",
			`UPDATE d6a.outbox SET envelope = jsonb_set(envelope, '{payload,timestamp}', '"2026-11-29T14:03:07.124Z"') WHERE event_id = $1`, false},
		{"outbox_ausente", "outbox",
			`DELETE FROM d6a.outbox WHERE event_id = $1`, false},
	}
	for _, c := range casos {
		t.Run(c.nome, func(t *testing.T) {
			t.Parallel()
			s := novoSorteio(t, nil, 3)
			args := []any{s.r.EventIDSorteio}
			if c.outroP {
				args = append(args, uuid.New())
			}
			s.exec(t, c.sql, args...)
			_, err := s.verificar(banco.Opcoes{})
			divergencia(t, err, c.campo)
		})
	}
}

// busFalso serves messages by stream sequence.
type busFalso struct {
	mu   sync.Mutex
	msgs map[uint64]msgFalsa
	err  error
}

type msgFalsa struct {
	data []byte
	t    time.Time
}

func (b *busFalso) MsgPorSequencia(_ context.Context, seq uint64) ([]byte, string, time.Time, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return nil, "", time.Time{}, b.err
	}
	m, ok := b.msgs[seq]
	if !ok {
		return nil, "", time.Time{}, fmt.Errorf("message %d not found", seq)
	}
	return m.data, "eventos.x", m.t, nil
}

// barramento is the bus as it would be: the base event at seqBase, read at
// base time tBase, the draw's envelope published at tPub.
func (s *sorteioReal) barramento(t *testing.T, tBase, tPub time.Time) *busFalso {
	t.Helper()
	s.publicar(t)
	return &busFalso{msgs: map[uint64]msgFalsa{
		seqBase:      {data: fmt.Appendf(nil, `{"event_id":%q,"tipo":"agenda.item_disponível","origem":"D-5","versao_schema":"1.0.0","correlacao_id":null,"timestamp":"x","payload":{}}`, s.base), t: tBase},
		seqPublicado: {data: s.envelope(t), t: tPub},
	}}
}

func TestJanelaDeTempo(t *testing.T) {
	t.Parallel()
	T := agora.Truncate(time.Millisecond)

	t.Run("dentro", func(t *testing.T) {
		t.Parallel()
		s := novoSorteio(t, nil, 3)
		tBase, tPub := T.Add(-50*time.Millisecond), T.Add(30*time.Millisecond)
		rel, err := s.verificar(banco.Opcoes{Barramento: s.barramento(t, tBase, tPub)})
		if err != nil {
			t.Fatal(err)
		}
		if rel.Janela == nil || !rel.Janela.Inicio.Equal(tBase) || !rel.Janela.Fim.Equal(tPub) || len(rel.Notas) != 0 {
			t.Errorf("janela %+v, notas %q", rel.Janela, rel.Notas)
		}
		if !strings.Contains(rel.String(), "largura 80ms") {
			t.Errorf("report %q lacks the window width", rel.String())
		}
	})
	t.Run("base_no_mesmo_milissegundo", func(t *testing.T) {
		t.Parallel()
		s := novoSorteio(t, nil, 3)
		// t0 later than T only below the millisecond: truncated, it is T.
		if _, err := s.verificar(banco.Opcoes{Folga: -1, Barramento: s.barramento(t, T.Add(700*time.Microsecond), T)}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("T_antes_da_base", func(t *testing.T) {
		t.Parallel()
		s := novoSorteio(t, nil, 3)
		_, err := s.verificar(banco.Opcoes{Barramento: s.barramento(t, T.Add(5*time.Second), T.Add(6*time.Second))})
		divergencia(t, err, "janela.inicio")
	})
	t.Run("T_antes_da_base_dentro_da_folga", func(t *testing.T) {
		t.Parallel()
		s := novoSorteio(t, nil, 3)
		b := s.barramento(t, T.Add(500*time.Millisecond), T.Add(time.Second))
		if _, err := s.verificar(banco.Opcoes{Barramento: b}); err != nil {
			t.Errorf("within the default 1s skew: %v", err)
		}
		_, err := s.verificar(banco.Opcoes{Barramento: b, Folga: 100 * time.Millisecond})
		divergencia(t, err, "janela.inicio")
	})
	t.Run("T_depois_da_publicacao", func(t *testing.T) {
		t.Parallel()
		s := novoSorteio(t, nil, 3)
		_, err := s.verificar(banco.Opcoes{Barramento: s.barramento(t, T.Add(-10*time.Second), T.Add(-5*time.Second))})
		divergencia(t, err, "janela.fim")
	})
	// A message on the bus that is not what the database says was read or
	// published.
	for _, c := range []struct {
		nome    string
		seq     uint64
		alterar func(s *sorteioReal, data []byte) []byte
		campo   string
	}{
		{"base_nao_e_o_evento", seqBase, func(*sorteioReal, []byte) []byte {
			return fmt.Appendf(nil, `{"event_id":%q}`, uuid.New())
		}, "barramento.base"},
		{"publicado_difere_do_outbox", seqPublicado, func(s *sorteioReal, data []byte) []byte {
			return []byte(strings.Replace(string(data), s.r.Seed, strings.Repeat("0", 64), 1))
		}, "barramento.sorteado.payload.seed_publico"},
	} {
		t.Run(c.nome, func(t *testing.T) {
			t.Parallel()
			s := novoSorteio(t, nil, 3)
			b := s.barramento(t, T.Add(-time.Millisecond), T.Add(time.Millisecond))
			m := b.msgs[c.seq]
			m.data = c.alterar(s, m.data)
			b.msgs[c.seq] = m
			_, err := s.verificar(banco.Opcoes{Barramento: b})
			divergencia(t, err, c.campo)
		})
	}
	t.Run("barramento_fora", func(t *testing.T) {
		t.Parallel()
		s := novoSorteio(t, nil, 3)
		b := s.barramento(t, T, T)
		b.err = errors.New("nats: no servers available")
		rel, err := s.verificar(banco.Opcoes{Barramento: b})
		if err != nil {
			t.Fatal(err)
		}
		if rel.Janela != nil || len(rel.Notas) == 0 || rel.Notas[0] != banco.NotaSemBarramento {
			t.Errorf("janela %v, notas %q", rel.Janela, rel.Notas)
		}
	})
	t.Run("ainda_nao_publicado", func(t *testing.T) {
		t.Parallel()
		s := novoSorteio(t, nil, 3)
		b := s.barramento(t, T.Add(-time.Millisecond), T)
		s.exec(t, `UPDATE d6a.outbox SET sequence = NULL, publicado_em = NULL WHERE event_id = $1`, s.r.EventIDSorteio)
		rel, err := s.verificar(banco.Opcoes{Barramento: b})
		if err != nil {
			t.Fatal(err)
		}
		if rel.Janela != nil || len(rel.Notas) != 1 || !strings.Contains(rel.Notas[0], "fim não verificado") {
			t.Errorf("janela %v, notas %q", rel.Janela, rel.Notas)
		}
	})
	t.Run("fallback", func(t *testing.T) {
		t.Parallel()
		// Draws no longer fall back (CONTRACT §4), but audit records
		// written before that still say base_fallback: one is rebuilt here
		// from a draw on a base that is on no bus.
		s := novoSorteio(t, baseFixa{id: uuid.NewString()}, 3)
		s.exec(t, `UPDATE d6a.auditoria_sorteios SET base_fallback = true, base_sequence = NULL WHERE event_id_sorteio = $1`, s.r.EventIDSorteio)
		b := s.barramento(t, time.Time{}, T.Add(time.Millisecond))
		delete(b.msgs, seqBase)
		rel, err := s.verificar(banco.Opcoes{Barramento: b})
		if err != nil {
			t.Fatal(err)
		}
		if !rel.BaseFallback || rel.Janela == nil || !rel.Janela.Inicio.IsZero() || len(rel.Notas) != 1 {
			t.Errorf("fallback report %+v", rel)
		}
		if !strings.Contains(rel.String(), "fallback") {
			t.Errorf("report %q does not flag the fallback", rel.String())
		}
		s.exec(t, `UPDATE d6a.auditoria_sorteios SET base_sequence = 3 WHERE event_id_sorteio = $1`, s.r.EventIDSorteio)
		_, err = s.verificar(banco.Opcoes{Barramento: b})
		divergencia(t, err, "auditoria.base_sequence")
	})
}

// The rule a draw was logged under (CONTRACT §4) is read from
// d6a.transparencia_regras against the draw's index in the log: at or past
// desde_indice, the trigger's; before it, or without the rule's row, the
// earlier window's.
func TestRegraDoGatilho(t *testing.T) {
	t.Parallel()
	s := novoSorteio(t, nil, 2) // desde_indice past the draw
	gatilho := func(quando string) bool {
		t.Helper()
		rel, err := s.verificar(banco.Opcoes{})
		if err != nil {
			t.Fatalf("%s: %v", quando, err)
		}
		return rel.Gatilho
	}
	if gatilho("before desde_indice") {
		t.Error("a draw logged before desde_indice verified under the trigger's rule")
	}
	s.exec(t, `UPDATE d6a.transparencia_regras SET desde_indice = 0 WHERE regra = 'gatilho'`)
	if !gatilho("at desde_indice") {
		t.Error("a draw logged at desde_indice not verified under the trigger's rule")
	}
	s.exec(t, `DELETE FROM d6a.transparencia_regras WHERE regra = 'gatilho'`)
	if gatilho("without the rule") {
		t.Error("without the rule's row, the draw verified under the trigger's rule")
	}
}
