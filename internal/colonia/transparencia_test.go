package colonia_test

import (
	"context"
	"io"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/formigueiro/d6a/internal/colonia"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/transparencia"
	"github.com/formigueiro/d6a/internal/verificar/log"
)

// checkpoints collects every checkpoint the instances served.
type checkpoints map[string]bool

func (cs checkpoints) ver(c *harness, addr string) int64 {
	c.t.Helper()
	res, err := http.Get("http://" + addr + "/d6a/transparencia/checkpoint")
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		return 0
	}
	cs[string(b)] = true
	// The signature lines after the three of the text are ignored here;
	// they are checked at the end.
	cp, err := registro.LerCheckpoint(string(b))
	if err != nil {
		c.t.Fatalf("checkpoint %q: %v", b, err)
	}
	return cp.Tamanho
}

// esperarAssinado waits until addr serves a checkpoint covering every leaf.
func (cs checkpoints) esperarAssinado(c *harness, addr string) {
	c.t.Helper()
	c.eventually("checkpoint covering every draw", func() bool {
		n := int64(c.contar(`SELECT count(*) FROM d6a.transparencia_registros`))
		return n > 0 && cs.ver(c, addr) == n
	})
}

// CONTRACT §7: two checkpoints the service ever signed are consistent —
// across a restart, a replay, and two instances signing at once.
func TestCheckpointsSempreConsistentes(t *testing.T) {
	c := novaColonia(t, opcoes{})
	bairro := c.novaUC()
	c.iniciar()
	for range 12 {
		c.novoConselheiro(bairro)
	}
	vistos := checkpoints{}
	draws := func(n int) {
		for range n {
			if _, s := c.novaDemanda(bairro); s == uuid.Nil {
				t.Fatal("no counsellor drawn")
			}
		}
	}
	draws(3)
	vistos.esperarAssinado(c, c.w.Addr.String())

	// Restart.
	c.parar()
	c.iniciar()
	vistos.ver(c, c.w.Addr.String())
	draws(2)
	vistos.esperarAssinado(c, c.w.Addr.String())

	// Replay: every event again; no draw is repeated, no leaf added.
	antes := c.contar(`SELECT count(*) FROM d6a.transparencia_registros`)
	h3replayTodos(c)
	draws(1)
	if depois := c.contar(`SELECT count(*) FROM d6a.transparencia_registros`); depois != antes+1 {
		t.Fatalf("replay changed the log: %d leaves, want %d", depois, antes+1)
	}
	vistos.esperarAssinado(c, c.w.Addr.String())

	// A second instance on the same database and bus.
	ctx, cancel := context.WithCancel(context.Background())
	w2, err := colonia.New(ctx, c.cfg, colonia.Options{Now: c.clock.Now, Backoff: []time.Duration{20 * time.Millisecond}})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done2 := make(chan error, 1)
	go func() { done2 <- w2.Run(ctx) }()
	defer func() {
		cancel()
		<-done2
	}()
	c.eventually("second instance ready", func() bool { return w2.Ready(context.Background()) == nil })
	for range 3 {
		draws(1)
		vistos.ver(c, w2.Addr.String())
		vistos.ver(c, c.w.Addr.String())
	}
	vistos.esperarAssinado(c, w2.Addr.String())
	vistos.esperarAssinado(c, c.w.Addr.String())

	// Every pair: signature, and the smaller a prefix of the larger.
	vkey, err := http.Get("http://" + w2.Addr.String() + "/d6a/transparencia/chave")
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := io.ReadAll(vkey.Body)
	vkey.Body.Close()
	var cps []registro.Checkpoint
	for nota := range vistos {
		cp, err := registro.AbrirCheckpoint([]byte(nota), string(kb[:len(kb)-1]))
		if err != nil {
			t.Fatalf("%q: %v", nota, err)
		}
		cps = append(cps, cp)
	}
	sort.Slice(cps, func(i, j int) bool { return cps[i].Tamanho < cps[j].Tamanho })
	if len(cps) < 4 {
		t.Fatalf("saw %d distinct checkpoints, want at least 4", len(cps))
	}
	r := transparencia.Leitor(context.Background(), c.pool)
	for i := range cps {
		for j := i + 1; j < len(cps); j++ {
			a, b := cps[i], cps[j]
			p, err := tlog.ProveTree(b.Tamanho, a.Tamanho, r)
			if err != nil {
				t.Fatal(err)
			}
			if err := tlog.CheckTree(p, b.Tamanho, b.Raiz, a.Tamanho, a.Raiz); err != nil {
				t.Errorf("checkpoints %d and %d inconsistent: %v", a.Tamanho, b.Tamanho, err)
			}
		}
	}
	// And the whole log verifies from the public API alone.
	cli := &log.Cliente{Base: "http://" + c.w.Addr.String(), Chave: string(kb[:len(kb)-1])}
	res, _, err := cli.VerificarTudo(context.Background(), nil)
	if err != nil || res.Falhas != 0 || res.Verificados != res.Registros || res.Registros < 9 {
		t.Fatalf("verify --all: %+v %v", res, err)
	}
}
