package log_test

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/beacon"
	"github.com/formigueiro/d6a/internal/historico"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/sorteio"
	"github.com/formigueiro/d6a/internal/verificar/log"
)

// historiaComRodadas is a synthetic history whose draws each carry a
// round of their own from p, after a rule record naming p's chain.
func historiaComRodadas(t *testing.T, p *beacon.Privado, sorteios int) []registro.Registravel {
	t.Helper()
	regras := registro.NovasRegrasSorteio(0, true, p.Cadeia(), time.Second, nil, 0)
	var regs []registro.Registravel
	err := historico.CadaHistoria("rodadas-em-lote", sorteios, historico.Opcoes{
		Unidades: 4,
		Beacon: &historico.Beacon{Regras: regras, Rodada: func(n uint64) (beacon.Rodada, error) {
			return p.Assinar(n), nil
		}},
	}, func(r registro.Registravel) error {
		regs = append(regs, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return regs
}

// TestRodadaForjadaNoFundoDoLote: the walk verifies the rounds' signatures
// in batches; one forged deep in a batch (another chain's signature of the
// right round, the draw recomputed with it so the record verifies by
// itself) is caught at its own record, the only failure, by `verify --url
// --all --replay` and by the one-pairing-per-round check alike.
func TestRodadaForjadaNoFundoDoLote(t *testing.T) {
	t.Parallel()
	p := beacon.NovoPrivado([]byte("rodadas-em-lote"), 1_700_000_000, time.Second)
	regs := historiaComRodadas(t, p, 150)
	// The 111th draw: with 32 rounds a batch, the 15th of the 4th batch.
	alvo, vistos := -1, 0
	for i, r := range regs {
		if _, ok := r.(registro.Registro); ok {
			if vistos == 110 {
				alvo = i
				break
			}
			vistos++
		}
	}
	if alvo < 0 {
		t.Fatal("fewer than 111 draws")
	}
	honesta := servirRegistraveis(t, regs)
	c := &log.Cliente{Base: honesta, RodadasPorLote: 32}
	if res, err := c.Reproduzir(t.Context(), uuid.Nil, nil); err != nil || res.Primeira != nil || res.Falhas != 0 || len(res.Replay.Divergencias) != 0 {
		t.Fatalf("honest log: %v / %v / %d failures / %v", err, res.Primeira, res.Falhas, res.Replay.Divergencias)
	}

	rig := regs[alvo].(registro.Registro)
	forjada := beacon.NovoPrivado([]byte("outra cadeia"), 1_700_000_000, time.Second).Assinar(uint64(*rig.Rodada))
	rig.AssinaturaRodada = hex.EncodeToString(forjada.Assinatura)
	res, err := sorteio.SortearComRodada(rig.Base, rig.Timestamp, registro.Randomness(rig.AssinaturaRodada), rig.ElegiveisEntrada)
	if err != nil {
		t.Fatal(err)
	}
	rig.ElegiveisEntrada, rig.Ordenados, rig.ListaElegiveisHash, rig.Seed = res.Entrada, res.Ordenados, res.ListaHash, res.Seed
	rig.ConselheiroID = uuid.MustParse(res.Selecionado)
	if err := registro.Conferir(rig); err != nil {
		t.Fatalf("the rigged draw does not verify by itself: %v", err)
	}
	rigado := append([]registro.Registravel(nil), regs...)
	rigado[alvo] = rig
	url := servirRegistraveis(t, rigado)
	for _, porLote := range []int{32, 1} {
		c := &log.Cliente{Base: url, RodadasPorLote: porLote}
		r, err := c.Reproduzir(t.Context(), uuid.Nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("registro %d: registro.assinatura_rodada", alvo)
		if r.Primeira == nil || !strings.HasPrefix(r.Primeira.Error(), want) || r.Falhas != 1 {
			t.Fatalf("%d a batch: first failure %v, %d failures; want %q…, one failure", porLote, r.Primeira, r.Falhas, want)
		}
		if r.Verificados != r.Registros-1 {
			t.Fatalf("%d a batch: %d of %d records verified, want all but the rigged one", porLote, r.Verificados, r.Registros)
		}
	}
}
