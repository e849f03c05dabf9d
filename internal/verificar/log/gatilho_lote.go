package log

import (
	"context"
	"slices"
	"time"

	"github.com/formigueiro/d6a/internal/registro"
)

// BarramentoEmLote is a Barramento that also reads a run of the stream in
// one pass (*bus.Bus: an ordered consumer). With it the verifier reads the
// messages a tile's records name in a few passes instead of one GetMsg per
// record (issue 39).
type BarramentoEmLote interface {
	registro.Barramento
	MsgsEntre(ctx context.Context, de, ate uint64, fn func(seq uint64, data []byte, subject string, em time.Time) error) error
}

// LacunaLote is the widest gap between two sequences a tile's records name
// that one pass still reads through: the messages in between (other
// types, other services' events) cost bytes, not round trips.
var LacunaLote uint64 = 64

type msgBarramento struct {
	data    []byte
	subject string
	em      time.Time
}

// barramentoLido answers MsgPorSequencia from the messages read in bulk,
// and from the bus itself (one GetMsg) for the rest: a sequence no pass
// covered, or a message the stream no longer holds, fails as it did.
type barramentoLido struct {
	registro.Barramento
	lidas map[uint64]msgBarramento
}

func (b barramentoLido) MsgPorSequencia(ctx context.Context, seq uint64) ([]byte, string, time.Time, error) {
	if m, ok := b.lidas[seq]; ok {
		return m.data, m.subject, m.em, nil
	}
	return b.Barramento.MsgPorSequencia(ctx, seq)
}

// seqNoBarramento is the stream sequence conferirNoBarramento reads for a
// record (0: none).
func seqNoBarramento(f registro.Registravel) uint64 {
	switch r := f.(type) {
	case registro.Registro:
		if r.BaseSequence != nil && *r.BaseSequence > 0 {
			return uint64(*r.BaseSequence)
		}
	case registro.Entrada:
		if r.GatilhoSequence != nil && *r.GatilhoSequence > 0 {
			return uint64(*r.GatilhoSequence)
		}
	}
	return 0
}

// lerEmLote reads, in runs of one pass each, the messages at seqs (two or
// more within LacunaLote of each other); a sequence alone is left to
// MsgPorSequencia. A failed pass leaves its sequences to it too, so an
// error is reported by the record it concerns.
func lerEmLote(ctx context.Context, b registro.Barramento, seqs []uint64) registro.Barramento {
	lote, ok := b.(BarramentoEmLote)
	if !ok || len(seqs) < 2 {
		return b
	}
	slices.Sort(seqs)
	seqs = slices.Compact(seqs)
	lidas := make(map[uint64]msgBarramento, len(seqs))
	for i := 0; i < len(seqs); {
		j := i
		for j+1 < len(seqs) && seqs[j+1]-seqs[j] <= LacunaLote {
			j++
		}
		if j > i {
			run := seqs[i : j+1]
			_ = lote.MsgsEntre(ctx, run[0], run[len(run)-1], func(seq uint64, data []byte, subject string, em time.Time) error {
				if _, quer := slices.BinarySearch(run, seq); quer {
					lidas[seq] = msgBarramento{data, subject, em}
				}
				return nil
			})
		}
		i = j + 1
	}
	return barramentoLido{b, lidas}
}
