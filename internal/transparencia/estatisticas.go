package transparencia

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/formigueiro/d6a/internal/equidade"
)

// lockEstatisticas serialises the statistics' processing across instances
// ("d6a" + "eqd" in ASCII).
const lockEstatisticas int64 = 0x643661657164

// SomarRegistro adds one record's bytes to a: a draw's list and winner;
// an eliminated record (nil) or a record of another kind (starting with
// "tipo", CONTRACT §7) counts as a record and adds no draw.
func SomarRegistro(a *equidade.Acumulador, registro []byte) error {
	a.Registros++
	s, err := lerSorteio(registro)
	if err != nil || s == nil {
		return err
	}
	a.Sorteio(s.ElegiveisEntrada, s.ConselheiroID)
	return nil
}

// sorteioLido is what the statistics read of a draw's record.
type sorteioLido struct {
	Tipo             *string  `json:"tipo"`
	ConselheiroID    string   `json:"conselheiro_id"`
	ElegiveisEntrada []string `json:"elegiveis_entrada"`
}

// lerSorteio reads a record's list and winner; nil for a record that adds
// no draw (eliminated, or of another kind).
func lerSorteio(registro []byte) (*sorteioLido, error) {
	if registro == nil {
		return nil, nil
	}
	var r sorteioLido
	if err := json.Unmarshal(registro, &r); err != nil {
		return nil, fmt.Errorf("transparencia: record for the statistics: %w", err)
	}
	if r.Tipo != nil {
		return nil, nil
	}
	return &r, nil
}

// LoteEstatisticas is how many records one pass of ApurarEstatisticas
// folds at most. A pass holds its records' lists and the sums of every
// counsellor they name: with 5,000, d6a serve peaked at 153-159 MB at
// K=1,000,000 dense after a burst, against 121-129 MB with 500 (issue 24,
// docs/bench.md §11); a backlog only takes more, smaller transactions.
const LoteEstatisticas = 500

// ApurarEstatisticas adds the records signed since the last pass to the
// statistics' table, at most lote (≤ 0: LoteEstatisticas) records per
// transaction, and returns how many it added. Only records under a signed
// checkpoint count, so every figure the route serves can be recomputed
// from proved records.
func ApurarEstatisticas(ctx context.Context, db Beginner, lote int) (int64, error) {
	if lote <= 0 {
		lote = LoteEstatisticas
	}
	tx, err := db.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	// The sums are a cache of the signed log: a crash that loses the last
	// passes loses them whole, and the next pass redoes them from
	// `registros`. So the pass does not wait for its WAL to reach the disk,
	// where it would queue beside the draws' commits.
	var ok bool
	if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1), set_config('synchronous_commit', 'off', true) = 'off'`, lockEstatisticas).Scan(&ok, new(bool)); err != nil || !ok {
		return 0, err // another instance is at it
	}
	var feitos, sorteios, n1, assinado int64
	if err := tx.QueryRow(ctx, `SELECT e.registros, e.sorteios, e.sorteios_n1,
       coalesce((SELECT max(tamanho) FROM d6a.transparencia_checkpoints), 0)
FROM d6a.transparencia_estatisticas_estado e`).Scan(&feitos, &sorteios, &n1, &assinado); err != nil {
		return 0, err
	}
	fim := min(assinado, feitos+int64(lote))
	if fim <= feitos {
		return 0, nil
	}
	rows, err := tx.Query(ctx, `SELECT indice, registro FROM d6a.transparencia_registros
WHERE indice >= $1 AND indice < $2 ORDER BY indice`, feitos, fim)
	if err != nil {
		return 0, err
	}
	var (
		lidos   []*sorteioLido
		tocados = map[string]bool{}
		ids     []string
	)
	tocar := func(id string) {
		if !tocados[id] {
			tocados[id] = true
			ids = append(ids, id)
		}
	}
	proximo := feitos
	for rows.Next() {
		var i int64
		var b []byte
		if err := rows.Scan(&i, &b); err != nil {
			rows.Close()
			return 0, err
		}
		if i != proximo {
			rows.Close()
			return 0, fmt.Errorf("transparencia: record %d missing from the statistics' read", proximo)
		}
		sr, err := lerSorteio(b)
		if err != nil {
			rows.Close()
			return 0, fmt.Errorf("record %d: %w", i, err)
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
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if proximo != fim {
		return 0, fmt.Errorf("transparencia: %d records read for the statistics, want %d", proximo-feitos, fim-feitos)
	}
	// The sums are floats: adding a pass's own sum to the stored one would
	// round differently from adding record by record, so the figures would
	// depend on where the passes happened to cut the log. The pass starts
	// from the stored sums of the counsellors it touches and adds each
	// record in order, so every cut gives what one fold from record 0
	// gives, bit for bit, and so does a verifier's recomputation.
	a := equidade.NovoAcumulador()
	if err := somarGuardadas(ctx, tx, a, ids); err != nil {
		return 0, err
	}
	for _, sr := range lidos {
		a.Sorteio(sr.ElegiveisEntrada, sr.ConselheiroID)
	}
	cs := a.Conselheiros()
	var p struct {
		ids             []string
		eleg, obs, obs2 []int64
		esp, vari, esp2 []float64
	}
	for _, c := range cs {
		p.ids = append(p.ids, c.ID)
		p.eleg = append(p.eleg, c.SorteiosElegivel)
		p.esp = append(p.esp, c.Esperado)
		p.obs = append(p.obs, c.Observado)
		p.vari = append(p.vari, c.Variancia)
		p.esp2 = append(p.esp2, c.EsperadoN2)
		p.obs2 = append(p.obs2, c.ObservadoN2)
	}
	if len(cs) > 0 {
		if _, err := tx.Exec(ctx, `INSERT INTO d6a.transparencia_estatisticas AS t
    (conselheiro_id, sorteios_elegivel, esperado, observado, variancia, esperado_n2, observado_n2)
