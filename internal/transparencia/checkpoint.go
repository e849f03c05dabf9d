package transparencia

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/store"
)

// GerarChave makes a new Ed25519 signer key and its verifier key, in the
// note package's text format, named origem.
func GerarChave(origem string) (skey, vkey string, err error) {
	return note.GenerateKey(rand.Reader, origem)
}

// Chave is the log's signing key.
type Chave struct {
	Signer note.Signer
	// Verificador is the verifier key served at /d6a/transparencia/chave.
	Verificador string
}

// NovaChave parses a signer key ("PRIVATE+KEY+name+hash+base64").
func NovaChave(skey string) (Chave, error) {
	s, err := note.NewSigner(skey)
	if err != nil {
		return Chave{}, err
	}
	// The verifier key is not exposed by note.Signer: derive it from the
	// seed (the key's last field is 0x01 ‖ 32-byte Ed25519 seed).
	// Names have no '+', base64 may: PRIVATE+KEY+name+hash+key.
	resto := strings.TrimPrefix(skey, "PRIVATE+KEY+")
	_, resto, _ = strings.Cut(resto, "+")
	_, resto, _ = strings.Cut(resto, "+")
	raw, err := base64.StdEncoding.DecodeString(resto)
	if err != nil || len(raw) != 1+ed25519.SeedSize {
		return Chave{}, errors.New("malformed signer key")
	}
	pub := ed25519.NewKeyFromSeed(raw[1:]).Public().(ed25519.PublicKey)
	vkey, err := note.NewEd25519VerifierKey(s.Name(), pub)
	if err != nil {
		return Chave{}, err
	}
	return Chave{Signer: s, Verificador: vkey}, nil
}

// CarregarChave reads the signer key from a file: the first line that
// starts with PRIVATE+KEY+ (so the output of `d6a log-keygen`, which adds
// the verifier key on the next line, is a valid key file).
func CarregarChave(path string) (Chave, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Chave{}, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); strings.HasPrefix(l, "PRIVATE+KEY+") {
			return NovaChave(l)
		}
	}
	return Chave{}, fmt.Errorf("%s holds no PRIVATE+KEY+ line (make one with d6a log-keygen)", path)
}

// ArquivoChaveDev is the key `d6a serve` keeps under D6A_DATA_DIR when
// D6A_LOG_KEY_FILE is unset.
const ArquivoChaveDev = "transparencia-dev.key"

// ChaveLocal returns the key of dir/ArquivoChaveDev, creating it (mode
// 0600) when missing. criada tells the caller to warn.
func ChaveLocal(dir, origem string) (c Chave, path string, criada bool, err error) {
	path = filepath.Join(dir, ArquivoChaveDev)
	if _, err := os.Stat(path); err == nil {
		c, err := CarregarChave(path)
		return c, path, false, err
	}
	skey, vkey, err := GerarChave(origem)
	if err != nil {
		return c, path, false, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return c, path, false, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return c, path, false, err
	}
	_, err = fmt.Fprintf(f, "%s\n%s\n", skey, vkey)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return c, path, false, err
	}
	c, err = NovaChave(skey)
	return c, path, true, err
}

// lockAssinatura serialises checkpoint signing across instances
// ("d6a" + "tlog" in ASCII).
const lockAssinatura int64 = 0x643661746c6f67

// Beginner opens transactions (a *pgxpool.Pool).
type Beginner interface {
	DBTX
	Begin(ctx context.Context) (pgx.Tx, error)
}

// ErrInconsistente means the tree no longer extends the latest signed
// checkpoint: its stored history changed. Nothing is signed then.
var ErrInconsistente = errors.New("transparencia: tree is not consistent with the latest signed checkpoint")

