package entradas

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/store"
)

// memoria is Banco in memory: the rows the handlers read and write, kept
// as PostgreSQL keeps them for these statements (sql/queries), so the
// handlers' decisions can be tested without a database. The integration
// tests (internal/atribuicao, internal/colonia) run the same handlers on
// PostgreSQL.
type memoria struct {
	conselheiros map[uuid.UUID]*store.Conselheiro
	cadastros    map[uuid.UUID]bool // event_id_cadastro
	atribuicoes  []*linhaAtribuicao
	recusas      []store.RecusaContada
	suspensoes   []store.Suspensao
	fila         []store.Pendente
	inicios      map[uuid.UUID]time.Time // by assignment
	capacitacoes map[uuid.UUID]bool
	vinculos     []store.Vinculo
	criterios    map[uuid.UUID]string
}

type linhaAtribuicao struct {
	store.AtribuicaoDoSorteio
	encerramento *uuid.UUID
}

func novaMemoria() *memoria {
	return &memoria{
		conselheiros: map[uuid.UUID]*store.Conselheiro{}, cadastros: map[uuid.UUID]bool{},
		inicios: map[uuid.UUID]time.Time{}, capacitacoes: map[uuid.UUID]bool{}, criterios: map[uuid.UUID]string{},
	}
}

func (m *memoria) CadastroAplicado(_ context.Context, eventID uuid.UUID) (bool, error) {
	return m.cadastros[eventID], nil
}

func (m *memoria) ConselheiroPorID(_ context.Context, id uuid.UUID) (store.Conselheiro, bool, error) {
	c, ok := m.conselheiros[id]
	if !ok {
		return store.Conselheiro{}, false, nil
	}
	return *c, true, nil
}

func (m *memoria) ConselheiroParaAtualizar(ctx context.Context, id uuid.UUID) (store.Conselheiro, bool, error) {
	return m.ConselheiroPorID(ctx, id)
}

func (m *memoria) Cadastrar(_ context.Context, c store.Cadastro) error {
	m.conselheiros[c.Cidadao] = &store.Conselheiro{ID: c.Cidadao, Cidadao: c.Cidadao, UC: c.UC, Nivel: c.Nivel, Status: c.Status}
	m.cadastros[c.EventID] = true
	return nil
}

func (m *memoria) MudarStatus(_ context.Context, id uuid.UUID, status string, _ uuid.UUID, _ time.Time) error {
	c := m.conselheiros[id]
	c.Status = status
	if status != elegibilidade.Suspenso && status != elegibilidade.Inativo {
		c.SuspensaoAte = nil
	}
	return nil
}

func (m *memoria) Suspender(_ context.Context, id uuid.UUID, ate time.Time, _ uuid.UUID, _ time.Time) error {
	c := m.conselheiros[id]
	c.Status, c.SuspensaoAte = elegibilidade.Suspenso, &ate
	return nil
}

func (m *memoria) AnotarSuspensao(_ context.Context, s store.Suspensao) error {
	m.suspensoes = append(m.suspensoes, s)
	return nil
}

func (m *memoria) EncerramentoAplicado(_ context.Context, eventID uuid.UUID) (bool, error) {
	return slices.ContainsFunc(m.atribuicoes, func(a *linhaAtribuicao) bool {
		return a.encerramento != nil && *a.encerramento == eventID
	}), nil
}

// ativa is the active assignment matching ok.
func (m *memoria) ativa(ok func(*linhaAtribuicao) bool) (store.AtribuicaoVigente, bool, error) {
	for _, a := range m.atribuicoes {
		if a.Status == atribuicao.AtribuicaoAtiva && ok(a) {
			return a.AtribuicaoVigente, true, nil
		}
	}
	return store.AtribuicaoVigente{}, false, nil
}

func (m *memoria) AtribuicaoAtivaDoPar(_ context.Context, conselheiro, demanda uuid.UUID) (store.AtribuicaoVigente, bool, error) {
	return m.ativa(func(a *linhaAtribuicao) bool { return a.ConselheiroID == conselheiro && a.DemandaID == demanda })
}

