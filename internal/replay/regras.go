package replay

import "github.com/formigueiro/d6a/internal/registro"

// The replay's draw rule is the records' own (d6a.regras_sorteio), kept in
// the Replay's RegrasEmVigor: never taken from a route.

// Regras is the draw rule in force after the records applied so far (nil:
// none).
func (r *Replay) Regras() *registro.RegrasSorteio { return r.regras.Regras }

// PrimeirasRegras is the first d6a.regras_sorteio record applied (nil:
// none), whose gatilho_desde every later one repeats.
func (r *Replay) PrimeirasRegras() *registro.RegrasSorteio { return r.regras.Primeira }

// EmVigor is the whole rule state the records so far left: the rule, the
// first one, and the commitments kept for the draws after them.
func (r *Replay) EmVigor() *registro.RegrasEmVigor {
	v := &registro.RegrasEmVigor{Regras: r.regras.Regras, Primeira: r.regras.Primeira}
	v.RestaurarCompromissos(r.regras.EstadoCompromissos())
	return v
}

// GatilhoDesde is where the log's records say the trigger rule began (ok
// false: no d6a.regras_sorteio record yet).
func (r *Replay) GatilhoDesde() (int64, bool) {
	if r.regras.Primeira == nil {
		return 0, false
	}
	return r.regras.Primeira.GatilhoDesde, true
}

// regrasSorteio applies a d6a.regras_sorteio record at indice.
func (r *Replay) regrasSorteio(indice int64, f registro.RegrasSorteio) {
	if err := r.regras.Aplicar(indice, f); err != nil {
		r.divergir(indice, nil, "d6a.regras_sorteio: %v", err)
	}
}

// conferirRodada checks a draw's beacon round under the rule in force.
func (r *Replay) conferirRodada(indice int64, s registro.Registro) {
	if err := r.regras.ConferirSorteio(s); err != nil {
		r.divergir(indice, nil, "sorteio %s: %v", s.EventIDSorteio, err)
	}
}

// AssinaturasConferidasFora tells the replay that the walk it runs inside
// verifies the round signatures (registro.LoteRodadas), so it checks the rest of
// each round and not the pairing again.
func (r *Replay) AssinaturasConferidasFora() {
	r.regras.AdiarAssinaturas(func([]byte, uint64, []byte) error { return nil })
}
