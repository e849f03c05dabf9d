package atribuicao

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/store"
)

// Every parent link a decision's chain climbs is a record of the log
// before the decision (CONTRACT §7 "Hierarchy"), so the replay checks each
// chain against links the log made public instead of trusting the chain a
// record carries. d6a.hierarquia_registrada mirrors the latest record of
// each unit; the executor keeps it in memory between batches.

// elosRegistrados is what this process knows of d6a.hierarquia_registrada:
// valid while the log's size is the one its last commit left (tamanho); any
// other size means another instance appended, and it is read again.
type elosRegistrados struct {
	elos    map[uuid.UUID]registro.Elo
	tamanho int64
}

// atualizar reads the table again when the log grew without this process.
func (e *elosRegistrados) atualizar(ctx context.Context, tx store.Tx, tamanho int64) error {
	if e.elos != nil && e.tamanho == tamanho {
		return nil
	}
	elos, err := tx.ElosRegistrados(ctx)
	if err != nil {
		return fmt.Errorf("hierarquia registrada: %w", err)
	}
	e.elos = make(map[uuid.UUID]registro.Elo, len(elos))
	for _, r := range elos {
		e.elos[r.UC] = registro.Elo{Parent: r.Parent, Nivel: r.Nivel}
	}
	e.tamanho = tamanho
	return nil
}

// elosNovos are the links a batch recorded, in record order, until its
// commit makes them known (juntar).
type elosNovos struct {
	elos  map[uuid.UUID]registro.Elo
	ordem []uuid.UUID
}

func (n *elosNovos) por(uc uuid.UUID, base *elosRegistrados) (registro.Elo, bool) {
	if e, ok := n.elos[uc]; ok {
		return e, true
	}
	e, ok := base.elos[uc]
	return e, ok
}

func (n *elosNovos) novo(uc uuid.UUID, e registro.Elo) {
	if n.elos == nil {
		n.elos = map[uuid.UUID]registro.Elo{}
	}
	if _, ja := n.elos[uc]; !ja {
		n.ordem = append(n.ordem, uc)
	}
	n.elos[uc] = e
}

// gravar upserts the batch's links in one statement.
func (n *elosNovos) gravar(ctx context.Context, tx store.Tx) error {
	if len(n.ordem) == 0 {
		return nil
	}
	elos := make([]store.Elo, len(n.ordem))
	for i, uc := range n.ordem {
		e := n.elos[uc]
		elos[i] = store.Elo{UC: uc, Parent: e.Parent, Nivel: e.Nivel}
	}
	return tx.RegistrarElos(ctx, elos)
}

// juntar makes a committed batch's links known; tamanho is the log's size
// after the commit.
func (n *elosNovos) juntar(base *elosRegistrados, tamanho int64) {
	for _, uc := range n.ordem {
		base.elos[uc] = n.elos[uc]
	}
	base.tamanho = tamanho
}

// registrarHierarquia appends, before the decision that climbs cadeia, a
// hierarquia.uc record for each of its links the log does not hold as it
// is: the unit, its parent (the next unit of the chain; none at the top,
// a root) and how far below the root it is.
func (u *unidade) registrarHierarquia(cadeia []uuid.UUID) {
	for i, uc := range cadeia {
		var parent *uuid.UUID
		if i+1 < len(cadeia) {
			parent = &cadeia[i+1]
		}
		if e, ok := u.elos.por(uc, &u.servico.hierarquia); ok && registro.MesmoElo(e.Parent, parent) {
			continue
		}
		nivel := len(cadeia) - 1 - i
		u.registros = append(u.registros, registro.NovaHierarquia(u.novoID(), u.seqGatilho(), uc, parent, nivel))
		u.elos.novo(uc, registro.Elo{Parent: parent, Nivel: nivel})
	}
}
