package log

import (
	"context"

	"github.com/google/uuid"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/formigueiro/d6a/internal/registro"
)

// listaDoSorteio reads the list records of the draw carried apart at
// indice from the tiles of cp's tree (registro.ListaPorTiles, as the page
// does), so `--event-id` checks the full list with no walk of the log.
func (c *Cliente) listaDoSorteio(ctx context.Context, cp registro.Checkpoint, indice int64, eventID uuid.UUID) ([]registro.ListaSorteio, error) {
	return registro.ListaPorTiles(tlog.Tree{N: cp.Tamanho, Hash: cp.Raiz}, indice, eventID, leitorTiles{ctx, c})
}
