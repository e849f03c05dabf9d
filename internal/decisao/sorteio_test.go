package decisao

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/elegibilidade"
	"github.com/formigueiro/d6a/internal/sorteio"
)

// TestSortearReproduzOsVetores runs the step on the published vectors
// (testdata/vectors.json, an independent implementation's): its winner,
// seed, order and hash are theirs, with and without the beacon rule.
func TestSortearReproduzOsVetores(t *testing.T) {
	data, err := os.ReadFile("../../testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Cases []struct {
			Note, Base, Timestamp, Randomness, Seed, Selecionado string
			Elegiveis                                            []string `json:"elegiveis_entrada"`
			Ordenados                                            []string
			Hash                                                 string `json:"lista_elegiveis_hash"`
		}
	}
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	agora := time.Date(2026, 11, 29, 14, 3, 7, 0, time.UTC)
	n := 0
	for _, c := range v.Cases {
		var ids []uuid.UUID
		for _, s := range c.Elegiveis {
			id, err := uuid.Parse(s)
			if err != nil {
				ids = nil
				break
			}
			ids = append(ids, id)
		}
		if len(ids) == 0 {
			continue // cases of the canonical form's refusals: sorteio's own tests
		}
		n++
		ef, err := Sortear(VisaoSorteio{Filtro: elegibilidade.Resultado{Elegiveis: ids}}, Semente{Base: c.Base, Timestamp: c.Timestamp, Randomness: c.Randomness}, agora)
		if err != nil {
			t.Fatalf("%s: %v", c.Note, err)
		}
		if !ef.Sorteado || ef.Vencedor.String() != c.Selecionado || ef.Resultado.Seed != c.Seed || ef.Resultado.ListaHash != c.Hash {
			t.Fatalf("%s: sorteado=%v vencedor %s seed %s hash %s; vectors: %s %s %s", c.Note, ef.Sorteado, ef.Vencedor, ef.Resultado.Seed, ef.Resultado.ListaHash, c.Selecionado, c.Seed, c.Hash)
		}
		if ef.Status != elegibilidade.Ocupado || ef.FimDaSuspensao != nil || ef.Enfileirar || ef.Publicar || ef.Registrar || ef.SairDaFila {
			t.Fatalf("%s: a draw of a demand outside the queue, winner disponivel: %+v", c.Note, ef)
		}
	}
	if n < 3 {
		t.Fatalf("only %d vector cases ran", n)
	}
}

// TestSortearVencedorSuspensoVencido: a winner still marked suspenso whose
// suspension ended has that end published by the draw (CONTRACT §3); a
// sweep's draw takes the demand out of the queue.
func TestSortearVencedorSuspensoVencido(t *testing.T) {
	agora := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	id := uuid.MustParse("0f6e6d1a-1111-4c1b-9a6a-000000000001")
	ate := agora.Add(-time.Hour)
	v := VisaoSorteio{NaFila: true, Filtro: elegibilidade.Resultado{Elegiveis: []uuid.UUID{id}, Vencidos: map[uuid.UUID]time.Time{id: ate}}}
	ef, err := Sortear(v, Semente{Base: "b", Timestamp: sorteio.FormatTimestamp(agora)}, agora)
	if err != nil {
		t.Fatal(err)
	}
	if ef.Vencedor != id || ef.Status != elegibilidade.Ocupado || ef.FimDaSuspensao == nil || !ef.FimDaSuspensao.Equal(ate) || !ef.SairDaFila {
		t.Fatalf("efeitos %+v", ef)
	}
	// A suspension that has not ended is not the draw's to lift: spec 4.6
	// forbids the transition, and the step refuses it.
	v.Filtro.Vencidos[id] = agora.Add(time.Hour)
	if _, err := Sortear(v, Semente{Base: "b", Timestamp: sorteio.FormatTimestamp(agora)}, agora); err == nil {
		t.Fatal("a draw of a counsellor still suspended passed")
	}
}

// TestSortearSemCandidatos is spec 4.4 step 2 and 5.4: nobody eligible
// queues the demand (or counts its attempt); sorteio.sem_candidatos goes
// out once per demand; its record is kept whenever the demand enters the
// queue, so the replay knows the queue.
func TestSortearSemCandidatos(t *testing.T) {
	for _, c := range []struct {
		naFila, publicado   bool
		publicar, registrar bool
	}{
		{false, false, true, true},
		{false, true, false, true},
		{true, false, true, true},
		{true, true, false, false},
	} {
		ef, err := Sortear(VisaoSorteio{NaFila: c.naFila, SemCandidatosPublicado: c.publicado,
			Filtro: elegibilidade.Resultado{Motivo: elegibilidade.TodosOcupados}}, Semente{}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if ef.Sorteado || !ef.Enfileirar || ef.SairDaFila || ef.Publicar != c.publicar || ef.Registrar != c.registrar {
			t.Fatalf("na fila %v, publicado %v: %+v", c.naFila, c.publicado, ef)
		}
	}
}

// TestSortearRegistrado: a recorded shuffle (the replay's) is taken as it
// is, whatever the seed would give; one naming no counsellor is refused.
func TestSortearRegistrado(t *testing.T) {
	a, b, c := uuid.New(), uuid.New(), uuid.New()
	v := VisaoSorteio{Filtro: elegibilidade.Resultado{Elegiveis: []uuid.UUID{a, b, c}}}
	agora := time.Date(2026, 11, 29, 14, 3, 7, 0, time.UTC)
	for _, vencedor := range []uuid.UUID{a, b, c} {
		r := sorteio.Resultado{Seed: "s", Selecionado: vencedor.String()}
		ef, err := Sortear(v, Semente{Base: "x", Timestamp: "y", Registrado: &r}, agora)
		if err != nil || !ef.Sorteado || ef.Vencedor != vencedor || ef.Resultado.Seed != "s" || ef.Status != elegibilidade.Ocupado {
			t.Fatalf("recorded winner %s: %+v, %v", vencedor, ef, err)
		}
	}
	if _, err := Sortear(v, Semente{Registrado: &sorteio.Resultado{Selecionado: "ninguém"}}, agora); err == nil {
		t.Fatal("a recorded shuffle naming no counsellor was accepted")
	}
}
