package log

import (
	"cmp"
	"fmt"
	"os"
	"strconv"

	"github.com/formigueiro/d6a/internal/registro"
)

// RodadasPorLote is how many distinct beacon rounds the walk verifies in
// one batch (registro.LoteRodadas); 1 is one pairing per round, inline:
// the yardstick `d6a-bench verificar -rodadas` compares against, set with
// D6A_RODADAS_POR_LOTE.
var RodadasPorLote = rodadasPorLote()

func rodadasPorLote() int {
	if n, err := strconv.Atoi(os.Getenv("D6A_RODADAS_POR_LOTE")); err == nil && n > 0 {
		return n
	}
	return registro.RodadasPorLotePadrao
}

// adiarRodadas makes the walk hand each draw's round signature to a batch
// (g.lote) instead of a pairing per draw; g.indice is the record julgar is
// judging.
func (g *regrasDoLog) adiarRodadas() {
	if g.lote != nil {
		return
	}
	g.lote = &registro.LoteRodadas{Tamanho: cmp.Or(g.porLote, RodadasPorLote)}
	g.AdiarAssinaturas(func(chave []byte, n uint64, sig []byte) error {
		return g.lote.Adicionar(g.indice, chave, n, sig)
	})
}

// rodadasAdiadas waits for the batches and counts each draw whose round
// did not verify as a failure at its own index.
func (g *regrasDoLog) rodadasAdiadas(res *Resumo) {
	if g.lote == nil {
		return
	}
	for _, f := range g.lote.Fim() {
		res.Falhas++
		res.Verificados--
		if res.Primeira == nil || f.Indice < res.primeiraEm {
			res.Primeira, res.primeiraEm = fmt.Errorf("registro %d: %w", f.Indice, f), f.Indice
		}
	}
}
