package httpapi

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/limiter"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/formigueiro/d6a/internal/tiles"
	"github.com/formigueiro/d6a/internal/transparencia"
)

// FatorTiles is how many more tile requests than other transparency
// requests one client IP may make per minute: a verifier of the whole log
// reads two tiles per 256 records, and a CDN in front is one address.
const FatorTiles = 50

// cacheParcial is a partial tile's Cache-Control: its bytes never change
// either, but a reader asking for it wants the tree's newest edge.
const cacheParcial = "public, max-age=5"

// cacheBundle is a full entry bundle's Cache-Control: unlike a hash tile
// it changes when `d6a log-eliminar` blanks one of its records, so no
// cache may keep it for a year; within max-age the erased record can
// still be served, which the operator's CDN purge cuts short
// (docs/operacao.md), and after it an ETag makes revalidation cheap.
const cacheBundle = "public, max-age=300"

// memoriaTiles keeps tiles in memory, by path and encoding, up to
// limiteMemoriaTiles bytes (then it starts again empty). A full hash tile
// never changes; a full bundle changes only when a record is eliminated
// (spec 2.2), so bundles are kept validadeBundle at most: an elimination
// reaches every instance's answers within that time, as the purge the
// operator makes of any CDN (CONTRACT §7).
type memoriaTiles struct {
	mu     sync.Mutex
	itens  map[string]itemTile
	bytes  int
	agora  func() time.Time
	limite int
}

type itemTile struct {
	corpo []byte
	em    time.Time
}

const (
	limiteMemoriaTiles = 64 << 20
	validadeBundle     = time.Minute
)

func (m *memoriaTiles) ler(chave string, bundle bool) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	it, ok := m.itens[chave]
	if !ok || (bundle && m.agora().Sub(it.em) > validadeBundle) {
		return nil, false
	}
	return it.corpo, true
}

func (m *memoriaTiles) guardar(chave string, corpo []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.itens == nil || m.bytes+len(corpo) > m.limite {
		m.itens, m.bytes = map[string]itemTile{}, 0
	}
	if old, ok := m.itens[chave]; ok {
		m.bytes -= len(old.corpo)
	}
	m.itens[chave] = itemTile{corpo, m.agora()}
	m.bytes += len(corpo)
}

// tilesRotas serves the log as C2SP tlog-tiles (CONTRACT §7 "Tiles") from
// the hashes and records the log stores: registered before the group's
// limiter, with a limit of its own.
func (a *api) tilesRotas(app *fiber.App, t *rotasTransparencia, porMinuto int, publico fiber.Handler) {
	hs := []fiber.Handler{}
	if porMinuto > 0 {
		hs = append(hs, limiter.New(limiter.Config{
			Max:        porMinuto * FatorTiles,
			Expiration: time.Minute,
			KeyGenerator: func(c *fiber.Ctx) string {
				return "tile|" + chaveThrottle(a.ip.de(c))
			},
			LimitReached: func(c *fiber.Ctx) error {
				return c.Status(fiber.StatusTooManyRequests).JSON(fiber.Map{"erro": "limite de requisições por minuto excedido"})
			},
		}))
	}
	t.memoria = &memoriaTiles{agora: time.Now, limite: limiteMemoriaTiles}
	app.Get(RotaTransparencia+"/tile/*", append(hs, publico, t.tile)...)
}

// tile answers one hash tile or entry bundle of the tree of the latest
// signed checkpoint: any tile of that tree (full, or partial of any width
// up to its edge, so every signed size's partial tiles stay served), 404
// beyond it, 400 for a path not in C2SP's canonical form. Every tile read
// is kept in memoria, and a partial tile of a full one that exists is cut
// from the full one: so a client walking the widths of old partial tiles
// costs one database read per full tile, and reads go to the database
// only at the tree's edge.
func (t *rotasTransparencia) tile(c *fiber.Ctx) error {
	tl, err := tiles.ParsePath(strings.TrimPrefix(c.Path(), RotaTransparencia+"/"))
	if err != nil {
		return fiber.NewError(fiber.StatusBadRequest, "caminho de tile malformado (C2SP tlog-tiles: tile/<L>/<N>[.p/<W>] ou tile/entries/<N>[.p/<W>])")
	}
	bundle := tl.L == tiles.Entries
	gz := bundle && aceitaGzip(c.Get(fiber.HeaderAcceptEncoding))
	chave := chaveTile(tl, gz)
	// A tile already served is in the tree of every later checkpoint, and
	// so is every partial tile of a full one in memory: neither needs the
	// database.
	if corpo, ok := t.memoria.ler(chave, bundle); ok {
		return enviarTile(c, tl, gz, corpo)
	}
	cheio := tlog.Tile{H: tl.H, L: tl.L, N: tl.N, W: tiles.Width}
	if tl.W < tiles.Width {
		if corpo, ok := t.memoria.ler(chaveTile(cheio, false), bundle); ok {
			return t.enviarCortado(c, tl, gz, corpo)
		}
	}
	sair, err := t.vagas.entrar(c)
	if err != nil {
		return err
	}
	defer sair()
	ctx, cancel := t.ctx(c)
	defer cancel()
	_, n, err := t.ultimo(ctx)
	if err != nil {
		return err
	}
	if !tiles.In(tl, n) {
		return fiber.NewError(fiber.StatusNotFound, "tile além da árvore do último checkpoint (tamanho "+strconv.FormatInt(n, 10)+")")
	}
	ler := tl
	if tl.W < tiles.Width && tiles.In(cheio, n) {
		ler = cheio
	}
	corpo, err := t.lerTile(ctx, ler)
	if err != nil {
		return falhaLeitura(err)
	}
	if ler.W != tl.W {
		return t.enviarCortado(c, tl, gz, corpo)
	}
	if gz {
		if corpo, err = comprimir(corpo); err != nil {
			return falhaLeitura(err)
		}
	}
	t.memoria.guardar(chave, corpo)
	return enviarTile(c, tl, gz, corpo)
}

