package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// adminTimeout bounds one request of `d6a admin`.
const adminTimeout = 60 * time.Second

// adminUsage lists the subcommands of `d6a admin`, each one route of the
// administration API (CONTRACT §6, docs/operacao.md).
const adminUsage = `usage: d6a admin [--url BASE] [--token JWT] <subcommand> [flags]

The administration API (/d6a/admin/, CONTRACT §6) from a terminal. --url
defaults to $D6A_URL, else http://127.0.0.1:8080; --token to $D6A_TOKEN (a
session token with "papel": "admin"). Answers are printed as JSON; an HTTP
error exits 1 with its {"erro"} on stderr.

subcommands:
  ocupados [--mais-de 72h]                               occupied counsellors whose assignment is older than that
  timeout --event-id-sorteio UUID --justificativa TEXT   publish the response-timeout refusal of an active assignment
  fila [--uc UUID]                                       the pending queue, oldest first
  sortear --demanda UUID --justificativa TEXT            draw one pending demand now
  inativar --conselheiro UUID --justificativa TEXT       set a counsellor inativo
  reativar --conselheiro UUID --justificativa TEXT       lift inativo
  parametros                                             the parameters in force and their history
  parametros --n-recusas N --t-suspensao-dias N --timeout-horas N --justificativa TEXT
                                                         create a new version of the parameters
  acoes [--depois-de ID] [--limite N]                    the journal of administrative actions
`

// adminCliente talks to the administration API.
type adminCliente struct {
	base  string
	token string
	http  *http.Client
	out   io.Writer
	errw  io.Writer
}

// cmdAdmin is `d6a admin …`.
func cmdAdmin(args []string) int {
	return rodarAdmin(args, os.Stdout, os.Stderr)
}

func rodarAdmin(args []string, stdout, stderr io.Writer) int {
	global := flag.NewFlagSet("admin", flag.ContinueOnError)
	global.SetOutput(io.Discard)
	base := global.String("url", envOr("D6A_URL", "http://127.0.0.1:8080"), "base URL of d6a")
	token := global.String("token", os.Getenv("D6A_TOKEN"), "operator's session token")
	if err := global.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, adminUsage)
			return 0
		}
		fmt.Fprintf(stderr, "d6a admin: %v\n", err)
		return exitUsage
	}
	if global.NArg() == 0 {
		fmt.Fprint(stderr, adminUsage)
		return exitUsage
	}
	sub, resto := global.Arg(0), global.Args()[1:]
	fs := flag.NewFlagSet("admin "+sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	// --url and --token may also follow the subcommand.
	fs.StringVar(base, "url", *base, "base URL of d6a")
	fs.StringVar(token, "token", *token, "operator's session token")
	just := fs.String("justificativa", "", "why (recorded with the action)")
	var (
		maisDe      = fs.String("mais-de", "", "age threshold, e.g. 72h or 3d (default: the timeout in force)")
		eventID     = fs.String("event-id-sorteio", "", "event_id_sorteio of the assignment")
		uc          = fs.String("uc", "", "civic unit")
		demanda     = fs.String("demanda", "", "demanda_id of the pending demand")
		conselheiro = fs.String("conselheiro", "", "counsellor id")
		nRecusas    = fs.Int("n-recusas", -1, "n_recusas_suspensao")
		tDias       = fs.Int("t-suspensao-dias", -1, "t_suspensao_dias")
		timeoutH    = fs.Int("timeout-horas", -1, "timeout_resposta_horas")
		depoisDe    = fs.Int64("depois-de", 0, "list actions after this id")
		limite      = fs.Int("limite", 0, "at most this many actions")
	)
	if err := fs.Parse(resto); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, adminUsage)
			return 0
		}
		fmt.Fprintf(stderr, "d6a admin %s: %v\n", sub, err)
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "d6a admin %s: unexpected argument %q\n", sub, fs.Arg(0))
		return exitUsage
	}
	u, err := url.Parse(*base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fmt.Fprintf(stderr, "d6a admin: --url %q is not an http(s) URL\n", *base)
		return exitUsage
	}
	if *token == "" {
		fmt.Fprintln(stderr, "d6a admin: --token (or D6A_TOKEN) is required: a session token with \"papel\": \"admin\"")
		return exitUsage
	}
	c := adminCliente{base: strings.TrimRight(*base, "/") + "/d6a/admin/", token: *token, http: &http.Client{Timeout: adminTimeout}, out: stdout, errw: stderr}

	// precisa checks a required flag; every one but --justificativa is a
	// UUID, sent in canonical form.
	precisa := func(nome, v string) (string, bool) {
		if v == "" {
			fmt.Fprintf(stderr, "d6a admin %s: --%s is required\n", sub, nome)
			return "", false
		}
		if nome == "justificativa" {
			return v, true
		}
		id, err := uuid.Parse(v)
		if err != nil || len(v) != 36 {
			fmt.Fprintf(stderr, "d6a admin %s: --%s must be a UUID\n", sub, nome)
			return "", false
		}
		return id.String(), true
	}
	corpo := map[string]any{"justificativa": *just}
	switch sub {
	case "ocupados":
		q := url.Values{}
		if *maisDe != "" {
			q.Set("mais_de", *maisDe)
		}
		return c.pedir(http.MethodGet, "ocupados", q, nil)
	case "timeout":
		id, ok := precisa("event-id-sorteio", *eventID)
		if _, ok2 := precisa("justificativa", *just); !ok || !ok2 {
			return exitUsage
		}
		return c.pedir(http.MethodPost, "atribuicoes/"+id+"/timeout", nil, corpo)
	case "fila":
		q := url.Values{}
		if *uc != "" {
			id, ok := precisa("uc", *uc)
			if !ok {
				return exitUsage
			}
			q.Set("uc", id)
		}
		return c.pedir(http.MethodGet, "fila", q, nil)
	case "sortear":
		id, ok := precisa("demanda", *demanda)
		if _, ok2 := precisa("justificativa", *just); !ok || !ok2 {
			return exitUsage
		}
		return c.pedir(http.MethodPost, "fila/"+id+"/sortear", nil, corpo)
	case "inativar", "reativar":
		id, ok := precisa("conselheiro", *conselheiro)
		if _, ok2 := precisa("justificativa", *just); !ok || !ok2 {
			return exitUsage
		}
		return c.pedir(http.MethodPost, "conselheiros/"+id+"/"+sub, nil, corpo)
	case "parametros":
		if *nRecusas < 0 && *tDias < 0 && *timeoutH < 0 && *just == "" {
			return c.pedir(http.MethodGet, "parametros", nil, nil)
		}
		if *nRecusas < 0 || *tDias < 0 || *timeoutH < 0 {
			fmt.Fprintln(stderr, "d6a admin parametros: a new version needs --n-recusas, --t-suspensao-dias and --timeout-horas")
			return exitUsage
		}
		if _, ok := precisa("justificativa", *just); !ok {
			return exitUsage
		}
		return c.pedir(http.MethodPost, "parametros", nil, map[string]any{
			"n_recusas_suspensao": *nRecusas, "t_suspensao_dias": *tDias, "timeout_resposta_horas": *timeoutH, "justificativa": *just,
		})
	case "acoes":
		q := url.Values{}
		if *depoisDe > 0 {
			q.Set("depois_de", strconv.FormatInt(*depoisDe, 10))
		}
		if *limite > 0 {
			q.Set("limite", strconv.Itoa(*limite))
		}
		return c.pedir(http.MethodGet, "acoes", q, nil)
	}
	fmt.Fprintf(stderr, "d6a admin: unknown subcommand %q\n", sub)
	fmt.Fprint(stderr, adminUsage)
	return exitUsage
}

