// Package fila is the pending queue's rule of spec 4.7 as pure logic: which
// waiting demand a release serves. The executor runs it on the rows it
// reads, the replay verifier (transparencia) on the queue it rebuilds from
// the records, so a sweep that served another demand is a divergence of
// the one rule, not of two copies.
package fila

import (
	"time"

	"github.com/google/uuid"
)

// Espera is a demand waiting in the pending queue.
type Espera struct {
	Demanda uuid.UUID
	UC      uuid.UUID
	// Entrada is data_entrada, at the database's 10 ms (TIMESTAMPTZ(2)):
	// entries within it tie.
	Entrada time.Time
	// Ordem is ordem_entrada, the tie's order: the order the decisions
	// queued the demands in (docs/decisions.md "FIFO ties"). The replay,
	// whose records carry no data_entrada, orders by the record that
	// queued the demand, which is that same order.
	Ordem int64
}

// Antes reports whether a entered the queue before b (FIFO, spec 4.7 and
// T19): by data_entrada, ties by ordem_entrada.
func Antes(a, b Espera) bool {
	if !a.Entrada.Equal(b.Entrada) {
		return a.Entrada.Before(b.Entrada)
	}
	return a.Ordem < b.Ordem
}

// Devida is the demand a release of a unit serves among esperas, the
// waiting demands of its coverage (the unit and every unit below it): the
// index of the one that entered first, or -1 when none waits.
func Devida(esperas []Espera) int {
	d := -1
	for i, x := range esperas {
		if d < 0 || Antes(x, esperas[d]) {
			d = i
		}
	}
	return d
}
