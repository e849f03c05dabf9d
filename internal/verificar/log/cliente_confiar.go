package log

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/formigueiro/d6a/internal/equidade"
	"github.com/formigueiro/d6a/internal/registro"
)

// Testemunhado is a checkpoint with the witnesses' cosignatures a reader
// checked.
type Testemunhado struct {
	Checkpoint    registro.Checkpoint
	Cossinaturas  []registro.Cossinatura
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
		cp, cs, err := registro.Cossinaturas(nota, k, testemunhas)
		if err != nil {
			return Testemunhado{}, registro.NovaFalha("checkpoint", registro.UmaLinha(err.Error()), "a checkpoint signed by "+k+" and cosigned only validly")
		}
		if err := conferirTamanho(cp); err != nil {
			return Testemunhado{}, err
		}
		t := Testemunhado{Checkpoint: cp, Cossinaturas: cs, Quorum: quorum, Testemunhadas: len(testemunhas)}
		err = registro.ConferirQuorum(cs, quorum)
		if err == nil {
			return t, nil
		}
		if !errors.Is(err, registro.ErrQuorum) || time.Now().After(fim) {
			f := registro.NovaFalha("testemunhas", registro.UmaLinha(err.Error()), fmt.Sprintf("at least %d cosignatures of the checkpoint of size %d by the witnesses named", quorum, cp.Tamanho))
			if errors.Is(err, registro.ErrQuorum) {
				return t, fmt.Errorf("%w (%w)", f, registro.ErrQuorum)
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
func (c *Cliente) ConferirExtensao(ctx context.Context, a, b registro.Checkpoint) error {
	if a.Tamanho > b.Tamanho {
		a, b = b, a
	}
	if a.Tamanho == b.Tamanho {
		if a.Raiz != b.Raiz {
			return registro.NovaFalha("checkpoint.raiz", fmt.Sprintf("two roots for size %d", a.Tamanho), "one root per size")
		}
		return nil
	}
	if a.Tamanho == 0 {
		return nil
	}
	return c.provarExtensao(ctx, a, b, "the cosigned tree", "one history")
}

// provarExtensao checks, with a consistency proof built from b's tiles, that the tree
// of b (the larger, 0 < a.Tamanho < b.Tamanho) extends the tree of a,
// which the reader calls deQuem; a Falha "consistencia" otherwise.
func (c *Cliente) provarExtensao(ctx context.Context, a, b registro.Checkpoint, deQuem, esperado string) error {
	prova, err := c.provaPorTiles(ctx, a.Tamanho, b)
	if err != nil {
		return err
	}
	if err := tlog.CheckTree(prova, b.Tamanho, b.Raiz, a.Tamanho, a.Raiz); err != nil {
		return registro.NovaFalha("consistencia", fmt.Sprintf("tree %d is not an extension of %s %d", b.Tamanho, deQuem, a.Tamanho), esperado)
	}
	return nil
}

// VerificarEstatisticas recomputes the served fairness statistics from the
// records alone (`d6a verify --url --estatisticas`): it mirrors and proves
// the whole log as VerificarTudo does, sums the records the served figures
// cover (the first "registros") with the same code as the service
// (internal/equidade), and fails naming the first figure that differs.
func (c *Cliente) VerificarEstatisticas(ctx context.Context, progresso func(feitos, total int64)) (equidade.Resultado, Resumo, error) {
	var servido equidade.Resultado
	if err := c.getJSON(ctx, "/estatisticas", &servido); err != nil {
		return servido, Resumo{}, err
	}
	a := equidade.NovoAcumulador()
	var (
		leitor registro.Sorteios
		erro   error
	)
	antes := c.AoRegistro
	c.AoRegistro = func(i int64, b []byte) {
		if i < servido.Registros && erro == nil {
			erro = leitor.Somar(a, b)
		}
	}
	defer func() { c.AoRegistro = antes }()
	res, cp, err := c.VerificarTudo(ctx, progresso)
	if err != nil {
		return servido, res, err
	}
	if erro != nil {
		return servido, res, erro
	}
	if servido.Registros > cp.Tamanho {
		return servido, res, registro.NovaFalha("estatisticas.registros", servido.Registros, fmt.Sprintf("at most the checkpoint's %d", cp.Tamanho))
	}
	r := a.Resultado()
	return r, res, DiferencaEstatisticas(servido, r)
}

// DiferencaEstatisticas names the first figure of servido that differs
// from recomputed (sums of floating point numbers in another order agree
// to about 1e-12; 1e-6 is allowed).
func DiferencaEstatisticas(servido, r equidade.Resultado) error {
	perto := func(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Max(math.Abs(a), math.Abs(b))) }
	switch {
	case servido.Registros != r.Registros:
		return registro.NovaFalha("estatisticas.registros", servido.Registros, r.Registros)
	case servido.Sorteios != r.Sorteios:
		return registro.NovaFalha("estatisticas.sorteios", servido.Sorteios, r.Sorteios)
	case servido.SorteiosN1 != r.SorteiosN1:
		return registro.NovaFalha("estatisticas.sorteios_n1", servido.SorteiosN1, r.SorteiosN1)
	case servido.Metodo != r.Metodo:
		return registro.NovaFalha("estatisticas.metodo", servido.Metodo, r.Metodo)
	case !perto(servido.Estatistica, r.Estatistica):
		return registro.NovaFalha("estatisticas.estatistica", servido.Estatistica, r.Estatistica)
	case !perto(servido.PValor, r.PValor):
		return registro.NovaFalha("estatisticas.p_valor", servido.PValor, r.PValor)
	case len(servido.Conselheiros) != len(r.Conselheiros):
		return registro.NovaFalha("estatisticas.conselheiros", fmt.Sprintf("%d counsellors", len(servido.Conselheiros)), fmt.Sprintf("%d", len(r.Conselheiros)))
	}
	for i, s := range servido.Conselheiros {
		w := r.Conselheiros[i]
		if s.ID != w.ID || s.SorteiosElegivel != w.SorteiosElegivel || s.Observado != w.Observado || !perto(s.Esperado, w.Esperado) || !perto(s.Z, w.Z) {
			return registro.NovaFalha("estatisticas.conselheiros["+s.ID+"]",
				fmt.Sprintf("elegível %d esperado %.6f observado %d z %.4f", s.SorteiosElegivel, s.Esperado, s.Observado, s.Z),
				fmt.Sprintf("%s: elegível %d esperado %.6f observado %d z %.4f", w.ID, w.SorteiosElegivel, w.Esperado, w.Observado, w.Z))
		}
	}
	return nil
}
