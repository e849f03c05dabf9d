package store_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// The domain view of an active assignment (AtribuicaoVigente) carries the
// row's own ids, place and draw time; AtivasSemInicio lists, oldest first
// and up to its limit, the active assignments drawn before its bound that
// never started.
func TestAtribuicaoVigente(t *testing.T) {
	t.Parallel()
	ctx, _, q := open(t)
	uc := uuid.New()
	var want []store.AtribuicaoVigente
	for i, h := range []time.Duration{3 * time.Hour, time.Hour, 2 * time.Hour} {
		c := novoConselheiro(t, q, uc, "ocupado")
		p := atribuicaoParams(c, uuid.New(), uc, at(h))
		id := val(store.Consultas(q).InserirAtribuicao(ctx, p)).must(t)
		v := store.AtribuicaoVigente{ID: id, EventIDSorteio: p.EventIDSorteio, DemandaID: p.DemandaID,
			ConselheiroID: c, UC: uc, DataSorteio: at(h),
			Demanda: store.DadosDemanda{ScoreFinal: p.ScoreFinal, CategoriaID: p.CategoriaID, NivelPrecedencia: p.NivelPrecedencia, GrupoID: p.GrupoID}}
		if i == 2 {
			// Started: never a timeout candidate.
			n, err := store.Consultas(q).RegistrarInicio(ctx, dbsqlc.RegistrarInicioParams{
				AtribuicaoID: id, EventIDSorteio: p.EventIDSorteio, ConselheiroID: c, DemandaID: p.DemandaID,
				IniciadaEm: at(h), EventID: uuid.New(), Agora: at(h),
			})
			affected(t, "RegistrarInicio", n, err, 1)
		}
		want = append(want, v)
	}
	// Concluded: not active.
	c := novoConselheiro(t, q, uc, "disponivel")
	encerrar(t, q, novaAtribuicao(t, q, c, uuid.New(), uc, at(0)), "concluida")

	norm := func(vs []store.AtribuicaoVigente) []store.AtribuicaoVigente {
		for i := range vs {
			vs[i].DataSorteio = vs[i].DataSorteio.UTC()
		}
		return vs
	}
	got := norm(val(q.AtivasSemInicio(ctx, at(4*time.Hour), 10)).must(t))
	deepEqual(t, "AtivasSemInicio", got, []store.AtribuicaoVigente{want[1], want[0]})
	got = norm(val(q.AtivasSemInicio(ctx, at(4*time.Hour), 1)).must(t))
	deepEqual(t, "AtivasSemInicio limit 1", got, []store.AtribuicaoVigente{want[1]})
	if got := val(q.AtivasSemInicio(ctx, at(time.Hour), 10)).must(t); len(got) != 0 {
		t.Fatalf("AtivasSemInicio before the first draw = %+v, want none", got)
	}

	v, achou, err := q.AtribuicaoAtivaDaDemanda(ctx, want[2].DemandaID)
	check(t, err)
	v.DataSorteio = v.DataSorteio.UTC()
	if !achou {
		t.Fatal("AtribuicaoAtivaDaDemanda: not found")
	}
	deepEqual(t, "AtribuicaoAtivaDaDemanda", v, want[2])
	v, achou, err = q.AtribuicaoAtivaDoConselheiro(ctx, want[0].ConselheiroID)
	check(t, err)
	v.DataSorteio = v.DataSorteio.UTC()
	if !achou {
		t.Fatal("AtribuicaoAtivaDoConselheiro: not found")
	}
	deepEqual(t, "AtribuicaoAtivaDoConselheiro", v, want[0])
	if _, achou, err := q.AtribuicaoAtivaDoConselheiro(ctx, c); err != nil || achou {
		t.Fatalf("AtribuicaoAtivaDoConselheiro of a concluded assignment: %v, %v; want none", achou, err)
	}
	if ja, err := q.SorteioTemAtribuicao(ctx, want[1].EventIDSorteio); err != nil || !ja {
		t.Fatalf("SorteioTemAtribuicao: %v, %v", ja, err)
	}
	if ja, err := q.SorteioTemAtribuicao(ctx, uuid.New()); err != nil || ja {
		t.Fatalf("SorteioTemAtribuicao of an unknown draw: %v, %v", ja, err)
	}
}
