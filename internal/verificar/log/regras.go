package log

import (
	"errors"
	"fmt"

	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/replay"
)

// regrasDoLog is what the walk knows of the rules the log's own records
// state (d6a.regras_sorteio, CONTRACT §4a): the beacon rule in force, and
// where the trigger rule began. No route tells them: a verifier of a
// static mirror knows them as well as one of the service.
//
// Where the trigger rule began is stated by a record that comes after the
// draws before it, so a draw whose bus check fails before any rule record
// is held (pendentes) until one says whether it precedes the rule
// (forgiven: the earlier rule's draws are not checked on the bus) or not
// (a failure of the log); a walk that ends with none held fails on the
// first.
type regrasDoLog struct {
	registro.RegrasEmVigor
	pendentes []pendente
	// listas holds a long draw's list records until its draw, which is
	// recomputed here with its list joined: no check of the draw record
	// by itself could.
	listas registro.Listas
	// lote verifies the rounds' signatures in batches (rodadas.go); indice
	// is the record being judged, for the draws a batch names.
	lote    *registro.LoteRodadas
	indice  int64
	porLote int
}

type pendente struct {
	indice int64
	err    error
}

// deReplay starts from what a replay restored (the monitor's next run).
func deReplay(rp *replay.Replay) *regrasDoLog {
	return &regrasDoLog{RegrasEmVigor: *rp.EmVigor()}
}

// julgar adjusts one record's outcome by the rules: gatilho (checked on
// the bus) and falhou as the record's own checks left them, doGatilho
// when falhou is the bus check's. fatal ends the walk (a held failure the
// rule record does not forgive).
func (g *regrasDoLog) julgar(i int64, lido registro.Registravel, gatilho, doGatilho bool, falhou error) (bool, error, error) {
	completo, errLista := g.listas.Aplicar(lido)
	if errLista != nil && !errors.Is(errLista, registro.ErrListaEliminada) && falhou == nil {
		falhou = errLista
	}
	if s, ok := lido.(registro.Registro); ok && s.Partido() && errLista == nil && falhou == nil {
		falhou = registro.Conferir(completo.(registro.Registro))
	}
	switch f := lido.(type) {
	case registro.RegrasSorteio:
		if falhou != nil {
			return gatilho, falhou, nil
		}
		falhou = g.Aplicar(i, f)
		return gatilho, falhou, g.resolver()
	case registro.Compromisso, registro.CossinaturasRegistro:
		if falhou == nil {
			falhou = g.Anotar(i, f)
		}
	case registro.Registro:
		if doGatilho {
			switch {
			case g.Primeira == nil:
				g.pendentes = append(g.pendentes, pendente{i, falhou})
				return false, nil, nil
			case i < g.Primeira.GatilhoDesde:
				return false, nil, nil // the earlier rule: not checked on the bus
			}
		}
		if falhou == nil {
			g.adiarRodadas()
			g.indice = i
			falhou = g.ConferirSorteio(f)
		}
	}
	return gatilho, falhou, nil
}

// resolver judges the held failures once a rule record states where the
// trigger rule began.
func (g *regrasDoLog) resolver() error {
	for _, p := range g.pendentes {
		if p.indice >= g.Primeira.GatilhoDesde {
			g.pendentes = nil
			return fmt.Errorf("registro %d: %w", p.indice, p.err)
		}
	}
	g.pendentes = nil
	return nil
}

// fim is the end of the walk: a held failure no rule record forgave.
func (g *regrasDoLog) fim() error {
	if err := g.listas.Pendente(); err != nil {
		return fmt.Errorf("fim do log: %w", err)
	}
	if len(g.pendentes) == 0 {
		return nil
	}
	p := g.pendentes[0]
	return fmt.Errorf("registro %d: %w (no d6a.regras_sorteio record places it before the trigger rule)", p.indice, p.err)
}
