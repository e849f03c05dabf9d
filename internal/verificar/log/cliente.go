// Package log verifies D-6a's public transparency log from its public
// API alone (`d6a verify --url`, `d6a replay`, `d6a monitor`): it fetches
// checkpoints and tiles, checks every record and the tree against the
// signed root (internal/registro's checks), the witnesses' quorum, the
// bus triggers, and replays the decisions; it also keeps a monitor's state
// and a mirror on disk. It trusts nothing but the verifier key.
package log

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/formigueiro/d6a/internal/registro"
)

// Cliente verifies the log from its public API only (`d6a verify --url`):
// no database, nothing trusted but the verifier key.
type Cliente struct {
	// Base is the service's URL, with or without /d6a/transparencia.
	Base string
	// Chave is the pinned verifier key; empty fetches the served one and
	// trusts it on first use (Avisos says so).
	Chave string
	HTTP  *http.Client
	// Avisos receives the notes a reader should see (stderr).
	Avisos io.Writer
	// AoRegistro, when set, is given each record VerificarTudo checked
	// (nil once eliminated), in log order: `verify --estatisticas`
	// recomputes the fairness statistics from the very records it proved.
	AoRegistro func(indice int64, registro []byte)
	// Barramento, when set (D6A_NATS_URL), is the platform's bus: each draw
	// from the index where the trigger's rule begins is checked against its
	// trigger there (ConferirGatilho); without it those checks are skipped
	// and said so.
	Barramento registro.Barramento
	// RodadasPorLote is the rounds per batch of the walk's signature
	// checks (0: the package's RodadasPorLote).
	RodadasPorLote int

	// lidoB and lido are the record being given to AoRegistro and its
	// parse (lerRegistravel).
	lidoB []byte
	lido  registro.Registravel
	// regras is where the next walk starts its rules from (the monitor's
	// kept state); nil: the log's beginning.
	regras *regrasDoLog
	// raizesNoAnel, when not 0, is the ring of recent roots' length
	// (registro.RaizesRecentes; the tests shrink it).
	raizesNoAnel int
	// Regras is the draw rule the last walk ended under, as the log's
	// records state it (nil: none).
	Regras *registro.RegrasSorteio
}

// ErrHTTP is an answer other than 200.
type ErrHTTP struct {
	URL    string
	Status int
	Erro   string
}

func (e *ErrHTTP) Error() string {
	erro := e.Erro
	if len(erro) > 300 {
		erro = erro[:300] + "…"
	}
	return registro.Limpo(fmt.Sprintf("GET %s: %d %s", e.URL, e.Status, erro))
}

func (c *Cliente) raiz() string {
	b := strings.TrimSuffix(c.Base, "/")
	if !strings.HasSuffix(b, "/d6a/transparencia") {
		b += "/d6a/transparencia"
	}
	return b
}

func (c *Cliente) aviso(format string, args ...any) {
	if c.Avisos != nil {
		fmt.Fprintln(c.Avisos, registro.Limpo(fmt.Sprintf(format, args...)))
	}
}

// get fetches path (limites.go bounds what is read).
func (c *Cliente) get(ctx context.Context, path string) ([]byte, error) {
	b, _, err := c.buscar(ctx, path, nil)
	return b, err
}

