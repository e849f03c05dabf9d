// Package transparencia stores D-6a's public transparency log (CONTRACT
// §7) in PostgreSQL and signs it. Every record the executor writes (see
// internal/registro for what they are) is appended in the writer's own
// transaction as the next leaf of an RFC 6962 Merkle tree kept by
// golang.org/x/mod/sumdb/tlog; the signer makes C2SP tlog-checkpoint notes
// (golang.org/x/mod/sumdb/note) that commit the service to the whole
// history. It also holds the signer's keys. Reading the log from outside
// is internal/verificar/log's; the witnesses' cosignatures are
// internal/testemunha's.
package transparencia

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/store"
)

// DBTX is what the log needs from PostgreSQL: a transaction (pgx.Tx, the
// store's Tx.ParaOLog) or, for reads, a pool.
type DBTX interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
	Query(context.Context, string, ...any) (pgx.Rows, error)
	QueryRow(context.Context, string, ...any) pgx.Row
}

// ErrRegistroGrande: a record over registro.LimiteRegistro bytes, which
// no leaf can hold; the append is refused.
var ErrRegistroGrande = errors.New("transparencia: record too large for a log entry")

// ErrNaoEncontrado: no record has that id (or the index is beyond the tree).
var ErrNaoEncontrado = errors.New("transparencia: not found")

// Anexar appends regs, in order, as the next leaves of the log inside tx:
// the records, their leaf hashes and every tlog hash they add commit or
// roll back with the draws themselves. It must run in the transaction
// that wrote the draws. It reads the tree's state (LerEstado), then
// writes: the executor, which reads the state with its batch's other
// opening reads, calls Estado.Anexar instead.
func Anexar(ctx context.Context, tx DBTX, regs []registro.Registro) error {
	if len(regs) == 0 {
		return nil
	}
	e, err := LerEstado(ctx, tx)
	if err != nil {
		return err
	}
	return e.Anexar(ctx, tx, regs)
}

// Estado is the tree's size and right edge (the hashes of the complete
// subtrees an append reads: the "frontier"), as the state row holds them,
// so an append never reads the hash table.
type Estado struct {
	n         int64
	fronteira []byte
	// n0 and fronteira0 are the tree as read, before this transaction's
	// appends; assinado and raizAssinada the latest signed checkpoint, read
	// with it (Assinar).
	n0           int64
	fronteira0   []byte
	assinado     int64
	raizAssinada []byte
}

// LerEstado reads the tree's state. Appenders are serialised by the draw's
// advisory lock, and the append checks the state it computed from (a
// concurrent appender fails it instead of forking the tree), so the row is
// not locked.
func LerEstado(ctx context.Context, tx DBTX) (*Estado, error) {
	s, err := store.On(tx).EstadoDoLog(ctx)
	if err != nil {
		return nil, fmt.Errorf("transparencia: read the tree state: %w", err)
	}
	return &Estado{n: s.Tamanho, fronteira: s.Fronteira, n0: s.Tamanho, fronteira0: s.Fronteira,
		assinado: s.Assinado, raizAssinada: s.RaizAssinada}, nil
}

// Tamanho is the tree's size: as read, then after each append.
func (e *Estado) Tamanho() int64 { return e.n }

// Anexar appends regs at e, which LerEstado read in this transaction, and
// advances e. Its one statement may wait in a pipeline: it fails, when it
// runs, unless the state row is still e.
func (e *Estado) Anexar(ctx context.Context, tx DBTX, regs []registro.Registro) error {
	fs := make([]registro.Registravel, len(regs))
	for i, r := range regs {
		fs[i] = r
	}
	return e.AnexarRegistraveis(ctx, tx, fs)
}

