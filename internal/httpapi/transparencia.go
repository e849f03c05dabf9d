package httpapi

import (
	"context"
	"encoding/base64"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/etag"
	"github.com/gofiber/fiber/v2/middleware/limiter"
	"github.com/google/uuid"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/formigueiro/d6a/internal/estatisticas"
	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/testemunha"
	"github.com/formigueiro/d6a/internal/transparencia"
)

// Routes of the public transparency log (CONTRACT §7).
const (
	RotaTransparencia = "/d6a/transparencia"
	// LimiteRegistros is the largest page of /registros.
	LimiteRegistros = 1000
)

// Cache-Control of the answers: a consistency proof between two sizes can
// never change; a full page of records changes only when a record is
// eliminated; the rest follows the latest checkpoint.
const (
	cacheImutavel  = "public, max-age=31536000, immutable"
	cachePagina    = "public, max-age=300"
	cacheCheckpoin = "no-cache"
)

// transparenciaRotas registers the public, token-free read API and the
// verifier page, behind their own per-IP limit and an ETag.
func (a *api) transparenciaRotas(app *fiber.App, porMinuto int, publico fiber.Handler, chave, testemunhas string) {
	t := &rotasTransparencia{db: a.publico, leitura: a.leitura, vagas: a.vagas, verificador: chave, testemunhas: []testemunhaPublica{},
		estatisticasMem: memoria[corpoJSON]{ttl: EstatisticasTTL, agora: time.Now}}
	if ts, err := testemunha.Analisar(testemunhas); err == nil {
		for _, w := range ts {
			t.testemunhas = append(t.testemunhas, testemunhaPublica{Nome: w.Nome, Chave: w.Chave})
		}
	}
	a.tilesRotas(app, t, porMinuto, publico)
	g := app.Group(RotaTransparencia)
	if porMinuto > 0 {
		g.Use(limiter.New(limiter.Config{
			Max:        porMinuto,
			Expiration: time.Minute,
			KeyGenerator: func(c *fiber.Ctx) string {
				return "t|" + chaveThrottle(a.ip.de(c))
			},
			LimitReached: func(c *fiber.Ctx) error {
				return c.Status(fiber.StatusTooManyRequests).JSON(fiber.Map{"erro": "limite de requisições por minuto excedido"})
			},
		}))
	}
	g.Use(publico)
	g.Use(etag.New())
	// The routes that read the database on every request hold a slot;
	// the rest answer from memory.
	banco := a.vagas.middleware
	g.Get("/checkpoint", banco, t.checkpoint)
	g.Get("/chave", t.chave)
	g.Get("/sorteios/:event_id", banco, t.sorteio)
	g.Get("/sorteios", banco, t.porDemanda)
	g.Get("/registros", banco, t.registros)
	g.Get("/consistencia", banco, t.consistencia)
	g.Get("/estatisticas", t.estatisticas)
	g.Get("/testemunhas", t.listarTestemunhas)
	g.Get("/resumo", banco, t.resumo)
	g.Get("/", paginaVerificador)
	g.Get("/d6a.wasm", arquivoVerificador("d6a.wasm"))
	g.Get("/wasm_exec.js", arquivoVerificador("wasm_exec.js"))
}

// estatisticas is the fairness test over the signed records processed so
// far (CONTRACT §7 "Fairness statistics"): one row per counsellor read,
// whatever the number of draws; kept EstatisticasTTL, encoded, so a flood
// reads and encodes them once per TTL.
func (t *rotasTransparencia) estatisticas(c *fiber.Ctx) error {
	r, err := t.estatisticasMem.ler(func() (corpoJSON, error) {
		sair, err := t.vagas.entrar(c)
		if err != nil {
			return corpoJSON{}, err
		}
		defer sair()
		ctx, cancel := t.ctx(c)
		defer cancel()
		r, err := estatisticas.Ler(ctx, t.db)
		if err != nil {
			return corpoJSON{}, err
		}
		return novoCorpoJSON(r)
	})
	if errors.Is(err, errOcupado) {
		return err
	}
	if err != nil {
		return falhaLeitura(err)
	}
	c.Set(fiber.HeaderCacheControl, "no-cache")
	return r.enviar(c)
}

type rotasTransparencia struct {
	// db is the public routes' pool (Options.Publico).
	db      *store.Store
	leitura Leitura
	vagas   vagas
	// estatisticasMem is /estatisticas's last answer.
	estatisticasMem memoria[corpoJSON]
	memoria         *memoriaTiles
	verificador     string
	testemunhas     []testemunhaPublica
}

// testemunhaPublica is a configured witness as the page needs it: the
// name its cosignature lines carry and the key that checks them.
type testemunhaPublica struct {
	Nome  string `json:"nome"`
	Chave string `json:"chave"`
}

