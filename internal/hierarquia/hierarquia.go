// Package hierarquia caches the civic-unit (UC) tree read from
// core.uc_polygons (spec 1.3, 4.3, 6.5): ascending chains for the draw in
// steps and descendants for pending-queue sweeps (spec 4.7).
package hierarquia

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
)

// Par is one row of core.uc_polygons: a unit and its parent (nil at a root).
type Par struct {
	ID     uuid.UUID
	Parent *uuid.UUID
}

// Loader reads the whole hierarchy; the store provides it.
type Loader func(ctx context.Context) ([]Par, error)

// Cache holds the tree in memory for TTL. Units are interned to int32
// indexes so a country-sized tree (250,000 units) stays a few megabytes and
// chains cost O(depth), descendants O(subtree).
type Cache struct {
	load Loader
	ttl  time.Duration
	now  func() time.Time

	mu       sync.RWMutex
	loadedAt time.Time
	loaded   bool
	tree     *tree
}

type tree struct {
	index    map[uuid.UUID]int32
	ids      []uuid.UUID
	parent   []int32 // -1 at a root or when the parent is unknown
	children [][]int32
}

// New builds a cache; nothing is read until first use.
func New(load Loader, ttl time.Duration, now func() time.Time) *Cache {
	if now == nil {
		now = time.Now
	}
	return &Cache{load: load, ttl: ttl, now: now}
}

// Cadeia returns the ascending chain of uc: the unit itself, its parent, …,
// the root. A unit missing from the table (or a missing table) yields the
// unit alone (spec 4.3).
func (c *Cache) Cadeia(ctx context.Context, uc uuid.UUID) ([]uuid.UUID, error) {
	t, err := c.get(ctx)
	if err != nil {
		return nil, err
	}
	out := []uuid.UUID{uc}
	i, ok := t.index[uc]
	if !ok {
		return out, nil
	}
	// The bound guards against a cycle in data d6a does not own.
	for p := t.parent[i]; p >= 0 && len(out) <= len(t.ids); p = t.parent[p] {
		out = append(out, t.ids[p])
	}
	return out, nil
}

// ComDescendentes returns uc followed by every unit below it, breadth first.
func (c *Cache) ComDescendentes(ctx context.Context, uc uuid.UUID) ([]uuid.UUID, error) {
	t, err := c.get(ctx)
	if err != nil {
		return nil, err
	}
	out := []uuid.UUID{uc}
	i, ok := t.index[uc]
	if !ok {
		return out, nil
	}
	seen := map[int32]bool{i: true}
	queue := []int32{i}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, ch := range t.children[n] {
			if !seen[ch] {
				seen[ch] = true
				out = append(out, t.ids[ch])
				queue = append(queue, ch)
			}
		}
	}
	return out, nil
}

// Tamanho is the number of units cached (loading if needed).
func (c *Cache) Tamanho(ctx context.Context) (int, error) {
	t, err := c.get(ctx)
	if err != nil {
		return 0, err
	}
	return len(t.ids), nil
}

// Invalidar forces a reload on next use.
func (c *Cache) Invalidar() {
	c.mu.Lock()
	c.loaded = false
	c.mu.Unlock()
}

func (c *Cache) get(ctx context.Context) (*tree, error) {
	c.mu.RLock()
	if c.loaded && c.now().Sub(c.loadedAt) < c.ttl {
		t := c.tree
		c.mu.RUnlock()
		return t, nil
	}
	c.mu.RUnlock()

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.loaded && c.now().Sub(c.loadedAt) < c.ttl {
		return c.tree, nil
	}
	start := time.Now()
	pares, err := c.load(ctx)
	if err != nil {
		if undefinedTable(err) {
			slog.Warn("core.uc_polygons ausente: cada UC é a própria cadeia (spec 4.3)")
			pares, err = nil, nil
		} else if c.tree != nil {
			// Keep serving the stale tree rather than failing draws.
			slog.Error("hierarquia: recarga falhou, mantendo a anterior", "erro", err)
			c.loadedAt = c.now()
			return c.tree, nil
		} else {
			return nil, err
		}
	}
	c.tree = build(pares)
	c.loaded = true
	c.loadedAt = c.now()
	slog.Info("hierarquia de UCs carregada", "ucs", len(c.tree.ids), "duracao", time.Since(start).String())
	return c.tree, nil
}

func build(pares []Par) *tree {
	t := &tree{
		index:    make(map[uuid.UUID]int32, len(pares)),
		ids:      make([]uuid.UUID, 0, len(pares)),
		parent:   make([]int32, 0, len(pares)),
		children: make([][]int32, len(pares)),
	}
	for _, p := range pares {
		if _, dup := t.index[p.ID]; dup {
			continue
		}
		t.index[p.ID] = int32(len(t.ids))
		t.ids = append(t.ids, p.ID)
		t.parent = append(t.parent, -1)
	}
	t.children = t.children[:len(t.ids)]
	for _, p := range pares {
		if p.Parent == nil {
			continue
		}
		i := t.index[p.ID]
		if pi, ok := t.index[*p.Parent]; ok && pi != i && t.parent[i] < 0 {
			t.parent[i] = pi
			t.children[pi] = append(t.children[pi], i)
		}
	}
	return t
}

func undefinedTable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "42P01" || pe.Code == "3F000")
}