// buscar fetches path, reading at most what its kind can hold
// (limiteDe), after any decompression, and waiting out 429s as the
// server's Retry-After asks up to EsperaMaxima in all. reservar, when set,
// is the walk's budget (orcamento); reservado is what was taken from it.
func (c *Cliente) buscar(ctx context.Context, path string, reservar func(int64) error) (body []byte, reservado int64, err error) {
	if dir := c.local(); dir != "" {
		b, err := c.lerLocal(dir, path)
		return b, 0, err
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: time.Minute, CheckRedirect: redirecionar}
	}
	limite := limiteDe(path)
	u := c.raiz() + path
	var esperado time.Duration
	for tentativa := 0; ; tentativa++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, reservado, err
		}
		res, err := hc.Do(req)
		if err != nil {
			return nil, reservado, err
		}
		if res.StatusCode != http.StatusOK {
			erro, _, _ := lerAte(res.Body, LimiteErro, -1, nil)
			res.Body.Close()
			// 429, and a 503 that says when to come back (the service's
			// public reads all busy): waited out within EsperaMaxima.
			if (res.StatusCode == http.StatusTooManyRequests || (res.StatusCode == http.StatusServiceUnavailable && res.Header.Get("Retry-After") != "")) && tentativa < 30 {
				ra := res.Header.Get("Retry-After")
				espera, _ := strconv.Atoi(ra)
				d := time.Duration(max(espera, 1)) * time.Second
				if esperado+d > EsperaMaxima {
					return nil, reservado, &ErrHTTP{URL: u, Status: res.StatusCode, Erro: fmt.Sprintf("Retry-After %q refused: the verifier waits at most %s per request (%s waited)", registro.UmaLinha(ra), EsperaMaxima, esperado)}
				}
				esperado += d
				select {
				case <-ctx.Done():
					return nil, reservado, ctx.Err()
				case <-time.After(d):
				}
				continue
			}
			var e struct{ Erro string }
			_ = json.Unmarshal(erro, &e)
			return nil, reservado, &ErrHTTP{URL: u, Status: res.StatusCode, Erro: e.Erro}
		}
		if res.ContentLength > limite {
			res.Body.Close()
			return nil, reservado, grande(path, fmt.Sprintf("Content-Length %d", res.ContentLength), limite)
		}
		body, n, err := lerAte(res.Body, limite, res.ContentLength, reservar)
		res.Body.Close()
		reservado += n
		if errors.Is(err, ErrGrande) {
			return nil, reservado, grande(path, fmt.Sprintf("more than %d bytes", limite), limite)
		}
		return body, reservado, err
	}
}

// grande is the failure of an answer larger than its kind can hold: the
// log served it, so it is the log's failure (exit 1), named.
func grande(path, encontrado string, limite int64) error {
	return fmt.Errorf("%w (%w)", registro.NovaFalha("resposta "+path, encontrado+" (read no further)", fmt.Sprintf("at most %d bytes, after decompression", limite)), ErrGrande)
}

func (c *Cliente) getJSON(ctx context.Context, path string, v any) error {
	b, err := c.get(ctx, path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return registro.NovaFalha("resposta "+path, registro.UmaLinha(err.Error()), "JSON of CONTRACT §7")
	}
	return nil
}

// chave returns the verifier key: the pinned one, else the served one.
func (c *Cliente) chave(ctx context.Context) (string, error) {
	if c.Chave != "" {
		return c.Chave, nil
	}
	b, err := c.get(ctx, "/chave")
	if err != nil {
		return "", err
	}
	c.Chave = strings.TrimSpace(string(b))
	c.aviso("transparencia: nenhuma chave fixada (--chave): confiando no primeiro uso na chave servida %s", c.Chave)
	return c.Chave, nil
}

// abrir checks a signed checkpoint's signature against the key.
func (c *Cliente) abrir(ctx context.Context, nota []byte) (registro.Checkpoint, error) {
	k, err := c.chave(ctx)
	if err != nil {
		return registro.Checkpoint{}, err
	}
	cp, err := registro.AbrirCheckpoint(nota, k)
	if err != nil {
		return cp, registro.NovaFalha("checkpoint", registro.UmaLinha(err.Error()), "a checkpoint signed by "+k)
	}
	return cp, conferirTamanho(cp)
}

// Checkpoint fetches the latest checkpoint and checks its signature.
func (c *Cliente) Checkpoint(ctx context.Context) (registro.Checkpoint, []byte, error) {
	nota, err := c.get(ctx, "/checkpoint")
	if err != nil {
		return registro.Checkpoint{}, nil, err
	}
	cp, err := c.abrir(ctx, nota)
	return cp, nota, err
}

// RespostaSorteio is GET /sorteios/{event_id}.
type RespostaSorteio struct {
	Indice        int64    `json:"indice"`
	Registro      *string  `json:"registro"`
	HashFolha     string   `json:"hash_folha"`
	ProvaInclusao []string `json:"prova_inclusao"`
	Checkpoint    string   `json:"checkpoint"`
}

// Sorteio is a verified draw.
type Sorteio struct {
	Indice     int64
	Checkpoint registro.Checkpoint
	// Registro is zero and Eliminado true when the body was erased.
	Registro  registro.Registro
	Eliminado bool
	// SemCandidatos is set instead of Registro for a sorteio.sem_candidatos,
	// Entrada for an input record.
	SemCandidatos *registro.SemCandidatos
	Entrada       *registro.Entrada
	// Gatilho: the draw's base and T were checked against its trigger on
	// the bus (CONTRACT §4). AntesDoGatilho: the record precedes that rule
	// (GatilhoDesde is where it begins).
	Gatilho, AntesDoGatilho bool
	GatilhoDesde            int64
	// Partes is how many list records carried the draw's list (0: inline);
	// ListaEliminada: one of them was eliminated, so the draw was checked
	// without its list.
	Partes         int
	ListaEliminada bool
}

