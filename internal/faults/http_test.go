//go:build faults

package faults

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/formigueiro/d6a/internal/evento"
)

const rotaSituacao = "/d6a/conselheiros/me/situacao"

// throttleHTTP is D6A_THROTTLE_POR_MINUTO of the instance under attack.
const throttleHTTP = 20

// sondaHTTP sends requests and tallies the answers.
type sondaHTTP struct {
	t      *testing.T
	cli    *http.Client
	ip     atomic.Int32
	contas map[int]int
	total  int
}

// proximoIP is a fresh client address (X-Forwarded-For from the trusted
// proxy 127.0.0.1), so one case does not spend another's throttle budget.
func (s *sondaHTTP) proximoIP() string {
	n := s.ip.Add(1)
	return fmt.Sprintf("10.77.%d.%d", n/250, n%250+1)
}

type resposta struct {
	status int
	corpo  []byte
	header http.Header
}

func (s *sondaHTTP) get(base, caminho, ip, auth string, cab map[string]string) (resposta, error) {
	req, err := http.NewRequest("GET", base+caminho, nil)
	if err != nil {
		return resposta{}, err
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if ip != "" {
		req.Header.Set("X-Forwarded-For", ip)
	}
	for k, v := range cab {
		req.Header.Set(k, v)
	}
	resp, err := s.cli.Do(req)
	if err != nil {
		return resposta{}, err
	}
	defer resp.Body.Close()
	corpo, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	s.total++
	s.contas[resp.StatusCode]++
	return resposta{status: resp.StatusCode, corpo: corpo, header: resp.Header}, nil
}

// bruto writes a raw HTTP/1.1 request and reads the status line; closed
// reports a connection the server closed without answering.
func (s *sondaHTTP) bruto(porta int, req []byte) (status int, closed bool, err error) {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(porta), 5*time.Second)
	if err != nil {
		return 0, false, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	// The server may answer and close before it read everything: a write
	// error is expected then; the answer is still read.
	go func() { _, _ = c.Write(req) }()
	linha, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return 0, true, nil
	}
	campos := strings.Fields(linha)
	if len(campos) < 2 {
		return 0, false, fmt.Errorf("status line %q", linha)
	}
	status, err = strconv.Atoi(campos[1])
	if err == nil {
		s.total++
		s.contas[status]++
	}
	return status, false, err
}

func b64(v any) string {
	b, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(b)
}

func assinarHS(chave []byte, c jwt.MapClaims) string {
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(chave)
	if err != nil {
		panic(err)
	}
	return tok
}

