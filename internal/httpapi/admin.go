package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/console"
	"github.com/formigueiro/d6a/internal/store"
)

// PrefixoAdmin is the root of the administration routes (CONTRACT §6). They
// are for operators, not citizens: docs/decisions.md says why the colony
// serves writes here although spec §1/§8.2 keeps it read-only for the
// citizens' front-end. D6A_ADMIN=false leaves them out.
const PrefixoAdmin = "/d6a/admin"

// PapelAdmin is the value of the token's "papel" claim the routes require.
const PapelAdmin = "admin"

// AdminTimeout bounds one administrative request, the executor's queue
// included.
const AdminTimeout = 30 * time.Second

// Administracao is what the console's routes need of the console
// (*console.Console). Every write goes through the executor, as an event
// does, and is journaled in d6a.acoes_administrativas.
type Administracao interface {
	Ocupados(ctx context.Context, maisDe time.Duration) ([]console.Ocupado, error)
	Timeout(ctx context.Context, a console.Acao, eventIDSorteio uuid.UUID) (uuid.UUID, error)
	Fila(ctx context.Context, uc *uuid.UUID) ([]console.Pendente, error)
	SortearPendente(ctx context.Context, a console.Acao, demandaID uuid.UUID) (console.ResultadoPendente, error)
	Inativar(ctx context.Context, a console.Acao, id uuid.UUID) (console.MudancaStatus, error)
	Reativar(ctx context.Context, a console.Acao, id uuid.UUID) (console.MudancaStatus, error)
	Parametros(ctx context.Context) (atribuicao.Parametros, error)
	VersoesParametros(ctx context.Context) ([]atribuicao.Parametros, error)
	NovosParametros(ctx context.Context, a console.Acao, p atribuicao.Parametros) (int, error)
	Acoes(ctx context.Context, depoisDe int64, limite int) ([]console.AcaoRegistrada, error)
}

var (
	errSemPapel   = errors.New(`token sem "papel": "admin"`)
	errSemSujeito = errors.New("token sem sub")
)

// claimsSessao are the session token's claims: the registered ones and the
// role (the identity provider's custom claim).
type claimsSessao struct {
	jwt.RegisteredClaims
	Papel string `json:"papel,omitempty"`
}

// operador checks the Authorization header of an administration request:
// a valid session token (else 401) with "papel": "admin" (else 403). It
// returns the token's sub, recorded with every action.
func (a *autenticador) operador(authorization string) (string, int, error) {
	c, err := a.verificar(authorization)
	if err != nil {
		return "", fiber.StatusUnauthorized, err
	}
	if c.Subject == "" || len(c.Subject) > 255 {
		return "", fiber.StatusUnauthorized, errSemSujeito
	}
	if c.Papel != PapelAdmin {
		return "", fiber.StatusForbidden, errSemPapel
	}
	return c.Subject, 0, nil
}

// rotasAdmin registers the administration routes behind the admin guard.
func (a *api) rotasAdmin(app *fiber.App, adm Administracao) {
	g := app.Group(PrefixoAdmin, a.guardaAdmin)
	h := adminHandlers{adm: adm}
	g.Get("/ocupados", h.ocupados)
	g.Post("/atribuicoes/:event_id_sorteio/timeout", h.timeout)
	g.Get("/fila", h.fila)
	g.Post("/fila/:demanda_id/sortear", h.sortear)
	g.Post("/conselheiros/:id/inativar", h.inativar)
	g.Post("/conselheiros/:id/reativar", h.reativar)
	g.Get("/parametros", h.parametros)
	g.Post("/parametros", h.novosParametros)
	g.Get("/acoes", h.acoes)
}

// guardaAdmin authenticates the operator and keeps the answers out of any
// shared cache.
func (a *api) guardaAdmin(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderVary, fiber.HeaderAuthorization)
	if !a.auth.configurado() {
		return fiber.NewError(fiber.StatusServiceUnavailable, "autenticação não configurada")
	}
	sub, status, err := a.auth.operador(c.Get(fiber.HeaderAuthorization))
	if err != nil {
		if status == fiber.StatusUnauthorized {
			c.Set(fiber.HeaderWWWAuthenticate, `Bearer error="invalid_token"`)
		}
		return fiber.NewError(status, err.Error())
	}
	c.Locals(chaveOperador{}, sub)
	return c.Next()
}

type chaveOperador struct{}

type adminHandlers struct{ adm Administracao }

func contexto(c *fiber.Ctx) (context.Context, context.CancelFunc) {
	return context.WithTimeout(c.UserContext(), AdminTimeout)
}

