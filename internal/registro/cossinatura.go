package registro

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	fnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"
)

// Cossinatura is one witness's cosignature of a checkpoint (C2SP
// tlog-cosignature, cosignature/v1).
type Cossinatura struct {
	// Testemunha is the witness's key name.
	Testemunha string
	// Chave is the witness's verifier key it was checked with.
	Chave string
	// Linha is the signature line, "— name base64\n".
	Linha string
	// Em is when the witness cosigned (the timestamp it signed).
	Em time.Time
}

// ErrQuorum means a checkpoint carries fewer valid cosignatures from the
// named witnesses than the reader requires.
var ErrQuorum = errors.New("transparencia: too few witness cosignatures")

// VerificadorTestemunha parses a witness's cosignature/v1 verifier key
// (name+hash+base64, key type 0x04; CONTRACT §2 D6A_LOG_TESTEMUNHAS).
func VerificadorTestemunha(vkey string) (note.Verifier, error) {
	// formats would also take a plain Ed25519 key (0x01) as this one;
	// the contract names the witness's cosignature key, so that is asked for.
	partes := strings.SplitN(vkey, "+", 3)
	if len(partes) == 3 {
		if k, err := base64.StdEncoding.DecodeString(partes[2]); err == nil && len(k) > 0 && k[0] != 0x04 {
			return nil, fmt.Errorf("witness key %q: key type 0x%02x, want 0x04 (cosignature/v1, as the witness prints it)", vkey, k[0])
		}
	}
	v, err := fnote.NewVerifierForCosignatureV1(vkey)
	if err != nil {
		return nil, fmt.Errorf("witness key %q: %w", vkey, err)
	}
	return v, nil
}

// Cossinaturas opens a checkpoint note with the log's verifier and every
// witness key in testemunhas, and returns the log's checkpoint and the
// valid cosignatures, one per witness. A line from a named witness that
// does not verify fails the whole note (note.Open's rule): a reader must
// not count a forged cosignature as absent.
func Cossinaturas(nota []byte, vkeyLog string, testemunhas []string) (Checkpoint, []Cossinatura, error) {
	log, err := note.NewVerifier(vkeyLog)
	if err != nil {
		return Checkpoint{}, nil, fmt.Errorf("verifier key: %w", err)
	}
	vs := []note.Verifier{log}
	chaves := map[string]string{} // name+hash → vkey
	for _, k := range testemunhas {
		v, err := VerificadorTestemunha(k)
		if err != nil {
			return Checkpoint{}, nil, err
		}
		vs = append(vs, v)
		chaves[fmt.Sprintf("%s+%08x", v.Name(), v.KeyHash())] = k
	}
	n, err := note.Open(nota, note.VerifierList(vs...))
	if err != nil {
		return Checkpoint{}, nil, fmt.Errorf("checkpoint signatures: %w", err)
	}
	var proprio bool
	var cs []Cossinatura
	for _, s := range n.Sigs {
		if s.Name == log.Name() && s.Hash == log.KeyHash() {
			proprio = true
			continue
		}
		k, ok := chaves[fmt.Sprintf("%s+%08x", s.Name, s.Hash)]
		if !ok {
			continue
		}
		em, err := fnote.CoSigV1Timestamp(s)
		if err != nil {
			return Checkpoint{}, nil, err
		}
		cs = append(cs, Cossinatura{Testemunha: s.Name, Chave: k, Linha: "— " + s.Name + " " + s.Base64 + "\n", Em: em.UTC()})
	}
	if !proprio {
		return Checkpoint{}, nil, errors.New("checkpoint: no signature of the log's key")
	}
	c, err := LerCheckpoint(n.Text)
	if err != nil {
		return c, nil, err
	}
	if c.Origem != log.Name() {
		return c, nil, fmt.Errorf("checkpoint origin %q differs from the key's name %q", c.Origem, log.Name())
	}
	return c, cs, nil
}

// ConferirQuorum fails with ErrQuorum unless cs holds at least quorum
// cosignatures from distinct witnesses.
func ConferirQuorum(cs []Cossinatura, quorum int) error {
	distintas := map[string]bool{}
	for _, c := range cs {
		distintas[c.Chave] = true
	}
	if len(distintas) < quorum {
		nomes := make([]string, 0, len(cs))
		for _, c := range cs {
			nomes = append(nomes, c.Testemunha)
		}
		return fmt.Errorf("%w: %d of the %d required (cosigned by: %s)", ErrQuorum, len(distintas), quorum, cmpOr(strings.Join(nomes, ", "), "none"))
	}
	return nil
}

func cmpOr(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// LinhasCossinatura parses a witness's add-checkpoint answer: signature
// lines, each "— name base64".
func LinhasCossinatura(corpo []byte) ([]string, error) {
	var out []string
	for _, l := range bytes.SplitAfter(corpo, []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		if !bytes.HasPrefix(l, []byte("— ")) || l[len(l)-1] != '\n' {
			return nil, fmt.Errorf("witness answer: %q is not a signature line", l)
		}
		out = append(out, string(l))
	}
	if len(out) == 0 {
		return nil, errors.New("witness answer: no signature line")
	}
	return out, nil
}