// resumo is the log as it stands, for the page's opening: the latest
// signed checkpoint's size and root, and when it was signed.
func (t *rotasTransparencia) resumo(c *fiber.Ctx) error {
	ctx, cancel := t.ctx(c)
	defer cancel()
	c.Set(fiber.HeaderCacheControl, cacheCheckpoin)
	var out struct {
		Tamanho    int64     `json:"tamanho"`
		Raiz       []byte    `json:"raiz"`
		AssinadoEm time.Time `json:"assinado_em"`
		// GatilhoDesde is the first index whose draws follow their
		// trigger (CONTRACT §4); earlier ones, the earlier rule.
		GatilhoDesde int64 `json:"gatilho_desde"`
	}
	r, achou, err := t.leitura.ResumoDoLog(ctx)
	if err != nil {
		return falhaLeitura(err)
	}
	if !achou {
		return fiber.NewError(fiber.StatusNotFound, "nenhum checkpoint assinado ainda (nenhum sorteio registrado)")
	}
	out.Tamanho, out.Raiz, out.AssinadoEm, out.GatilhoDesde = r.Tamanho, r.Raiz, r.AssinadoEm, r.GatilhoDesde
	out.AssinadoEm = out.AssinadoEm.UTC()
	return c.JSON(out)
}

// listarTestemunhas is the witnesses this log submits to
// (D6A_LOG_TESTEMUNHAS), for the page: like the served log key, a reader
// should compare them with what each institution publishes.
func (t *rotasTransparencia) listarTestemunhas(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "public, max-age=3600")
	return c.JSON(fiber.Map{"testemunhas": t.testemunhas})
}

func (t *rotasTransparencia) ctx(c *fiber.Ctx) (context.Context, context.CancelFunc) {
	return context.WithTimeout(c.UserContext(), ConsultaTimeout)
}

// falhaLeitura maps a database failure to 503 or 500.
func falhaLeitura(err error) error {
	slog.Error("transparencia: leitura do banco falhou", "err", err)
	if store.Transient(err) {
		return fiber.NewError(fiber.StatusServiceUnavailable, "banco de dados indisponível")
	}
	return fiber.NewError(fiber.StatusInternalServerError, "erro interno")
}

// ultimo is the latest signed checkpoint; 404 before the first one.
func (t *rotasTransparencia) ultimo(ctx context.Context) (string, int64, error) {
	nota, n, err := transparencia.UltimoCheckpoint(ctx, t.db.Pool)
	if errors.Is(err, transparencia.ErrNaoEncontrado) {
		return "", 0, fiber.NewError(fiber.StatusNotFound, "nenhum checkpoint assinado ainda (nenhum sorteio registrado)")
	}
	if err != nil {
		return "", 0, falhaLeitura(err)
	}
	return nota, n, nil
}

func (t *rotasTransparencia) checkpoint(c *fiber.Ctx) error {
	ctx, cancel := t.ctx(c)
	defer cancel()
	c.Set(fiber.HeaderCacheControl, cacheCheckpoin)
	// With every witness cosignature received for it appended (C2SP
	// tlog-cosignature; CONTRACT §7 "Witnesses").
	nota, _, err := testemunha.CheckpointCossinado(ctx, t.db.Pool)
	if errors.Is(err, transparencia.ErrNaoEncontrado) {
		return fiber.NewError(fiber.StatusNotFound, "nenhum checkpoint assinado ainda (nenhum sorteio registrado)")
	}
	if err != nil {
		return falhaLeitura(err)
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextPlainCharsetUTF8)
	return c.SendString(nota)
}

func (t *rotasTransparencia) chave(c *fiber.Ctx) error {
	if t.verificador == "" {
		return fiber.NewError(fiber.StatusServiceUnavailable, "chave do log não configurada")
	}
	c.Set(fiber.HeaderCacheControl, "public, max-age=3600")
	c.Set(fiber.HeaderContentType, fiber.MIMETextPlainCharsetUTF8)
	return c.SendString(t.verificador + "\n")
}

func hashes64(hs []tlog.Hash) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = base64.StdEncoding.EncodeToString(h[:])
	}
	return out
}

// registroJSON is a record's exact bytes as a JSON string, or null once
// eliminated.
func registroJSON(b []byte) *string {
	if b == nil {
		return nil
	}
	s := string(b)
	return &s
}