func (m *memoria) AtribuicaoAtivaDoConselheiro(_ context.Context, conselheiro uuid.UUID) (store.AtribuicaoVigente, bool, error) {
	return m.ativa(func(a *linhaAtribuicao) bool { return a.ConselheiroID == conselheiro })
}

func (m *memoria) AtribuicaoAtivaDaDemanda(_ context.Context, demanda uuid.UUID) (store.AtribuicaoVigente, bool, error) {
	return m.ativa(func(a *linhaAtribuicao) bool { return a.DemandaID == demanda })
}

func (m *memoria) UltimaAtribuicaoDoPar(_ context.Context, conselheiro, demanda uuid.UUID) (store.AtribuicaoDoSorteio, bool, error) {
	for _, a := range slices.Backward(m.atribuicoes) {
		if a.ConselheiroID == conselheiro && a.DemandaID == demanda {
			return a.AtribuicaoDoSorteio, true, nil
		}
	}
	return store.AtribuicaoDoSorteio{}, false, nil
}

func (m *memoria) Encerrar(_ context.Context, id uuid.UUID, status string, eventID uuid.UUID) error {
	for _, a := range m.atribuicoes {
		if a.ID == id && a.Status == atribuicao.AtribuicaoAtiva {
			a.Status, a.encerramento = status, &eventID
		}
	}
	return nil
}

func (m *memoria) AnotarInicio(_ context.Context, a store.AtribuicaoVigente, em time.Time, _ uuid.UUID, _ time.Time) (bool, error) {
	if _, ja := m.inicios[a.ID]; ja {
		return false, nil
	}
	m.inicios[a.ID] = em
	return true, nil
}

func (m *memoria) RecusaAplicada(_ context.Context, eventID uuid.UUID) (bool, error) {
	return slices.ContainsFunc(m.recusas, func(r store.RecusaContada) bool { return r.EventoRecusa == eventID }), nil
}

// RecusasDesdeAceitacao: these tests never accept (demanda_iniciada), so
// every refusal counts, as in d6a.contador_recusas without a later start.
func (m *memoria) RecusasDesdeAceitacao(_ context.Context, conselheiro uuid.UUID) (int64, error) {
	var n int64
	for _, r := range m.recusas {
		if r.Conselheiro == conselheiro {
			n++
		}
	}
	return n, nil
}

func (m *memoria) ContarRecusa(_ context.Context, r store.RecusaContada) error {
	m.recusas = append(m.recusas, r)
	return nil
}

// CabecasDaFila is the oldest pending row of each unit among ucs.
func (m *memoria) CabecasDaFila(_ context.Context, ucs []uuid.UUID) ([]store.Pendente, error) {
	var out []store.Pendente
	for _, uc := range ucs {
		for _, p := range m.fila {
			if p.UC == uc {
				out = append(out, p)
				break
			}
		}
	}
	return out, nil
}

func (m *memoria) PendenteDaDemanda(_ context.Context, demanda uuid.UUID) (store.Pendente, bool, error) {
	for _, p := range m.fila {
		if p.DemandaID == demanda {
			return p, true, nil
		}
	}
	return store.Pendente{}, false, nil
}

func (m *memoria) TirarDaFila(_ context.Context, demanda uuid.UUID) (bool, error) {
	n := len(m.fila)
	m.fila = slices.DeleteFunc(m.fila, func(p store.Pendente) bool { return p.DemandaID == demanda })
	return len(m.fila) < n, nil
}

func (m *memoria) AnotarCapacitacao(_ context.Context, c store.Capacitacao) error {
	m.capacitacoes[c.Conselheiro] = true
	return nil
}

func (m *memoria) MarcarCapacitado(context.Context, uuid.UUID, uuid.UUID, time.Time) error {
	return nil
}

func (m *memoria) CapacitadoExternamente(_ context.Context, conselheiro uuid.UUID) (bool, error) {
	return m.capacitacoes[conselheiro], nil
}

