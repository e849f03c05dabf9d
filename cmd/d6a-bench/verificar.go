package main

// `d6a-bench verificar` (issue 39): the public verifier at national scale.
// A consistent synthetic history (transparencia.CadaHistoriaSintetica:
// 5,000 registrations, then draws each followed by its winner's cycle end)
// is written as a static C2SP tlog-tiles mirror, signed, served by Go's
// http.FileServer, and verified by the real d6a binary (`verify --url
// --all --replay`, then a monitor run over the last records). No database:
// what is measured is the verifier, its rate and its peak RSS.

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/formigueiro/d6a/internal/historico"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/tiles"
	"github.com/formigueiro/d6a/internal/transparencia"
	"github.com/formigueiro/d6a/internal/verificar/log"
)

// escritorTiles writes a log as C2SP tiles, record by record: full tiles
// as they complete, the partial ones and a signed checkpoint on publicar.
type escritorTiles struct {
	raiz  string
	chave transparencia.Chave
	fr    registro.Fronteira
	// nivel[L] are the hashes of the level-L tile being filled, feitos[L]
	// how many level-L tiles are full.
	nivel  [tiles.MaxLevel + 2][]tlog.Hash
	feitos [tiles.MaxLevel + 2]int64
	bundle []byte
	bytes  int64
	// decisoes counts the draws and sorteio.sem_candidatos written.
	decisoes int64
	// opcoes vary the history (-rodadas: a beacon round per draw).
	opcoes historico.Opcoes
}

func (e *escritorTiles) escrever(t tlog.Tile, dados []byte) error {
	arquivo := filepath.Join(e.raiz, filepath.FromSlash(tiles.Path(t)))
	if err := os.MkdirAll(filepath.Dir(arquivo), 0o755); err != nil {
		return err
	}
	e.bytes += int64(len(dados))
	return os.WriteFile(arquivo, dados, 0o644)
}

func hashesBytes(hs []tlog.Hash) []byte {
	out := make([]byte, 0, len(hs)*tlog.HashSize)
	for _, h := range hs {
		out = append(out, h[:]...)
	}
	return out
}

// raizCompleta is the root of a complete subtree from its 256 children.
func raizCompleta(hs []tlog.Hash) tlog.Hash {
	nivel := append([]tlog.Hash(nil), hs...)
	for len(nivel) > 1 {
		for i := 0; i < len(nivel)/2; i++ {
			nivel[i] = tlog.NodeHash(nivel[2*i], nivel[2*i+1])
		}
		nivel = nivel[:len(nivel)/2]
	}
	return nivel[0]
}

func (e *escritorTiles) subir(l int, h tlog.Hash) error {
	e.nivel[l] = append(e.nivel[l], h)
	if len(e.nivel[l]) < tiles.Width {
		return nil
	}
	if err := e.escrever(tiles.Hash(l, e.feitos[l], tiles.Width), hashesBytes(e.nivel[l])); err != nil {
		return err
	}
	if l == 0 {
		if err := e.escrever(tiles.Bundle(e.feitos[0], tiles.Width), e.bundle); err != nil {
			return err
		}
		e.bundle = e.bundle[:0]
	}
	r := raizCompleta(e.nivel[l])
	e.nivel[l] = e.nivel[l][:0]
	e.feitos[l]++
	if l+1 > tiles.MaxLevel {
		return nil
	}
	return e.subir(l+1, r)
}

func (e *escritorTiles) anexar(reg registro.Registravel) error {
	b, err := reg.Bytes()
	if err != nil {
		return err
	}
	switch reg.(type) {
	case registro.Registro, registro.SemCandidatos:
		e.decisoes++
	}
	return e.anexarBytes(b)
}

// anexarBytes appends a record as its bytes (a copy of a served log's).
func (e *escritorTiles) anexarBytes(b []byte) (err error) {
	h := tlog.RecordHash(b)
	e.fr.Adicionar(h)
	if e.bundle, err = tiles.AppendEntry(e.bundle, b); err != nil {
		return err
	}
	return e.subir(0, h)
}

// publicar writes the partial tiles of the current size and its signed
// checkpoint (and the key, for trust on first use).
func (e *escritorTiles) publicar() (registro.Checkpoint, error) {
	for l := 0; l <= tiles.MaxLevel; l++ {
		if w := len(e.nivel[l]); w > 0 {
			if err := e.escrever(tiles.Hash(l, e.feitos[l], w), hashesBytes(e.nivel[l])); err != nil {
				return registro.Checkpoint{}, err
			}
			if l == 0 {
				if err := e.escrever(tiles.Bundle(e.feitos[0], w), e.bundle); err != nil {
					return registro.Checkpoint{}, err
				}
			}
		}
	}
	cp := registro.Checkpoint{Origem: registro.OrigemPadrao, Tamanho: e.fr.N, Raiz: e.fr.Raiz()}
	nota, err := note.Sign(&note.Note{Text: cp.Texto()}, e.chave.Signer)
	if err != nil {
		return cp, err
	}
	if err := os.WriteFile(filepath.Join(e.raiz, "chave"), []byte(e.chave.Verificador+"\n"), 0o644); err != nil {
		return cp, err
	}
	return cp, os.WriteFile(filepath.Join(e.raiz, "checkpoint"), nota, 0o644)
}

