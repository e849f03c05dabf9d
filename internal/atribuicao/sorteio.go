package atribuicao

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/decisao"
	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/outbox"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/sorteio"
)

// DadosDemanda is the demand data a draw carries (spec 1.4 dadosDemanda),
// kept as the assignment's snapshot (spec 2.3) and the pending row.
type DadosDemanda struct {
	ScoreFinal       float64
	CategoriaID      string
	NivelPrecedencia int32
	GrupoID          *uuid.UUID
	CorrelacaoID     string
	EventIDOrigem    uuid.UUID
}

// Pedido is one draw request.
type Pedido struct {
	UC        uuid.UUID
	DemandaID uuid.UUID
	Dados     DadosDemanda
	// Excluir is the refusing counsellor of a re-draw (spec 3.12 step 5).
	Excluir *uuid.UUID
	// SemCandidatosPublicado is the spec 5.4 guard already read (agenda
	// items read it with their other guards, Unidade.GuardaAgenda).
	SemCandidatosPublicado bool
	// NaFila: the demand waits in the pending queue already (a sweep's
	// draw). Otherwise a failed draw puts it there, and that is a record
	// of the log even when spec 5.4's guard publishes nothing, so the
	// replay knows the queue (CONTRACT §7 "Queue order").
	NaFila bool
}

// Resultado of a draw (spec 1.4 ResultadoSorteio).
type Resultado struct {
	Sucesso bool
	// SairDaFila: the drawn demand waited in the pending queue and leaves
	// it (decisao.EfeitosSorteio).
	SairDaFila     bool
	Motivo         string
	ConselheiroID  uuid.UUID
	EventIDSorteio uuid.UUID
	Seed           string
	ListaHash      string
	TotalElegiveis int
	Degrau         uuid.UUID
	Cadeia         []uuid.UUID
}

// ErrDemandaAtribuida is returned by Sortear for a demand that already has
// an active assignment (the handlers check this before drawing, spec 3.9).
var ErrDemandaAtribuida = errors.New("demanda já atribuída")

// Sortear runs one draw as its own unit of work, outside any event (the
// benchmark and the tests use it; handlers call executarSorteio inside
// theirs).
func (s *Servico) Sortear(ctx context.Context, p Pedido) (Resultado, error) {
	var r Resultado
	err := s.executar(ctx, func(ctx context.Context, u *unidade) error {
		if _, achou, err := u.tx.AtribuicaoAtivaDaDemanda(ctx, p.DemandaID); err != nil {
			return err
		} else if achou {
			return ErrDemandaAtribuida
		}
		var err error
		r, err = u.executarSorteio(ctx, p)
		return err
	})
	return r, err
}