func (m *memoria) AnotarVinculo(_ context.Context, v store.Vinculo) error {
	m.vinculos = append(m.vinculos, v)
	return nil
}

func (m *memoria) Progredir(_ context.Context, conselheiro, uc uuid.UUID, nivel int32, _ uuid.UUID, _ time.Time) error {
	c := m.conselheiros[conselheiro]
	c.UC, c.Nivel = uc, nivel
	return nil
}

func (m *memoria) AnotarCriterios(_ context.Context, uc uuid.UUID, versao string, _ uuid.UUID, _ time.Time) error {
	m.criterios[uc] = versao
	return nil
}

// unidade is Unidade for the handlers alone: its draw hands the demand to
// the first counsellor disponivel in the request's unit who is not
// excluded (the draw itself is internal/sorteio's, tested there and
// against the vectors), else queues it.
type unidade struct {
	m         *memoria
	agora     time.Time
	par       atribuicao.Parametros
	pedidos   []atribuicao.Pedido
	registros []registro.Registravel
	alterados []uuid.UUID
	recusas   []string
}

func (u *unidade) Agora() time.Time { return u.agora }

func (u *unidade) Parametros(context.Context) (atribuicao.Parametros, error) { return u.par, nil }

func (u *unidade) GuardaAgenda(_ context.Context, a store.AgendaAGuardar) (store.GuardaAgenda, error) {
	_, atribuida, _ := u.m.AtribuicaoAtivaDaDemanda(context.Background(), a.DemandaID)
	_, pendente, _ := u.m.PendenteDaDemanda(context.Background(), a.DemandaID)
	return store.GuardaAgenda{EventID: a.EventID, Atribuida: atribuida, Pendente: pendente}, nil
}

func (u *unidade) Sortear(_ context.Context, p atribuicao.Pedido) (atribuicao.Resultado, error) {
	u.pedidos = append(u.pedidos, p)
	for _, c := range u.m.conselheiros {
		if c.UC != p.UC || c.Status != elegibilidade.Disponivel || (p.Excluir != nil && *p.Excluir == c.ID) {
			continue
		}
		id := uuid.New()
		c.Status = elegibilidade.Ocupado
		u.m.atribuicoes = append(u.m.atribuicoes, &linhaAtribuicao{AtribuicaoDoSorteio: store.AtribuicaoDoSorteio{
			AtribuicaoVigente: store.AtribuicaoVigente{ID: uuid.New(), EventIDSorteio: id, DemandaID: p.DemandaID, ConselheiroID: c.ID, UC: p.UC,
				Demanda: store.DadosDemanda{ScoreFinal: p.Dados.ScoreFinal, CategoriaID: p.Dados.CategoriaID, NivelPrecedencia: p.Dados.NivelPrecedencia, GrupoID: p.Dados.GrupoID}},
			Status: atribuicao.AtribuicaoAtiva,
		}})
		return atribuicao.Resultado{Sucesso: true, ConselheiroID: c.ID, EventIDSorteio: id}, nil
	}
	if !p.NaFila {
		u.m.fila = append(u.m.fila, store.Pendente{DemandaID: p.DemandaID, UC: p.UC, EventIDOrigem: p.Dados.EventIDOrigem})
	}
	return atribuicao.Resultado{Motivo: "sem_candidatos"}, nil
}

func (u *unidade) EncerrarSuspensao(context.Context, *slog.Logger, uuid.UUID, time.Time, string) error {
	return nil
}

func (u *unidade) Registrar(r registro.Registravel) { u.registros = append(u.registros, r) }

func (u *unidade) SeqGatilho() *int64 { return nil }

func (u *unidade) Alterou(cidadao uuid.UUID) { u.alterados = append(u.alterados, cidadao) }

func (u *unidade) RecusaObservada(motivo string) { u.recusas = append(u.recusas, motivo) }

// arvore is a hierarchy of units without children.
type arvore struct{}

func (arvore) ComDescendentes(_ context.Context, uc uuid.UUID) ([]uuid.UUID, error) {
	return []uuid.UUID{uc}, nil
}