// AnexarRegistraveis is Anexar for records of any kind, in this order.
func (e *Estado) AnexarRegistraveis(ctx context.Context, tx DBTX, regs []registro.Registravel) error {
	if len(regs) == 0 {
		return nil
	}
	dados := make([][]byte, len(regs))
	for i, r := range regs {
		b, err := r.Bytes()
		if err != nil {
			return fmt.Errorf("transparencia: encode record: %w", err)
		}
		// A C2SP entry's length is a uint16: a longer record would make
		// its entry bundle unservable and the log unverifiable from
		// there on (a long draw is carried apart: registro.Partir).
		if len(b) > registro.LimiteRegistro {
			ev, _ := r.Chaves()
			return fmt.Errorf("%w: record %d of the append (%T, event %s) has %d bytes, more than %d", ErrRegistroGrande, i, r, ev, len(b), registro.LimiteRegistro)
		}
		dados[i] = b
	}
	nova, err := escrever(ctx, tx, regs, dados, e.n, e.fronteira)
	if err != nil {
		return err
	}
	e.n, e.fronteira = e.n+int64(len(regs)), nova
	return nil
}

// escrever computes the append of dados at leaf n from the frontier fr and
// writes it (store.Tx.AnexarAoLog: it fails, when it runs, unless the
// state row is still n and fr); nova is the frontier after it.
func escrever(ctx context.Context, tx DBTX, regs []registro.Registravel, dados [][]byte, n int64, fr []byte) (nova []byte, err error) {
	idx := registro.FronteiraIndices(n)
	if len(fr) != len(idx)*tlog.HashSize {
		return nil, fmt.Errorf("transparencia: frontier of size %d has %d bytes, want %d", n, len(fr), len(idx)*tlog.HashSize)
	}
	antigos := make(map[int64]tlog.Hash, len(idx))
	for i, x := range idx {
		antigos[x] = tlog.Hash(fr[i*tlog.HashSize:])
	}
	folhas, novos, err := hashesNovos(n, dados, func(pedidos []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(pedidos))
		for i, x := range pedidos {
			h, ok := antigos[x]
			if !ok {
				return nil, fmt.Errorf("transparencia: hash %d is not on the frontier of size %d", x, n)
			}
			out[i] = h
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	k := int64(len(regs))
	base := tlog.StoredHashCount(n)
	nova = make([]byte, 0, 64*tlog.HashSize)
	for _, x := range registro.FronteiraIndices(n + k) {
		h, ok := antigos[x]
		if x >= base {
			h, ok = novos[x-base], true
		}
		if !ok {
			return nil, fmt.Errorf("transparencia: frontier hash %d unknown", x)
		}
		nova = append(nova, h[:]...)
	}
	indices := make([]int64, k)
	eventos := make([]uuid.UUID, k)
	demandas := make([]uuid.UUID, k)
	hf := make([][]byte, k)
	for i, r := range regs {
		indices[i] = n + int64(i)
		eventos[i], demandas[i] = r.Chaves()
		hf[i] = folhas[i][:]
	}
	hidx := make([]int64, len(novos))
	hval := make([][]byte, len(novos))
	for i := range novos {
		hidx[i] = base + int64(i)
		hval[i] = novos[i][:]
	}
	if err := store.On(tx).AnexarAoLog(ctx, store.Anexacao{
		Tamanho: n, Fronteira: fr, NovaFronteira: nova,
		Indices: indices, Eventos: eventos, Demandas: demandas, Registros: dados, HashesFolha: hf,
		IndicesHashes: hidx, Hashes: hval,
	}); err != nil {
		return nil, fmt.Errorf("transparencia: write leaves: %w", err)
	}
	return nova, nil
}

// hashesNovos computes, for records appended at leaves n, n+1, …, their
// leaf hashes and every tlog hash to store, in storage order from
// tlog.StoredHashCount(n). ler reads hashes already stored (below that
// index); it is called once, for the tree's right edge only.
func hashesNovos(n int64, dados [][]byte, ler func([]int64) ([]tlog.Hash, error)) (folhas, novos []tlog.Hash, err error) {
	base := tlog.StoredHashCount(n)
	// Which stored hashes the appends read depends only on the indexes, so
	// a dry run with zero hashes names them all.
	var faltam []int64
	visto := map[int64]bool{}
	seco := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		for _, i := range idx {
			if i < base && !visto[i] {
				visto[i] = true
				faltam = append(faltam, i)
			}
		}
		return make([]tlog.Hash, len(idx)), nil
	})
	cont := base
	for i := range dados {
		hs, err := tlog.StoredHashes(n+int64(i), dados[i], seco)
		if err != nil {
			return nil, nil, err
		}
		cont += int64(len(hs))
	}
	antigos := map[int64]tlog.Hash{}
	if len(faltam) > 0 {
		hs, err := ler(faltam)
		if err != nil {
			return nil, nil, err
		}
		for i, idx := range faltam {
			antigos[idx] = hs[i]
		}
	}
	novos = make([]tlog.Hash, 0, cont-base)
	r := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for j, i := range idx {
			switch h, ok := antigos[i]; {
			case ok:
				out[j] = h
			case i >= base && i < base+int64(len(novos)):
				out[j] = novos[i-base]
			default:
				return nil, fmt.Errorf("transparencia: hash %d not available", i)
			}
		}
		return out, nil
	})
	folhas = make([]tlog.Hash, len(dados))
	for i := range dados {
		hs, err := tlog.StoredHashes(n+int64(i), dados[i], r)
		if err != nil {
			return nil, nil, err
		}
		folhas[i] = hs[0]
		novos = append(novos, hs...)
	}
	return folhas, novos, nil
}

