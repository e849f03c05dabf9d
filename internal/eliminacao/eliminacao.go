// Package eliminacao is the erasure of spec 2.2 / N-0d applied to the
// transparency log (CONTRACT §7 "Erasure is a record"), in one
// transaction: the records naming the citizen (or one draw's) blanked, a
// d6a.eliminacao record of their indices appended and signed, and the
// fairness statistics set to fold again from the records as they are
// now. It is `d6a log-eliminar`'s; the tests call it directly.
package eliminacao

import (
	"context"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/estatisticas"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/transparencia"
)

// Resultado is what an erasure did: the records blanked now (none: nothing
// named the target, or it was already erased) and the record appended.
type Resultado struct {
	Apagados []transparencia.Apagado
	Registro registro.Eliminacao
}

// Assinador is the log's key and origin, to sign the checkpoint over the
// erasure record.
type Assinador struct {
	Chave  transparencia.Chave
	Origem string
}

// Cidadao erases every record naming the citizen.
func Cidadao(ctx context.Context, st *store.Store, a Assinador, cidadao uuid.UUID) (Resultado, error) {
	return executar(ctx, st, a, func(tx transparencia.DBTX) ([]transparencia.Apagado, error) {
		return transparencia.EliminarCidadao(ctx, tx, cidadao)
	})
}

// Sorteio erases one draw's record (transparencia.ErrNaoEncontrado: no
// such draw in the log).
func Sorteio(ctx context.Context, st *store.Store, a Assinador, eventID uuid.UUID) (Resultado, error) {
	return executar(ctx, st, a, func(tx transparencia.DBTX) ([]transparencia.Apagado, error) {
		return transparencia.Eliminar(ctx, tx, eventID)
	})
}

func executar(ctx context.Context, st *store.Store, a Assinador, apagar func(transparencia.DBTX) ([]transparencia.Apagado, error)) (Resultado, error) {
	var res Resultado
	err := st.InTx(ctx, func(tx store.Tx) error {
		// The draws' lock first: no append runs between the blanking and
		// the record that says so.
		if err := tx.TravarSorteio(ctx, transparencia.LockSorteio); err != nil {
			return err
		}
		var err error
		if res.Apagados, err = apagar(tx.ParaOLog()); err != nil || len(res.Apagados) == 0 {
			return err
		}
		if res.Registro, err = transparencia.RegistrarEliminacao(ctx, tx.ParaOLog(), res.Apagados, a.Chave, a.Origem); err != nil {
			return err
		}
		return estatisticas.Recomecar(ctx, tx)
	})
	if err != nil {
		return Resultado{}, err
	}
	return res, nil
}