// TestAtaquesHTTP attacks GET /d6a/conselheiros/me/situacao (CONTRACT §6)
// on a real `d6a serve`: forged and broken tokens, another citizen's data,
// oversized headers and bodies, and a flood from one client address while
// another is served. The process must stay up and never answer 5xx.
func TestAtaquesHTTP(t *testing.T) {
	inicio := time.Now()
	dbURL := novoBanco(t, "http")
	srv := novoNATS(t, "http")
	cli := conectar(t, srv.URL())
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	uc := uuid.New()
	if _, err := pool.Exec(ctx, `INSERT INTO core.uc_polygons (id, parent_uc_id) VALUES ($1, NULL)`, uc); err != nil {
		t.Fatal(err)
	}

	// RS256 deployment: a second instance verifies with a public key file.
	const emissorRS = "https://login.exemplo.gov.br"
	chaveRSA, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&chaveRSA.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pemPub := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	arqPub := filepath.Join(raiz, "jwt-pub.pem")
	if err := os.WriteFile(arqPub, pemPub, 0o644); err != nil {
		t.Fatal(err)
	}

	base := map[string]string{
		"D6A_DATABASE_URL": dbURL, "D6A_NATS_URL": srv.URL(), "D6A_TRUSTED_PROXIES": "127.0.0.1",
		"D6A_LOG_LEVEL": "info", "D6A_OUTBOX_POLL": "200ms", "D6A_FETCH_TIMEOUT": "250ms",
	}
	envHS := map[string]string{"D6A_JWT_SECRET": segredo, "D6A_THROTTLE_POR_MINUTO": strconv.Itoa(throttleHTTP)}
	envRS := map[string]string{"D6A_JWT_PUBLIC_KEY_FILE": arqPub, "D6A_THROTTLE_POR_MINUTO": "1000",
		// A provider's key requires both claims pinned (config.Parse).
		"D6A_JWT_ISSUER": emissorRS, "D6A_JWT_AUDIENCE": "d6a"}
	for k, v := range base {
		envHS[k], envRS[k] = v, v
	}
	hs := novaInstancia(t, "hs256", envHS)
	if err := hs.pronta(120 * time.Second); err != nil {
		t.Fatal(err)
	}
	rs := novaInstancia(t, "rs256", envRS)
	if err := rs.pronta(120 * time.Second); err != nil {
		t.Fatal(err)
	}

	// Two counsellors and one demand: one of them holds it.
	x, y, z, d := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	var ids []uuid.UUID
	pub := func(tipo evento.Tipo, versao string, p any) {
		id, e := novoEnvelope(tipo, versao, p)
		if _, err := cli.publicar(ctx, tipo.Subject(prefixo), id.String(), corpo(e)); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	pub(evento.ConselheiroCadastrado, "1.1.0", pCadastro(x, uc, ptr(true)))
	pub(evento.ConselheiroCadastrado, "1.1.0", pCadastro(y, uc, ptr(true)))
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	processados := func() bool {
		var n int
		_ = pool.QueryRow(wctx, `SELECT count(*) FROM d6a.eventos_processados WHERE event_id = ANY($1)`, ids).Scan(&n)
		return n == len(ids)
	}
	esperar(wctx, processados)
	pub(evento.AgendaItemDisponivel, "1.0.0", map[string]any{"demanda_id": d, "unidade_civica_id": uc, "categoria_id": "SAUDE", "nivel_precedencia": 2, "score_final": 10})
	ok := esperar(wctx, processados)
	cancel()
	if !ok {
		t.Fatal("setup events not processed")
	}
	var dono uuid.UUID
	if err := pool.QueryRow(ctx, `SELECT conselheiro_id FROM d6a.atribuicoes WHERE demanda_id = $1 AND status = 'ativa'`, d).Scan(&dono); err != nil {
		t.Fatalf("setup draw: %v", err)
	}
	outro := x
	if dono == x {
		outro = y
	}

	v := novasViolacoes(t)
	s := &sondaHTTP{t: t, cli: &http.Client{Timeout: 15 * time.Second}, contas: map[int]int{}}
	agora := time.Now()
	valido := func(sub uuid.UUID) jwt.MapClaims {
		return jwt.MapClaims{"sub": sub.String(), "exp": agora.Add(10 * time.Minute).Unix(), "iat": agora.Unix()}
	}
	bearer := func(tok string) string { return "Bearer " + tok }
	hsChave := []byte(segredo)
	tokDono := assinarHS(hsChave, valido(dono))
	tokOutro := assinarHS(hsChave, valido(outro))

	esperado := func(inst *instancia, nome, auth string, cab map[string]string, quer ...int) resposta {
		t.Helper()
		resp, err := s.get(inst.base(), rotaSituacao, s.proximoIP(), auth, cab)
		if err != nil {
			v.add("the situacao route answers every request", "%s: %v", nome, err)
			return resp
		}
		if resp.status >= 500 {
			v.add("no attack gets a 5xx", "%s: HTTP %d %s", nome, resp.status, resp.corpo)
		}
		found := false
		for _, q := range quer {
			found = found || q == resp.status
		}
		if !found {
			v.add("attacks are refused with the right status (CONTRACT §6)", "%s: HTTP %d %s, want %v", nome, resp.status, resp.corpo, quer)
		}
		if resp.status == 401 {
			var e map[string]string
			if json.Unmarshal(resp.corpo, &e) != nil || e["erro"] == "" {
				v.add(`errors are JSON {"erro": …}`, "%s: %s", nome, resp.corpo)
			}
			if !strings.HasPrefix(resp.header.Get("WWW-Authenticate"), "Bearer") {
				v.add("401 says WWW-Authenticate: Bearer", "%s: %q", nome, resp.header.Get("WWW-Authenticate"))
			}
		}
		return resp
	}

	// Forged, broken and expired tokens: 401.
	semExp := valido(dono)
	delete(semExp, "exp")
	semSub := valido(dono)
	delete(semSub, "sub")
	nbf := valido(dono)
	nbf["nbf"] = agora.Add(time.Hour).Unix()
	expirado := valido(dono)
	expirado["exp"] = agora.Add(-time.Hour).Unix()
	subRuim := valido(dono)
	subRuim["sub"] = "' OR 1=1 --"
	subNulo := valido(dono)
	subNulo["sub"] = uuid.Nil.String()
	subChaves := valido(dono)
	subChaves["sub"] = "{" + dono.String() + "}"
	partesDono := strings.Split(tokDono, ".")
	partesOutro := strings.Split(tokOutro, ".")
	noneLib, err := jwt.NewWithClaims(jwt.SigningMethodNone, valido(dono)).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	claimsRS := valido(dono)
	claimsRS["iss"], claimsRS["aud"] = emissorRS, "d6a"
	rsTok, err := jwt.NewWithClaims(jwt.SigningMethodRS256, claimsRS).SignedString(chaveRSA)
	if err != nil {
		t.Fatal(err)
	}
	casos401 := []struct{ nome, auth string }{
		{"sem Authorization", ""},
		{"Authorization vazio de token", "Bearer "},
		{"esquema Basic", "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:admin"))},
		{"lixo", "Bearer não.é.jwt"},
		{"alg none (biblioteca)", bearer(noneLib)},
		{"alg none sem assinatura", bearer(b64(map[string]string{"alg": "none", "typ": "JWT"}) + "." + b64(valido(dono)) + ".")},
		{"alg None com assinatura válida", bearer(b64(map[string]string{"alg": "None", "typ": "JWT"}) + "." + partesDono[1] + "." + partesDono[2])},
		{"alg NONE", bearer(b64(map[string]string{"alg": "NONE"}) + "." + b64(valido(dono)) + ".")},
		{"alg HS512 com o segredo", bearer(func() string {
			tok, _ := jwt.NewWithClaims(jwt.SigningMethodHS512, valido(dono)).SignedString(hsChave)
			return tok
		}())},
		{"chave errada", bearer(assinarHS([]byte("outro-segredo-qualquer-com-32-bytes!!"), valido(dono)))},
		{"segredo vazio", bearer(b64(map[string]string{"alg": "HS256", "typ": "JWT"}) + "." + b64(valido(dono)) + ".")},
		{"RS256 num servidor HS256", bearer(rsTok)},
		{"expirado há 1h", bearer(assinarHS(hsChave, expirado))},
		{"nbf daqui a 1h", bearer(assinarHS(hsChave, nbf))},
		{"sem exp", bearer(assinarHS(hsChave, semExp))},
		{"sem sub", bearer(assinarHS(hsChave, semSub))},
		{"sub injeção SQL", bearer(assinarHS(hsChave, subRuim))},
		{"sub UUID nulo", bearer(assinarHS(hsChave, subNulo))},
		{"sub com chaves", bearer(assinarHS(hsChave, subChaves))},
		{"payload de outro com a assinatura do dono", bearer(partesDono[0] + "." + partesOutro[1] + "." + partesDono[2])},
		{"assinatura truncada", bearer(tokDono[:len(tokDono)-4])},
		{"dois tokens", "Bearer " + tokDono + " " + tokOutro},
	}
	for _, c := range casos401 {
		esperado(hs, c.nome, c.auth, nil, 401)
	}
	// HS/RS confusion: a server with an RSA public key must not accept an
	// HS256 token whose HMAC key is that public key.
	for nome, chave := range map[string][]byte{"PEM": pemPub, "DER": der} {
		esperado(rs, "confusão HS/RS com a chave pública "+nome, bearer(assinarHS(chave, valido(dono))), nil, 401)
	}
	esperado(rs, "HS256 com o segredo num servidor RS256", bearer(tokDono), nil, 401)
	respRS := esperado(rs, "RS256 válido", bearer(rsTok), nil, 200)
	if !strings.Contains(string(respRS.corpo), dono.String()) {
		v.add("a valid RS256 token reads its own data", "%s", respRS.corpo)
	}

	// Each citizen sees only their own data, whatever the request says.
	type situacao struct {
		Cadastrado      bool   `json:"cadastrado"`
		ConselheiroID   string `json:"conselheiro_id"`
		AtribuicaoAtiva *struct {
			DemandaID string `json:"demanda_id"`
		} `json:"atribuicao_ativa"`
	}
	ler := func(nome string, resp resposta) situacao {
		var st situacao
		if err := json.Unmarshal(resp.corpo, &st); err != nil {
			v.add("situacao is JSON", "%s: %s", nome, resp.corpo)
		}
		return st
	}
	for _, q := range []string{"", "?cidadao_id=" + outro.String(), "?sub=" + outro.String() + "&conselheiro_id=" + outro.String()} {
		resp, err := s.get(hs.base(), rotaSituacao+q, s.proximoIP(), bearer(tokDono), map[string]string{"X-Cidadao-Id": outro.String()})
		if err != nil || resp.status != 200 {
			v.add("the holder reads their situacao", "query %q: %v HTTP %d %s", q, err, resp.status, resp.corpo)
			continue
		}
		st := ler("dono", resp)
		if st.ConselheiroID != dono.String() || st.AtribuicaoAtiva == nil || st.AtribuicaoAtiva.DemandaID != d.String() || strings.Contains(string(resp.corpo), outro.String()) {
			v.add("never another citizen's data", "query %q as %s: %s", q, dono, resp.corpo)
		}
	}
	resp := esperado(hs, "outro cidadão", bearer(tokOutro), nil, 200)
	if st := ler("outro", resp); st.ConselheiroID != outro.String() || st.AtribuicaoAtiva != nil || strings.Contains(string(resp.corpo), d.String()) || strings.Contains(string(resp.corpo), dono.String()) {
		v.add("never another citizen's data", "as %s: %s", outro, resp.corpo)
	}
	resp = esperado(hs, "cidadão sem cadastro", bearer(assinarHS(hsChave, valido(z))), nil, 200)
	if strings.TrimSpace(string(resp.corpo)) != `{"cadastrado":false}` {
		v.add(`an unregistered citizen reads only {"cadastrado": false}`, "%s", resp.corpo)
	}
	if r, err := s.get(hs.base(), "/d6a/conselheiros/"+dono.String()+"/situacao", s.proximoIP(), bearer(tokOutro), nil); err != nil || r.status != 404 || strings.Contains(string(r.corpo), d.String()) {
		v.add("no route reads a counsellor by id", "HTTP %d %s (%v)", r.status, r.corpo, err)
	}

	// Oversized headers and bodies: 431, 413 or 400, never 5xx, and the
	// process stays up.
	incarnacoes, _, _ := hs.estatisticas()
	var muitos strings.Builder
	for i := 0; i < 64; i++ {
		fmt.Fprintf(&muitos, "X-Lixo-%02d: %s\r\n", i, strings.Repeat("b", 1024))
	}
	brutos := []struct {
		nome string
		req  []byte
	}{
		{"Authorization de 16 KiB", []byte("GET " + rotaSituacao + " HTTP/1.1\r\nHost: d6a\r\nX-Forwarded-For: " + s.proximoIP() + "\r\nAuthorization: Bearer " + strings.Repeat("A", 16<<10) + "\r\n\r\n")},
		{"64 cabeçalhos de 1 KiB", []byte("GET " + rotaSituacao + " HTTP/1.1\r\nHost: d6a\r\nX-Forwarded-For: " + s.proximoIP() + "\r\nAuthorization: Bearer " + tokDono + "\r\n" + muitos.String() + "\r\n")},
		{"cabeçalho de 1 MiB", []byte("GET " + rotaSituacao + " HTTP/1.1\r\nHost: d6a\r\nX-Forwarded-For: " + s.proximoIP() + "\r\nX-Enorme: " + strings.Repeat("c", 1<<20) + "\r\n\r\n")},
		{"corpo de 64 KiB num GET", []byte("GET " + rotaSituacao + " HTTP/1.1\r\nHost: d6a\r\nX-Forwarded-For: " + s.proximoIP() + "\r\nAuthorization: Bearer " + tokDono + "\r\nContent-Length: 65536\r\n\r\n" + strings.Repeat("d", 65536))},
		{"corpo de 8 MiB", []byte("GET " + rotaSituacao + " HTTP/1.1\r\nHost: d6a\r\nX-Forwarded-For: " + s.proximoIP() + "\r\nContent-Length: 8388608\r\n\r\n" + strings.Repeat("e", 8<<20))},
		{"Content-Length mentiroso", []byte("GET " + rotaSituacao + " HTTP/1.1\r\nHost: d6a\r\nX-Forwarded-For: " + s.proximoIP() + "\r\nContent-Length: 99999999999\r\n\r\nabc")},
		{"corpo chunked de 1 MiB", []byte("GET " + rotaSituacao + " HTTP/1.1\r\nHost: d6a\r\nX-Forwarded-For: " + s.proximoIP() + "\r\nTransfer-Encoding: chunked\r\n\r\n100000\r\n" + strings.Repeat("f", 1<<20) + "\r\n0\r\n\r\n")},
		{"linha de pedido de 64 KiB", []byte("GET " + rotaSituacao + "?q=" + strings.Repeat("g", 64<<10) + " HTTP/1.1\r\nHost: d6a\r\n\r\n")},
	}
	fechadas := 0
	for _, b := range brutos {
		status, fechou, err := s.bruto(hs.porta, b.req)
		switch {
		case err != nil:
			v.add("oversized requests are answered or closed", "%s: %v", b.nome, err)
		case fechou:
			fechadas++
		case status >= 500:
			v.add("no attack gets a 5xx", "%s: HTTP %d", b.nome, status)
		case status != 431 && status != 413 && status != 400 && status != 414:
			v.add("oversized requests are refused (431/413/414/400)", "%s: HTTP %d", b.nome, status)
		}
	}
	if r, err := s.get(hs.base(), "/healthz", "", "", nil); err != nil || r.status != 200 {
		v.add("the process stays up after oversized requests", "/healthz: %v HTTP %d", err, r.status)
	}
	if n, _, _ := hs.estatisticas(); n != incarnacoes {
		v.add("the process stays up after oversized requests", "d6a restarted: incarnation %d -> %d", incarnacoes, n)
	}

	// Flood from one client address: 429 past the limit, with Retry-After;
	// another address is served meanwhile; prepending addresses to
	// X-Forwarded-For does not escape the limit; nor does another address of
	// the same IPv6 /64.
	atacante := "203.0.113.7"
	var s429, s200 int
	for i := 0; i < throttleHTTP+10; i++ {
		r, err := s.get(hs.base(), rotaSituacao, atacante, bearer(tokDono), nil)
		if err != nil {
			v.add("the flood is answered", "%v", err)
			continue
		}
		switch r.status {
		case 429:
			s429++
			if r.header.Get("Retry-After") == "" {
				v.add("429 carries Retry-After", "%v", r.header)
			}
		case 200:
			s200++
		default:
			v.add("the flood is answered 200 then 429", "request %d: HTTP %d", i, r.status)
		}
	}
	if s200 != throttleHTTP || s429 != 10 {
		v.add("D6A_THROTTLE_POR_MINUTO per client address", "flood of %d from %s: %d×200, %d×429 (limit %d)", throttleHTTP+10, atacante, s200, s429, throttleHTTP)
	}
	if r, err := s.get(hs.base(), rotaSituacao, "198.51.100.9", bearer(tokDono), nil); err != nil || r.status != 200 {
		v.add("another address is served during a flood", "%v HTTP %d", err, r.status)
	}
	for _, xff := range []string{"1.2.3.4, " + atacante, "9.9.9.9,8.8.8.8, " + atacante + ", 127.0.0.1"} {
		if r, err := s.get(hs.base(), rotaSituacao, xff, bearer(tokDono), nil); err != nil || r.status != 429 {
			v.add("spoofed X-Forwarded-For entries do not escape the throttle", "X-Forwarded-For %q: %v HTTP %d", xff, err, r.status)
		}
	}
	for i := 0; i < throttleHTTP; i++ {
		_, _ = s.get(hs.base(), rotaSituacao, "2001:db8:77::1", bearer(tokDono), nil)
	}
	if r, err := s.get(hs.base(), rotaSituacao, "2001:db8:77::2", bearer(tokDono), nil); err != nil || r.status != 429 {
		v.add("an IPv6 /64 shares one throttle budget", "2001:db8:77::2 after a flood from ::1: %v HTTP %d", err, r.status)
	}

	// Alive, no panic, drains on SIGTERM.
	vivos := true
	for _, i := range []*instancia{hs, rs} {
		if _, vivo := i.vivaHa(); !vivo {
			vivos = false
			v.add("d6a survives the attacks", "%s is not running", i.nome)
		}
		if n, _, _ := i.estatisticas(); n != 1 {
			vivos = false
			v.add("d6a survives the attacks", "%s was restarted (%d incarnations)", i.nome, n)
		}
		if saida, dur := i.encerrar(30 * time.Second); saida != "exit 0" {
			v.add("d6a serve drains and exits 0 on SIGTERM", "%s: %s after %s", i.nome, saida, dur)
		}
		for _, p := range procurarPanico(i.arquivos(), 10) {
			v.add("no d6a process panicked, hit a fatal error or a data race", "%s", p)
		}
	}

	var codigos []string
	var c5xx int
	for c, n := range s.contas {
		codigos = append(codigos, fmt.Sprintf("%d=%d", c, n))
		if c >= 500 {
			c5xx += n
		}
	}
	sort.Strings(codigos)
	invs := "ok"
	if v.total() > 0 {
		invs = fmt.Sprintf("BROKEN(%d)", len(v.nomes))
	}
	linha := fmt.Sprintf("faults-http: requests=%d %s closed_without_answer=%d 5xx=%d token_attacks=%d process_alive=%v invariants=%s (%s)",
		s.total, strings.Join(codigos, " "), fechadas, c5xx, len(casos401)+3, vivos, invs, time.Since(inicio).Round(time.Second))
	t.Log(linha)
	fmt.Println(linha)
	v.relatar()
}
