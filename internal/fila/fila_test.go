package fila

import (
	"testing"
	"time"

	"github.com/google/uuid"
)

// The first to enter is served, across units; entries at the same
// data_entrada are served in ordem_entrada, whatever their order in the
// input or their ids (T19, docs/decisions.md "FIFO ties").
func TestDevidaPrimeiraAEntrar(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	ucA, ucB := uuid.New(), uuid.New()
	tardia := Espera{Demanda: uuid.New(), UC: ucA, Entrada: t0.Add(time.Second), Ordem: 1}
	empate2 := Espera{Demanda: uuid.UUID{15: 1}, UC: ucA, Entrada: t0, Ordem: 3}
	empate1 := Espera{Demanda: uuid.UUID{15: 9}, UC: ucB, Entrada: t0, Ordem: 2}
	if i := Devida([]Espera{tardia, empate2, empate1}); i != 2 {
		t.Fatalf("Devida = %d, want 2, the tie's first entry", i)
	}
	if i := Devida([]Espera{tardia}); i != 0 {
		t.Fatalf("Devida of one = %d", i)
	}
	if i := Devida(nil); i != -1 {
		t.Fatalf("Devida of an empty coverage = %d, want -1", i)
	}
	if !Antes(empate1, empate2) || Antes(empate2, empate1) || !Antes(empate2, tardia) || Antes(tardia, empate1) {
		t.Fatal("Antes does not order by data_entrada, then ordem_entrada")
	}
}
