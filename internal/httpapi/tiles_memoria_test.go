package httpapi

import (
	"testing"
	"time"
)

// The memory of full tiles: hash tiles kept, bundles for validadeBundle
// at most (an elimination rewrites one), and never past its byte limit.
func TestMemoriaTiles(t *testing.T) {
	agora := time.Unix(0, 0)
	m := &memoriaTiles{agora: func() time.Time { return agora }, limite: 10}
	m.guardar("tile/0/000", []byte("hhhh"))
	m.guardar("tile/entries/000", []byte("eeee"))
	agora = agora.Add(validadeBundle + time.Second)
	if b, ok := m.ler("tile/0/000", false); !ok || string(b) != "hhhh" {
		t.Errorf("hash tile: %q %v", b, ok)
	}
	if _, ok := m.ler("tile/entries/000", true); ok {
		t.Error("a bundle kept past validadeBundle")
	}
	m.guardar("tile/0/001", []byte("xxxx"))
	if m.bytes > m.limite {
		t.Errorf("%d bytes kept, limit %d", m.bytes, m.limite)
	}
	if _, ok := m.ler("tile/0/001", false); !ok {
		t.Error("the newest tile was not kept")
	}
}
