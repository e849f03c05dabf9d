package hierarquia

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
)

func id(n byte) uuid.UUID        { return uuid.UUID{15: n} }
func ptr(u uuid.UUID) *uuid.UUID { return &u }

// país(1) → estado(2) → cidade(3) → bairros(4,5); 5 → micro(6)
var arvore = []Par{
	{ID: id(6), Parent: ptr(id(5))},
	{ID: id(1)},
	{ID: id(2), Parent: ptr(id(1))},
	{ID: id(3), Parent: ptr(id(2))},
	{ID: id(4), Parent: ptr(id(3))},
	{ID: id(5), Parent: ptr(id(3))},
}

func TestCadeiaAscendente(t *testing.T) {
	c := New(func(context.Context) ([]Par, error) { return arvore, nil }, time.Hour, nil)
	got, err := c.Cadeia(context.Background(), id(6))
	if err != nil {
		t.Fatal(err)
	}
	want := []uuid.UUID{id(6), id(5), id(3), id(2), id(1)}
	if len(got) != len(want) {
		t.Fatalf("cadeia = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("cadeia = %v, want %v", got, want)
		}
	}
	solo, _ := c.Cadeia(context.Background(), id(99))
	if len(solo) != 1 || solo[0] != id(99) {
		t.Fatalf("unknown UC chain = %v", solo)
	}
}

func TestComDescendentes(t *testing.T) {
	c := New(func(context.Context) ([]Par, error) { return arvore, nil }, time.Hour, nil)
	got, _ := c.ComDescendentes(context.Background(), id(3))
	set := map[uuid.UUID]bool{}
	for _, u := range got {
		set[u] = true
	}
	if got[0] != id(3) || len(got) != 4 || !set[id(4)] || !set[id(5)] || !set[id(6)] {
		t.Fatalf("descendentes de 3 = %v", got)
	}
	folha, _ := c.ComDescendentes(context.Background(), id(6))
	if len(folha) != 1 {
		t.Fatalf("leaf = %v", folha)
	}
}

func TestCycleIsBounded(t *testing.T) {
	c := New(func(context.Context) ([]Par, error) {
		return []Par{{ID: id(1), Parent: ptr(id(2))}, {ID: id(2), Parent: ptr(id(1))}}, nil
	}, time.Hour, nil)
	got, err := c.Cadeia(context.Background(), id(1))
	if err != nil || len(got) > 3 {
		t.Fatalf("cycle chain = %v, %v", got, err)
	}
}

func TestTTLReloadsAndMissingTable(t *testing.T) {
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	loads := 0
	rows := arvore[:1]
	c := New(func(context.Context) ([]Par, error) {
		loads++
		if loads == 1 {
			return nil, &pgconn.PgError{Code: "42P01"}
		}
		return rows, nil
	}, time.Hour, func() time.Time { return now })
	ctx := context.Background()
	if n, err := c.Tamanho(ctx); err != nil || n != 0 {
		t.Fatalf("missing table: %d, %v", n, err)
	}
	c.Tamanho(ctx)
	if loads != 1 {
		t.Fatalf("reloaded within TTL: %d loads", loads)
	}
	now = now.Add(2 * time.Hour)
	if n, _ := c.Tamanho(ctx); n != 1 || loads != 2 {
		t.Fatalf("after TTL: n=%d loads=%d", n, loads)
	}
}

func TestStaleTreeKeptOnReloadError(t *testing.T) {
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	fail := false
	c := New(func(context.Context) ([]Par, error) {
		if fail {
			return nil, errors.New("db down")
		}
		return arvore, nil
	}, time.Minute, func() time.Time { return now })
	ctx := context.Background()
	c.Tamanho(ctx)
	fail, now = true, now.Add(time.Hour)
	if n, err := c.Tamanho(ctx); err != nil || n != 6 {
		t.Fatalf("stale: %d %v", n, err)
	}
	c2 := New(func(context.Context) ([]Par, error) { return nil, errors.New("db down") }, time.Minute, nil)
	if _, err := c2.Tamanho(ctx); err == nil {
		t.Fatal("first load error swallowed")
	}
}
