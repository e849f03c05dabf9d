package registro

// regrasReplay is the draw rule the records state (d6a.regras_sorteio):
// the replay takes it from the log alone, never from a route.
type regrasReplay struct {
	// regras is the rule in force (nil: no record yet, the draws carry no
	// round), primeira the first such record, whose gatilho_desde every
	// later one must repeat.
	regras   *RegrasSorteio
	primeira *RegrasSorteio
	rodadas  Rodadas
}

// Regras is the draw rule in force after the records applied so far (nil:
// none).
func (r *Replay) Regras() *RegrasSorteio { return r.regrasReplay.regras }

// PrimeirasRegras is the first d6a.regras_sorteio record applied (nil:
// none), whose gatilho_desde every later one repeats.
func (r *Replay) PrimeirasRegras() *RegrasSorteio { return r.primeira }

// GatilhoDesde is where the log's records say the trigger rule began (ok
// false: no d6a.regras_sorteio record yet).
func (r *Replay) GatilhoDesde() (int64, bool) {
	if r.primeira == nil {
		return 0, false
	}
	return r.primeira.GatilhoDesde, true
}

// regrasSorteio applies a d6a.regras_sorteio record at indice: the trigger
// rule cannot begin after the record that states it, and once stated its
// start never moves.
func (r *Replay) regrasSorteio(indice int64, f RegrasSorteio) {
	switch {
	case f.GatilhoDesde > indice:
		r.divergir(indice, nil, "d6a.regras_sorteio: gatilho_desde %d, depois do próprio registro (%d): a regra do gatilho não pode começar depois de declarada", f.GatilhoDesde, indice)
	case r.primeira != nil && f.GatilhoDesde != r.primeira.GatilhoDesde:
		r.divergir(indice, nil, "d6a.regras_sorteio: gatilho_desde %d, mas o registro %s já declarou %d", f.GatilhoDesde, r.primeira.EventID, r.primeira.GatilhoDesde)
	}
	if r.primeira == nil {
		r.primeira = &f
	}
	r.regrasReplay.regras = &f
}

// conferirRodada checks a draw's beacon round under the rule in force.
func (r *Replay) conferirRodada(indice int64, s Registro) {
	if err := ConferirRodada(r.regrasReplay.regras, s, &r.rodadas); err != nil {
		r.divergir(indice, nil, "sorteio %s: %v", s.EventIDSorteio, err)
	}
}