func hashDe(campo, s string) (tlog.Hash, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) != tlog.HashSize {
		return tlog.Hash{}, registro.NovaFalha(campo, s, "a base64 SHA-256 hash")
	}
	return tlog.Hash(b), nil
}

// VerificarSorteio checks one draw: the checkpoint's signature, the
// record's leaf hash, its inclusion proof, and the draw recomputed.
func (c *Cliente) VerificarSorteio(ctx context.Context, eventID uuid.UUID) (Sorteio, error) {
	var r RespostaSorteio
	if err := c.getJSON(ctx, "/sorteios/"+eventID.String(), &r); err != nil {
		return Sorteio{}, err
	}
	cp, err := c.abrir(ctx, []byte(r.Checkpoint))
	if err != nil {
		return Sorteio{}, err
	}
	s := Sorteio{Indice: r.Indice, Checkpoint: cp}
	folha, err := hashDe("hash_folha", r.HashFolha)
	if err != nil {
		return s, err
	}
	if r.Registro == nil {
		s.Eliminado = true
	} else {
		if h := tlog.RecordHash([]byte(*r.Registro)); h != folha {
			return s, registro.NovaFalha("hash_folha", r.HashFolha, base64.StdEncoding.EncodeToString(h[:])+" (SHA-256 of 0x00 ‖ registro)")
		}
		f, err := registro.LerRegistravel([]byte(*r.Registro))
		if err != nil {
			return s, err
		}
		var ev uuid.UUID
		switch f := f.(type) {
		case registro.Registro:
			s.Registro, ev = f, f.EventIDSorteio
		case registro.SemCandidatos:
			s.SemCandidatos, ev = &f, f.EventID
		case registro.Entrada:
			s.Entrada, ev = &f, f.EventID
		}
		if ev != eventID {
			return s, registro.NovaFalha("registro.event_id", ev, eventID)
		}
	}
	prova := make(tlog.RecordProof, len(r.ProvaInclusao))
	for i, p := range r.ProvaInclusao {
		if prova[i], err = hashDe(fmt.Sprintf("prova_inclusao[%d]", i), p); err != nil {
			return s, err
		}
	}
	if err := tlog.CheckRecord(prova, cp.Tamanho, cp.Raiz, r.Indice, folha); err != nil {
		return s, registro.NovaFalha("prova_inclusao", fmt.Sprintf("leaf %d not in the tree of size %d", r.Indice, cp.Tamanho), "a path to the checkpoint's root")
	}
	switch {
	case s.SemCandidatos != nil:
		return s, registro.ConferirRegistravel(*s.SemCandidatos)
	case s.Entrada != nil:
		return s, registro.ConferirRegistravel(*s.Entrada)
	case !s.Eliminado:
		completo := s.Registro
		if completo.Partido() {
			// A long list is in the list records right before the draw:
			// read from the tiles and joined, it is checked in full.
			partes, err := c.listaDoSorteio(ctx, cp, s.Indice, eventID)
			if errors.Is(err, registro.ErrListaEliminada) {
				s.ListaEliminada = true
				return s, nil
			}
			if err != nil {
				return s, err
			}
			if completo, err = registro.Juntar(completo, partes); err != nil {
				return s, err
			}
			s.Registro, s.Partes = completo, len(partes)
		}
		if err := registro.Conferir(completo); err != nil {
			return s, err
		}
		// A draw with a beacon round is under the trigger rule (the rule
		// record before it says the trigger rule began no later); where
		// one without began is a record of the log, which --all reads.
		s.AntesDoGatilho = s.Registro.Rodada == nil
		if c.Barramento != nil && !s.AntesDoGatilho {
			if err := registro.ConferirGatilho(ctx, c.Barramento, s.Registro); err != nil {
				return s, err
			}
			s.Gatilho = true
		}
	}
	return s, nil
}

// Resumo is the outcome of VerificarTudo.
type Resumo struct {
	Registros   int64
	Verificados int64
	Eliminados  int64
	Falhas      int64
	// Gatilhos is how many draws were checked against their trigger on
	// the bus (Cliente.Barramento), from GatilhoDesde on.
	Gatilhos     int64
	GatilhoDesde int64
	// Primeira is the first failing record's failure, primeiraEm its
	// index.
	Primeira   error
	primeiraEm int64
	Raiz       tlog.Hash
}

