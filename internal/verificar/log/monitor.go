package log

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/replay"
)

// ArquivoMonitor is the file, in the monitor's directory, that holds what
// it keeps between runs: one file, so one rename replaces all of it.
const ArquivoMonitor = "monitor.json"

// estadoMonitor is what `d6a verify --url --monitorar DIR` keeps: the
// checkpoint it verified (the signed note), the key that signed it, the
// tree's right edge at that size and the replayed state.
type estadoMonitor struct {
	Versao     int           `json:"versao"`
	Chave      string        `json:"chave"`
	Checkpoint string        `json:"checkpoint"`
	Fronteira  []string      `json:"fronteira"`
	Eliminados int64         `json:"eliminados"`
	Gatilhos   int64         `json:"gatilhos"`
	Barramento bool          `json:"barramento"`
	Replay     replay.Estado `json:"replay"`
}

// ResumoMonitor is the outcome of Cliente.Monitorar.
type ResumoMonitor struct {
	ResumoReplay
	// De is the size kept from the last run (0 on the first), Para the
	// size verified now; PrimeiraVez says there was no kept state.
	De, Para    int64
	PrimeiraVez bool
	// Salvo: the new state replaced the kept one (nothing failed).
	Salvo bool
	// SemIDsDeEntradas: the state keeps no input record ids (it began
	// without the bus), so the bus's input messages are not checked.
	SemIDsDeEntradas bool
	// Refeito: an erasure named records of the kept state, so it was
	// rebuilt from the whole log (Monitorar).
	Refeito bool
}

// Linha is the monitor's summary line (CONTRACT §7 "Monitor").
func (r ResumoMonitor) Linha() string {
	return fmt.Sprintf("monitor: de=%d para=%d novos=%d divergencias=%d", r.De, r.Para, r.Para-r.De, len(r.Replay.Divergencias))
}

// Monitorar is the incremental watcher (CONTRACT §7 "Monitor"). The first
// run, with nothing kept in dir, verifies and replays the whole log as
// `--all --replay` does. Each later run proves the new checkpoint
// consistent with the kept one (a proof built from the new tree's tiles),
// then verifies and replays only the records after it, on the kept state,
// reading their tiles only. dir's state is replaced (one file, written
// then renamed) only when nothing failed and no decision diverged: a
// fork, a failing record, a divergence or a crash leave it as it was.
// Without --chave the key kept from the first run is the one trusted.
//
// A d6a.eliminacao record naming a record an earlier run applied means
// the kept state holds what was erased (a counsellor, a list): the state
// is then rebuilt from the whole log as it is now, blanks included, and
// replaces the kept one (CONTRACT §7 "Erasure is a record").
func (c *Cliente) Monitorar(ctx context.Context, dir string, progresso func(feitos, total int64)) (ResumoMonitor, error) {
	res, refazer, err := c.monitorar(ctx, dir, progresso, false)
	if err != nil || !refazer || res.Resumo.Primeira != nil || len(res.Replay.Divergencias) > 0 {
		return res, err
	}
	de := res.De
	res, _, err = c.monitorar(ctx, dir, progresso, true)
	res.De, res.Refeito = de, true
	return res, err
}

