package log

import (
	"context"
	"fmt"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/formigueiro/d6a/internal/registro"
)

// conferirCossinado holds a d6a.cossinaturas record's checkpoint to this
// log's tree (registro.ConferirCossinado): its root from the ring of the
// sizes the walk just passed, or, outside it (a walk that started from a
// saved frontier, a checkpoint recorded long after it was signed), from
// the signed tree's tiles.
func (c *Cliente) conferirCossinado(ctx context.Context, cp registro.Checkpoint, raizes *registro.RaizesRecentes, r registro.CossinaturasRegistro) error {
	if r.Tamanho <= 0 || r.Tamanho > cp.Tamanho {
		return nil // Anotar names a size the record cannot have
	}
	h, ok := raizes.Raiz(r.Tamanho)
	if !ok {
		var err error
		h, err = tlog.TreeHash(r.Tamanho, tlog.TileHashReader(tlog.Tree{N: cp.Tamanho, Hash: cp.Raiz}, leitorTiles{ctx, c}))
		if err != nil {
			return registro.NovaFalha("tiles", registro.UmaLinha(err.Error()), fmt.Sprintf("the tree of size %d, to check a cosigned checkpoint", r.Tamanho))
		}
	}
	return registro.ConferirCossinado(r, h)
}
