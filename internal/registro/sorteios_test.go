package registro_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/equidade"
	"github.com/formigueiro/d6a/internal/historico"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/sorteio"
)

// The statistics' reading of the log: a long draw counts at its draw
// record with its list joined; list records add no draw; a draw whose
// list record was eliminated adds none; a short draw after list records
// left without their draw still counts.
func TestSorteiosJuntaListas(t *testing.T) {
	longo := longo(t, 2000)
	partes := registro.Partir(longo) // 2 list records, then the draw
	curto := historico.RegistroSintetico("sorteios", 1)
	ler := func(regs []registro.Registravel, eliminados ...int) *equidade.Acumulador {
		t.Helper()
		a := equidade.NovoAcumulador()
		var s registro.Sorteios
		for i, f := range regs {
			b, err := f.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			if slices.Contains(eliminados, i) {
				b = nil
			}
			if err := s.Somar(a, b); err != nil {
				t.Fatal(err)
			}
		}
		return a
	}
	a := ler(append(slices.Clone(partes), curto))
	r := a.Resultado()
	if a.Registros != 4 || a.Sorteios != 2 || len(r.Conselheiros) != 2000+len(curto.ElegiveisEntrada) {
		t.Fatalf("long and short draw: %d records, %d draws, %d counsellors", a.Registros, a.Sorteios, len(r.Conselheiros))
	}
	if a = ler(append(slices.Clone(partes), curto), 1); a.Sorteios != 1 {
		t.Errorf("a list record eliminated: %d draws, want the short one", a.Sorteios)
	}
	if a = ler([]registro.Registravel{partes[0], partes[1], curto}); a.Sorteios != 1 {
		t.Errorf("list records without their draw, then a short draw: %d draws, want 1", a.Sorteios)
	}
}

// BenchmarkSorteiosLer is the statistics' reading of a short draw's record
// (registro.Sorteios.Ler) beside its yardstick, the decoding of the two
// keys a reading record by record did (conselheiro_id and
// elegiveis_entrada), in the same run:
//
//	go test -run '^$' -bench SorteiosLer -count 5 ./internal/registro/
func BenchmarkSorteiosLer(b *testing.B) {
	var regs [][]byte
	for i := range 1000 {
		r, _ := historico.RegistroSintetico("sorteios", i).Bytes()
		regs = append(regs, r)
	}
	b.Run("duas_chaves", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			var r struct {
				Tipo *string `json:"tipo"`
				registro.SorteioLido
			}
			if err := json.Unmarshal(regs[i%len(regs)], &r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sorteios", func(b *testing.B) {
		var s registro.Sorteios
		for i := 0; b.Loop(); i++ {
			if l, err := s.Ler(regs[i%len(regs)]); err != nil || l == nil {
				b.Fatal(l, err)
			}
		}
	})
}

func longo(t *testing.T, n int) registro.Registro {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "sorteios/%d", i)).String()
	}
	slices.Sort(ids)
	res, err := sorteio.Sortear("base", "2026-12-01T00:00:00.000Z", ids)
	if err != nil {
		t.Fatal(err)
	}
	uc := uuid.NewSHA1(uuid.NameSpaceOID, []byte("sorteios/uc"))
	seq := int64(1)
	r, err := registro.NovoRegistro(uuid.NewSHA1(uuid.NameSpaceOID, []byte("sorteios/evento")), uuid.New(), uc, "base", &seq,
		"2026-12-01T00:00:00.000Z", res, uc, []uuid.UUID{uc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