// escreverHistoria writes the synthetic history up to n records,
// publishing a checkpoint at antes (its signed note is returned: the
// monitor's first run is made at it after the mirror is complete) and one
// at n. Neither size parts an input from the sweep that follows it in its
// transaction (the service never signs such a size): each is moved on to
// the sweep.
func (e *escritorTiles) escreverHistoria(n, antes int64, decisoes int) (cpAntes, cp registro.Checkpoint, notaAntes []byte, err error) {
	pararEm := errors.New("size reached")
	pendente := false // the last record is an input its sweep follows
	err = historico.CadaHistoria("bench-verificar", decisoes, e.opcoes, func(r registro.Registravel) error {
		if e.fr.N >= n && !pendente {
			return pararEm
		}
		if err := e.anexar(r); err != nil {
			return err
		}
		en, ok := r.(registro.Entrada)
		pendente = ok && (en.Tipo == registro.TipoCadastro || en.Tipo == registro.TipoCicloConcluido)
		if notaAntes == nil && e.fr.N >= antes && !pendente {
			var err error
			if cpAntes, err = e.publicar(); err != nil {
				return err
			}
			notaAntes, err = os.ReadFile(filepath.Join(e.raiz, "checkpoint"))
			return err
		}
		return nil
	})
	if err != nil && !errors.Is(err, pararEm) {
		return cpAntes, cp, nil, err
	}
	if pendente {
		return cpAntes, cp, nil, fmt.Errorf("the synthetic history of %d decisions ended before %d records", decisoes, n)
	}
	cp, err = e.publicar()
	return cpAntes, cp, notaAntes, err
}

// rodada is one run of the real binary: wall time, peak RSS, output.
type rodada struct {
	segundos float64
	// cpu is the child's user and system CPU seconds: unlike the wall
	// time, what other processes on the machine do not change.
	cpu   float64
	rssMB float64
	saida string
}

func rodarD6a(ctx context.Context, bin string, args ...string) (rodada, error) {
	return rodarD6aEnv(ctx, nil, bin, args...)
}

// rodarD6aEnv is rodarD6a with env added to this process's environment.
func rodarD6aEnv(ctx context.Context, env []string, bin string, args ...string) (rodada, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	inicio := time.Now()
	err := cmd.Run()
	r := rodada{segundos: time.Since(inicio).Seconds(), saida: out.String()}
	if ps := cmd.ProcessState; ps != nil {
		r.cpu = (ps.UserTime() + ps.SystemTime()).Seconds()
	}
	if u, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.rssMB = float64(u.Maxrss) / 1024
	}
	if err != nil {
		return r, fmt.Errorf("d6a %s: %w\n%s%s", strings.Join(args, " "), err, out.String(), lastLines(errOut.String(), 5))
	}
	return r, nil
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(ls[max(0, len(ls)-n):], "\n")
}

