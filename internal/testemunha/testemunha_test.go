package testemunha

import (
	"crypto/rand"
	"strings"
	"testing"

	fnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"
)

func chaveTestemunha(t *testing.T, nome string) (plana, cossinatura string) {
	t.Helper()
	_, vkey, err := note.GenerateKey(rand.Reader, nome)
	if err != nil {
		t.Fatal(err)
	}
	c, err := fnote.VKeyToCosignatureV1(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return vkey, c
}

// D6A_LOG_TESTEMUNHAS (CONTRACT §2): comma-separated "URL VKEY" entries;
// anything else is refused with a reason, so serve exits 2 naming the
// variable.
func TestAnalisar(t *testing.T) {
	plana, k1 := chaveTestemunha(t, "tce.example/w1")
	_, k2 := chaveTestemunha(t, "mp.example/w2")
	ts, err := Analisar(" https://w1.example " + k1 + " , http://127.0.0.1:7380/x/ " + k2 + ",")
	if err != nil || len(ts) != 2 {
		t.Fatalf("%v %v", ts, err)
	}
	if ts[0].URL != "https://w1.example/" || ts[0].Nome != "tce.example/w1" || ts[1].URL != "http://127.0.0.1:7380/x/" || ts[1].Chave != k2 {
		t.Errorf("parsed %+v", ts)
	}
	if ts, err := Analisar(""); err != nil || len(ts) != 0 {
		t.Errorf("empty: %v %v", ts, err)
	}
	for nome, v := range map[string]string{
		"no key":        "https://w1.example",
		"no scheme":     "w1.example " + k1,
		"bad key":       "https://w1.example tce.example/w1+00000000+AAAA",
		"plain Ed25519": "https://w1.example " + plana,
		"twice":         "https://a.example " + k1 + ",https://b.example " + k1,
		"three fields":  "https://w1.example " + k1 + " extra",
	} {
		if _, err := Analisar(v); err == nil {
			t.Errorf("%s: %q accepted", nome, v)
		} else if strings.TrimSpace(err.Error()) == "" {
			t.Errorf("%s: an empty reason", nome)
		}
	}
}
