package store

import (
	"context"
	"sync"
)

// Planos keeps each connection's generic plans fitted to the tables they
// read, without statistics (issue 11, CONTRACT §5).
//
// The pool runs every statement on a generic plan (store.Open), planned once
// per connection: planning each execution again cost half of PostgreSQL's
// CPU per draw. A generic plan is made for the tables as they were when it
// was built; one built while a table was empty (a fresh deployment, or a
// table analyzed while empty and bulk-loaded afterwards) can scan what
// later holds a million rows. So each unit of work reads the size of the
// draw path's tables in its first round trip, and when one has doubled or
// halved since the connection last planned, the connection's cached plans
// are discarded (DISCARD PLANS) and the next execution plans again for the
// tables as they are. PostgreSQL sizes a table from its current number of
// pages, with or without statistics, so the new plans are right either way.
type Planos struct {
	mu     sync.Mutex
	vistos map[int32][]int64 // backend pid → table sizes when it last planned
}

// Ajustar discards the cached plans of tx's connection (backend pid) when
// tamanhos differ from those it last planned for by a factor of two, or
// when this is the connection's first unit of work.
func (p *Planos) Ajustar(ctx context.Context, tx Tx, pid int32, tamanhos []int64) error {
	p.mu.Lock()
	antes, visto := p.vistos[pid]
	p.mu.Unlock()
	if visto && !dobrou(antes, tamanhos) {
		return nil
	}
	if _, err := tx.DB.Exec(ctx, "DISCARD PLANS"); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.vistos == nil {
		p.vistos = map[int32][]int64{}
	}
	p.vistos[pid] = tamanhos
	return nil
}

// AjustarFora is Ajustar for a transaction that does not take the draw's
// lock (the outbox relay's).
func (p *Planos) AjustarFora(ctx context.Context, tx Tx) error {
	r, err := tx.TamanhosDasTabelas(ctx)
	if err != nil {
		return err
	}
	return p.Ajustar(ctx, tx, r.Pid, r.Tamanhos)
}

// dobrou reports a table whose size (in pages) doubled or halved; a page
// more or less on a small table counts too.
func dobrou(antes, agora []int64) bool {
	if len(antes) != len(agora) {
		return true
	}
	const pagina = 8192
	for i := range agora {
		a, b := antes[i]/pagina, agora[i]/pagina
		if b >= 2*a+1 || a >= 2*b+1 {
			return true
		}
	}
	return false
}
