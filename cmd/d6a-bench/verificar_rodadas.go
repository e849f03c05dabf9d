package main

// `d6a-bench verificar -rodadas`: the synthetic history's draws each carry
// a beacon round of their own (CONTRACT §4a at national scale, a few draws
// a minute), signed by a private beacon whose rounds are cached on disk
// between runs: signing costs about 0.7 ms a round, more than verifying.

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/formigueiro/d6a/internal/beacon"
	"github.com/formigueiro/d6a/internal/historico"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/transparencia"
)

// The bench's chain: fixed, so the cached rounds stay valid.
const (
	sementeBeaconBench = "d6a-bench verificar -rodadas"
	genesisBeaconBench = 1_700_000_000
	// rodadasPorBloco are signed at a time, on every CPU, and appended.
	rodadasPorBloco = 1 << 14
)

// rodadasEmCache signs the bench chain's rounds into a file (round n's
// 48-byte signature at (n-1)·48), extending it as the history asks for
// later rounds; a run that stops leaves a valid prefix.
type rodadasEmCache struct {
	p   *beacon.Privado
	f   *os.File
	tem uint64 // rounds 1 … tem are in the file
	// assinadas counts the rounds this run signed (the rest were cached).
	assinadas uint64
}

func abrirRodadasEmCache(dir string) (*rodadasEmCache, error) {
	p := beacon.NovoPrivado([]byte(sementeBeaconBench), genesisBeaconBench, time.Second)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	arquivo := filepath.Join(dir, "rodadas-"+p.Cadeia().Hash[:16]+".bin")
	f, err := os.OpenFile(arquivo, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	tem := uint64(st.Size()) / beacon.TamanhoAssinatura
	fmt.Fprintf(os.Stderr, "verificar: %d signed rounds cached in %s\n", tem, arquivo)
	return &rodadasEmCache{p: p, f: f, tem: tem}, nil
}

// beacon is the history's beacon: the rule record (private chain, margin
// one period, no witnesses) and the cached signer.
func (c *rodadasEmCache) beacon() *historico.Beacon {
	return &historico.Beacon{
		Regras: registro.NovasRegrasSorteio(0, true, c.p.Cadeia(), time.Second, nil, 0),
		Rodada: c.rodada,
	}
}

func (c *rodadasEmCache) rodada(n uint64) (beacon.Rodada, error) {
	if n == 0 {
		return beacon.Rodada{}, errors.New("round 0 does not exist")
	}
	for n > c.tem {
		if err := c.assinarBloco(max(n, c.tem+rodadasPorBloco)); err != nil {
			return beacon.Rodada{}, err
		}
	}
	sig := make([]byte, beacon.TamanhoAssinatura)
	if _, err := c.f.ReadAt(sig, int64(n-1)*beacon.TamanhoAssinatura); err != nil {
		return beacon.Rodada{}, err
	}
	rnd := sha256.Sum256(sig)
	return beacon.Rodada{Numero: n, Assinatura: sig, Randomness: rnd[:]}, nil
}

// assinarBloco signs rounds tem+1 … ate on every CPU and appends them.
func (c *rodadasEmCache) assinarBloco(ate uint64) error {
	de := c.tem + 1
	buf := make([]byte, (ate-de+1)*beacon.TamanhoAssinatura)
	trab := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := range trab {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := de + uint64(w); n <= ate; n += uint64(trab) {
				copy(buf[(n-de)*beacon.TamanhoAssinatura:], c.p.Assinar(n).Assinatura)
			}
		}()
	}
	wg.Wait()
	if _, err := c.f.WriteAt(buf, int64(de-1)*beacon.TamanhoAssinatura); err != nil {
		return err
	}
	c.assinadas += ate - de + 1
	c.tem = ate
	return nil
}

func (c *rodadasEmCache) Close() error { return c.f.Close() }

// diretorioCache is where the signed rounds are kept between runs: -dir
// when given (it outlives the run), else the user's cache directory.
func diretorioCache(dir string) string {
	if dir != "" {
		return dir
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "d6a-bench")
	}
	return filepath.Join(os.TempDir(), "d6a-bench")
}

// medirRegua is the yardstick of `-rodadas`: a history of n records with
// distinct rounds, verified by the real binary with the rounds in batches
// and with one pairing per round (D6A_RODADAS_POR_LOTE=1, the check before
// batching), in the same run: the speed-up is their ratio.
func medirRegua(ctx context.Context, bin, url string, e *escritorTiles) error {
	var linhas []string
	var taxas [2]float64
	for k, modo := range []struct {
		nome string
		env  []string
	}{{"lote", nil}, {"uma_a_uma", []string{"D6A_RODADAS_POR_LOTE=1"}}} {
		r, err := rodarD6aEnv(ctx, modo.env, bin, "verify", "--url", url, "--all", "--replay", "--chave", e.chave.Verificador)
		if err != nil {
			return err
		}
		want := fmt.Sprintf("replay: registros=%d decisoes=%d divergencias=0 ", e.fr.N, e.decisoes)
		if !strings.Contains(r.saida, want) {
			return fmt.Errorf("yardstick verify (%s): want %q in\n%s", modo.nome, want, r.saida)
		}
		taxas[k] = float64(e.decisoes) / r.segundos
		linhas = append(linhas, fmt.Sprintf("regua: modo=%s registros=%d rodadas=%d segundos=%.2f registros_por_s=%.0f rodadas_por_s=%.0f cpu_s=%.1f pico_rss_mb=%.1f",
			modo.nome, e.fr.N, e.decisoes, r.segundos, float64(e.fr.N)/r.segundos, taxas[k], r.cpu, r.rssMB))
	}
	for _, l := range linhas {
		fmt.Println(l)
	}
	fmt.Printf("regua: lote/uma_a_uma=%.1f×\n", taxas[0]/taxas[1])
	return nil
}

// escreverRegua writes the yardstick's mirror under raiz/regua and serves
// it with the bench's file server (its URL prefix is /regua).
func escreverRegua(raiz string, n int, chave transparencia.Chave, rodadas *rodadasEmCache) (*escritorTiles, error) {
	e := &escritorTiles{raiz: filepath.Join(raiz, "espelho", "regua", "d6a", "transparencia"), chave: chave, opcoes: historico.Opcoes{Beacon: rodadas.beacon()}}
	if err := os.MkdirAll(e.raiz, 0o755); err != nil {
		return nil, err
	}
	if _, _, _, err := e.escreverHistoria(int64(n), int64(n), (n-5000+1)/2); err != nil {
		return nil, err
	}
	return e, nil
}
