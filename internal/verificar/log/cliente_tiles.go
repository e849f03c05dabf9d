package log

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/tiles"
)

// TilesEmVoo is how many tiles (a level-0 hash tile and its bundle each)
// the verifier fetches ahead of the record it replays.
var TilesEmVoo = 16

// local is the directory Base names when it is a mirror on disk (a path or
// a file:// URL), "" for an http(s) URL.
func (c *Cliente) local() string {
	b := c.Base
	if strings.HasPrefix(b, "http://") || strings.HasPrefix(b, "https://") {
		return ""
	}
	if u, err := url.Parse(b); err == nil && u.Scheme == "file" {
		return u.Path
	}
	return b
}

// lerLocal reads path (under the log's prefix) from the mirror on disk;
// what the mirror does not hold answers as a 404 would.
func (c *Cliente) lerLocal(dir, path string) ([]byte, error) {
	if strings.ContainsAny(path, "?#") || strings.Contains(path, "..") {
		return nil, &ErrHTTP{URL: path, Status: 404, Erro: "not in a static mirror"}
	}
	raiz := strings.TrimSuffix(filepath.ToSlash(dir), "/")
	if !strings.HasSuffix(raiz, "/d6a/transparencia") {
		raiz += "/d6a/transparencia"
	}
	arquivo := filepath.FromSlash(raiz + path)
	b, err := os.ReadFile(arquivo)
	if errors.Is(err, os.ErrNotExist) {
		return nil, &ErrHTTP{URL: arquivo, Status: 404, Erro: "not in the mirror"}
	}
	return b, err
}

// tile fetches one tile. A partial tile the server no longer holds (C2SP
// lets a log drop it once the tile is full) is cut from the full one. A
// tile neither serves is the log's failure (exit 1): every tile asked for
// is of a tree it signed. reservar is the walk's budget (nil: none);
// reservado what was taken from it.
func (c *Cliente) tile(ctx context.Context, t tlog.Tile, reservar func(int64) error) (b []byte, reservado int64, err error) {
	b, reservado, err = c.buscar(ctx, "/"+tiles.Path(t), reservar)
	var h *ErrHTTP
	if err == nil || !errors.As(err, &h) || h.Status != 404 {
		return b, reservado, err
	}
	if t.W == tiles.Width {
		return nil, reservado, faltando(t, err)
	}
	cheio := t
	cheio.W = tiles.Width
	b, n, err2 := c.buscar(ctx, "/"+tiles.Path(cheio), reservar)
	reservado += n
	if err2 != nil {
		if errors.As(err2, &h) && h.Status == 404 {
			return nil, reservado, faltando(t, err)
		}
		return nil, reservado, err2
	}
	if t.L != tiles.Entries {
		if len(b) < t.W*tlog.HashSize {
			return nil, reservado, registro.NovaFalha(tiles.Path(cheio), fmt.Sprintf("%d bytes", len(b)), fmt.Sprintf("%d bytes", tiles.Width*tlog.HashSize))
		}
		return b[:t.W*tlog.HashSize], reservado, nil
	}
	es, err := tiles.ReadBundle(b, tiles.Width)
	if err != nil {
		return nil, reservado, registro.NovaFalha(tiles.Path(cheio), registro.UmaLinha(err.Error()), "an entry bundle of 256")
	}
	var out []byte
	for _, e := range es[:t.W] {
		out, _ = tiles.AppendEntry(out, e)
	}
	return out, reservado, nil
}

// faltando is the failure of a tile of a signed tree the log does not
// serve.
func faltando(t tlog.Tile, err error) error {
	return fmt.Errorf("%w (%v)", registro.NovaFalha(tiles.Path(t), "not served", "every tile of the signed tree"), err)
}

// bloco is one level-0 tile's leaves: their hashes and their records
// (empty: eliminated), each record already parsed and checked by itself
// (conferirFolha) in the goroutine that fetched it, so the checks that
// need no state run in parallel and only the replay runs in log order.
type bloco struct {
	inicio   int64
	hashes   []tlog.Hash
	entradas [][]byte
	lidos    []registro.Registravel
	falhas   []error
	// gatilhos: the record was checked against its bus message
	// (ConferirNoBarramento); doGatilho: its failure is that check's.
	gatilhos, doGatilho []bool
	err                 error
	// reservado is what its tiles took from the walk's budget, given back
	// once the block is consumed.
	reservado int64
}

