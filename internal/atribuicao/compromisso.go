package atribuicao

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/store"
)

// With witnesses (Beacon.Quorum K > 0) a decision's commitment time C is
// when K witnesses first saw a log holding its input (CONTRACT §4a,
// registro.CompromissoTestemunhado): the bus operator stamps T, but
// cannot backdate what independent witnesses cosigned.

// intervaloCossinaturas is how often the executor looks for the witnesses'
// cosignatures it waits for.
const intervaloCossinaturas = 25 * time.Millisecond

// esperaCossinaturas is what a commitment normally waits: the signer's
// minimum interval and a witness's round trip.
const esperaCossinaturas = 2 * time.Second

// comprometer gives each unit of evs its commitment time: it appends and
// commits the inputs' d6a.compromisso records, waits until quorum
// witnesses have cosigned a checkpoint covering each, and appends the
// cosigned checkpoints that fix the C's (d6a.cossinaturas), so every one
// of them precedes the decisions. Nothing is decided meanwhile (stream
// order).
func (s *Servico) comprometer(ctx context.Context, evs []evento.Evento, seqs []uint64, js []job) error {
	b := s.o.Beacon
	var recs []registro.Registravel
	var ids []uuid.UUID
	ks := map[uuid.UUID]int{}
	for k, ev := range evs {
		if ev.Armazenado.IsZero() || k >= len(seqs) {
			continue
		}
		c := registro.NovoCompromisso(ev.EventID, int64(seqs[k]), ev.Armazenado)
		if _, ok := ks[c.EventID]; ok {
			continue // a redelivery in the same batch: one commitment
		}
		ks[c.EventID] = k
		recs = append(recs, c)
		ids = append(ids, c.EventID)
	}
	if len(ids) == 0 {
		return nil
	}
	indices, err := s.anexarFaltantes(ctx, recs)
	if err != nil {
		return fmt.Errorf("compromisso: %w", err)
	}
	menor := int64(-1)
	for _, id := range ids {
		if i := indices[id]; menor < 0 || i < menor {
			menor = i
		}
	}
	leitura := s.o.Store.Read()
	aviso := time.Now().Add(b.Cadeia.Periodo*5 + b.Margem)
	// The wait shows in d6a_beacon_atraso_segundos past what a signature
	// and a witness round trip take.
	b.esperando.Store(time.Now().Add(esperaCossinaturas).UnixNano())
	defer b.esperando.Store(0)
	var cs []store.Cossinada
	for {
		if cs, err = leitura.CossinaturasCobrindo(ctx, menor); err != nil {
			return fmt.Errorf("compromisso: cossinaturas: %w", err)
		}
		if todos(ids, indices, b, cossinadasEm(cs)) {
			break
		}
		if time.Now().After(aviso) {
			s.log.Warn("testemunhas: o compromisso espera cossinaturas; as decisões esperam por ele", "registro", menor, "quorum", b.Quorum)
			aviso = time.Now().Add(time.Minute)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(intervaloCossinaturas):
		}
	}
	em := cossinadasEm(cs)
	usadas := map[int64]bool{}
	for _, id := range ids {
		c, _ := registro.CompromissoTestemunhado(indices[id], b.Quorum, b.Testemunhas, em)
		js[ks[id]].compromisso = c
		for _, p := range registro.PrimeirasCossinaturas(indices[id], b.Testemunhas, em) {
			usadas[p.Tamanho] = true
		}
	}
	// The checkpoints holding each witness's first cosignature, with every
	// line received for them: a verifier recomputes the same C from them.
	var notas []registro.Registravel
	for _, tam := range slices.Sorted(maps.Keys(usadas)) {
		var nota strings.Builder
		for _, c := range cs {
			if c.Tamanho != tam {
				continue
			}
			if nota.Len() == 0 {
				nota.WriteString(c.Nota)
			}
			if slices.Contains(b.Testemunhas, c.Chave) {
				nota.WriteString(c.Linha)
			}
		}
		r, err := registro.NovasCossinaturas(nota.String())
		if err != nil {
			return fmt.Errorf("compromisso: checkpoint %d: %w", tam, err)
		}
		notas = append(notas, r)
	}
	if _, err := s.anexarFaltantes(ctx, notas); err != nil {
		return fmt.Errorf("compromisso: cossinaturas: %w", err)
	}
	return nil
}

// anexarFaltantes appends, in one commit, those of recs the log does not
// hold yet, and gives every one's index.
func (s *Servico) anexarFaltantes(ctx context.Context, recs []registro.Registravel) (map[uuid.UUID]int64, error) {
	ids := make([]uuid.UUID, len(recs))
	for i, r := range recs {
		ids[i], _ = r.Chaves()
	}
	indices, err := s.o.Store.Read().IndicesDoLog(ctx, ids)
	if err != nil || len(indices) == len(ids) {
		return indices, err
	}
	err = s.executar(ctx, func(ctx context.Context, u *unidade) error {
		ja, err := u.tx.IndicesDoLog(ctx, ids)
		if err != nil {
			return err
		}
		for i, r := range recs {
			if _, ok := ja[ids[i]]; !ok {
				u.registros = append(u.registros, r)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.o.Store.Read().IndicesDoLog(ctx, ids)
}

func cossinadasEm(cs []store.Cossinada) []registro.CossinadaEm {
	out := make([]registro.CossinadaEm, len(cs))
	for i, c := range cs {
		out[i] = registro.CossinadaEm{Chave: c.Chave, Tamanho: c.Tamanho, Em: c.Em}
	}
	return out
}

func todos(ids []uuid.UUID, indices map[uuid.UUID]int64, b *Beacon, em []registro.CossinadaEm) bool {
	for _, id := range ids {
		if _, ok := registro.CompromissoTestemunhado(indices[id], b.Quorum, b.Testemunhas, em); !ok {
			return false
		}
	}
	return true
}
