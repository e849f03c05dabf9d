// Command d6a-wasm is the verifier page's copy of nothing: the Go rules of
// the replay (internal/registro, and through it elegibilidade, fila and
// sorteio) compiled to WebAssembly for the page
// (internal/httpapi/verificador), so the page's verdict is the CLI's by
// construction. The page keeps the fetching, the tiles and the signatures
// (protocol, checked with WebCrypto); every d6a rule runs here.
//
// Built by `make generate` (GOOS=js GOARCH=wasm, see the Makefile) into
// internal/httpapi/verificador/d6a.wasm, committed as generated code.
package main

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/replay"
	"github.com/formigueiro/d6a/internal/sorteio"
	"github.com/formigueiro/d6a/internal/tiles"
)

// replayPagina is `d6a verify --url --all --replay` (and --conselheiro,
// --demanda) as the page runs it: the same replay.Replay, fed the
// records of each entry bundle once the page has checked them against
// their leaf hashes. The page has no bus: SemBarramento, as the CLI
// without D6A_NATS_URL.
type replayPagina struct {
	rp *replay.Replay
	// fr and raizes follow the tree leaf by leaf, so a cosigned checkpoint
	// recorded in the log is held to this log's root at its size
	// (registro.ConferirCossinado), as the CLI's walk does.
	fr     registro.Fronteira
	raizes *registro.RaizesRecentes
}

// novoReplayPagina starts a replay; conselheiro and demanda ("" for none)
// are the targets of the counsellor's and the demand's own checks.
func novoReplayPagina(conselheiro, demanda string) (*replayPagina, error) {
	alvo, err := alvoDe(conselheiro)
	if err != nil {
		return nil, err
	}
	rp := replay.Novo(alvo)
	if rp.AlvoDemanda, err = alvoDe(demanda); err != nil {
		return nil, err
	}
	rp.SemBarramento()
	return &replayPagina{rp: rp, raizes: registro.NovasRaizes(0)}, nil
}

func alvoDe(s string) (uuid.UUID, error) {
	if s == "" {
		return uuid.Nil, nil
	}
	return uuid.Parse(strings.TrimSpace(s))
}

// aplicarTile takes tile k of the log: the w entries of its entry bundle
// and the w leaf hashes of its level-0 hash tile. Every entry must hash to
// its leaf (RFC 6962; an empty entry is an eliminated record, spec 2.2,
// whose leaf stays); then the records are applied in order, the empty ones
// skipped as the CLI does. For a full tile it returns the root of its 256
// leaves, the perfect subtree the page's compact range takes next (nil for
// a partial tile: the page takes its leaves one by one).
func (p *replayPagina) aplicarTile(bundle, hashes []byte, k int64, w int) ([]byte, error) {
	regs, err := tiles.ReadBundle(bundle, w)
	if err != nil {
		return nil, err
	}
	folhas, err := tiles.ReadHashes(hashes, w)
	if err != nil {
		return nil, err
	}
	primeiro := k * tiles.Width
	for i, b := range regs {
		if len(b) > 0 && tlog.RecordHash(b) != folhas[i] {
			return nil, fmt.Errorf("o registro %d não confere com o hash da sua folha no tile %s", primeiro+int64(i), tiles.Path(tiles.Hash(0, k, w)))
		}
	}
	if primeiro != p.fr.N {
		return nil, fmt.Errorf("tile %d fora de ordem: o replay está no registro %d", k, p.fr.N)
	}
	for i, b := range regs {
		if len(b) == 0 {
			p.rp.Eliminado(primeiro + int64(i))
		} else {
			f, err := registro.LerRegistravel(b)
			if err != nil {
				return nil, fmt.Errorf("o registro %d não se lê: %w", primeiro+int64(i), err)
			}
			if cs, ok := f.(registro.CossinaturasRegistro); ok && cs.Tamanho > 0 && cs.Tamanho <= p.fr.N {
				// A size the ring no longer holds goes unchecked here
				// (the CLI reads it back from the tiles).
				if raiz, ok := p.raizes.Raiz(cs.Tamanho); ok {
					if err := registro.ConferirCossinado(cs, raiz); err != nil {
						return nil, fmt.Errorf("registro %d: %w", primeiro+int64(i), err)
					}
				}
			}
			p.rp.Aplicar(primeiro+int64(i), f)
			p.raizes.Ver(f)
		}
		p.fr.Adicionar(folhas[i])
		p.raizes.Guardar(&p.fr)
	}
	if w < tiles.Width {
		return nil, nil
	}
	for len(folhas) > 1 {
		for i := 0; i < len(folhas)/2; i++ {
			folhas[i] = tlog.NodeHash(folhas[2*i], folhas[2*i+1])
		}
		folhas = folhas[:len(folhas)/2]
	}
	return folhas[0][:], nil
}

