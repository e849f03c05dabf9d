package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

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
// published, and a demand's and a counsellor's own checks must pass. Then
// two copies of the same log, rebuilt and re-signed with the service's key
// as an operator could, must each be caught at the record rigged: one
// cycle end's record left out, and a sweep's draw given to a newer waiting
// demand than the one it served.
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
	if want := int64(300 + liberadas); v.mensagens != want || v.registradas+v.Tardias() != want {
		t.Fatalf("entradas: %d messages, %d recorded (%d late); %d published", v.mensagens, v.registradas, v.Tardias(), want)
	}
	t.Logf("%d records, %d decisions, %d inputs replayed in %.2f s", v.registros, v.decisoes, v.mensagens, v.segundos)
	if v.Tardias() > 0 {
		// Seen under load: a delivery lost by the consumer comes back
		// after AckWait, behind later messages (report of issue 37's
		// replay test). Not what this test judges.
		t.Logf("%d inputs recorded after a later trigger's decision (consumed out of stream order)", v.Tardias())
	}
	if n, err := r.individuais(ctx); err != nil || n != 3 {
		t.Fatalf("the demand's and the counsellor's own checks: %d passed, %v", n, err)
	}

	// The rigged copies: the served log mirrored, changed, the tree
	// rebuilt and signed with the service's key, as its operator could.
	dir := t.TempDir()
	cli := &log.Cliente{Base: r.URL(), Chave: r.chave.Verificador}
	esp, err := cli.Espelhar(ctx, filepath.Join(dir, "servido"), nil)
	if err != nil {
		t.Fatal(err)
	}
	servido := filepath.Join(dir, "servido", "d6a", "transparencia")
	regs := lerEspelho(t, servido, esp.Checkpoint.Tamanho)
	if int64(len(regs)) != tamanho {
		t.Fatalf("mirror: %d records, the checkpoint has %d", len(regs), tamanho)
	}
	// Where to rig: a cycle end's record, and a draw that served a demand
	// from the fila de pendentes while a newer one waited.
	var ciclos, varreduras []int
	var novaDe []uuid.UUID // per sweep draw, the newest demand waiting then
	var fila []uuid.UUID   // the waiting demands, oldest first
	for i, b := range regs {
		x, err := registro.LerRegistravel(b)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		switch x := x.(type) {
		case registro.Entrada:
			if x.Tipo == registro.TipoCicloConcluido {
				ciclos = append(ciclos, i)
			}
		case registro.SemCandidatos:
			if !slices.Contains(fila, x.DemandaID) {
				fila = append(fila, x.DemandaID)
			}
		case registro.Registro:
			if k := slices.Index(fila, x.DemandaID); k >= 0 {
				if k < len(fila)-1 {
					varreduras, novaDe = append(varreduras, i), append(novaDe, fila[len(fila)-1])
				}
				fila = slices.Delete(fila, k, k+1)
			}
		}
	}
	if len(ciclos) == 0 || len(varreduras) == 0 {
		t.Fatalf("no cycle end (%d) or no draw from the queue with a newer demand waiting (%d) to rig", len(ciclos), len(varreduras))
	}
	adulterado := func(nome string, i int, trocar []byte) {
		t.Helper()
		e := &escritorTiles{raiz: filepath.Join(dir, nome, "d6a", "transparencia"), chave: r.chave}
		if err := os.MkdirAll(e.raiz, 0o755); err != nil {
			t.Fatal(err)
		}
		for j, b := range regs {
			if j == i {
				b = trocar
			}
			if b == nil {
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
		hs := &http.Server{Handler: http.FileServer(http.Dir(filepath.Join(dir, nome)))}
		go func() { _ = hs.Serve(ln) }()
		defer hs.Close()
		a, err := verificarReplay(ctx, r.bin, "http://"+ln.Addr().String(), r.e.srv.nats, r.chave.Verificador)
		if err != nil {
			t.Fatal(err)
		}
		if a.codigo != 1 || a.divergencias == 0 || !strings.Contains(a.erro, fmt.Sprintf("DIVERGÊNCIA registro %d:", i)) {
			t.Fatalf("%s (record %d): exit %d, %d divergences over %d records\n%s%s", nome, i, a.codigo, a.divergencias, a.registros, a.saida, a.erro)
		}
		t.Logf("%s: %s", nome, lastLines(a.erro, 1))
	}
	// A release's record dropped: the bus shows the message consumed.
	adulterado("sem-ciclo", ciclos[len(ciclos)/2], nil)
	// A sweep's draw given to the newest waiting demand instead of the
	// oldest of its coverage (CONTRACT §7 "Queue order").
	k := len(varreduras) / 2
	x, _ := registro.LerRegistravel(regs[varreduras[k]])
	d := x.(registro.Registro)
	d.DemandaID = novaDe[k]
	trocado, err := d.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	adulterado("fila-fora-de-ordem", varreduras[k], trocado)
}

// lerEspelho reads the n records of the tiles mirror at raiz.
func lerEspelho(t *testing.T, raiz string, n int64) [][]byte {
	t.Helper()
	var regs [][]byte
	for _, tl := range tiles.ForSize(n) {
		if tl.L != tiles.Entries {
			continue
		}
		dados, err := os.ReadFile(filepath.Join(raiz, filepath.FromSlash(tiles.Path(tl))))
		if err != nil {
			t.Fatal(err)
		}
		es, err := tiles.ReadBundle(dados, tl.W)
		if err != nil {
			t.Fatal(err)
		}
		regs = append(regs, es...)
	}
	return regs
}
