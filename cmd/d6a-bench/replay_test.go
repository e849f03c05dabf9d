package main

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/tiles"
	"github.com/formigueiro/d6a/internal/verificar/log"
)

// TestReplayDaRajada is `d6a-bench replay` small (issue 37: "the replay
// of a make bench burst's own log passes"): 300 counsellors registered
// through the bus, 1,000 demands in four rounds mixed with releases, the
// real `d6a verify --url --all --replay` with the bus reachable. It must
// replay the whole served log with no divergence and count every input
// published; then the same log with one cycle end's record removed
// (rebuilt and re-signed with the service's key, as an operator could)
// must be caught at that record.
func TestReplayDaRajada(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and d6a serve")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r, err := subirRajada(ctx, opcoesReplay{conselheiros: 300, m: 1000, rodadas: 4, seed: 1, ramo: true})
	defer r.fechar(false)
	if err != nil {
		t.Fatal(err)
	}
	tamanho, err := r.consumido(ctx)
	if err != nil {
		t.Fatal(err)
	}
	v, err := verificarReplay(ctx, r.bin, r.URL(), r.e.srv.nats, r.chave.Verificador)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.conferir(v, tamanho); err != nil {
		t.Fatal(err)
	}
	// The burst did what it is for: demands waited, releases served some.
	liberadas := r.publicadas[evento.CicloConcluido] + r.publicadas[evento.AtribuicaoRecusada]
	if r.sorteados == 0 || r.semCandidatos == 0 || liberadas == 0 || v.decisoes <= int64(r.sorteados+r.semCandidatos) {
		t.Fatalf("a burst without its mix: %d drawn, %d sem_candidatos, %d releases, %d decisions", r.sorteados, r.semCandidatos, liberadas, v.decisoes)
	}
	if want := int64(300 + liberadas); v.mensagens != want || v.registradas != want {
		t.Fatalf("entradas: %d messages, %d recorded; %d published", v.mensagens, v.registradas, want)
	}
	t.Logf("%d records, %d decisions, %d inputs replayed in %.2f s", v.registros, v.decisoes, v.mensagens, v.segundos)
	if n, err := r.individuais(ctx); err != nil || n != 3 {
		t.Fatalf("the demand's and the counsellor's own checks: %d passed, %v", n, err)
	}

	// The rigged copy: the served log mirrored, one cycle end's record
	// (from the middle) left out, the tree rebuilt and signed.
	dir := t.TempDir()
	cli := &log.Cliente{Base: r.URL(), Chave: r.chave.Verificador}
	esp, err := cli.Espelhar(ctx, filepath.Join(dir, "servido"), nil)
	if err != nil {
		t.Fatal(err)
	}
	servido := filepath.Join(dir, "servido", "d6a", "transparencia")
	var regs [][]byte
	var ciclos []int
	for _, tl := range tiles.ForSize(esp.Checkpoint.Tamanho) {
		if tl.L != tiles.Entries {
			continue
		}
		dados, err := os.ReadFile(filepath.Join(servido, filepath.FromSlash(tiles.Path(tl))))
		if err != nil {
			t.Fatal(err)
		}
		es, err := tiles.ReadBundle(dados, tl.W)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range es {
			if x, err := registro.LerRegistravel(b); err == nil {
				if en, ok := x.(registro.Entrada); ok && en.Tipo == registro.TipoCicloConcluido {
					ciclos = append(ciclos, len(regs))
				}
			}
			regs = append(regs, b)
		}
	}
	if int64(len(regs)) != tamanho || len(ciclos) == 0 {
		t.Fatalf("mirror: %d records (%d cycle ends), the checkpoint has %d", len(regs), len(ciclos), tamanho)
	}
	fora := ciclos[len(ciclos)/2]
	e := &escritorTiles{raiz: filepath.Join(dir, "adulterado", "d6a", "transparencia"), chave: r.chave}
	if err := os.MkdirAll(e.raiz, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, b := range regs {
		if i == fora {
			continue
		}
		if err := e.anexarBytes(b); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.publicar(); err != nil {
		t.Fatal(err)
	}
	if resumo, err := os.ReadFile(filepath.Join(servido, "resumo")); err == nil {
		if err := os.WriteFile(filepath.Join(e.raiz, "resumo"), resumo, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.FileServer(http.Dir(filepath.Join(dir, "adulterado")))}
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()
	a, err := verificarReplay(ctx, r.bin, "http://"+ln.Addr().String(), r.e.srv.nats, r.chave.Verificador)
	if err != nil {
		t.Fatal(err)
	}
	if a.codigo != 1 || a.divergencias == 0 || a.registros != tamanho-1 || !strings.Contains(a.erro, "DIVERGÊNCIA") {
		t.Fatalf("the log without record %d (a cycle end): exit %d, %d divergences over %d records\n%s%s", fora, a.codigo, a.divergencias, a.registros, a.saida, a.erro)
	}
	t.Logf("without record %d: %s", fora, lastLines(a.erro, 1))
}