// pedir sends one request and prints the answer: indented JSON on stdout
// for 2xx (exit 0); "HTTP <code>: <erro>" on stderr otherwise (exit 1).
func (c adminCliente) pedir(metodo, caminho string, q url.Values, corpo any) int {
	alvo := c.base + caminho
	if len(q) > 0 {
		alvo += "?" + q.Encode()
	}
	var rd io.Reader
	if corpo != nil {
		data, err := json.Marshal(corpo)
		if err != nil {
			fmt.Fprintf(c.errw, "d6a admin: %v\n", err)
			return 1
		}
		rd = bytes.NewReader(data)
	}
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, metodo, alvo, rd)
	if err != nil {
		fmt.Fprintf(c.errw, "d6a admin: %v\n", err)
		return exitUsage
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.http.Do(req)
	if err != nil {
		fmt.Fprintf(c.errw, "d6a admin: %v\n", err)
		return 1
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		fmt.Fprintf(c.errw, "d6a admin: reading the answer: %v\n", err)
		return 1
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		var e struct {
			Erro string `json:"erro"`
		}
		msg := strings.TrimSpace(string(data))
		if json.Unmarshal(data, &e) == nil && e.Erro != "" {
			msg = e.Erro
		}
		fmt.Fprintf(c.errw, "d6a admin: HTTP %d: %s\n", res.StatusCode, msg)
		return 1
	}
	var buf bytes.Buffer
	if json.Indent(&buf, data, "", "  ") != nil {
		buf.Reset()
		buf.Write(data)
	}
	buf.WriteByte('\n')
	_, _ = c.out.Write(buf.Bytes())
	return 0
}

func envOr(nome, padrao string) string {
	if v := os.Getenv(nome); v != "" {
		return v
	}
	return padrao
}