// divergenciaPagina is a replay divergence (a registro.Falha with its
// Motivo) for the page.
type divergenciaPagina struct {
	Indice      int64  `json:"indice"`
	Conselheiro string `json:"conselheiro,omitempty"`
	Texto       string `json:"texto"`
}

// linhaPagina is a line of a timeline (replay.Acontecimento), with what
// the CLI makes of it: a coverage line of the counsellor's check is
// "na_lista", "deixado" (in Replay.Deixado: exit 1) or "regra" (left out
// by a phase-2 gate, said, not a divergence); a line of the demand's check
// is Passada when it is in Replay.Passada.
type linhaPagina struct {
	Indice  int64  `json:"indice"`
	Tipo    string `json:"tipo"`
	Texto   string `json:"texto"`
	Estado  string `json:"estado,omitempty"`
	Passada bool   `json:"passada"`
}

// resultadoPagina is what the page shows of a finished replay.
type resultadoPagina struct {
	Decisoes      int64               `json:"decisoes"`
	Desconhecidos int                 `json:"desconhecidos"`
	Divergencias  []divergenciaPagina `json:"divergencias"`
	// Conhecido: the counsellor of --conselheiro has a registration record.
	Conhecido    bool          `json:"conhecido"`
	Linha        []linhaPagina `json:"linha"`
	LinhaDemanda []linhaPagina `json:"linhaDemanda"`
	Passadas     int           `json:"passadas"`
	// Beacon names the chain the log's d6a.regras_sorteio record states
	// ("" before any), BeaconPrivado when it is the service's own.
	Beacon        string `json:"beacon,omitempty"`
	BeaconPrivado bool   `json:"beaconPrivado,omitempty"`
	BeaconChave   string `json:"beaconChave,omitempty"`
}

// fechar ends the replay (Replay.Fechar, as the CLI after the last
// record) and returns its outcome.
func (p *replayPagina) fechar() resultadoPagina {
	rp := p.rp
	rp.Fechar()
	res := resultadoPagina{Decisoes: rp.Decisoes, Desconhecidos: rp.Desconhecidos(), Divergencias: []divergenciaPagina{},
		Linha: []linhaPagina{}, LinhaDemanda: []linhaPagina{}, Passadas: len(rp.Passada)}
	if r := rp.Regras(); r != nil {
		res.Beacon, res.BeaconPrivado, res.BeaconChave = r.NomeCadeia(), r.Privado, r.ChavePublica
	}
	for _, d := range rp.Divergencias {
		dp := divergenciaPagina{Indice: d.Indice, Texto: d.Motivo}
		if d.Conselheiro != nil {
			dp.Conselheiro = d.Conselheiro.String()
		}
		res.Divergencias = append(res.Divergencias, dp)
	}
	// In record order: a sweep's divergence is found when it closes, after
	// the records that followed it.
	slices.SortStableFunc(res.Divergencias, func(a, b divergenciaPagina) int { return int(a.Indice - b.Indice) })
	for _, a := range rp.Linha {
		l := linhaPagina{Indice: a.Indice, Tipo: a.Tipo, Texto: a.Texto}
		switch {
		case a.Tipo == registro.TipoCadastro:
			res.Conhecido = true
		case a.Tipo != "cobertura":
		case slices.Contains(rp.Deixado, a):
			l.Estado = "deixado"
		case strings.HasSuffix(a.Texto, ": na lista"):
			l.Estado = "na_lista"
		default:
			l.Estado = "regra"
		}
		res.Linha = append(res.Linha, l)
	}
	for _, a := range rp.LinhaDemanda {
		res.LinhaDemanda = append(res.LinhaDemanda, linhaPagina{Indice: a.Indice, Tipo: a.Tipo, Texto: a.Texto, Passada: slices.Contains(rp.Passada, a)})
	}
	return res
}