// Linha is the summary line of `d6a verify --url --all` (CONTRACT §1).
func (r Resumo) Linha() string {
	return fmt.Sprintf("transparencia: registros=%d verificados=%d falhas=%d raiz=%s",
		r.Registros, r.Verificados, r.Falhas, base64.StdEncoding.EncodeToString(r.Raiz[:]))
}

// VerificarTudo mirrors the whole log up to the latest checkpoint from
// the checkpoint and the tiles alone (CONTRACT §7 "The verifier reads
// tiles"): recomputes every record, rebuilds the tree leaf by leaf from the
// level-0 tiles and checks its root is the signed one. A record that fails
// is counted (the first one is kept) and the mirror goes on; a wrong root
// or a missing tile ends it. progresso, when set, is told how many records
// were checked so far.
func (c *Cliente) VerificarTudo(ctx context.Context, progresso func(feitos, total int64)) (Resumo, registro.Checkpoint, error) {
	cp, _, err := c.Checkpoint(ctx)
	if err != nil {
		return Resumo{}, cp, err
	}
	res := Resumo{Registros: cp.Tamanho}
	var fr registro.Fronteira
	err = c.verificarDe(ctx, cp, &fr, &res, progresso)
	return res, cp, err
}

// conferirFolha checks a record by itself: its leaf hash, its canonical
// form and what it proves alone (ConferirRegistravel); r is the record
// parsed (nil when it does not parse or hash to its leaf).
func conferirFolha(dados []byte, folha tlog.Hash) (r registro.Registravel, err error) {
	if h := tlog.RecordHash(dados); h != folha {
		return nil, registro.NovaFalha("hash_folha", base64.StdEncoding.EncodeToString(folha[:]), base64.StdEncoding.EncodeToString(h[:]))
	}
	if r, err = registro.LerRegistravel(dados); err != nil {
		return nil, err
	}
	return r, registro.ConferirRegistravel(r)
}

// VerificarDesde is the watcher's check: the checkpoint saved in arquivo
// on the last visit must be a prefix of today's (consistency proof); the
// new checkpoint then replaces it. A missing file is a first visit.
func (c *Cliente) VerificarDesde(ctx context.Context, arquivo string) (antigo, novo registro.Checkpoint, primeira bool, err error) {
	salvo, err := os.ReadFile(arquivo)
	primeira = errors.Is(err, os.ErrNotExist)
	if err != nil && !primeira {
		return antigo, novo, false, err
	}
	if !primeira {
		if antigo, err = c.abrir(ctx, salvo); err != nil {
			return antigo, novo, false, fmt.Errorf("%s: %w", arquivo, err)
		}
	}
	novo, nota, err := c.Checkpoint(ctx)
	if err != nil {
		return antigo, novo, primeira, err
	}
	if !primeira {
		switch {
		case novo.Tamanho < antigo.Tamanho:
			return antigo, novo, false, registro.NovaFalha("checkpoint.tamanho", novo.Tamanho, fmt.Sprintf("≥ %d (the saved checkpoint's size): the log shrank", antigo.Tamanho))
		case novo.Tamanho == antigo.Tamanho:
			if novo.Raiz != antigo.Raiz {
				return antigo, novo, false, registro.NovaFalha("checkpoint.raiz", base64.StdEncoding.EncodeToString(novo.Raiz[:]),
					base64.StdEncoding.EncodeToString(antigo.Raiz[:])+" (same size, the saved root): history rewritten")
			}
		case antigo.Tamanho > 0:
			if err := c.provarExtensao(ctx, antigo, novo, "the saved tree", "the saved history, unchanged"); err != nil {
				return antigo, novo, false, err
			}
		}
	}
	return antigo, novo, primeira, salvar(arquivo, nota)
}

// salvar replaces arquivo atomically.
func salvar(arquivo string, dados []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(arquivo), ".checkpoint-*")
	if err != nil {
		return err
	}
	if _, err := io.Copy(tmp, bytes.NewReader(dados)); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), arquivo)
}

// ValidarURL checks --url is an absolute http(s) URL, or a directory
// holding a static mirror (a path or a file:// URL).
func ValidarURL(s string) error {
	u, err := url.Parse(s)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		return nil
	}
	dir := s
	switch {
	case err == nil && u.Scheme == "file":
		dir = u.Path
	case strings.Contains(s, "://"):
		return fmt.Errorf("--url %q is not an http(s) URL", s)
	}
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return nil
	}
	return fmt.Errorf("--url %q is neither an http(s) URL nor a directory holding a mirror", s)
}
