package store

import (
	"context"
	"math"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// The transparency log's storage (d6a.transparencia_estado, _registros,
// _hashes, _checkpoints): internal/transparencia computes every hash, these
// only store and read them. Each runs one statement, so the tree's state
// can be read among the draw's opening reads (Leituras) and the append
// queued on its Pipeline.

// EstadoDoLog is the tree's state row and the latest signed checkpoint.
type EstadoDoLog struct {
	Tamanho   int64
	Fronteira []byte
	// Assinado is the latest signed checkpoint's size (0 before the first),
	// RaizAssinada its root (nil before the first).
	Assinado     int64
	RaizAssinada []byte
}

// EstadoDoLog reads the tree's state, unlocked (see BuscarEstadoTransparencia).
func (t Tx) EstadoDoLog(ctx context.Context) (EstadoDoLog, error) {
	r, err := t.q.BuscarEstadoTransparencia(ctx)
	return EstadoDoLog(r), err
}

// Anexacao is one append to the log, computed from the state (Tamanho,
// Fronteira): the records as leaves Indices (their draws, demands, bytes
// and leaf hashes) and the tlog hashes they add, at IndicesHashes.
type Anexacao struct {
	Tamanho       int64
	Fronteira     []byte
	NovaFronteira []byte
	Indices       []int64
	Eventos       []uuid.UUID
	Demandas      []uuid.UUID
	Registros     [][]byte
	HashesFolha   [][]byte
	IndicesHashes []int64
	Hashes        [][]byte
}

// AnexarAoLog writes a: one statement, which fails unless the state row
// is still a's (a queued append cannot commit over a moved tree).
func (t Tx) AnexarAoLog(ctx context.Context, a Anexacao) error {
	return t.q.AnexarTransparencia(ctx, dbsqlc.AnexarTransparenciaParams{
		Tamanho: a.Tamanho, Novas: int64(len(a.Indices)), NovaFronteira: a.NovaFronteira, Fronteira: a.Fronteira,
		Indices: a.Indices, Eventos: a.Eventos, Demandas: a.Demandas, Registros: a.Registros, HashesFolha: a.HashesFolha,
		IndicesHashes: a.IndicesHashes, Hashes: a.Hashes,
	})
}

// HashDoLog is one stored tlog hash, by storage index.
type HashDoLog struct {
	Indice int64
	Hash   []byte
}

// HashesDoLog reads the stored hashes at idx, in no particular order; a
// missing one is absent.
func (t Tx) HashesDoLog(ctx context.Context, idx []int64) ([]HashDoLog, error) {
	rows, err := t.q.BuscarHashesTransparencia(ctx, idx)
	if err != nil {
		return nil, err
	}
	out := make([]HashDoLog, len(rows))
	for i, r := range rows {
		out[i] = HashDoLog(r)
	}
	return out, nil
}

// TamanhoDoLog is the number of leaves committed.
func (t Tx) TamanhoDoLog(ctx context.Context) (int64, error) {
	return t.q.BuscarTamanhoTransparencia(ctx)
}

// FolhaDoLog is one stored leaf; Registro is nil once eliminated.
type FolhaDoLog struct {
	Indice         int64
	EventIDSorteio uuid.UUID
	Registro       []byte
	HashFolha      []byte
}

// FolhaDoSorteio reads the leaf of a draw (pgx.ErrNoRows: none).
func (t Tx) FolhaDoSorteio(ctx context.Context, eventID uuid.UUID) (FolhaDoLog, error) {
	r, err := t.q.BuscarFolhaPorEvento(ctx, eventID)
	return FolhaDoLog(r), err
}

// FolhasDoLog reads leaves inicio ≤ indice < fim, in order, at most
// limite of them.
func (t Tx) FolhasDoLog(ctx context.Context, inicio, fim int64, limite int) ([]FolhaDoLog, error) {
	rows, err := t.q.BuscarFolhas(ctx, dbsqlc.BuscarFolhasParams{Inicio: inicio, Fim: fim, Limite: int32(min(max(limite, 0), math.MaxInt32))})
	if err != nil {
		return nil, err
	}
	out := make([]FolhaDoLog, len(rows))
	for i, r := range rows {
		out[i] = FolhaDoLog(r)
	}
	return out, nil
}

// SorteioNoLog names one draw's leaf.
type SorteioNoLog struct {
	Indice         int64
	EventIDSorteio uuid.UUID
}

// SorteiosDaDemandaNoLog lists a demand's draws below size fim, oldest
// first.
func (t Tx) SorteiosDaDemandaNoLog(ctx context.Context, demanda uuid.UUID, fim int64) ([]SorteioNoLog, error) {
	rows, err := t.q.BuscarFolhasPorDemanda(ctx, dbsqlc.BuscarFolhasPorDemandaParams{DemandaID: demanda, Fim: fim})
	if err != nil {
		return nil, err
	}
	out := make([]SorteioNoLog, len(rows))
	for i, r := range rows {
		out[i] = SorteioNoLog(r)
	}
	return out, nil
}

// Apagado is one record an erasure blanked: its leaf and its draw.
type Apagado struct {
	Indice         int64
	EventIDSorteio uuid.UUID
}

// EliminarRegistroDoLog blanks a draw's record body and returns it (none:
// no such draw, or already eliminated).
func (t Tx) EliminarRegistroDoLog(ctx context.Context, eventID uuid.UUID) ([]Apagado, error) {
	rows, err := t.q.EliminarRegistroTransparencia(ctx, eventID)
	out := make([]Apagado, len(rows))
	for i, r := range rows {
		out[i] = Apagado(r)
	}
	return out, err
}

// EliminarCidadaoDoLog blanks every record that names cidadao and returns
// them.
func (t Tx) EliminarCidadaoDoLog(ctx context.Context, cidadao uuid.UUID) ([]Apagado, error) {
	rows, err := t.q.EliminarRegistrosDoCidadao(ctx, cidadao.String())
	out := make([]Apagado, len(rows))
	for i, r := range rows {
		out[i] = Apagado(r)
	}
	return out, err
}

// TravarAssinatura takes the checkpoint signer's advisory lock chave for
// the transaction.
func (t Tx) TravarAssinatura(ctx context.Context, chave int64) error {
	return t.q.AdvisoryLockAssinatura(ctx, chave)
}

// CheckpointDoLog is a stored signed checkpoint: its size, root and note.
type CheckpointDoLog struct {
	Tamanho int64
	Raiz    []byte
	Nota    string
}

// GravarCheckpoint stores a signed checkpoint, once per size.
func (t Tx) GravarCheckpoint(ctx context.Context, c CheckpointDoLog) error {
	return t.q.InserirCheckpoint(ctx, dbsqlc.InserirCheckpointParams(c))
}

// UltimoCheckpoint reads the latest signed checkpoint (pgx.ErrNoRows:
// none yet).
func (t Tx) UltimoCheckpoint(ctx context.Context) (CheckpointDoLog, error) {
	r, err := t.q.BuscarUltimoCheckpoint(ctx)
	return CheckpointDoLog(r), err
}

// IndicesDoLog gives the index of each record among ids that the log holds.
func (t Tx) IndicesDoLog(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]int64, error) {
	rows, err := t.q.BuscarIndicesPorEventos(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID]int64, len(rows))
	for _, r := range rows {
		out[r.EventIDSorteio] = r.Indice
	}
	return out, nil
}

// ResumoDoLog is the public log as it stands: the latest signed
// checkpoint's size, root and signing time, and the first index whose
// draws follow their trigger (CONTRACT §4).
type ResumoDoLog struct {
	Tamanho      int64
	Raiz         []byte
	AssinadoEm   time.Time
	GatilhoDesde int64
}

// ResumoDoLog reads the log's summary; false before the first signed
// checkpoint.
func (t Tx) ResumoDoLog(ctx context.Context) (ResumoDoLog, bool, error) {
	r, err := t.q.BuscarResumoDoLog(ctx)
	if achou, err := Found(err); !achou || err != nil {
		return ResumoDoLog{}, false, err
	}
	return ResumoDoLog(r), true, nil
}