// conferidoPagina is one record checked by itself, as `d6a verify --url
// --event-id`: the draw recomputed from its public inputs
// (sorteio.Sortear), a sorteio.sem_candidatos's motive from its counts,
// and the record's own rules (registro.ConferirRegistravel: canonical
// form, the draw's claims, the chain's first unit, a hierarchy link).
type conferidoPagina struct {
	Tipo string `json:"tipo"`
	// Erro is the record's first failure by the CLI's rules ("" when it
	// holds).
	Erro    string             `json:"erro"`
	Sorteio *sorteio.Resultado `json:"sorteio,omitempty"`
	// ErroSorteio: the draw's inputs cannot be drawn (sorteio.Sortear).
	ErroSorteio string `json:"erro_sorteio,omitempty"`
	Motivo      string `json:"motivo,omitempty"`
	// Rodada and Randomness: the draw's beacon round and R = SHA-256 of
	// its signature, recomputed (CONTRACT §4a).
	Rodada     *int64 `json:"rodada,omitempty"`
	Randomness string `json:"randomness,omitempty"`
	// Lista: a long draw's list, read from its d6a.lista_sorteio records
	// right before it and joined, as `--event-id` reads it.
	Lista *listaPagina `json:"lista,omitempty"`
	// Precisa: the tiles (C2SP paths) the page fetches before it calls
	// again with them.
	Precisa []string `json:"precisa,omitempty"`
}

// listaPagina is what the page shows of a long draw's list records.
type listaPagina struct {
	// Partes list records, leaves De … De+Partes-1, Ids ids in all.
	Partes int   `json:"partes"`
	De     int64 `json:"de"`
	Ids    int   `json:"ids"`
	// Eliminada: a part was eliminated (spec 2.2), the draw is checked
	// without its list, as `--event-id` does.
	Eliminada bool `json:"eliminada,omitempty"`
}

// arvorePagina is the signed tree the page checked the record's inclusion
// in (Raiz in base64), the record's leaf, and the tiles of that tree the
// page has fetched so far, by C2SP path.
type arvorePagina struct {
	Tamanho int64
	Raiz    string
	Indice  int64
	Tiles   map[string][]byte
}

// conferirRegistro checks the record bytes b, the leaf a.Indice of a's
// tree: a long draw with its list read from a's tiles (registro.ListaPorTiles).
// While tiles are missing the answer is only Precisa.
func conferirRegistro(b []byte, a *arvorePagina) conferidoPagina {
	var out conferidoPagina
	f, err := registro.LerRegistravel(b)
	if err != nil {
		out.Erro = err.Error()
		// Still recompute the draw from the published fields, so the
		// page shows each step.
		var r struct {
			Tipo       *string  `json:"tipo"`
			Base       string   `json:"base"`
			Timestamp  string   `json:"timestamp"`
			Assinatura string   `json:"assinatura_rodada"`
			Elegiveis  []string `json:"elegiveis_entrada"`
		}
		if json.Unmarshal(b, &r) == nil && r.Tipo == nil {
			out.Tipo = "sorteio"
			out.sortear(r.Base, r.Timestamp, registro.Randomness(r.Assinatura), r.Elegiveis)
		}
		return out
	}
	if err := registro.ConferirRegistravel(f); err != nil {
		out.Erro = err.Error()
	}
	switch r := f.(type) {
	case registro.Registro:
		out.Tipo = "sorteio"
		out.Rodada, out.Randomness = r.Rodada, registro.Randomness(r.AssinaturaRodada)
		if r.Partido() {
			out.conferirLista(r, a)
			break
		}
		out.sortear(r.Base, r.Timestamp, out.Randomness, r.ElegiveisEntrada)
	case registro.SemCandidatos:
		out.Tipo = "sem_candidatos"
		out.Motivo = elegibilidade.MotivoPorContagem(int(r.Cadastrados), int(r.Ocupados))
	case registro.Entrada:
		out.Tipo = "entrada"
	case registro.Hierarquia:
		out.Tipo = "hierarquia"
	case registro.Eliminacao:
		out.Tipo = "eliminacao"
	case registro.ListaSorteio:
		out.Tipo = "lista_sorteio"
	case registro.Compromisso:
		out.Tipo = "compromisso"
	case registro.CossinaturasRegistro:
		out.Tipo = "cossinaturas"
	}
	return out
}

