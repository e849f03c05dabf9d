package registro

import (
	"strings"
	"testing"
)

// The erasure record: canonical, nothing but indices, checked by itself
// (its replay: internal/replay's TestEliminacao).
func TestEliminacao(t *testing.T) {
	e := NovaEliminacao(9, []int64{7, 2, 7})
	b, err := e.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"tipo":"d6a.eliminacao","event_id":"` + e.EventID.String() + `","indices":[2,7]}`
	if string(b) != want {
		t.Fatalf("bytes %s, want %s", b, want)
	}
	f, err := LerRegistravel(b)
	if err != nil || ConferirRegistravel(f) != nil {
		t.Fatalf("read %#v, %v; conferir %v", f, err, ConferirRegistravel(f))
	}
	if o := NovaEliminacao(10, []int64{2, 7}); o.EventID == e.EventID {
		t.Error("two erasures at different indices share an id")
	}
	for _, ruim := range []string{
		`{"tipo":"d6a.eliminacao","event_id":"` + e.EventID.String() + `","indices":[]}`,
		`{"tipo":"d6a.eliminacao","event_id":"` + e.EventID.String() + `","indices":[7,2]}`,
		`{"tipo":"d6a.eliminacao","event_id":"` + e.EventID.String() + `","indices":[-1]}`,
	} {
		f, err := LerRegistravel([]byte(ruim))
		if err == nil {
			err = ConferirRegistravel(f)
		}
		if err == nil {
			t.Errorf("%s accepted", ruim)
		}
	}
	if _, err := LerRegistravel([]byte(strings.Replace(want, "[2,7]", "null", 1))); err == nil {
		t.Error("indices null accepted")
	}
}