func (c *Cliente) lerBloco(ctx context.Context, k int64, w int, orc *orcamento) bloco {
	b := bloco{inicio: k * tiles.Width}
	reserva := orc.reserva(ctx, k)
	h, n, err := c.tile(ctx, tiles.Hash(0, k, w), reserva)
	b.reservado += n
	if err != nil {
		b.err = err
		return b
	}
	if b.hashes, err = tiles.ReadHashes(h, w); err != nil {
		b.err = registro.NovaFalha(tiles.Path(tiles.Hash(0, k, w)), registro.UmaLinha(err.Error()), "a level-0 hash tile")
		return b
	}
	e, n, err := c.tile(ctx, tiles.Bundle(k, w), reserva)
	b.reservado += n
	if err != nil {
		b.err = err
		return b
	}
	if b.entradas, err = tiles.ReadBundle(e, w); err != nil {
		b.err = registro.NovaFalha(tiles.Path(tiles.Bundle(k, w)), registro.UmaLinha(err.Error()), "an entry bundle")
		return b
	}
	b.lidos, b.falhas, b.gatilhos, b.doGatilho = make([]registro.Registravel, w), make([]error, w), make([]bool, w), make([]bool, w)
	var seqs []uint64
	for j, reg := range b.entradas {
		if len(reg) == 0 {
			continue
		}
		b.lidos[j], b.falhas[j] = conferirFolha(reg, b.hashes[j])
		if b.falhas[j] == nil && c.Barramento != nil {
			if s := seqNoBarramento(b.lidos[j]); s > 0 {
				seqs = append(seqs, s)
			}
		}
	}
	if c.Barramento == nil {
		return b
	}
	// The bus check of the draws and inputs, in the fetchers too: the
	// tile's messages read in bulk (lerEmLote), as many tiles in flight as
	// TilesEmVoo.
	barramento := lerEmLote(ctx, c.Barramento, seqs)
	for j := range b.entradas {
		if b.lidos[j] != nil && b.falhas[j] == nil {
			b.gatilhos[j], b.falhas[j] = registro.ConferirNoBarramento(ctx, barramento, b.lidos[j])
			b.doGatilho[j] = b.falhas[j] != nil
		}
	}
	return b
}

// lerRegistravel is LerRegistravel, answered without parsing again for
// the record percorrer is giving out now (AoRegistro's callers parse it).
// It runs in the goroutine of the callbacks.
func (c *Cliente) lerRegistravel(b []byte) (registro.Registravel, error) {
	if c.lido != nil && len(b) > 0 && len(b) == len(c.lidoB) && &b[0] == &c.lidoB[0] {
		return c.lido, nil
	}
	return registro.LerRegistravel(b)
}

