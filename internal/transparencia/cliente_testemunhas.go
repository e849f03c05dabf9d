package transparencia

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/mod/sumdb/tlog"
)

// Testemunhado is a checkpoint with the witnesses' cosignatures a reader
// checked.
type Testemunhado struct {
	Checkpoint    Checkpoint
	Cossinaturas  []Cossinatura
	Quorum        int
	Testemunhadas int
}

// VerificarTestemunhas fetches the latest checkpoint and checks its
// cosignatures from the witness keys testemunhas (CONTRACT §7
// "Witnesses"): it fails with a Falha naming ErrQuorum unless quorum of
// them cosigned it. The checkpoint a reader fetches may be seconds newer
// than the witnesses' latest round, so a short quorum is asked again for
// up to espera.
func (c *Cliente) VerificarTestemunhas(ctx context.Context, testemunhas []string, quorum int, espera time.Duration) (Testemunhado, error) {
	k, err := c.chave(ctx)
	if err != nil {
		return Testemunhado{}, err
	}
	fim := time.Now().Add(espera)
	for {
		nota, err := c.get(ctx, "/checkpoint")
		if err != nil {
			return Testemunhado{}, err
		}
		cp, cs, err := Cossinaturas(nota, k, testemunhas)
		if err != nil {
			return Testemunhado{}, falha("checkpoint", umaLinha(err.Error()), "a checkpoint signed by "+k+" and cosigned only validly")
		}
		t := Testemunhado{Checkpoint: cp, Cossinaturas: cs, Quorum: quorum, Testemunhadas: len(testemunhas)}
		err = ConferirQuorum(cs, quorum)
		if err == nil {
			return t, nil
		}
		if !errors.Is(err, ErrQuorum) || time.Now().After(fim) {
			f := falha("testemunhas", umaLinha(err.Error()), fmt.Sprintf("at least %d cosignatures of the checkpoint of size %d by the witnesses named", quorum, cp.Tamanho))
			if errors.Is(err, ErrQuorum) {
				return t, fmt.Errorf("%w (%w)", f, ErrQuorum)
			}
			return t, f
		}
		select {
		case <-ctx.Done():
			return t, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// ConferirExtensao checks that the trees of a and b are one history (the
// smaller a prefix of the larger), from the served consistency proof: a
// check made against one checkpoint then holds for the other.
func (c *Cliente) ConferirExtensao(ctx context.Context, a, b Checkpoint) error {
	if a.Tamanho > b.Tamanho {
		a, b = b, a
	}
	if a.Tamanho == b.Tamanho {
		if a.Raiz != b.Raiz {
			return falha("checkpoint.raiz", fmt.Sprintf("two roots for size %d", a.Tamanho), "one root per size")
		}
		return nil
	}
	if a.Tamanho == 0 {
		return nil
	}
	var r struct {
		Prova []string `json:"prova"`
	}
	if err := c.getJSON(ctx, fmt.Sprintf("/consistencia?de=%d&para=%d", a.Tamanho, b.Tamanho), &r); err != nil {
		return err
	}
	prova := make(tlog.TreeProof, len(r.Prova))
	for i, p := range r.Prova {
		var err error
		if prova[i], err = hashDe(fmt.Sprintf("prova[%d]", i), p); err != nil {
			return err
		}
	}
	if err := tlog.CheckTree(prova, b.Tamanho, b.Raiz, a.Tamanho, a.Raiz); err != nil {
		return falha("consistencia", fmt.Sprintf("tree %d is not an extension of the cosigned tree %d", b.Tamanho, a.Tamanho), "one history")
	}
	return nil
}