// executarSorteio is spec 4.4 executarSorteioInterno, inside the caller's
// transaction: filter, then either assignment + occupied counsellor + audit +
// conselheiro.sorteado (the spec's publicarConselheiroSorteado, an outbox
// row), or pending row + sorteio.sem_candidatos. It reads what the step
// needs (the chain, the filter, the seed or spec 5.4's guard), runs the
// step the replay runs too (decisao.Sortear) and writes its effects in
// memory: the rows wait in the batch's diferido, which the executor writes
// with its set-based statements (GravarSorteios, EnfileirarPendentes,
// InserirOutboxLote).
func (u *unidade) executarSorteio(ctx context.Context, p Pedido) (Resultado, error) {
	s := u.servico
	inicio := time.Now()
	cadeia, err := s.o.Hierarquia.Cadeia(ctx, p.UC)
	if err != nil {
		return Resultado{}, fmt.Errorf("hierarquia: %w", err)
	}
	// The links this decision climbs are public before it (CONTRACT §7).
	u.registrarHierarquia(cadeia)
	filtro, err := u.filtrar(ctx, cadeia, p.Excluir)
	if err != nil {
		return Resultado{}, fmt.Errorf("candidatos: %w", err)
	}
	log := s.log.With("demanda_id", p.DemandaID, "uc_id", p.UC, "correlacao_id", p.Dados.CorrelacaoID)

	// What the step reads beyond the filter: the seed when someone is
	// eligible (it takes the trigger and its round), spec 5.4's guard when
	// nobody is.
	var (
		base, t string
		baseSeq int64
		rod     *RodadaSorteio
		sem     decisao.Semente
	)
	visao := decisao.VisaoSorteio{Filtro: filtro, NaFila: p.NaFila}
	if len(filtro.Elegiveis) > 0 {
		if base, baseSeq, t, rod, err = u.semente(ctx); err != nil {
			return Resultado{}, err
		}
		sem = decisao.Semente{Base: base, Timestamp: t, Embaralhar: s.o.Embaralhar}
		if rod != nil {
			sem.Randomness = rod.Randomness
		}
	} else if visao.SemCandidatosPublicado, err = u.semCandidatosPublicado(ctx, p); err != nil {
		return Resultado{}, err
	}
	ef, err := decisao.Sortear(visao, sem, u.agora)
	if err != nil {
		return Resultado{}, err
	}
	if !ef.Sorteado {
		if ef.Enfileirar {
			u.enfileirarPendente(p)
		}
		if err := u.publicarSemCandidatos(p, ef, filtro, cadeia); err != nil {
			return Resultado{}, err
		}
		log.Info("Sorteio sem candidatos", "motivo", filtro.Motivo, "cadeia", cadeia)
		u.depois = append(u.depois, func() { s.o.Observador.SemCandidatos(filtro.Motivo) })
		return Resultado{Motivo: filtro.Motivo, Cadeia: cadeia}, nil
	}
	res, selecionado, n := ef.Resultado, ef.Vencedor, len(filtro.Elegiveis)
	// A winner still marked suspenso: this draw ends the suspension, and
	// its end goes out before the draw, in the same unit of work.
	if ef.FimDaSuspensao != nil {
		if err := u.encerrarSuspensao(ctx, log.With("conselheiro_id", selecionado), selecionado, *ef.FimDaSuspensao, "sorteio"); err != nil {
			return Resultado{}, err
		}
	}
	// The assignment's date is the service's clock, which judges its
	// response timeout; T, the seed's, is the trigger's bus time.
	dataSorteio := u.agora
	eventID := u.novoID()
	envelope, err := outbox.Envelope(evento.ConselheiroSorteado, eventID, p.Dados.CorrelacaoID, t, outbox.Sorteado{
		ConselheiroID: selecionado, DemandaID: p.DemandaID, UnidadeCivicaID: p.UC,
		MetodoSorteio: sorteio.Metodo, SeedPublico: res.Seed, ListaElegiveisHash: res.ListaHash,
		PosicaoSorteada: sorteio.PosicaoSorteada, TotalElegiveis: n, Timestamp: t,
	})
	if err != nil {
		return Resultado{}, err
	}
	cadeiaTxt := make([]string, len(cadeia))
	for i, c := range cadeia {
		cadeiaTxt[i] = c.String()
	}
	saida := Saida{EventID: eventID, Subject: evento.ConselheiroSorteado.Subject(s.o.SubjectPrefix), Envelope: envelope}
	var rodada *int64
	var assinatura, compromisso *string
	if rod != nil {
		rodada, assinatura, compromisso = &rod.Numero, &rod.Assinatura, &rod.Compromisso
		saida.Rodada = rod.Numero
	}
	// Assignment, occupied counsellor, audit and outbox row: written by the
	// executor with the batch's other decisions (diferido).
	u.lote.sorteio(linhaSorteio{
		AtribuicaoID: u.novoID(), EventIDSorteio: eventID, ConselheiroID: selecionado,
		DemandaID: p.DemandaID, UnidadeCivicaID: p.UC, Seed: res.Seed,
		PosicaoSorteada: sorteio.PosicaoSorteada, TotalElegiveis: int32(n),
		ListaElegiveisHash: res.ListaHash, DataSorteio: dataSorteio,
		ScoreFinal: p.Dados.ScoreFinal, CategoriaID: p.Dados.CategoriaID,
		NivelPrecedencia: p.Dados.NivelPrecedencia, GrupoID: p.Dados.GrupoID,
		Base: base, BaseSequence: baseSeq, TimestampSorteio: t,
		ElegiveisEntrada: res.Entrada, Ordenados: res.Ordenados, Degrau: filtro.Degrau,
		Cadeia: cadeiaTxt, Excluido: p.Excluir, Agora: u.agora, Status: ef.Status,
		Rodada: rodada, AssinaturaRodada: assinatura, Compromisso: compromisso,
	}, linhaOutbox{
		EventID: eventID, Tipo: string(evento.ConselheiroSorteado), Subject: saida.Subject,
		CorrelacaoID: p.Dados.CorrelacaoID, Envelope: envelope, CriadoEm: u.agora, EntradaSequence: u.entradaSeq(),
		BeaconRodada: rodada,
	})
	// Transparency log (CONTRACT §7): the executor appends u.registros.
	reg, err := registro.NovoRegistro(eventID, p.DemandaID, p.UC, base, &baseSeq, t, res, filtro.Degrau, cadeia, p.Excluir)
	if err != nil {
		return Resultado{}, err
	}
	if rod != nil {
		reg.Rodada, reg.AssinaturaRodada, reg.Compromisso = rodada, rod.Assinatura, rod.Compromisso
	}
	// A long list goes in list records right before the draw (Partir):
	// every leaf stays within a C2SP entry's 65,535 bytes.
	u.registros = append(u.registros, registro.Partir(reg)...)
	u.alterou(selecionado)
	u.saida = append(u.saida, saida)
	log.Info("Sorteio concluído", "degrau", filtro.Degrau, "cadeia", cadeia, "total_elegiveis", n,
		"conselheiro_id", selecionado, "event_id", eventID, "seed_publico", res.Seed)
	dur := time.Since(inicio)
	u.depois = append(u.depois, func() { s.o.Observador.Sorteio(dur) })
	return Resultado{
		Sucesso: true, SairDaFila: ef.SairDaFila, ConselheiroID: selecionado, EventIDSorteio: eventID, Seed: res.Seed,
		ListaHash: res.ListaHash, TotalElegiveis: n, Degrau: filtro.Degrau, Cadeia: cadeia,
	}, nil
}

