package atribuicao_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/atribuicaotest"
	"github.com/formigueiro/d6a/internal/equidade"
	"github.com/formigueiro/d6a/internal/estatisticas"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/sorteio"
	"github.com/formigueiro/d6a/internal/transparencia"
	"github.com/formigueiro/d6a/internal/verificar/log"
)

// CONTRACT §7 "Fairness statistics" on logs made by the real executor:
// an honest run of 10,080 draws is not flagged; a lottery whose lowest id
// wins one draw in ten, and one where a counsellor wins twice their share
// (test seams: Options.Embaralhar), are. The statistics are kept by the
// service's incremental pass and must equal a recomputation from the
// records alone.
func TestEquidadeDoExecutor(t *testing.T) {
	if testing.Short() {
		t.Skip("16,000 draws")
	}
	t.Parallel()
	// The winner's position, from the seed: a biased lottery still looks
	// deterministic to the executor.
	uniforme := func(seed string) float64 {
		v, _ := strconv.ParseUint(seed[:12], 16, 64)
		return float64(v) / float64(uint64(1)<<48)
	}
	mover := func(r sorteio.Resultado, id string) sorteio.Resultado {
		o := append([]string(nil), r.Ordenados...)
		for i := range o {
			if o[i] == id {
				o[0], o[i] = o[i], o[0]
			}
		}
		r.Ordenados, r.Selecionado = o, id
		return r
	}
	menorUmEmDez := func(base, ts, rnd string, ids []string) (sorteio.Resultado, error) {
		r, err := sorteio.SortearComRodada(base, ts, rnd, ids)
		if err == nil && uniforme(r.Seed) < 0.1 {
			r = mover(r, r.Entrada[0])
		}
		return r, err
	}
	var favorito string
	dobro := func(base, ts, rnd string, ids []string) (sorteio.Resultado, error) {
		r, err := sorteio.SortearComRodada(base, ts, rnd, ids)
		if err != nil || len(r.Entrada) < 2 {
			return r, err
		}
		for _, id := range r.Entrada {
			if id != favorito {
				continue
			}
			if uniforme(r.Seed) < 2/float64(len(r.Entrada)) {
				return mover(r, favorito), nil
			}
			if r.Selecionado == favorito {
				return mover(r, r.Ordenados[1]), nil
			}
		}
		return r, nil
	}
	for _, c := range []struct {
		nome     string
		rodadas  int
		emb      func(string, string, string, []string) (sorteio.Resultado, error)
		escolher func([]string)
		suspeito bool
	}{
		{"justo", 280, nil, nil, false},
		{"menor id 1 em 10", 84, menorUmEmDez, nil, true},
		{"um conselheiro com o dobro", 84, dobro, func(ids []string) { favorito = ids[3] }, true},
	} {
		t.Run(c.nome, func(t *testing.T) {
			t.Parallel()
			r := equidadeDe(t, c.rodadas, c.emb, c.escolher)
			t.Logf("%s: %d draws, estatística %.2f gl %d, p %.3g (qui-quadrado %.3g, extremo %.3g: %s)",
				c.nome, r.Sorteios, r.Estatistica, r.GrausLiberdade, r.PValor, r.PValorQuiQuadrado, r.PValorExtremo, r.Extremo)
			if r.Suspeito() != c.suspeito {
				t.Errorf("%s: p = %.3g, suspeito = %v, want %v", c.nome, r.PValor, r.Suspeito(), c.suspeito)
			}
		})
	}
}

// equidadeDe draws rodadas × 36 demands over 4 units of 10 counsellors
// (9 per unit per batch, then everyone freed), signs the log, runs the
// service's statistics pass and checks it against a recomputation from the
// records.
func equidadeDe(t *testing.T, rodadas int, emb func(string, string, string, []string) (sorteio.Resultado, error), escolher func([]string)) equidade.Resultado {
	skey, _, err := transparencia.GerarChave("d6a/sorteios")
	must(t, err, "key")
	chave, err := transparencia.NovaChave(skey)
	must(t, err, "key")
	clk := &relogioAndando{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), passo: time.Millisecond}
	a := atribuicaotest.NovoCom(t, nil, func(o *atribuicao.Options) {
		o.Now, o.ChaveLog, o.OrigemLog, o.Embaralhar = clk.Now, &chave, "d6a/sorteios", emb
	})
	var ucs []uuid.UUID
	var todos []string
	for range 4 {
		uc := a.UC(uuid.Nil)
		ucs = append(ucs, uc)
		for range 10 {
			todos = append(todos, a.Conselheiro(uc).String())
		}
	}
	if escolher != nil {
		escolher(todos)
	}
	ctx := context.Background()
	seq := uint64(1)
	for range rodadas {
		var evs []evento.Evento
		var seqs []uint64
		for _, uc := range ucs {
			for range 9 {
				evs = append(evs, evento.Evento{
					Envelope: evento.Envelope{EventID: uuid.New(), Tipo: evento.AgendaItemDisponivel, Origem: "D-5", VersaoSchema: "1.0.0"},
					Payload:  evento.AgendaItemDisponivelPayload{DemandaID: uuid.New(), UnidadeCivicaID: uc, CategoriaID: "SAU", NivelPrecedencia: 2, ScoreFinal: 50},
				})
				seqs = append(seqs, seq)
				seq++
			}
		}
		for i, err := range a.Svc.HandleLote(ctx, evs, seqs) {
			if err != nil {
				t.Fatalf("event %d: %v", i, err)
			}
		}
		if _, err := a.St.Pool.Exec(ctx, `UPDATE d6a.atribuicoes SET status = 'concluida' WHERE status = 'ativa'`); err != nil {
			t.Fatal(err)
		}
		if _, err := a.St.Pool.Exec(ctx, `UPDATE d6a.conselheiros SET status = 'disponivel' WHERE status = 'ocupado'`); err != nil {
			t.Fatal(err)
		}
	}
	for {
		n, err := estatisticas.Apurar(ctx, a.St, 4000)
		must(t, err, "statistics pass")
		if n == 0 {
			break
		}
	}
	servido, err := estatisticas.Ler(ctx, a.St)
	must(t, err, "statistics read")
	// From the records alone, as `verify --estatisticas` does.
	rec := equidade.NovoAcumulador()
	var leitor registro.Sorteios
	rows, err := a.St.Pool.Query(ctx, `SELECT registro FROM d6a.transparencia_registros ORDER BY indice`)
	must(t, err, "records")
	for rows.Next() {
		var b []byte
		must(t, rows.Scan(&b), "scan")
		must(t, leitor.Somar(rec, b), "record")
	}
	rows.Close()
	r := rec.Resultado()
	must(t, log.DiferencaEstatisticas(servido, r), "served statistics against the records")
	if want := int64(rodadas * 36); r.Sorteios != want {
		t.Fatalf("%d draws in the log, want %d", r.Sorteios, want)
	}
	return servido
}

func must(t *testing.T, err error, oque string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", oque, err)
	}
}
