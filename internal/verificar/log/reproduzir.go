package log

import (
	"context"
	"encoding/base64"
	"fmt"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/replay"
)

// ResumoReplay is the outcome of Cliente.Reproduzir.
type ResumoReplay struct {
	Resumo
	Replay     *replay.Replay
	Eliminados int64
	// Barramento: the bus's input messages were checked against the
	// records (Replay.Mensagens and the counts beside it).
	Barramento bool
}

// Linha is the summary line of `d6a verify --url --all --replay` (CONTRACT
// §7).
func (r ResumoReplay) Linha() string {
	return fmt.Sprintf("replay: registros=%d decisoes=%d divergencias=%d gatilhos=%d raiz=%s",
		r.Registros, r.Replay.Decisoes, len(r.Replay.Divergencias), r.Gatilhos, base64.StdEncoding.EncodeToString(r.Raiz[:]))
}

// Reproduzir mirrors and verifies the whole log (VerificarTudo) and replays
// its records in order (Replay); alvo, when set, keeps that counsellor's
// own check.
func (c *Cliente) Reproduzir(ctx context.Context, alvo uuid.UUID, progresso func(feitos, total int64)) (ResumoReplay, error) {
	return c.ReproduzirEm(ctx, replay.Novo(alvo), progresso)
}

// ReproduzirEm is Reproduzir into a replay the caller set up (a demand's
// own check: Replay.AlvoDemanda).
func (c *Cliente) ReproduzirEm(ctx context.Context, rp *replay.Replay, progresso func(feitos, total int64)) (ResumoReplay, error) {
	res := ResumoReplay{Replay: rp}
	leitor, _ := c.Barramento.(replay.LeitorDeEntradas)
	var desde int64
	var erroBarramento error
	if leitor == nil {
		rp.SemBarramento()
	}
	rp.AssinaturasConferidasFora() // the walk's batches (rodadas.go)
	if leitor != nil {
		var err error
		// What the service had consumed before the log is read: each of
		// those messages has its record under the checkpoint read after.
		if p, ok := leitor.(replay.PosicaoConsumida); ok {
			if rp.Consumido, err = p.ConsumidoAte(ctx); err != nil {
				return res, fmt.Errorf("posição consumida do barramento: %w", err)
			}
		}
	}
	anterior := c.AoRegistro
	defer func() { c.AoRegistro = anterior }()
	c.AoRegistro = func(i int64, b []byte) {
		if anterior != nil {
			anterior(i, b)
		}
		if b == nil {
			res.Eliminados++
			rp.Eliminado(i)
			return
		}
		f, err := c.lerRegistravel(b)
		if err != nil {
			rp.Eliminado(i)
			return
		}
		// The bus's input messages, from the first sequence a record under
		// the trigger's rule names (none dropped, CONTRACT §7).
		if s := registro.SeqDe(f); s != nil && leitor != nil && !res.Barramento && i >= desde && erroBarramento == nil {
			if erroBarramento = rp.CarregarMensagens(ctx, leitor, uint64(*s)); erroBarramento == nil {
				res.Barramento = true
			}
		}
		rp.Aplicar(i, f)
	}
	r, _, err := c.VerificarTudo(ctx, progresso)
	rp.Fechar()
	res.Resumo = r
	if err == nil && erroBarramento != nil {
		err = fmt.Errorf("mensagens de entrada do barramento: %w", erroBarramento)
	}
	return res, err
}
