package decisao

import (
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/sorteio"
)

// VisaoSorteio is what a draw request's step reads (spec 4.4): the answer
// of spec 4.3 over the chain, and the demand's place in the queue.
type VisaoSorteio struct {
	// Filtro is elegibilidade's answer: the executor's over the rows it
	// read, the replay's the list the record shows, with the suspensions
	// the replayed state says ended (Vencidos).
	Filtro elegibilidade.Resultado
	// NaFila: the demand waits in the pending queue already (a sweep's
	// draw).
	NaFila bool
	// SemCandidatosPublicado: spec 5.4's guard found this demand's
	// sorteio.sem_candidatos published before (read only when nobody is
	// eligible).
	SemCandidatosPublicado bool
}

// Semente is a draw's seed inputs (CONTRACT §4, §4a): its trigger's
// event_id and bus time, and its beacon round's randomness ("" before the
// beacon rule).
type Semente struct {
	Base, Timestamp, Randomness string
	// Embaralhar replaces sorteio.SortearComRodada, for the fairness
	// tests' biased lotteries only; nil is the real draw.
	Embaralhar func(base, timestamp, randomness string, elegiveis []string) (sorteio.Resultado, error)
	// Registrado is the shuffle a log record shows (the replay): the step
	// takes it as it is, since registro.Conferir checks it against the
	// seed on its own.
	Registrado *sorteio.Resultado
}

// EfeitosSorteio is what a draw request changes.
type EfeitosSorteio struct {
	// Sorteado: a draw among Filtro.Elegiveis, won by Vencedor, who
	// becomes Status (ocupado, spec 4.6).
	Sorteado  bool
	Resultado sorteio.Resultado
	Vencedor  uuid.UUID
	Status    string
	// FimDaSuspensao is the end of the winner's suspension, which the
	// draw lifts: its conselheiro.suspensao_expirada goes out before the
	// draw, in the same unit of work (nil: the winner was disponivel).
	FimDaSuspensao *time.Time
	// SairDaFila: the drawn demand leaves the pending queue.
	SairDaFila bool
	// Enfileirar: nobody eligible; the demand enters the queue, or counts
	// one more failed attempt there (spec 4.4 step 2, exactly once per
	// failed draw, T35).
	Enfileirar bool
	// Publicar: its sorteio.sem_candidatos goes out (spec 5.4: once per
	// correlacao_id).
	Publicar bool
	// Registrar: the sorteio.sem_candidatos leaves its record in the log:
	// always when the demand enters the queue, so the replay knows the
	// queue (CONTRACT §7 "Queue order"), else when it is published.
	Registrar bool
}

// Sortear is a draw request's step (spec 4.4 executarSorteioInterno, once
// spec 4.3 has answered in v): the draw and its winner's state, or the
// pending queue and sorteio.sem_candidatos. agora is when the winner's
// suspension is judged. The executor writes its effects; the replay runs
// it on each decision record and applies them.
func Sortear(v VisaoSorteio, s Semente, agora time.Time) (EfeitosSorteio, error) {
	f := v.Filtro
	if len(f.Elegiveis) == 0 {
		publicar := !v.SemCandidatosPublicado
		return EfeitosSorteio{Enfileirar: true, Publicar: publicar, Registrar: publicar || !v.NaFila}, nil
	}
	ids := make([]string, len(f.Elegiveis))
	for i, id := range f.Elegiveis {
		ids[i] = id.String()
	}
	res, err := s.embaralhar(ids)
	if err != nil {
		return EfeitosSorteio{}, fmt.Errorf("sorteio: %w", err)
	}
	vencedor, err := uuid.Parse(res.Selecionado)
	if err != nil {
		return EfeitosSorteio{}, fmt.Errorf("sorteio: %w", err)
	}
	// Eligible means disponivel, or suspenso with the suspension ended.
	de, ate := elegibilidade.Disponivel, (*time.Time)(nil)
	if a, ok := f.Vencidos[vencedor]; ok {
		de, ate = elegibilidade.Suspenso, &a
	}
	status, permitido := elegibilidade.StatusAposSorteio(de, ate, agora)
	if !permitido {
		return EfeitosSorteio{}, fmt.Errorf("sorteio: conselheiro %s de %s a %s, que a máquina de estados não permite", vencedor, de, status)
	}
	return EfeitosSorteio{
		Sorteado: true, Resultado: res, Vencedor: vencedor, Status: status,
		FimDaSuspensao: ate, SairDaFila: v.NaFila,
	}, nil
}

func (s Semente) embaralhar(ids []string) (sorteio.Resultado, error) {
	switch {
	case s.Registrado != nil:
		return *s.Registrado, nil
	case s.Embaralhar != nil:
		return s.Embaralhar(s.Base, s.Timestamp, s.Randomness, ids)
	}
	return sorteio.SortearComRodada(s.Base, s.Timestamp, s.Randomness, ids)
}
