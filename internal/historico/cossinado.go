package historico

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/google/uuid"
	fnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/formigueiro/d6a/internal/beacon"
	"github.com/formigueiro/d6a/internal/registro"
)

// Cossinada is a synthetic log with witnesses: a rule record naming one
// witness (quorum 1) and n commitment records, leaf hashes and all, and a
// way to record that witness's cosignature of any tree, this log's or
// another.
type Cossinada struct {
	Registros []registro.Registravel
	// Folhas are the records' leaf hashes.
	Folhas []tlog.Hash
	signer note.Signer
}

// NovaCossinada makes the log of n commitments behind its rule record,
// with a fresh witness key.
func NovaCossinada(n int) (*Cossinada, error) {
	skey, vkey, err := note.GenerateKey(rand.Reader, "w.example/w1")
	if err != nil {
		return nil, err
	}
	chave, err := fnote.VKeyToCosignatureV1(vkey)
	if err != nil {
		return nil, err
	}
	signer, err := fnote.NewSignerForCosignatureV1(skey)
	if err != nil {
		return nil, err
	}
	p := beacon.NovoPrivado([]byte("cossinada"), 1_700_000_000, time.Second)
	c := &Cossinada{signer: signer}
	c.Registros = []registro.Registravel{registro.NovasRegrasSorteio(0, true, p.Cadeia(), time.Second, []string{chave}, 1)}
	for i := range n {
		c.Registros = append(c.Registros, registro.NovoCompromisso(uuid.New(), int64(i+1), time.Unix(1_700_000_000+int64(i), 0)))
	}
	for _, r := range c.Registros {
		b, err := r.Bytes()
		if err != nil {
			return nil, err
		}
		c.Folhas = append(c.Folhas, tlog.RecordHash(b))
	}
	return c, nil
}

// Cossinar is the record of the witness's cosignature of a checkpoint of
// size n with root raiz.
func (c *Cossinada) Cossinar(n int, raiz tlog.Hash) (registro.CossinaturasRegistro, error) {
	texto := fmt.Sprintf("%s\n%d\n%s\n", registro.OrigemPadrao, n, base64.StdEncoding.EncodeToString(raiz[:]))
	assinada, err := note.Sign(&note.Note{Text: texto}, c.signer)
	if err != nil {
		return registro.CossinaturasRegistro{}, err
	}
	return registro.NovasCossinaturas(string(assinada))
}

// Raiz is RFC 6962's root of the leaf hashes hs (tlog.TreeHash over them).
func Raiz(hs []tlog.Hash) (tlog.Hash, error) {
	var guardados []tlog.Hash
	ler := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for j, x := range idx {
			out[j] = guardados[x]
		}
		return out, nil
	})
	for n, h := range hs {
		novos, err := tlog.StoredHashesForRecordHash(int64(n), h, ler)
		if err != nil {
			return tlog.Hash{}, err
		}
		guardados = append(guardados, novos...)
	}
	return tlog.TreeHash(int64(len(hs)), ler)
}