func executarVerificar(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("d6a-bench verificar", flag.ContinueOnError)
	registros := fs.Int("registros", 1_000_000, "records in the synthetic log (at least 7,000)")
	novos := fs.Int("monitor", 1000, "records the timed monitor run finds new")
	dir := fs.String("dir", "", "where the mirror is written (default: a temporary directory, removed after)")
	bin := fs.String("d6a", "", "the d6a binary (default: built from ./cmd/d6a)")
	gatilhos := fs.Int("barramento", 20_000, "draws whose triggers the bus check reads from a real JetStream stream, timed in bulk and with one GetMsg each (0: skip)")
	comRodadas := fs.Bool("rodadas", false, "every draw carries a beacon round of its own (a d6a.regras_sorteio record first), signed by a private beacon cached under -dir or the user's cache dir")
	regua := fs.Int("regua", 30_000, "with -rodadas: records of the yardstick history verified with the rounds in batches and one pairing per round (0: skip)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	n := *registros
	if n < 7000 || *novos < 2 || *novos > n-5000 {
		return errors.New("-registros must be ≥ 7,000 and -monitor between 2 and registros-5,000")
	}
	// Enough decisions for n records (each is three or more).
	decisoes := (n - 5000 + 1) / 2
	raiz := *dir
	if raiz == "" {
		var err error
		if raiz, err = os.MkdirTemp("", "d6a-bench-verificar-"); err != nil {
			return err
		}
		defer os.RemoveAll(raiz)
	}
	if *bin == "" {
		*bin = filepath.Join(raiz, "d6a")
		if out, err := exec.Command("go", "build", "-o", *bin, "./cmd/d6a").CombinedOutput(); err != nil {
			return fmt.Errorf("building d6a: %v\n%s", err, out)
		}
	}
	skey, _, err := transparencia.GerarChave(registro.OrigemPadrao)
	if err != nil {
		return err
	}
	chave, err := transparencia.NovaChave(skey)
	if err != nil {
		return err
	}
	e := &escritorTiles{raiz: filepath.Join(raiz, "espelho", "d6a", "transparencia"), chave: chave}
	if err := os.MkdirAll(e.raiz, 0o755); err != nil {
		return err
	}
	var rodadas *rodadasEmCache
	if *comRodadas {
		if rodadas, err = abrirRodadasEmCache(diretorioCache(*dir)); err != nil {
			return err
		}
		defer rodadas.Close()
		e.opcoes.Beacon = rodadas.beacon()
	}
	inicio := time.Now()
	antes := int64(n - *novos)
	cpAntes, cp, notaAntes, err := e.escreverHistoria(int64(n), antes, decisoes)
	if err != nil {
		return err
	}
	n, antes = int(cp.Tamanho), cpAntes.Tamanho
	notaDepois, err := os.ReadFile(filepath.Join(e.raiz, "checkpoint"))
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "verificar: %d records written as tiles (%.0f MB) in %.1f s; checkpoints at %d and %d\n",
		cp.Tamanho, float64(e.bytes)/1e6, time.Since(inicio).Seconds(), cpAntes.Tamanho, cp.Tamanho)
	var eRegua *escritorTiles
	if rodadas != nil && *regua > 0 {
		if eRegua, err = escreverRegua(raiz, *regua, chave, rodadas); err != nil {
			return err
		}
	}
	if rodadas != nil {
		fmt.Fprintf(os.Stderr, "verificar: %d rounds signed by this run, %d cached in all\n", rodadas.assinadas, rodadas.tem)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(filepath.Join(raiz, "espelho")))}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	url := "http://" + ln.Addr().String()

	// The whole log, replayed.
	r, err := rodarD6a(ctx, *bin, "verify", "--url", url, "--all", "--replay", "--chave", chave.Verificador)
	if err != nil {
		return err
	}
	want := fmt.Sprintf("replay: registros=%d decisoes=%d divergencias=0 ", n, e.decisoes)
	if !strings.Contains(r.saida, want) {
		return fmt.Errorf("verify --all --replay: want %q in\n%s", want, r.saida)
	}
	fmt.Printf("verificar: registros=%d segundos=%.2f registros_por_s=%.0f pico_rss_mb=%.1f\n", n, r.segundos, float64(n)/r.segundos, r.rssMB)
	if rodadas != nil {
		fmt.Printf("verificar: rodadas=%d rodadas_por_s=%.0f\n", e.decisoes, float64(e.decisoes)/r.segundos)
	}
	carga, _ := os.ReadFile("/proc/loadavg")
	cargas := append(strings.Fields(string(carga)), "?", "?", "?")
	fmt.Printf("verificar: cpu_s=%.1f (%.2f µs por registro; registros por s de CPU %.0f) carga=%s\n",
		r.cpu, r.cpu*1e6/float64(n), float64(n)/r.cpu, strings.Join(cargas[:3], "/"))

	if eRegua != nil {
		if err := medirRegua(ctx, *bin, url+"/regua", eRegua); err != nil {
			return err
		}
	}

	// The monitor: a first run at n-novos, then the timed one over the
	// novos records after it.
	estado := filepath.Join(raiz, "monitor")
	if err := os.RemoveAll(estado); err != nil { // a -dir run before this one kept another key's state
		return err
	}
	if err := os.WriteFile(filepath.Join(e.raiz, "checkpoint"), notaAntes, 0o644); err != nil {
		return err
	}
	r1, err := rodarD6a(ctx, *bin, "verify", "--url", url, "--chave", chave.Verificador, "--monitorar", estado)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(e.raiz, "checkpoint"), notaDepois, 0o644); err != nil {
		return err
	}
	r2, err := rodarD6a(ctx, *bin, "verify", "--url", url, "--chave", chave.Verificador, "--monitorar", estado)
	if err != nil {
		return err
	}
	want = fmt.Sprintf("monitor: de=%d para=%d novos=%d divergencias=0", antes, n, int64(n)-antes)
	if !strings.Contains(r2.saida, want) {
		return fmt.Errorf("monitor: want %q in\n%s", want, r2.saida)
	}
	st, _ := os.Stat(filepath.Join(estado, log.ArquivoMonitor))
	fmt.Printf("monitor: primeira=%.2fs (%d registros, pico_rss_mb=%.1f) novos=%d segundos=%.3f pico_rss_mb=%.1f estado_mb=%.1f\n",
		r1.segundos, antes, r1.rssMB, int64(n)-antes, r2.segundos, r2.rssMB, float64(st.Size())/1e6)
	if *gatilhos > 0 {
		return medirBarramento(ctx, raiz, *gatilhos)
	}
	return nil
}