// ErrBaseDesconhecida is returned when a draw outside any event (Sortear)
// cannot learn the bus's latest message (bus unreachable, leader
// election): the draw waits and is retried, never drawn on a base d6a
// chose (CONTRACT §4).
var ErrBaseDesconhecida = errors.New("base do sorteio desconhecida: último evento do barramento indisponível")

// ErrGatilhoUsado is returned for a second draw under one trigger: one
// trigger leads to at most one draw (CONTRACT §4), else two draws would
// share a seed.
var ErrGatilhoUsado = errors.New("um gatilho leva a no máximo um sorteio")

// Gatilho is the consumed message a decision follows (CONTRACT §4): its
// event_id is the seed's base, its stream sequence base_sequence, and the
// time the bus server stored it T. Nothing d6a does after the message is
// stored can change the seed.
type Gatilho struct {
	EventID    uuid.UUID
	Seq        int64
	Armazenado time.Time
}

// semente is the seed's inputs: the unit's trigger (CONTRACT §4). A unit
// outside any event (Sortear: the benchmark, the tests) takes the bus's
// latest message as its trigger, and T its stored time when the bus can
// read it (a bus that cannot, a test's fixed base, leaves T to the clock,
// the rule of the records before the trigger's; docs/decisions.md, "The
// seed follows the trigger").
func (u *unidade) semente(ctx context.Context) (base string, seq int64, t string, rod *RodadaSorteio, err error) {
	if g := u.gatilho; g != nil {
		if u.sorteou {
			return "", 0, "", nil, ErrGatilhoUsado
		}
		rod, err := u.rodadaDoGatilho(ctx, g.Armazenado)
		if err != nil {
			return "", 0, "", nil, err
		}
		u.sorteou = true
		return g.EventID.String(), g.Seq, sorteio.FormatTimestamp(g.Armazenado), rod, nil
	}
	b := u.servico.o.Barramento
	id, n, err := b.LastEventID(ctx)
	if err != nil || id == "" {
		return "", 0, "", nil, fmt.Errorf("%w: %v", ErrBaseDesconhecida, err)
	}
	em := u.servico.o.Now()
	if l, ok := b.(LeitorDoBarramento); ok {
		if _, _, em, err = l.MsgPorSequencia(ctx, n); err != nil {
			return "", 0, "", nil, fmt.Errorf("%w: %v", ErrBaseDesconhecida, err)
		}
	}
	if rod, err = u.rodadaDoGatilho(ctx, em); err != nil {
		return "", 0, "", nil, err
	}
	return id, int64(n), sorteio.FormatTimestamp(em), rod, nil
}