SELECT * FROM unnest($1::text[], $2::bigint[], $3::float8[], $4::bigint[], $5::float8[], $6::float8[], $7::bigint[])
ON CONFLICT (conselheiro_id) DO UPDATE SET
    sorteios_elegivel = excluded.sorteios_elegivel,
    esperado = excluded.esperado,
    observado = excluded.observado,
    variancia = excluded.variancia,
    esperado_n2 = excluded.esperado_n2,
    observado_n2 = excluded.observado_n2`, p.ids, p.eleg, p.esp, p.obs, p.vari, p.esp2, p.obs2); err != nil {
			return 0, err
		}
	}
	if _, err := tx.Exec(ctx, `UPDATE d6a.transparencia_estatisticas_estado
SET registros = $1, sorteios = sorteios + $2, sorteios_n1 = sorteios_n1 + $3`, fim, a.Sorteios, a.SorteiosN1); err != nil {
		return 0, err
	}
	return fim - feitos, tx.Commit(ctx)
}

// LerEstatisticas is the route's answer: the test over the sums kept.
func LerEstatisticas(ctx context.Context, db DBTX) (equidade.Resultado, error) {
	a := equidade.NovoAcumulador()
	var err error
	if a.Registros, a.Sorteios, a.SorteiosN1, err = lerTotais(ctx, db); err != nil {
		return equidade.Resultado{}, err
	}
	if err := somarGuardadas(ctx, db, a, nil); err != nil {
		return equidade.Resultado{}, err
	}
	return a.Resultado(), nil
}

// TestarEstatisticas is LerEstatisticas without the list of counsellors,
// for the service's p-value metric: it streams the stored sums into the
// test one row at a time instead of holding every counsellor's (at
// K=1,000,000 that would be every counsellor). The primary key's order is
// Go's for ids that are UUIDs, so the figures are LerEstatisticas', bit for
// bit.
func TestarEstatisticas(ctx context.Context, db DBTX) (equidade.Resultado, error) {
	registros, sorteios, n1, err := lerTotais(ctx, db)
	if err != nil {
		return equidade.Resultado{}, err
	}
	t := equidade.NovoTeste(registros, sorteios, n1)
	if err := cadaGuardada(ctx, db, ` ORDER BY conselheiro_id`, nil, t.Somar); err != nil {
		return equidade.Resultado{}, err
	}
	return t.Resultado(), nil
}

// lerTotais reads the statistics' totals: records folded, draws, draws
// with a list of one.
func lerTotais(ctx context.Context, db DBTX) (registros, sorteios, n1 int64, err error) {
	err = db.QueryRow(ctx, `SELECT registros, sorteios, sorteios_n1 FROM d6a.transparencia_estatisticas_estado`).
		Scan(&registros, &sorteios, &n1)
	return registros, sorteios, n1, err
}

// somarGuardadas adds to a the stored sums of the counsellors ids, or of
// every counsellor when ids is nil.
func somarGuardadas(ctx context.Context, db DBTX, a *equidade.Acumulador, ids []string) error {
	somar := func(c *equidade.Conselheiro) { a.Somar(*c) }
	if ids == nil {
		return cadaGuardada(ctx, db, "", nil, somar)
	}
	return cadaGuardada(ctx, db, ` WHERE conselheiro_id = ANY($1::text[])`, []any{ids}, somar)
}

// cadaGuardada calls f with each counsellor's stored sums that the query's
// tail (a WHERE or ORDER BY clause, with its args) selects.
func cadaGuardada(ctx context.Context, db DBTX, cauda string, args []any, f func(*equidade.Conselheiro)) error {
	rows, err := db.Query(ctx, `SELECT conselheiro_id, sorteios_elegivel, esperado, observado, variancia, esperado_n2, observado_n2
FROM d6a.transparencia_estatisticas`+cauda, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var c equidade.Conselheiro
		if err := rows.Scan(&c.ID, &c.SorteiosElegivel, &c.Esperado, &c.Observado, &c.Variancia, &c.EsperadoN2, &c.ObservadoN2); err != nil {
			return err
		}
		f(&c)
	}
	return rows.Err()
}