// corpo decodes the JSON object of a write into v: one object, no unknown
// field, nothing after it.
func corpo(c *fiber.Ctx, v any) error {
	b := bytes.TrimSpace(c.Body())
	if len(b) == 0 || b[0] != '{' {
		return fiber.NewError(fiber.StatusBadRequest, "corpo deve ser um objeto JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fiber.NewError(fiber.StatusBadRequest, "JSON inválido: "+umaLinha(err.Error()))
	}
	if _, err := dec.Token(); err != io.EOF {
		return fiber.NewError(fiber.StatusBadRequest, "JSON inválido: dados após o objeto")
	}
	return nil
}

type pedidoJustificado struct {
	Justificativa string `json:"justificativa"`
}

// acao reads the justified body of a write.
func acao(c *fiber.Ctx) (console.Acao, error) {
	var p pedidoJustificado
	if err := corpo(c, &p); err != nil {
		return console.Acao{}, err
	}
	return acaoDe(c, p.Justificativa)
}

func acaoDe(c *fiber.Ctx, justificativa string) (console.Acao, error) {
	if strings.TrimSpace(justificativa) == "" {
		return console.Acao{}, fiber.NewError(fiber.StatusBadRequest, "justificativa obrigatória")
	}
	sub, _ := c.Locals(chaveOperador{}).(string)
	return console.Acao{Sub: sub, Justificativa: justificativa}, nil
}

// idDaRota parses a canonical UUID path parameter (400 otherwise).
func idDaRota(c *fiber.Ctx, nome string) (uuid.UUID, error) {
	s := c.Params(nome)
	id, err := uuid.Parse(s)
	if len(s) != 36 || err != nil {
		return uuid.Nil, fiber.NewError(fiber.StatusBadRequest, nome+" não é um UUID")
	}
	return id, nil
}

// erroAdmin maps the executor's outcomes to statuses (CONTRACT §6).
func erroAdmin(err error) error {
	var fe *fiber.Error
	switch {
	case errors.As(err, &fe):
		return err
	case errors.Is(err, console.ErrJustificativa), errors.Is(err, atribuicao.ErrParametroInvalido):
		return fiber.NewError(fiber.StatusBadRequest, umaLinha(err.Error()))
	case errors.Is(err, console.ErrNaoEncontrado):
		return fiber.NewError(fiber.StatusNotFound, umaLinha(err.Error()))
	case errors.Is(err, console.ErrConflito):
		return fiber.NewError(fiber.StatusConflict, umaLinha(err.Error()))
	case errors.Is(err, console.ErrGatilhoPendente):
		// Published: the draw happens when d6a consumes it back.
		return fiber.NewError(fiber.StatusAccepted, umaLinha(err.Error()))
	case errors.Is(err, atribuicao.ErrEncerrado), errors.Is(err, context.DeadlineExceeded), store.Transient(err):
		slog.Warn("administração: indisponível", "err", err)
		return fiber.NewError(fiber.StatusServiceUnavailable, "serviço indisponível; tente de novo")
	}
	slog.Error("administração: falha", "err", err)
	return fiber.NewError(fiber.StatusInternalServerError, "erro interno")
}

// duracao reads "72h", "90m" or "3d" (days, which time.ParseDuration lacks).
func duracao(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 || n > 3650 {
			return 0, fmt.Errorf("%q não é uma duração", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q não é uma duração (ex.: 72h, 3d)", s)
	}
	return v, nil
}

// ocupados is GET ocupados?mais_de=72h: occupied counsellors whose active
// assignment is older than mais_de (default: the timeout in force).
func (h adminHandlers) ocupados(c *fiber.Ctx) error {
	ctx, cancel := contexto(c)
	defer cancel()
	var maisDe time.Duration
	if s := c.Query("mais_de"); s != "" {
		d, err := duracao(s)
		if err != nil {
			return fiber.NewError(fiber.StatusBadRequest, "mais_de: "+err.Error())
		}
		maisDe = d
	} else {
		p, err := h.adm.Parametros(ctx)
		if err != nil {
			return erroAdmin(err)
		}
		maisDe = p.TimeoutResposta()
	}
	out, err := h.adm.Ocupados(ctx, maisDe)
	if err != nil {
		return erroAdmin(err)
	}
	return c.JSON(fiber.Map{"mais_de": maisDe.String(), "ocupados": out})
}

// timeout is POST atribuicoes/{event_id_sorteio}/timeout: 202 with the
// event id of the published refusal, 409 when the assignment is not active.
func (h adminHandlers) timeout(c *fiber.Ctx) error {
	id, err := idDaRota(c, "event_id_sorteio")
	if err != nil {
		return err
	}
	a, err := acao(c)
	if err != nil {
		return err
	}
	ctx, cancel := contexto(c)
	defer cancel()
	ev, err := h.adm.Timeout(ctx, a, id)
	if err != nil {
		return erroAdmin(err)
	}
	return c.Status(fiber.StatusAccepted).JSON(fiber.Map{"event_id": ev})
}

// fila is GET fila?uc=UUID: the pending queue, oldest first.
func (h adminHandlers) fila(c *fiber.Ctx) error {
	var uc *uuid.UUID
	if s := c.Query("uc"); s != "" {
		id, err := uuid.Parse(s)
		if len(s) != 36 || err != nil {
			return fiber.NewError(fiber.StatusBadRequest, "uc não é um UUID")
		}
		uc = &id
	}
	ctx, cancel := contexto(c)
	defer cancel()
	out, err := h.adm.Fila(ctx, uc)
	if err != nil {
		return erroAdmin(err)
	}
	return c.JSON(fiber.Map{"pendentes": out})
}

// sortear is POST fila/{demanda_id}/sortear: the sweep's draw for one
// pending demand, now.
func (h adminHandlers) sortear(c *fiber.Ctx) error {
	id, err := idDaRota(c, "demanda_id")
	if err != nil {
		return err
	}
	a, err := acao(c)
	if err != nil {
		return err
	}
	ctx, cancel := contexto(c)
	defer cancel()
	r, err := h.adm.SortearPendente(ctx, a, id)
	if err != nil {
		return erroAdmin(err)
	}
	return c.JSON(r)
}

func (h adminHandlers) inativar(c *fiber.Ctx) error {
	return h.mudarStatus(c, h.adm.Inativar)
}

func (h adminHandlers) reativar(c *fiber.Ctx) error {
	return h.mudarStatus(c, h.adm.Reativar)
}

func (h adminHandlers) mudarStatus(c *fiber.Ctx, f func(context.Context, console.Acao, uuid.UUID) (console.MudancaStatus, error)) error {
	id, err := idDaRota(c, "id")
	if err != nil {
		return err
	}
	a, err := acao(c)
	if err != nil {
		return err
	}
	ctx, cancel := contexto(c)
	defer cancel()
	m, err := f(ctx, a, id)
	if err != nil {
		return erroAdmin(err)
	}
	return c.JSON(m)
}

// parametros is GET parametros: the version in force and the history.
func (h adminHandlers) parametros(c *fiber.Ctx) error {
	ctx, cancel := contexto(c)
	defer cancel()
	hist, err := h.adm.VersoesParametros(ctx)
	if err != nil {
		return erroAdmin(err)
	}
	var vigente any
	if len(hist) > 0 {
		vigente = hist[len(hist)-1]
	}
	return c.JSON(fiber.Map{"vigente": vigente, "historico": hist})
}

type pedidoParametros struct {
	NRecusasSuspensao    *int   `json:"n_recusas_suspensao"`
	TSuspensaoDias       *int   `json:"t_suspensao_dias"`
	TimeoutRespostaHoras *int   `json:"timeout_resposta_horas"`
	Justificativa        string `json:"justificativa"`
}

// novosParametros is POST parametros: 201 {"versao"} of the new version.
func (h adminHandlers) novosParametros(c *fiber.Ctx) error {
	var p pedidoParametros
	if err := corpo(c, &p); err != nil {
		return err
	}
	if p.NRecusasSuspensao == nil || p.TSuspensaoDias == nil || p.TimeoutRespostaHoras == nil {
		return fiber.NewError(fiber.StatusBadRequest, "n_recusas_suspensao, t_suspensao_dias e timeout_resposta_horas são obrigatórios")
	}
	a, err := acaoDe(c, p.Justificativa)
	if err != nil {
		return err
	}
	ctx, cancel := contexto(c)
	defer cancel()
	v, err := h.adm.NovosParametros(ctx, a, atribuicao.Parametros{
		NRecusasSuspensao: *p.NRecusasSuspensao, TSuspensaoDias: *p.TSuspensaoDias, TimeoutRespostaHoras: *p.TimeoutRespostaHoras,
	})
	if err != nil {
		return erroAdmin(err)
	}
	return c.Status(fiber.StatusCreated).JSON(fiber.Map{"versao": v})
}

// acoes is GET acoes?depois_de=ID&limite=N: the journal, oldest first.
func (h adminHandlers) acoes(c *fiber.Ctx) error {
	depois, limite := int64(0), console.LimiteListagem
	if s := c.Query("depois_de"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return fiber.NewError(fiber.StatusBadRequest, "depois_de não é um inteiro ≥ 0")
		}
		depois = n
	}
	if s := c.Query("limite"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > console.LimiteListagem {
			return fiber.NewError(fiber.StatusBadRequest, fmt.Sprintf("limite deve estar entre 1 e %d", console.LimiteListagem))
		}
		limite = n
	}
	ctx, cancel := contexto(c)
	defer cancel()
	out, err := h.adm.Acoes(ctx, depois, limite)
	if err != nil {
		return erroAdmin(err)
	}
	return c.JSON(fiber.Map{"acoes": out})
}