func (c *conferidoPagina) sortear(base, timestamp, randomness string, elegiveis []string) {
	res, err := sorteio.SortearComRodada(base, timestamp, randomness, elegiveis)
	if err != nil {
		c.ErroSorteio = err.Error()
		return
	}
	c.Sorteio = &res
}

// conferirLista reads the list records of the draw r carried apart from
// a's tiles, joins them and recomputes the draw in full.
func (c *conferidoPagina) conferirLista(r registro.Registro, a *arvorePagina) {
	c.Lista = &listaPagina{}
	falhar := func(err error) {
		if c.Erro == "" {
			c.Erro = err.Error()
		}
	}
	if a == nil {
		falhar(registro.NovaFalha("registro.elegiveis_entrada", "[]", "the list, in the d6a.lista_sorteio records right before the draw"))
		return
	}
	raiz, err := base64.StdEncoding.DecodeString(a.Raiz)
	if err != nil || len(raiz) != tlog.HashSize {
		falhar(fmt.Errorf("a raiz do checkpoint não é um hash SHA-256 em base64: %q", a.Raiz))
		return
	}
	tp := &tilesPagina{tiles: a.Tiles}
	partes, err := registro.ListaPorTiles(tlog.Tree{N: a.Tamanho, Hash: tlog.Hash(raiz)}, a.Indice, r.EventIDSorteio, tp)
	switch {
	case len(tp.faltam) > 0:
		*c = conferidoPagina{Tipo: c.Tipo, Precisa: tp.faltam}
		return
	case errors.Is(err, registro.ErrListaEliminada):
		c.Lista.Eliminada = true
		return
	case err != nil:
		falhar(err)
		return
	}
	completo, err := registro.Juntar(r, partes)
	if err != nil {
		falhar(err)
		return
	}
	c.Lista.Partes, c.Lista.De, c.Lista.Ids = len(partes), a.Indice-int64(len(partes)), len(completo.ElegiveisEntrada)
	if err := registro.Conferir(completo); err != nil {
		falhar(err)
	}
	c.sortear(r.Base, r.Timestamp, c.Randomness, completo.ElegiveisEntrada)
}

// tilesPagina serves registro.ListaPorTiles the tiles the page fetched and
// notes those it lacks (faltam), which the page fetches before it calls
// again: the Go here does not fetch.
type tilesPagina struct {
	tiles  map[string][]byte
	faltam []string
}

var errFaltam = errors.New("tiles a buscar")

func (*tilesPagina) Height() int { return tiles.Height }

func (t *tilesPagina) ReadTiles(ts []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(ts))
	for i, tl := range ts {
		p := tiles.Path(tl)
		b, ok := t.tiles[p]
		if !ok {
			if !slices.Contains(t.faltam, p) {
				t.faltam = append(t.faltam, p)
			}
			continue
		}
		out[i] = recortar(tl, b)
	}
	if len(t.faltam) > 0 {
		return nil, errFaltam
	}
	return out, nil
}

func (*tilesPagina) SaveTiles([]tlog.Tile, [][]byte) {}

// recortar is a partial tile's first W entries when the page had to fetch
// the full tile instead (a partial tile of an older tree is not served
// once the full one exists), as the CLI does.
func recortar(t tlog.Tile, b []byte) []byte {
	if t.W == tiles.Width {
		return b
	}
	if t.L != tiles.Entries {
		if len(b) == tiles.Width*tlog.HashSize {
			return b[:t.W*tlog.HashSize]
		}
		return b
	}
	es, err := tiles.ReadBundle(b, tiles.Width)
	if err != nil {
		return b
	}
	var out []byte
	for _, e := range es[:t.W] {
		out, _ = tiles.AppendEntry(out, e)
	}
	return out
}