// Assinar signs a checkpoint of the committed tree when it grew past the
// latest signed one, and stores it. Before signing it proves the new tree
// extends the latest checkpoint (tlog.ProveTree + tlog.CheckTree), so the
// service never signs two inconsistent checkpoints even if someone edited
// the stored hashes. It returns the size signed (0 when nothing was new).
func Assinar(ctx context.Context, db Beginner, chave Chave, origem string) (int64, error) {
	tx, err := db.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if err := store.On(tx).TravarAssinatura(ctx, lockAssinatura); err != nil {
		return 0, err
	}
	n, err := Tamanho(ctx, tx)
	if err != nil {
		return 0, err
	}
	ultimo, err := checkpointMaisRecente(ctx, tx)
	if err != nil && !errors.Is(err, ErrNaoEncontrado) {
		return 0, err
	}
	if n == 0 || n <= ultimo.Tamanho {
		return 0, nil
	}
	r := Leitor(ctx, tx)
	raiz, err := tlog.TreeHash(n, r)
	if err != nil {
		return 0, err
	}
	if ultimo.Tamanho > 0 {
		p, err := tlog.ProveTree(n, ultimo.Tamanho, r)
		if err != nil {
			return 0, err
		}
		if err := tlog.CheckTree(p, n, raiz, ultimo.Tamanho, ultimo.Raiz); err != nil {
			return 0, fmt.Errorf("%w (size %d → %d): %v", ErrInconsistente, ultimo.Tamanho, n, err)
		}
	}
	c := registro.Checkpoint{Origem: origem, Tamanho: n, Raiz: raiz}
	nota, err := note.Sign(&note.Note{Text: c.Texto()}, chave.Signer)
	if err != nil {
		return 0, err
	}
	if err := store.On(tx).GravarCheckpoint(ctx, store.CheckpointDoLog{Tamanho: n, Raiz: raiz[:], Nota: string(nota)}); err != nil {
		return 0, err
	}
	return n, tx.Commit(ctx)
}

// assinado is a stored checkpoint.
type assinado struct {
	Tamanho int64
	Raiz    tlog.Hash
	Nota    string
}

func checkpointMaisRecente(ctx context.Context, db DBTX) (assinado, error) {
	c, err := store.On(db).UltimoCheckpoint(ctx)
	if errors.Is(err, pgx.ErrNoRows) {
		return assinado{}, ErrNaoEncontrado
	}
	if err != nil {
		return assinado{}, err
	}
	return assinado{Tamanho: c.Tamanho, Raiz: tlog.Hash(c.Raiz), Nota: c.Nota}, nil
}

// UltimoCheckpoint returns the latest signed checkpoint's note and size;
// ErrNaoEncontrado before the first draw.
func UltimoCheckpoint(ctx context.Context, db DBTX) (nota string, tamanho int64, err error) {
	a, err := checkpointMaisRecente(ctx, db)
	return a.Nota, a.Tamanho, err
}

// Assinador signs checkpoints in the background: after a commit that
// appended (Acordar), at most once per IntervaloMinimo, and every
// IntervaloMaximo in case another instance's signer is down.
type Assinador struct {
	DB     Beginner
	Chave  Chave
	Origem string
	Log    *slog.Logger
	// IntervaloMinimo between two signatures (default 1 s).
	IntervaloMinimo time.Duration
	// IntervaloMaximo between two looks at the tree (default 10 s).
	IntervaloMaximo time.Duration
	// Assinado, when set, is called after each new checkpoint: the
	// witnesses cosign it at once, and a decision waiting for their
	// commitment time (CONTRACT §4a) waits no longer.
	Assinado func()

	acordar chan struct{}
}

// NovoAssinador prepares a signer; Run starts it.
func NovoAssinador(db Beginner, chave Chave, origem string, log *slog.Logger) *Assinador {
	if log == nil {
		log = slog.Default()
	}
	return &Assinador{DB: db, Chave: chave, Origem: origem, Log: log,
		IntervaloMinimo: time.Second, IntervaloMaximo: 10 * time.Second, acordar: make(chan struct{}, 1)}
}

// Acordar tells the signer the tree grew; it never blocks.
func (a *Assinador) Acordar() {
	select {
	case a.acordar <- struct{}{}:
	default:
	}
}

// Run signs until ctx ends.
func (a *Assinador) Run(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.acordar:
		case <-t.C:
		}
		n, err := Assinar(ctx, a.DB, a.Chave, a.Origem)
		switch {
		case errors.Is(err, ErrInconsistente):
			a.Log.Error("transparência: árvore inconsistente com o último checkpoint — NADA será assinado; investigue d6a.transparencia_hashes", "erro", err)
		case err != nil && ctx.Err() == nil:
			a.Log.Warn("transparência: checkpoint não assinado; nova tentativa", "erro", err)
		case n > 0:
			a.Log.Debug("transparência: checkpoint assinado", "tamanho", n)
			if a.Assinado != nil {
				a.Assinado()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(a.IntervaloMinimo):
		}
		t.Reset(a.IntervaloMaximo)
	}
}
