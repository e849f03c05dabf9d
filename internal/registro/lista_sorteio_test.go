package registro

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/sorteio"
)

// sorteioDe is a draw among n eligible counsellors, as the executor builds
// it.
func sorteioDe(tb testing.TB, n int) Registro {
	tb.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = uuid.NewSHA1(uuid.NameSpaceOID, []byte{byte(i >> 16), byte(i >> 8), byte(i)}).String()
	}
	slices.Sort(ids)
	res, err := sorteio.SortearComRodada("0b7f1ad3-4b1e-4a43-9c8e-b1d8f8b8a001", "2026-12-07T10:00:00.000Z", "", ids)
	if err != nil {
		tb.Fatal(err)
	}
	uc := uuid.MustParse("9a3c2b1e-0000-4000-8000-000000000001")
	seq := int64(7)
	r, err := NovoRegistro(uuid.NewSHA1(uuid.NameSpaceOID, []byte{byte(n >> 16), byte(n >> 8), byte(n)}), uuid.New(), uc,
		"0b7f1ad3-4b1e-4a43-9c8e-b1d8f8b8a001", &seq, "2026-12-07T10:00:00.000Z", res, uc, []uuid.UUID{uc}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// A draw among any number of counsellors leaves every record within a
// C2SP entry, each canonical and checked by itself, and the draw, joined
// in log order, recomputes from the full list; a short one is one record
// as ever.
func TestListaSorteio(t *testing.T) {
	for _, n := range []int{1, ElegiveisEmLinha, ElegiveisEmLinha + 1, 900, ElegiveisPorParte * 2, 5000, 100_000} {
		r := sorteioDe(t, n)
		regs := Partir(r)
		partes := (n + ElegiveisPorParte - 1) / ElegiveisPorParte
		if n <= ElegiveisEmLinha {
			partes = 0
		}
		if len(regs) != partes+1 {
			t.Fatalf("n=%d: %d records, want %d", n, len(regs), partes+1)
		}
		var l Listas
		maior := 0
		for i, f := range regs {
			b, err := f.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			maior = max(maior, len(b))
			if len(b) > LimiteRegistro {
				t.Fatalf("n=%d: record %d has %d bytes", n, i, len(b))
			}
			lido, err := LerRegistravel(b)
			if err != nil {
				t.Fatalf("n=%d: record %d: %v", n, i, err)
			}
			if lento, err := lerRegistravelLento(b); err != nil || !reflectIgual(t, lento, lido) {
				t.Fatalf("n=%d: record %d: slow path %v", n, i, err)
			}
			if err := ConferirRegistravel(lido); err != nil {
				t.Fatalf("n=%d: record %d alone: %v", n, i, err)
			}
			f, err = l.Aplicar(lido)
			if err != nil {
				t.Fatalf("n=%d: record %d: %v", n, i, err)
			}
			if i == len(regs)-1 {
				s := f.(Registro)
				if len(s.ElegiveisEntrada) != n {
					t.Fatalf("n=%d: joined %d ids", n, len(s.ElegiveisEntrada))
				}
				if err := Conferir(s); err != nil {
					t.Fatalf("n=%d: joined draw: %v", n, err)
				}
			}
		}
		t.Logf("n=%d: %d records, the largest %d bytes", n, len(regs), maior)
		if partes > 0 {
			if err := Conferir(regs[len(regs)-1].(Registro)); err == nil {
				t.Fatalf("n=%d: a draw without its list recomputed", n)
			}
		}
	}
}

func reflectIgual(t *testing.T, a, b Registravel) bool {
	t.Helper()
	x, _ := a.Bytes()
	y, _ := b.Bytes()
	return bytes.Equal(x, y)
}

// A rigged list is caught: an id swapped (the hash), a part missing or
// out of order, list records without their draw, a part eliminated.
func TestListaSorteioAdulterada(t *testing.T) {
	r := sorteioDe(t, 5000)
	regs := Partir(r)
	juntar := func(regs []Registravel) error {
		var l Listas
		var ultimo Registravel
		for _, f := range regs {
			var err error
			if ultimo, err = l.Aplicar(f); err != nil {
				return err
			}
		}
		if err := l.Pendente(); err != nil {
			return err
		}
		return Conferir(ultimo.(Registro))
	}
	if err := juntar(regs); err != nil {
		t.Fatal(err)
	}
	trocada := slices.Clone(regs)
	p := trocada[1].(ListaSorteio)
	p.Elegiveis = slices.Clone(p.Elegiveis)
	p.Elegiveis[3] = uuid.New().String()
	slices.Sort(p.Elegiveis)
	trocada[1] = p
	var f *Falha
	if err := juntar(trocada); !errors.As(err, &f) {
		t.Fatalf("an id swapped: %v", err)
	}
	if err := juntar(slices.Delete(slices.Clone(regs), 1, 2)); err == nil {
		t.Fatal("a part missing: accepted")
	}
	fora := slices.Clone(regs)
	fora[0], fora[1] = fora[1], fora[0]
	if err := juntar(fora); err == nil {
		t.Fatal("parts out of order: accepted")
	}
	if err := juntar(regs[:len(regs)-1]); err == nil {
		t.Fatal("list records without their draw: accepted")
	}
	var l Listas
	for i, f := range regs {
		if i == 2 {
			f = nil
		}
		if _, err := l.Aplicar(f); i == len(regs)-1 && !errors.Is(err, ErrListaEliminada) {
			t.Fatalf("a part eliminated: %v", err)
		}
	}
}

// BenchmarkSorteio100mil is one draw among 100,000 eligible counsellors
// (a national step): the shuffle and the records the executor appends.
func BenchmarkSorteio100mil(b *testing.B) {
	r := sorteioDe(b, 100_000)
	ids := r.ElegiveisEntrada
	b.ResetTimer()
	var n, bytesTotal int
	for b.Loop() {
		res, err := sorteio.SortearComRodada(r.Base, r.Timestamp, "", ids)
		if err != nil {
			b.Fatal(err)
		}
		reg, err := NovoRegistro(r.EventIDSorteio, r.DemandaID, r.UnidadeCivicaID, r.Base, r.BaseSequence, r.Timestamp, res, r.Degrau, []uuid.UUID{r.UnidadeCivicaID}, nil)
		if err != nil {
			b.Fatal(err)
		}
		regs := Partir(reg)
		n, bytesTotal = len(regs), 0
		for _, f := range regs {
			x, err := f.Bytes()
			if err != nil || len(x) > LimiteRegistro {
				b.Fatal(len(x), err)
			}
			bytesTotal += len(x)
		}
	}
	b.ReportMetric(float64(n), "registros/sorteio")
	b.ReportMetric(float64(bytesTotal), "bytes/sorteio")
}
