package atribuicao

import (
	"bytes"
	"testing"
	"time"
)

// The ids d6a makes grow in time order (UUIDv7), so the unique indexes on
// them grow at their right edge (docs/decisions.md, "Ids in time order").
func TestNovoIDEmOrdemDeTempo(t *testing.T) {
	anterior := novoID()
	for range 3 {
		time.Sleep(2 * time.Millisecond)
		id := novoID()
		if id.Version() != 7 {
			t.Fatalf("%s is a version %d UUID, want 7", id, id.Version())
		}
		if bytes.Compare(id[:], anterior[:]) <= 0 {
			t.Fatalf("%s made after %s sorts before it", id, anterior)
		}
		anterior = id
	}
	if s := New(Options{}); s.o.NovoID == nil || s.o.NovoID().Version() != 7 {
		t.Fatal("the executor's default NovoID does not make UUIDv7")
	} else {
		s.Close()
	}
}
