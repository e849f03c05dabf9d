// Package estatisticas keeps the public fairness statistics (CONTRACT §7
// "Fairness statistics") as a maintenance service beside the transparency
// log: a background fold adds each signed record to one row of sums per
// counsellor (Apurar), so that the route and the service's p-value metric
// read the test over those sums (Ler, Testar) whatever the number of draws.
// The sums are a cache of the signed log: anyone can recompute them from
// the records (registro.Sorteios, `d6a verify --url --estatisticas`),
// and so can a new pass after a crash.
//
// It imports the records' reading (registro), the test's arithmetic
// (equidade) and the store, which it reads and writes through Banco and
// Leitura (store/estatisticas.go over sql/queries/estatisticas.sql).
package estatisticas

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/formigueiro/d6a/internal/equidade"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/store"
)

// chaveTrava serialises the statistics' processing across instances
// ("d6a" + "eqd" in ASCII).
const chaveTrava int64 = 0x643661657164

// Lote is how many records one pass of Apurar folds at most. A pass holds
// its records' lists and the sums of every counsellor they name: with
// 5,000, d6a serve peaked at 153-159 MB at K=1,000,000 dense after a
// burst, against 121-129 MB with 500 (measured in issue 24); a
// backlog only takes more, smaller transactions.
const Lote = 500

// pagina is how many counsellors' sums Testar holds at a time.
const pagina = 10_000

// Leitura is what the test over the stored sums reads (Ler, Testar);
// store.Tx satisfies it, on the pool or in a transaction.
type Leitura interface {
	Apuracao(ctx context.Context) (store.ApuracaoEstatisticas, error)
	TodasAsSomas(ctx context.Context) ([]store.SomasConselheiro, error)
	SomasApos(ctx context.Context, apos string, limite int32) ([]store.SomasConselheiro, error)
}

// Banco is what one pass of the fold reads and writes, in its transaction;
// store.Tx satisfies it.
type Banco interface {
	Leitura
	TentarTravarEstatisticas(ctx context.Context, chave int64) (bool, error)
	RegistrosParaApurar(ctx context.Context, desde, ate int64) ([]store.RegistroDoLog, error)
	SomasDe(ctx context.Context, ids []string) ([]store.SomasConselheiro, error)
	GravarSomas(ctx context.Context, cs []store.SomasConselheiro) error
	AvancarApuracao(ctx context.Context, registros, sorteios, sorteiosN1 int64) error
}

// Apurar adds the records signed since the last pass to the statistics'
// table, at most lote (≤ 0: Lote) records per transaction, and returns how
// many it added. Only records under a signed checkpoint count, so every
// figure the route serves can be recomputed from proved records.
func Apurar(ctx context.Context, st *store.Store, lote int) (feitosAgora int64, err error) {
	if lote <= 0 {
		lote = Lote
	}
	err = st.InTx(ctx, func(tx store.Tx) error {
		feitosAgora, err = apurar(ctx, tx, lote)
		return err
	})
	return feitosAgora, err
}

func apurar(ctx context.Context, tx Banco, lote int) (int64, error) {
	// The sums are a cache of the signed log: a crash that loses the last
	// passes loses them whole, and the next pass redoes them from
	// `registros`. So the pass does not wait for its WAL to reach the disk,
	// where it would queue beside the draws' commits.
	travado, err := tx.TentarTravarEstatisticas(ctx, chaveTrava)
	if err != nil || !travado {
		return 0, err // another instance is at it
	}
	e, err := tx.Apuracao(ctx)
	if err != nil {
		return 0, err
	}
	feitos := e.Registros
	fim := min(e.Assinado, feitos+int64(lote))
	if fim <= feitos {
		return 0, nil
	}
	regs, err := tx.RegistrosParaApurar(ctx, feitos, fim)
	if err != nil {
		return 0, err
	}
	var (
		leitor  registro.Sorteios
		lidos   []*registro.SorteioLido
		tocados = map[string]bool{}
		ids     []string
	)
	// A pass ends where its lote does, maybe among a long draw's list
	// records: the next pass reads those again, so the draw counts with
	// its whole list wherever the passes cut the log.
	antes, err := listasAntes(ctx, tx, feitos)
	if err != nil {
		return 0, err
	}
	for _, r := range antes {
		if _, err := leitor.Ler(r.Registro); err != nil {
			return 0, fmt.Errorf("record %d: %w", r.Indice, err)
		}
	}
	tocar := func(id string) {
		if !tocados[id] {
			tocados[id] = true
			ids = append(ids, id)
		}
	}
	proximo := feitos
	for _, r := range regs {
		if r.Indice != proximo {
			return 0, fmt.Errorf("estatisticas: record %d missing from the statistics' read", proximo)
		}
		sr, err := leitor.Ler(r.Registro)
		if err != nil {
			return 0, fmt.Errorf("record %d: %w", r.Indice, err)
		}
		if sr != nil {
			lidos = append(lidos, sr)
			for _, id := range sr.ElegiveisEntrada {
				tocar(id)
			}
			tocar(sr.ConselheiroID)
		}
		proximo++
	}
	if proximo != fim {
		return 0, fmt.Errorf("estatisticas: %d records read for the statistics, want %d", proximo-feitos, fim-feitos)
	}
	// The sums are floats: adding a pass's own sum to the stored one would
	// round differently from adding record by record, so the figures would
	// depend on where the passes happened to cut the log. The pass starts
	// from the stored sums of the counsellors it touches and adds each
	// record in order, so every cut gives what one fold from record 0
	// gives, bit for bit, and so does a verifier's recomputation.
	a := equidade.NovoAcumulador()
	guardadas, err := tx.SomasDe(ctx, ids)
	if err != nil {
		return 0, err
	}
	for _, g := range guardadas {
		a.Somar(conselheiro(g))
	}
	for _, sr := range lidos {
		a.Sorteio(sr.ElegiveisEntrada, sr.ConselheiroID)
	}
	if cs := a.Conselheiros(); len(cs) > 0 {
		novas := make([]store.SomasConselheiro, len(cs))
		for i, c := range cs {
			novas[i] = store.SomasConselheiro{ConselheiroID: c.ID, SorteiosElegivel: c.SorteiosElegivel, Esperado: c.Esperado,
				Observado: c.Observado, Variancia: c.Variancia, EsperadoN2: c.EsperadoN2, ObservadoN2: c.ObservadoN2}
		}
		if err := tx.GravarSomas(ctx, novas); err != nil {
			return 0, err
		}
	}
	if err := tx.AvancarApuracao(ctx, fim, a.Sorteios, a.SorteiosN1); err != nil {
		return 0, err
	}
	return fim - feitos, nil
}