// enviarCortado answers the partial tile tl cut from the bytes of its
// full tile, and keeps it.
func (t *rotasTransparencia) enviarCortado(c *fiber.Ctx, tl tlog.Tile, gz bool, cheio []byte) error {
	corpo, err := prefixoTile(cheio, tl)
	if err != nil {
		return falhaLeitura(err)
	}
	if gz {
		if corpo, err = comprimir(corpo); err != nil {
			return falhaLeitura(err)
		}
	}
	t.memoria.guardar(chaveTile(tl, gz), corpo)
	return enviarTile(c, tl, gz, corpo)
}

// chaveTile is tl's key in memoria: its path, and the encoding.
func chaveTile(tl tlog.Tile, gz bool) string {
	if gz {
		return tiles.Path(tl) + "|gzip"
	}
	return tiles.Path(tl)
}

// lerTile reads tl's bytes, uncompressed: from memoria when a full tile
// was read before, else from the database.
func (t *rotasTransparencia) lerTile(ctx context.Context, tl tlog.Tile) ([]byte, error) {
	bundle := tl.L == tiles.Entries
	chave := chaveTile(tl, false)
	if corpo, ok := t.memoria.ler(chave, bundle); ok {
		return corpo, nil
	}
	var corpo []byte
	if bundle {
		inicio := tl.N * tiles.Width
		fs, err := transparencia.Folhas(ctx, t.db.Pool, inicio, inicio+int64(tl.W), tl.W)
		if err != nil {
			return nil, err
		}
		if len(fs) != tl.W {
			return nil, errors.New("transparencia: records missing under the signed size")
		}
		for i, f := range fs {
			if f.Indice != inicio+int64(i) {
				return nil, errors.New("transparencia: a gap in the records under the signed size")
			}
			// Eliminated (spec 2.2): an empty entry; its leaf hash stays
			// in the level-0 tile.
			if corpo, err = tiles.AppendEntry(corpo, f.Registro); err != nil {
				return nil, err
			}
		}
	} else {
		var err error
		if corpo, err = tlog.ReadTileData(tl, transparencia.Leitor(ctx, t.db.Pool)); err != nil {
			return nil, err
		}
	}
	t.memoria.guardar(chave, corpo)
	return corpo, nil
}

// prefixoTile cuts the partial tile tl from the bytes of its full tile: a
// partial tile is the first W hashes, or entries, of the full one.
func prefixoTile(cheio []byte, tl tlog.Tile) ([]byte, error) {
	if tl.L != tiles.Entries {
		if len(cheio) < tl.W*tlog.HashSize {
			return nil, errors.New("transparencia: a full tile shorter than its width")
		}
		return cheio[:tl.W*tlog.HashSize], nil
	}
	entradas, err := tiles.ReadBundle(cheio, tiles.Width)
	if err != nil {
		return nil, err
	}
	var corpo []byte
	for _, e := range entradas[:tl.W] {
		if corpo, err = tiles.AppendEntry(corpo, e); err != nil {
			return nil, err
		}
	}
	return corpo, nil
}

// comprimir is a bundle's gzip encoding.
func comprimir(corpo []byte) ([]byte, error) {
	var b bytes.Buffer
	z, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	_, _ = z.Write(corpo)
	if err := z.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// enviarTile answers a tile's bytes with C2SP's headers.
func enviarTile(c *fiber.Ctx, tl tlog.Tile, gz bool, corpo []byte) error {
	switch {
	case tl.W == tiles.Width && tl.L == tiles.Entries:
		c.Set(fiber.HeaderCacheControl, cacheBundle)
		h := sha256.Sum256(corpo)
		etag := `"` + hex.EncodeToString(h[:16]) + `"`
		c.Set(fiber.HeaderETag, etag)
		c.Set(fiber.HeaderVary, fiber.HeaderAcceptEncoding)
		if inm := c.Get(fiber.HeaderIfNoneMatch); inm != "" && (inm == etag || slices.Contains(strings.Split(strings.ReplaceAll(inm, " ", ""), ","), etag)) {
			return c.SendStatus(fiber.StatusNotModified)
		}
	case tl.W == tiles.Width:
		c.Set(fiber.HeaderCacheControl, cacheImutavel)
	default:
		c.Set(fiber.HeaderCacheControl, cacheParcial)
	}
	c.Set(fiber.HeaderContentType, "application/octet-stream")
	if tl.L == tiles.Entries {
		c.Set(fiber.HeaderVary, fiber.HeaderAcceptEncoding)
		if gz {
			c.Set(fiber.HeaderContentEncoding, "gzip")
		}
	}
	return c.Send(corpo)
}

// aceitaGzip reads Accept-Encoding: gzip listed and not refused (q=0).
func aceitaGzip(v string) bool {
	for _, parte := range strings.Split(v, ",") {
		nome, params, _ := strings.Cut(strings.TrimSpace(parte), ";")
		if !strings.EqualFold(strings.TrimSpace(nome), "gzip") {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}