// lerHashes reads stored tlog hashes by storage index, in the order asked.
func lerHashes(ctx context.Context, db DBTX, idx []int64) ([]tlog.Hash, error) {
	hs, err := store.On(db).HashesDoLog(ctx, idx)
	if err != nil {
		return nil, fmt.Errorf("transparencia: read hashes: %w", err)
	}
	m := make(map[int64]tlog.Hash, len(idx))
	for _, h := range hs {
		if len(h.Hash) != tlog.HashSize {
			return nil, fmt.Errorf("transparencia: read hashes: hash %d has %d bytes", h.Indice, len(h.Hash))
		}
		m[h.Indice] = tlog.Hash(h.Hash)
	}
	out := make([]tlog.Hash, len(idx))
	for j, x := range idx {
		v, ok := m[x]
		if !ok {
			return nil, fmt.Errorf("transparencia: stored hash %d missing", x)
		}
		out[j] = v
	}
	return out, nil
}

// Leitor reads hashes from db (a pool or a transaction): a tlog.HashReader.
func Leitor(ctx context.Context, db DBTX) tlog.HashReader {
	return tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) { return lerHashes(ctx, db, idx) })
}

// Tamanho is the number of leaves committed.
func Tamanho(ctx context.Context, db DBTX) (int64, error) {
	return store.On(db).TamanhoDoLog(ctx)
}

// Folha is one stored leaf.
type Folha struct {
	Indice         int64
	EventIDSorteio uuid.UUID
	// Registro is nil once eliminated.
	Registro  []byte
	HashFolha tlog.Hash
}

func folha(f store.FolhaDoLog) Folha {
	return Folha{Indice: f.Indice, EventIDSorteio: f.EventIDSorteio, Registro: f.Registro, HashFolha: tlog.Hash(f.HashFolha)}
}

// FolhaPorEvento reads the leaf of a draw.
func FolhaPorEvento(ctx context.Context, db DBTX, eventID uuid.UUID) (Folha, error) {
	f, err := store.On(db).FolhaDoSorteio(ctx, eventID)
	if errors.Is(err, pgx.ErrNoRows) {
		return Folha{}, ErrNaoEncontrado
	}
	if err != nil {
		return Folha{}, err
	}
	return folha(f), nil
}

// Folhas reads leaves inicio ≤ indice < fim, at most limite of them.
func Folhas(ctx context.Context, db DBTX, inicio, fim int64, limite int) ([]Folha, error) {
	fs, err := store.On(db).FolhasDoLog(ctx, inicio, fim, limite)
	if err != nil {
		return nil, err
	}
	out := make([]Folha, len(fs))
	for i, f := range fs {
		out[i] = folha(f)
	}
	return out, nil
}