// listasAntes is the list records, from the first part on, of a long draw
// whose list the record feitos-1 ends or continues (and the eliminated
// records among them); none when the record before the pass (eliminated
// ones passed over) is not a list record.
func listasAntes(ctx context.Context, tx Banco, feitos int64) ([]store.RegistroDoLog, error) {
	for j := feitos - 1; j >= 0; j-- {
		regs, err := tx.RegistrosParaApurar(ctx, j, j+1)
		if err != nil {
			return nil, err
		}
		if len(regs) != 1 || regs[0].Indice != j {
			return nil, fmt.Errorf("estatisticas: record %d missing from the statistics' read", j)
		}
		if regs[0].Registro == nil {
			continue // eliminated: the join must see it too
		}
		var l struct {
			Tipo  string `json:"tipo"`
			Parte int64  `json:"parte"`
		}
		if err := json.Unmarshal(regs[0].Registro, &l); err != nil {
			return nil, fmt.Errorf("record %d: %w", j, err)
		}
		if l.Tipo != registro.TipoListaSorteio {
			return nil, nil
		}
		return tx.RegistrosParaApurar(ctx, max(0, j-l.Parte), feitos)
	}
	return nil, nil
}

// Ler is the route's answer: the test over the sums kept.
func Ler(ctx context.Context, st *store.Store) (equidade.Resultado, error) {
	return ler(ctx, st.Read())
}

func ler(ctx context.Context, tx Leitura) (equidade.Resultado, error) {
	e, err := tx.Apuracao(ctx)
	if err != nil {
		return equidade.Resultado{}, err
	}
	a := equidade.NovoAcumulador()
	a.Registros, a.Sorteios, a.SorteiosN1 = e.Registros, e.Sorteios, e.SorteiosN1
	guardadas, err := tx.TodasAsSomas(ctx)
	if err != nil {
		return equidade.Resultado{}, err
	}
	for _, g := range guardadas {
		a.Somar(conselheiro(g))
	}
	return a.Resultado(), nil
}

// Testar is Ler without the list of counsellors, for the service's p-value
// metric: it streams the stored sums into the test a page at a time instead
// of holding every counsellor's (at K=1,000,000 that would be every
// counsellor). The primary key's order is Go's for ids that are UUIDs, so
// the figures are Ler's, bit for bit. The pages are read in one snapshot.
func Testar(ctx context.Context, st *store.Store) (equidade.Resultado, error) {
	return testar(ctx, st, pagina)
}

// testar is Testar in pages of n counsellors.
func testar(ctx context.Context, st *store.Store, n int32) (r equidade.Resultado, err error) {
	err = st.InTxWith(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx store.Tx) error {
		r, err = testarEm(ctx, tx, n)
		return err
	})
	return r, err
}

// testarEm is testar's pages, read through tx.
func testarEm(ctx context.Context, tx Leitura, n int32) (equidade.Resultado, error) {
	e, err := tx.Apuracao(ctx)
	if err != nil {
		return equidade.Resultado{}, err
	}
	t := equidade.NovoTeste(e.Registros, e.Sorteios, e.SorteiosN1)
	for apos := ""; ; {
		gs, err := tx.SomasApos(ctx, apos, n)
		if err != nil {
			return equidade.Resultado{}, err
		}
		for _, g := range gs {
			c := conselheiro(g)
			t.Somar(&c)
		}
		if len(gs) < int(n) {
			break
		}
		apos = gs[len(gs)-1].ConselheiroID
	}
	return t.Resultado(), nil
}

// conselheiro is a stored row as the test's sums.
func conselheiro(g store.SomasConselheiro) equidade.Conselheiro {
	return equidade.Conselheiro{ID: g.ConselheiroID, SorteiosElegivel: g.SorteiosElegivel, Esperado: g.Esperado,
		Observado: g.Observado, Variancia: g.Variancia, EsperadoN2: g.EsperadoN2, ObservadoN2: g.ObservadoN2}
}

// Recomecar sets the fold back to record 0 in tx, after an erasure blanked
// records it had folded: the float sums cannot be undone bit for bit, so
// the next passes fold again the records as they are now, and the route
// serves sums that never named the erased citizen (a verifier recomputes
// them from the same records).
func Recomecar(ctx context.Context, tx store.Tx) error {
	return tx.RecomecarEstatisticas(ctx, chaveTrava)
}
