package beacon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/formigueiro/d6a/internal/beacon"
	"github.com/formigueiro/d6a/internal/beacon/beacontest"
)

// privado is a private chain whose genesis was an hour ago, so rounds 1 to
// ~3600 are published.
func privado(t *testing.T) *beacon.Privado {
	t.Helper()
	return beacon.NovoPrivado([]byte(t.Name()), time.Now().Add(-time.Hour).Unix(), time.Second)
}

func cliente(t *testing.T, p *beacon.Privado, urls []string, opts ...beacon.Opcao) *beacon.Cliente {
	t.Helper()
	c, err := beacon.NovoCliente(urls, p.Cadeia().ChavePublica, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func igual(a, b beacon.Rodada) bool {
	return a.Numero == b.Numero && bytes.Equal(a.Assinatura, b.Assinatura) && bytes.Equal(a.Randomness, b.Randomness)
}

func TestClientePrimeiroRelayFora(t *testing.T) {
	p := privado(t)
	const timeout = 1 * time.Second
	for _, modo := range []beacontest.Modo{beacontest.Fora, beacontest.Indisponivel} {
		t.Run(modo.String(), func(t *testing.T) {
			c := cliente(t, p, []string{beacontest.Hostil(t, p, modo), beacontest.Servidor(t, p).URL}, beacon.ComTimeout(timeout))
			inicio := time.Now()
			r, err := c.Rodada(context.Background(), 42)
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Since(inicio); d >= timeout {
				t.Fatalf("took %v, want under one timeout (%v)", d, timeout)
			}
			if !igual(r, p.Assinar(42)) {
				t.Fatal("round differs from the signer's")
			}
			if _, err := c.Cadeia(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestClientePrimeiroRelaySilencioso(t *testing.T) {
	p := privado(t)
	const timeout = 300 * time.Millisecond
	c := cliente(t, p, []string{beacontest.Hostil(t, p, beacontest.Silencioso), beacontest.Servidor(t, p).URL}, beacon.ComTimeout(timeout))
	inicio := time.Now()
	if _, err := c.Rodada(context.Background(), 7); err != nil {
		t.Fatal(err)
	}
	// One timeout lost on the silent relay, then the second answers.
	if d := time.Since(inicio); d < timeout || d > timeout+time.Second {
		t.Fatalf("took %v, want about one timeout (%v)", d, timeout)
	}
}

func TestClienteRecusaOutraCadeia(t *testing.T) {
	p := privado(t)
	c := cliente(t, p, []string{beacontest.Hostil(t, p, beacontest.OutraCadeia), beacontest.Servidor(t, p).URL})
	if _, err := c.Cadeia(context.Background()); !errors.Is(err, beacon.ErrCadeiaDiferente) {
		t.Fatalf("err = %v, want ErrCadeiaDiferente", err)
	}
	// The quicknet key against the private beacon's relay: refused too.
	q, err := beacon.NovoCliente([]string{beacontest.Servidor(t, p).URL}, beacon.Quicknet().ChavePublica)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Cadeia(context.Background()); !errors.Is(err, beacon.ErrCadeiaDiferente) {
		t.Fatalf("err = %v, want ErrCadeiaDiferente", err)
	}
	if _, err := q.Rodada(context.Background(), 5); !errors.Is(err, beacon.ErrAssinatura) {
		t.Fatalf("round from another chain: err = %v, want ErrAssinatura", err)
	}
}

func TestClienteNuncaDevolveRodadaInvalida(t *testing.T) {
	p := privado(t)
	for _, modo := range []beacontest.Modo{beacontest.AssinaturaErrada, beacontest.AssinaturaLixo, beacontest.RodadaErrada, beacontest.RodadaTrocada, beacontest.RandomnessErrada, beacontest.OutraCadeia} {
		t.Run(modo.String(), func(t *testing.T) {
			hostil := beacontest.Hostil(t, p, modo)
			sozinho := cliente(t, p, []string{hostil}, beacon.ComTentativas(1))
			if r, err := sozinho.Rodada(context.Background(), 9); err == nil {
				t.Fatalf("hostile relay's round %d accepted", r.Numero)
			}
			if rs, err := sozinho.Rodadas(context.Background(), []uint64{3, 4, 5}); err == nil || len(rs) != 0 {
				t.Fatalf("hostile relay: Rodadas = %d rounds, err %v", len(rs), err)
			}
			// With an honest relay after it, the honest answer wins.
			c := cliente(t, p, []string{hostil, beacontest.Servidor(t, p).URL})
			r, err := c.Rodada(context.Background(), 9)
			if err != nil || !igual(r, p.Assinar(9)) {
				t.Fatalf("Rodada = %+v, %v", r, err)
			}
			quer := []uint64{3, 4, 5, 6, 7, 8}
			rs, err := c.Rodadas(context.Background(), quer)
			if err != nil || len(rs) != len(quer) {
				t.Fatalf("Rodadas: %d rounds, %v", len(rs), err)
			}
			for _, n := range quer {
				if !igual(rs[n], p.Assinar(n)) {
					t.Fatalf("round %d differs from the signer's", n)
				}
			}
		})
	}
}

func TestClienteRodadasECache(t *testing.T) {
	p := privado(t)
	srv := httptest.NewServer(p.Handler())
	c := cliente(t, p, []string{srv.URL})
	var quer []uint64
	for n := uint64(100); n < 160; n++ {
		quer = append(quer, n)
	}
	rs, err := c.Rodadas(context.Background(), append(quer, 100, 101)) // repeats are fine
	if err != nil || len(rs) != len(quer) {
		t.Fatalf("%d rounds, %v", len(rs), err)
	}
	for _, n := range quer {
		if !igual(rs[n], p.Assinar(n)) {
			t.Fatalf("round %d differs", n)
		}
	}
	srv.Close()
	// Verified rounds come from the cache once the relay is gone.
	if r, err := c.Rodada(context.Background(), 130); err != nil || !igual(r, p.Assinar(130)) {
		t.Fatalf("cached round: %v", err)
	}
	if _, err := c.Rodada(context.Background(), 99); err == nil {
		t.Fatal("uncached round with the relay gone")
	}
	if _, err := c.Rodadas(context.Background(), []uint64{0}); err == nil {
		t.Fatal("round 0 accepted")
	}
}

func TestClienteEsperar(t *testing.T) {
	p := beacon.NovoPrivado([]byte(t.Name()), time.Now().Unix(), time.Second)
	c := cliente(t, p, []string{beacontest.Servidor(t, p).URL})
	cad, err := c.Cadeia(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	alvo := cad.PrimeiraApos(time.Now())
	r, err := c.Esperar(ctx, alvo)
	if err != nil {
		t.Fatal(err)
	}
	if chegou := time.Now(); chegou.Before(cad.PublicadaEm(alvo)) || !igual(r, p.Assinar(alvo)) {
		t.Fatalf("round %d at %v, due %v", alvo, chegou, cad.PublicadaEm(alvo))
	}
	if _, err := c.Rodada(context.Background(), alvo+60); !errors.Is(err, beacon.ErrNaoPublicada) {
		t.Fatalf("future round: err = %v, want ErrNaoPublicada", err)
	}
	curto, cancel2 := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel2()
	if _, err := c.Esperar(curto, alvo+60); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Esperar past its deadline: err = %v", err)
	}
}

func TestClienteEsperarRelayAtrasado(t *testing.T) {
	// A relay that publishes late (425 for a while after the due time):
	// Esperar keeps polling instead of failing.
	p := beacon.NovoPrivado([]byte(t.Name()), time.Now().Unix(), time.Second)
	atraso := 700 * time.Millisecond
	p.ComRelogio(func() time.Time { return time.Now().Add(-atraso) })
	c := cliente(t, p, []string{beacontest.Servidor(t, p).URL})
	cad := p.Cadeia()
	alvo := cad.PrimeiraApos(time.Now())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.Esperar(ctx, alvo); err != nil {
		t.Fatal(err)
	}
	if time.Now().Before(cad.PublicadaEm(alvo).Add(atraso)) {
		t.Fatal("returned before the relay published")
	}
}

func TestClienteOutroAssinante(t *testing.T) {
	// A signer built on circl's sign/bls, sharing no signing code with
	// Privado: its rounds must verify under its key.
	o := beacontest.NovoOutroAssinante([]byte("independente"), time.Now().Add(-time.Minute).Unix(), 3*time.Second)
	srv := httptest.NewServer(o.Handler())
	defer srv.Close()
	c, err := beacon.NovoCliente([]string{srv.URL}, o.Chave())
	if err != nil {
		t.Fatal(err)
	}
	cad, err := c.Cadeia(context.Background())
	if err != nil || cad.Periodo != 3*time.Second {
		t.Fatalf("info: %+v %v", cad, err)
	}
	for _, n := range []uint64{1, 2, 15} {
		r, err := c.Rodada(context.Background(), n)
		if err != nil || !igual(r, o.Assinar(n)) {
			t.Fatalf("round %d: %v", n, err)
		}
	}
	if _, err := c.Rodada(context.Background(), 1000); !errors.Is(err, beacon.ErrNaoPublicada) {
		t.Fatalf("future round: %v", err)
	}
	if err := beacon.VerificarLote(o.Chave(), []beacon.Rodada{o.Assinar(4), o.Assinar(5), o.Assinar(6)}); err != nil {
		t.Fatal(err)
	}
	// Same message, different keys: Privado's signature is not the other's.
	if err := beacon.Verificar(o.Chave(), beacon.NovoPrivado([]byte("x"), 0, time.Second).Assinar(4)); err == nil {
		t.Fatal("a Privado round verified under OutroAssinante's key")
	}
}

func TestClienteQuicknetGravado(t *testing.T) {
	// A relay replaying the real quicknet rounds of testdata, with
	// quicknet's /info: the client configured with quicknet's key takes them.
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "beacon", "quicknet-rounds.json"))
	if err != nil {
		t.Fatal(err)
	}
	var arq struct {
		Chain  json.RawMessage   `json:"chain"`
		Rounds []json.RawMessage `json:"rounds"`
	}
	if err := json.Unmarshal(b, &arq); err != nil {
		t.Fatal(err)
	}
	rodadas := map[string]json.RawMessage{}
	var numeros []uint64
	for _, raw := range arq.Rounds {
		var r beacon.Rodada
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		rodadas[strconv.FormatUint(r.Numero, 10)] = raw
		numeros = append(numeros, r.Numero)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /"+beacon.QuicknetHash+"/info", func(w http.ResponseWriter, r *http.Request) { w.Write(arq.Chain) })
	mux.HandleFunc("GET /"+beacon.QuicknetHash+"/public/{round}", func(w http.ResponseWriter, r *http.Request) {
		if raw, ok := rodadas[r.PathValue("round")]; ok {
			w.Write(raw)
			return
		}
		http.NotFound(w, r)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	chave, err := beacon.ChaveHex(beacon.QuicknetChave)
	if err != nil {
		t.Fatal(err)
	}
	c, err := beacon.NovoCliente([]string{srv.URL + "/" + beacon.QuicknetHash + "/"}, chave)
	if err != nil {
		t.Fatal(err)
	}
	cad, err := c.Cadeia(context.Background())
	if err != nil || !cad.Quicknet() || cad.Genesis != beacon.QuicknetGenesis || cad.Periodo != beacon.QuicknetPeriodo {
		t.Fatalf("quicknet info: %+v %v", cad, err)
	}
	rs, err := c.Rodadas(context.Background(), numeros)
	if err != nil || len(rs) != len(numeros) {
		t.Fatalf("%d of %d real rounds, %v", len(rs), len(numeros), err)
	}
}