// percorrer reads the leaves fr.N … cp.Tamanho-1 from the level-0 tiles
// and the entry bundles, fetching TilesEmVoo tiles ahead in parallel, and
// gives each in order to fn (registro nil: eliminated; folha is the leaf
// hash the tile holds). Each leaf then extends fr, and at the end fr's root
// must be the checkpoint's: with fr the verified tree of an earlier size,
// that proves cp extends it, and every leaf given to fn is in cp's tree.
// Memory: the tiles in flight and the frontier, whatever the log's size.
func (c *Cliente) percorrer(ctx context.Context, cp registro.Checkpoint, fr *registro.Fronteira, rl *regrasDoLog, progresso func(feitos, total int64), fn func(i int64, registro []byte, lido registro.Registravel, gatilho bool, falhou error) error) error {
	if fr.N > cp.Tamanho {
		return registro.NovaFalha("checkpoint.tamanho", cp.Tamanho, fmt.Sprintf("≥ %d (the size already verified): the log shrank", fr.N))
	}
	if err := conferirTamanho(cp); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fila := make(chan chan bloco, max(TilesEmVoo, 1))
	// The tiles in flight share a budget; the block consumed next always
	// goes on (orcamento).
	orc := novoOrcamento(OrcamentoTiles)
	orc.avancar(fr.N / tiles.Width)
	raizes := registro.NovasRaizes(c.raizesNoAnel)
	raizes.Guardar(fr)
	go func() {
		defer close(fila)
		for k := fr.N / tiles.Width; k*tiles.Width < cp.Tamanho; k++ {
			w := int(min(tiles.Width, cp.Tamanho-k*tiles.Width))
			ch := make(chan bloco, 1)
			select {
			case fila <- ch:
			case <-ctx.Done():
				return
			}
			go func() { ch <- c.lerBloco(ctx, k, w, orc) }()
		}
	}()
	for ch := range fila {
		b := <-ch
		if b.err != nil {
			return b.err
		}
		k := b.inicio / tiles.Width
		for j, h := range b.hashes {
			i := b.inicio + int64(j)
			if i < fr.N {
				continue
			}
			var reg []byte
			if len(b.entradas[j]) > 0 {
				reg = b.entradas[j]
			}
			falhou := b.falhas[j]
			if cs, ok := b.lidos[j].(registro.CossinaturasRegistro); ok && falhou == nil {
				falhou = c.conferirCossinado(ctx, cp, raizes, cs)
			}
			gatilho, falhou, fatal := rl.julgar(i, b.lidos[j], b.gatilhos[j], b.doGatilho[j], falhou)
			if fatal != nil {
				return fatal
			}
			c.lidoB, c.lido = reg, b.lidos[j]
			err := fn(i, reg, b.lidos[j], gatilho, falhou)
			c.lidoB, c.lido = nil, nil
			if err != nil {
				return err
			}
			fr.Adicionar(h)
			raizes.Ver(b.lidos[j])
			raizes.Guardar(fr)
		}
		orc.liberar(b.reservado)
		orc.avancar(k + 1)
		if progresso != nil {
			progresso(fr.N, cp.Tamanho)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := rl.fim(); err != nil {
		return err
	}
	if fr.N != cp.Tamanho {
		return registro.NovaFalha("tiles", fmt.Sprintf("%d leaves read", fr.N), fmt.Sprintf("%d (checkpoint size)", cp.Tamanho))
	}
	if cp.Tamanho > 0 {
		if r := fr.Raiz(); r != cp.Raiz {
			return registro.NovaFalha("raiz", base64.StdEncoding.EncodeToString(r[:]),
				base64.StdEncoding.EncodeToString(cp.Raiz[:])+" (the signed checkpoint's root)")
		}
	}
	return nil
}

// verificarDe checks the records fr.N … of cp (as VerificarTudo does for
// all of them) into res, extending fr.
func (c *Cliente) verificarDe(ctx context.Context, cp registro.Checkpoint, fr *registro.Fronteira, res *Resumo, progresso func(feitos, total int64)) error {
	rl := c.regras
	if rl == nil {
		rl = &regrasDoLog{}
	}
	c.regras = nil
	rl.porLote = c.RodadasPorLote
	defer func() {
		c.Regras = rl.Regras
		if rl.Primeira != nil {
			res.GatilhoDesde = rl.Primeira.GatilhoDesde
		}
	}()
	err := c.percorrer(ctx, cp, fr, rl, progresso, func(i int64, reg []byte, _ registro.Registravel, gatilho bool, err error) error {
		if c.AoRegistro != nil {
			c.AoRegistro(i, reg)
		}
		if reg == nil {
			res.Eliminados++
			return nil
		}
		if gatilho {
			res.Gatilhos++
		}
		if err != nil {
			res.Falhas++
			if res.Primeira == nil {
				res.Primeira, res.primeiraEm = fmt.Errorf("registro %d: %w", i, err), i
			}
		} else {
			res.Verificados++
		}
		return nil
	})
	rl.rodadasAdiadas(res)
	res.Raiz = fr.Raiz()
	return err
}

// leitorTiles is the log's tiles as a tlog.TileReader: tlog.TileHashReader
// checks each tile it reads against the tree it is given.
type leitorTiles struct {
	ctx context.Context
	c   *Cliente
}

func (leitorTiles) Height() int { return tiles.Height }

func (l leitorTiles) ReadTiles(ts []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(ts))
	for i, t := range ts {
		b, _, err := l.c.tile(l.ctx, t, nil)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

func (leitorTiles) SaveTiles([]tlog.Tile, [][]byte) {}

// provaPorTiles is the consistency proof from size a to the tree of b,
// built from b's tiles (each checked against b's root).
func (c *Cliente) provaPorTiles(ctx context.Context, a int64, b registro.Checkpoint) (tlog.TreeProof, error) {
	r := tlog.TileHashReader(tlog.Tree{N: b.Tamanho, Hash: b.Raiz}, leitorTiles{ctx, c})
	p, err := tlog.ProveTree(b.Tamanho, a, r)
	var h *ErrHTTP
	if err != nil && !errors.As(err, &h) && ctx.Err() == nil {
		return nil, registro.NovaFalha("tiles", registro.UmaLinha(err.Error()), fmt.Sprintf("tiles of the tree of size %d", b.Tamanho))
	}
	return p, err
}