// SorteioIndice names one draw of a demand.
type SorteioIndice struct {
	Indice         int64     `json:"indice"`
	EventIDSorteio uuid.UUID `json:"event_id_sorteio"`
}

// PorDemanda lists the draws of a demand below size fim, oldest first.
func PorDemanda(ctx context.Context, db DBTX, demanda uuid.UUID, fim int64) ([]SorteioIndice, error) {
	ss, err := store.On(db).SorteiosDaDemandaNoLog(ctx, demanda, fim)
	if err != nil {
		return nil, err
	}
	out := make([]SorteioIndice, len(ss))
	for i, s := range ss {
		out[i] = SorteioIndice(s)
	}
	return out, nil
}

// Apagado is one record an erasure blanked.
type Apagado = store.Apagado

// Eliminar blanks the body of a draw's record (spec 2.2 / N-0d: a citizen's
// data is erased). The leaf hash and the tree stay, so every checkpoint and
// every other proof still verify; this draw then verifies as "eliminado".
// It returns the record blanked now (none: already eliminated). Alone it
// leaves no trace in the log: RegistrarEliminacao appends the
// d6a.eliminacao record mirrors and monitors follow.
func Eliminar(ctx context.Context, db DBTX, eventID uuid.UUID) ([]Apagado, error) {
	feitos, err := store.On(db).EliminarRegistroDoLog(ctx, eventID)
	if err != nil || len(feitos) > 0 {
		return feitos, err
	}
	if _, err := FolhaPorEvento(ctx, db, eventID); err != nil {
		return nil, err
	}
	return []Apagado{}, nil
}

// EliminarCidadao blanks every record that names the citizen (as the
// winner, in an input list, as the excluded refuser): the elimination of
// spec 2.2 / N-0d applied to the log. It returns the records blanked now.
// A full scan of the non-eliminated records; eliminations are rare.
func EliminarCidadao(ctx context.Context, db DBTX, cidadao uuid.UUID) ([]Apagado, error) {
	feitos, err := store.On(db).EliminarCidadaoDoLog(ctx, cidadao)
	if feitos == nil && err == nil {
		feitos = []Apagado{}
	}
	return feitos, err
}

// LockSorteio is the advisory-lock key every d6a transaction that may
// append to the log takes ("d6a" + "sort" in ASCII): the executor's draws
// and an erasure's record.
const LockSorteio int64 = 0x643661736f7274

// RegistrarEliminacao appends, in tx, the d6a.eliminacao record of the
// records apagados (blanked in tx) and signs a checkpoint over it: under
// LockSorteio, as the executor appends, so the record is the next leaf
// of the one tree and published only once signed. Nothing blanked,
// nothing appended.
func RegistrarEliminacao(ctx context.Context, tx DBTX, apagados []Apagado, chave Chave, origem string) (registro.Eliminacao, error) {
	if len(apagados) == 0 {
		return registro.Eliminacao{}, nil
	}
	if err := store.On(tx).TravarSorteio(ctx, LockSorteio); err != nil {
		return registro.Eliminacao{}, err
	}
	e, err := LerEstado(ctx, tx)
	if err != nil {
		return registro.Eliminacao{}, err
	}
	indices := make([]int64, len(apagados))
	for i, a := range apagados {
		indices[i] = a.Indice
	}
	r := registro.NovaEliminacao(e.Tamanho(), indices)
	if err := e.AnexarRegistraveis(ctx, tx, []registro.Registravel{r}); err != nil {
		return r, err
	}
	if _, err := e.Assinar(ctx, tx, tx, chave, origem); err != nil {
		return r, err
	}
	return r, nil
}

// ErrAssinatura means a checkpoint could not be signed: the results it
// would cover are held back (CONTRACT §7, "Published only once signed")
// and the unit of work is retried.
var ErrAssinatura = errors.New("transparencia: checkpoint not signed")