// monitorar is one run; doZero replays from record 0 on an empty state
// (the kept checkpoint still pins the history). refazer: a new
// d6a.eliminacao record names a record the kept state was built from.
func (c *Cliente) monitorar(ctx context.Context, dir string, progresso func(feitos, total int64), doZero bool) (res ResumoMonitor, refazer bool, err error) {
	arquivo := filepath.Join(dir, ArquivoMonitor)
	var kept estadoMonitor
	b, err := os.ReadFile(arquivo)
	res.PrimeiraVez = errors.Is(err, os.ErrNotExist)
	switch {
	case res.PrimeiraVez:
	case err != nil:
		return res, refazer, err
	default:
		if err := json.Unmarshal(b, &kept); err != nil || kept.Versao != 1 {
			return res, false, fmt.Errorf("%s: not a monitor state this version reads: %v", arquivo, err)
		}
		if c.Chave == "" {
			c.Chave = kept.Chave
		}
	}
	var fr registro.Fronteira
	rp := replay.Novo(uuid.Nil)
	var antigo registro.Checkpoint
	if !res.PrimeiraVez {
		if antigo, err = c.abrir(ctx, []byte(kept.Checkpoint)); err != nil {
			return res, false, fmt.Errorf("%s: %w", arquivo, err)
		}
		res.De = antigo.Tamanho
	}
	if !res.PrimeiraVez && !doZero {
		fr.N = antigo.Tamanho
		for _, s := range kept.Fronteira {
			h, err := hashDe("fronteira", s)
			if err != nil {
				return res, false, fmt.Errorf("%s: %w", arquivo, err)
			}
			fr.Hashes = append(fr.Hashes, h)
		}
		if !fr.Valida() || (fr.N > 0 && fr.Raiz() != antigo.Raiz) {
			return res, false, fmt.Errorf("%s: the kept frontier does not give the kept checkpoint's root", arquivo)
		}
		rp = replay.Restaurar(kept.Replay)
	}
	cp, nota, err := c.Checkpoint(ctx)
	if err != nil {
		return res, refazer, err
	}
	res.Para = cp.Tamanho
	res.Replay = rp
	switch {
	case cp.Tamanho < antigo.Tamanho:
		return res, false, registro.NovaFalha("checkpoint.tamanho", cp.Tamanho, fmt.Sprintf("≥ %d (the kept checkpoint's size): the log shrank", antigo.Tamanho))
	case cp.Tamanho == antigo.Tamanho && cp.Raiz != antigo.Raiz:
		return res, false, registro.NovaFalha("checkpoint.raiz", base64.StdEncoding.EncodeToString(cp.Raiz[:]),
			base64.StdEncoding.EncodeToString(antigo.Raiz[:])+" (same size, the kept root): history rewritten")
	case antigo.Tamanho > 0 && cp.Tamanho > antigo.Tamanho:
		if err := c.provarExtensao(ctx, antigo, cp, "the kept tree", "the kept history, unchanged"); err != nil {
			return res, refazer, err
		}
	}
	res.Registros = cp.Tamanho
	inicio := res.PrimeiraVez || doZero
	if !inicio {
		res.Resumo.Eliminados, res.Gatilhos, res.Barramento = kept.Eliminados, kept.Gatilhos, kept.Barramento
	}
	leitor, _ := c.Barramento.(replay.LeitorDeEntradas)
	// Without the bus there is no message to judge, so the input records'
	// ids are not kept (semBarramento): the state stays the size of the
	// counsellors and open assignments, not one id per input record, and
	// a run over 1,000 new records reads and writes little (issue 39). A
	// state begun that way has no ids to judge a message by, so a later
	// run given the bus checks the triggers but not the inputs
	// (docs/decisions.md).
	if (inicio && leitor == nil) || (!inicio && kept.Replay.Vistos == nil) {
		rp.SemBarramento()
		res.SemIDsDeEntradas = true
	}
	var erroBarramento error
	rp.AssinaturasConferidasFora() // the walk's batches (rodadas.go)
	c.regras = deReplay(rp)
	if g, ok := rp.GatilhoDesde(); ok {
		res.GatilhoDesde = g
	}
	// The bus's input messages: from the one after the last a kept record
	// named, or, as Reproduzir does, from the first record's trigger.
	if leitor != nil && res.Barramento {
		erroBarramento = rp.CarregarMensagens(ctx, leitor, kept.Replay.Ultima+1)
	}
	anterior := c.AoRegistro
	defer func() { c.AoRegistro = anterior }()
	c.AoRegistro = func(i int64, b []byte) {
		if anterior != nil {
			anterior(i, b)
		}
		if b == nil {
			rp.Eliminado(i)
			return
		}
		f, err := c.lerRegistravel(b)
		if err != nil {
			rp.Eliminado(i)
			return
		}
		if e, ok := f.(registro.Eliminacao); ok && !inicio && len(e.Indices) > 0 && e.Indices[0] < res.De {
			refazer = true
		}
		if s := registro.SeqDe(f); s != nil && leitor != nil && !res.Barramento && rp.ComBarramento() && i >= res.GatilhoDesde && erroBarramento == nil {
			if erroBarramento = rp.CarregarMensagens(ctx, leitor, uint64(*s)); erroBarramento == nil {
				res.Barramento = true
			}
		}
		rp.Aplicar(i, f)
	}
	err = c.verificarDe(ctx, cp, &fr, &res.Resumo, progresso)
	rp.Fechar()
	res.ResumoReplay.Eliminados = res.Resumo.Eliminados
	if err == nil && erroBarramento != nil {
		err = fmt.Errorf("mensagens de entrada do barramento: %w", erroBarramento)
	}
	if err != nil {
		return res, refazer, err
	}
	// A state built from erased records is never kept: the rebuild
	// replaces it.
	if res.Resumo.Primeira != nil || len(rp.Divergencias) > 0 || refazer {
		return res, refazer, nil
	}
	novo := estadoMonitor{Versao: 1, Chave: c.Chave, Checkpoint: string(nota), Eliminados: res.Resumo.Eliminados,
		Gatilhos: res.Gatilhos, Barramento: res.Barramento, Replay: rp.Estado()}
	for _, h := range fr.Hashes {
		novo.Fronteira = append(novo.Fronteira, base64.StdEncoding.EncodeToString(h[:]))
	}
	dados, err := json.Marshal(novo)
	if err != nil {
		return res, refazer, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, refazer, err
	}
	if err := gravar(arquivo, dados); err != nil {
		return res, refazer, err
	}
	res.Salvo = true
	return res, refazer, nil
}