// LeitorDoBarramento is a Barramento that also reads a message by stream
// sequence (*bus.Bus): a draw outside any event then takes T from its
// base's stored time.
type LeitorDoBarramento interface {
	MsgPorSequencia(ctx context.Context, seq uint64) (data []byte, subject string, armazenado time.Time, err error)
}

// enfileirarPendente is spec 4.4 step 2: enter the pending queue, or count
// one more failed attempt (exactly once per failed draw, T35), written
// with the batch.
func (u *unidade) enfileirarPendente(p Pedido) {
	u.lote.pendente(linhaPendente{
		DemandaID: p.DemandaID, UnidadeCivicaID: p.UC, CategoriaID: p.Dados.CategoriaID,
		NivelPrecedencia: p.Dados.NivelPrecedencia, ScoreFinal: p.Dados.ScoreFinal, GrupoID: p.Dados.GrupoID,
		Agora: u.agora, EventIDOrigem: p.Dados.EventIDOrigem,
	})
}

// semCandidatosPublicado is spec 5.4's guard (the spec's
// consultarEventos / jaPublicado): a sorteio.sem_candidatos of this
// correlacao_id published before. The batch's own rows count (not written
// yet); outside the batch's run the guard was not read ahead.
func (u *unidade) semCandidatosPublicado(ctx context.Context, p Pedido) (bool, error) {
	if p.SemCandidatosPublicado || u.lote.correlacoes[p.Dados.CorrelacaoID] {
		return true, nil
	}
	if u.corrida {
		return false, nil
	}
	publicado, err := u.tx.SemCandidatosPublicado(ctx, string(evento.SorteioSemCandidatos), p.Dados.CorrelacaoID)
	if err != nil {
		return false, fmt.Errorf("outbox: %w", err)
	}
	return publicado, nil
}

// publicarSemCandidatos is spec 5.4 publicarSorteioSemCandidatos as the
// step decided it (ef.Publicar, ef.Registrar): an outbox row, published
// after the commit, and its record.
func (u *unidade) publicarSemCandidatos(p Pedido, ef decisao.EfeitosSorteio, filtro elegibilidade.Resultado, cadeia []uuid.UUID) error {
	tipo := evento.SorteioSemCandidatos
	// A decision's time is its trigger's T, as a draw's (CONTRACT §4).
	t := sorteio.FormatTimestamp(u.agora)
	if u.gatilho != nil {
		t = sorteio.FormatTimestamp(u.gatilho.Armazenado)
	}
	eventID := u.novoID()
	if !ef.Publicar {
		u.servico.log.Info("sorteio.sem_candidatos já publicado para a demanda — ignorando",
			"demanda_id", p.DemandaID, "correlacao_id", p.Dados.CorrelacaoID)
	} else {
		data, err := outbox.Envelope(tipo, eventID, p.Dados.CorrelacaoID, t, outbox.SemCandidatos{
			DemandaID: p.DemandaID, UnidadeCivicaID: p.UC, TotalElegiveis: 0, Motivo: filtro.Motivo, Timestamp: t,
		})
		if err != nil {
			return err
		}
		subject := tipo.Subject(u.servico.o.SubjectPrefix)
		u.lote.semCandidatos(linhaOutbox{
			EventID: eventID, Tipo: string(tipo), Subject: subject, CorrelacaoID: p.Dados.CorrelacaoID,
			Envelope: data, CriadoEm: u.agora, EntradaSequence: u.entradaSeq(),
		})
		u.saida = append(u.saida, Saida{EventID: eventID, Subject: subject, Envelope: data})
	}
	if ef.Registrar {
		u.registrarSemCandidatos(eventID, p, filtro, cadeia, t)
	}
	return nil
}

// registrarSemCandidatos adds the published sorteio.sem_candidatos to the
// transparency log (CONTRACT §7): "nobody was eligible" is as public as a
// draw, with the counts its motive follows from.
func (u *unidade) registrarSemCandidatos(eventID uuid.UUID, p Pedido, filtro elegibilidade.Resultado, cadeia []uuid.UUID, t string) {
	u.registros = append(u.registros, registro.NovoSemCandidatos(eventID, p.DemandaID, p.UC, u.entradaSeq(), t,
		filtro.Motivo, cadeia, filtro.Cadastrados, filtro.Ocupados, p.Excluir))
}