// Assinar signs, in the transaction that appended, a checkpoint of the
// tree as e holds it, when it grew past the latest signed checkpoint, and
// queues its row on escrever (the writes' pipeline). The batch's results
// then commit with a signed checkpoint that covers their records, and
// whoever publishes them after the commit publishes signed results only
// (issue 21). The root comes from the frontier, so signing reads nothing
// more, and it extends the latest checkpoint by construction once the
// frontier as read is that checkpoint's tree: that is checked first, with
// a proof from the stored hashes (read on ler) only when leaves were left
// unsigned below (a version that signed in the background). It reports
// whether it signed.
func (e *Estado) Assinar(ctx context.Context, ler, escrever DBTX, chave Chave, origem string) (bool, error) {
	if e.n == 0 || e.n <= e.assinado {
		return false, nil
	}
	if err := e.estendeAssinado(ctx, ler); err != nil {
		return false, err
	}
	raiz, err := raizDaFronteira(e.n, e.fronteira)
	if err != nil {
		return false, err
	}
	c := registro.Checkpoint{Origem: origem, Tamanho: e.n, Raiz: raiz}
	nota, err := note.Sign(&note.Note{Text: c.Texto()}, chave.Signer)
	if err != nil {
		return false, fmt.Errorf("%w: %v", ErrAssinatura, err)
	}
	if err := store.On(escrever).GravarCheckpoint(ctx, store.CheckpointDoLog{Tamanho: e.n, Raiz: raiz[:], Nota: string(nota)}); err != nil {
		return false, err
	}
	e.assinado, e.raizAssinada = e.n, raiz[:]
	return true, nil
}

// estendeAssinado checks that the tree as read extends the latest signed
// checkpoint (ErrInconsistente otherwise).
func (e *Estado) estendeAssinado(ctx context.Context, ler DBTX) error {
	if e.assinado == 0 {
		return nil
	}
	if e.assinado > e.n0 || len(e.raizAssinada) != tlog.HashSize {
		return fmt.Errorf("%w: checkpoint of size %d over a tree of %d", ErrInconsistente, e.assinado, e.n0)
	}
	lida, err := raizDaFronteira(e.n0, e.fronteira0)
	if err != nil {
		return err
	}
	assinada := tlog.Hash(e.raizAssinada)
	if e.assinado == e.n0 {
		if lida != assinada {
			return fmt.Errorf("%w: the tree's frontier at size %d does not give the signed root", ErrInconsistente, e.n0)
		}
		return nil
	}
	r := Leitor(ctx, ler)
	raiz, err := tlog.TreeHash(e.n0, r)
	if err != nil {
		return err
	}
	if raiz != lida {
		return fmt.Errorf("%w: stored hashes and frontier disagree at size %d", ErrInconsistente, e.n0)
	}
	prova, err := tlog.ProveTree(e.n0, e.assinado, r)
	if err != nil {
		return err
	}
	if err := tlog.CheckTree(prova, e.n0, raiz, e.assinado, assinada); err != nil {
		return fmt.Errorf("%w (size %d → %d): %v", ErrInconsistente, e.assinado, e.n0, err)
	}
	return nil
}

// raizDaFronteira is the RFC 6962 root of a tree of n leaves from its
// frontier (the roots of its complete subtrees, left to right, the largest
// first): folded from the right, as tlog.TreeHash does.
func raizDaFronteira(n int64, fr []byte) (tlog.Hash, error) {
	k := len(registro.FronteiraIndices(n))
	if k == 0 || len(fr) != k*tlog.HashSize {
		return tlog.Hash{}, fmt.Errorf("transparencia: frontier of size %d has %d bytes, want %d", n, len(fr), k*tlog.HashSize)
	}
	h := tlog.Hash(fr[(k-1)*tlog.HashSize:])
	for i := k - 2; i >= 0; i-- {
		h = tlog.NodeHash(tlog.Hash(fr[i*tlog.HashSize:]), h)
	}
	return h, nil
}