func (t *rotasTransparencia) sorteio(c *fiber.Ctx) error {
	id, err := uuid.Parse(c.Params("event_id"))
	if err != nil {
		return fiber.NewError(fiber.StatusBadRequest, "event_id não é um UUID")
	}
	c.Set(fiber.HeaderCacheControl, cacheCheckpoin)
	ctx, cancel := t.ctx(c)
	defer cancel()
	nota, n, err := t.ultimo(ctx)
	if err != nil {
		return err
	}
	f, err := transparencia.FolhaPorEvento(ctx, t.db.Pool, id)
	switch {
	case errors.Is(err, transparencia.ErrNaoEncontrado):
		return fiber.NewError(fiber.StatusNotFound, "sorteio não encontrado no log de transparência")
	case err != nil:
		return falhaLeitura(err)
	case f.Indice >= n:
		// Appended, not yet under a signed checkpoint (the signer runs
		// within a second of the commit).
		c.Set(fiber.HeaderRetryAfter, "1")
		return fiber.NewError(fiber.StatusNotFound, "sorteio ainda não incluído em um checkpoint assinado; tente em instantes")
	}
	prova, err := tlog.ProveRecord(n, f.Indice, transparencia.Leitor(ctx, t.db.Pool))
	if err != nil {
		return falhaLeitura(err)
	}
	return c.JSON(fiber.Map{
		"indice": f.Indice, "registro": registroJSON(f.Registro),
		"hash_folha":     base64.StdEncoding.EncodeToString(f.HashFolha[:]),
		"prova_inclusao": hashes64(prova), "checkpoint": nota,
	})
}

func (t *rotasTransparencia) porDemanda(c *fiber.Ctx) error {
	id, err := uuid.Parse(c.Query("demanda_id"))
	if err != nil {
		return fiber.NewError(fiber.StatusBadRequest, "demanda_id ausente ou não é um UUID")
	}
	c.Set(fiber.HeaderCacheControl, cacheCheckpoin)
	ctx, cancel := t.ctx(c)
	defer cancel()
	_, n, err := t.ultimo(ctx)
	if err != nil {
		return err
	}
	lista, err := transparencia.PorDemanda(ctx, t.db.Pool, id, n)
	if err != nil {
		return falhaLeitura(err)
	}
	if len(lista) == 0 {
		return fiber.NewError(fiber.StatusNotFound, "nenhum sorteio desta demanda no log de transparência")
	}
	return c.JSON(fiber.Map{"sorteios": lista})
}

// inteiro reads a non-negative integer query parameter.
func inteiro(c *fiber.Ctx, nome string, padrao int64, exigido bool) (int64, error) {
	v := c.Query(nome)
	if v == "" {
		if exigido {
			return 0, fiber.NewError(fiber.StatusBadRequest, nome+" ausente")
		}
		return padrao, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fiber.NewError(fiber.StatusBadRequest, nome+" não é um inteiro ≥ 0")
	}
	return n, nil
}

func (t *rotasTransparencia) registros(c *fiber.Ctx) error {
	inicio, err := inteiro(c, "inicio", 0, false)
	if err != nil {
		return err
	}
	limite, err := inteiro(c, "limite", LimiteRegistros, false)
	if err != nil {
		return err
	}
	if limite < 1 || limite > LimiteRegistros {
		return fiber.NewError(fiber.StatusBadRequest, "limite deve estar entre 1 e "+strconv.Itoa(LimiteRegistros))
	}
	ctx, cancel := t.ctx(c)
	defer cancel()
	_, n, err := t.ultimo(ctx)
	if err != nil {
		return err
	}
	fs, err := transparencia.Folhas(ctx, t.db.Pool, inicio, n, int(limite))
	if err != nil {
		return falhaLeitura(err)
	}
	type item struct {
		Indice    int64   `json:"indice"`
		Registro  *string `json:"registro"`
		HashFolha string  `json:"hash_folha"`
	}
	out := make([]item, len(fs))
	for i, f := range fs {
		out[i] = item{f.Indice, registroJSON(f.Registro), base64.StdEncoding.EncodeToString(f.HashFolha[:])}
	}
	if int64(len(out)) == limite {
		c.Set(fiber.HeaderCacheControl, cachePagina)
	} else {
		c.Set(fiber.HeaderCacheControl, cacheCheckpoin)
	}
	return c.JSON(fiber.Map{"registros": out})
}

func (t *rotasTransparencia) consistencia(c *fiber.Ctx) error {
	de, err := inteiro(c, "de", 0, true)
	if err != nil {
		return err
	}
	para, err := inteiro(c, "para", 0, true)
	if err != nil {
		return err
	}
	if de < 1 || de > para {
		return fiber.NewError(fiber.StatusBadRequest, "precisa de 1 ≤ de ≤ para")
	}
	ctx, cancel := t.ctx(c)
	defer cancel()
	_, n, err := t.ultimo(ctx)
	if err != nil {
		return err
	}
	if para > n {
		return fiber.NewError(fiber.StatusBadRequest, "para maior que o tamanho do último checkpoint ("+strconv.FormatInt(n, 10)+")")
	}
	p, err := tlog.ProveTree(para, de, transparencia.Leitor(ctx, t.db.Pool))
	if err != nil {
		return falhaLeitura(err)
	}
	c.Set(fiber.HeaderCacheControl, cacheImutavel)
	return c.JSON(fiber.Map{"prova": hashes64(p)})
}
