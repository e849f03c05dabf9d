package store_test

import (
	"reflect"
	"testing"
	"time"
)

// A witness key's latest cosignature is 0 and the zero time before its
// first (max() of no rows is NULL), then the largest size and the latest
// time, whatever the order they arrived in; a second cosignature of the
// same size is ignored, and a checkpoint's lines come by key.
func TestCossinaturas(t *testing.T) {
	ctx, _, q := open(t)
	n, em, err := q.UltimaCossinatura(ctx, "w1")
	if err != nil || n != 0 || !em.IsZero() {
		t.Fatalf("before any cosignature: %d %v %v, want 0, zero time, nil", n, em, err)
	}
	check(t, q.GravarCossinatura(ctx, "w2", 7, "— w2 B\n", at(3*time.Second), at(4*time.Second)))
	check(t, q.GravarCossinatura(ctx, "w1", 7, "— w1 A\n", at(2*time.Second), at(4*time.Second)))
	check(t, q.GravarCossinatura(ctx, "w1", 5, "— w1 old\n", at(time.Second), at(4*time.Second)))
	check(t, q.GravarCossinatura(ctx, "w1", 7, "— w1 again\n", at(9*time.Second), at(9*time.Second)))
	n, em, err = q.UltimaCossinatura(ctx, "w1")
	if err != nil || n != 7 || !em.Equal(at(2*time.Second)) {
		t.Fatalf("w1: %d %v %v, want 7 at %v", n, em, err, at(2*time.Second))
	}
	linhas, err := q.LinhasCossinatura(ctx, 7)
	check(t, err)
	if want := []string{"— w1 A\n", "— w2 B\n"}; !reflect.DeepEqual(linhas, want) {
		t.Fatalf("lines of size 7: %q, want %q", linhas, want)
	}
}
