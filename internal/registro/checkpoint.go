package registro

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// OrigemPadrao is the default origin line and key name (CONTRACT §2
// D6A_LOG_ORIGIN).
const OrigemPadrao = "d6a/sorteios"

// Checkpoint is the body of a C2SP tlog-checkpoint: origin, size, root.
type Checkpoint struct {
	Origem  string
	Tamanho int64
	Raiz    tlog.Hash
}

// Texto is the note text: three lines, each ending in a newline.
func (c Checkpoint) Texto() string {
	return fmt.Sprintf("%s\n%d\n%s\n", c.Origem, c.Tamanho, base64.StdEncoding.EncodeToString(c.Raiz[:]))
}

// LerCheckpoint parses a checkpoint's note text (extension lines after the
// root are allowed by C2SP and ignored).
func LerCheckpoint(texto string) (Checkpoint, error) {
	linhas := strings.SplitN(texto, "\n", 4)
	if len(linhas) < 4 || linhas[0] == "" {
		return Checkpoint{}, errors.New("checkpoint: want origin, size and root lines")
	}
	n, err := strconv.ParseInt(linhas[1], 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != linhas[1] {
		return Checkpoint{}, fmt.Errorf("checkpoint: size %q is not a decimal number", linhas[1])
	}
	raiz, err := base64.StdEncoding.DecodeString(linhas[2])
	if err != nil || len(raiz) != tlog.HashSize {
		return Checkpoint{}, fmt.Errorf("checkpoint: root %q is not a base64 SHA-256 hash", linhas[2])
	}
	return Checkpoint{Origem: linhas[0], Tamanho: n, Raiz: tlog.Hash(raiz)}, nil
}

// AbrirCheckpoint checks a signed checkpoint against the verifier key vkey
// and the expected origin (empty: the key's name), and parses it.
func AbrirCheckpoint(assinado []byte, vkey string) (Checkpoint, error) {
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("verifier key: %w", err)
	}
	n, err := note.Open(assinado, note.VerifierList(v))
	if err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint signature: %w", err)
	}
	c, err := LerCheckpoint(n.Text)
	if err != nil {
		return c, err
	}
	if c.Origem != v.Name() {
		return c, fmt.Errorf("checkpoint origin %q differs from the key's name %q", c.Origem, v.Name())
	}
	return c, nil
}
