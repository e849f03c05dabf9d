package colonia_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/evento"
)

// CONTRACT §3 "Stream order", issue 22: a unit with one counsellor. A
// cycle end that frees them, then at once an agenda item: the item is
// drawn to them, following the agenda item (its base), never decided
// "todos_ocupados" first. Then the reverse: the item first finds them busy
// (sorteio.sem_candidatos), and the cycle's sweep draws it, following the
// cycle. With per-type consumers 4 of these 24 pairs came out the other
// way: the public record said everyone was busy when, by the bus, nobody
// was.
func TestOrdemDoStreamEntreTipos(t *testing.T) {
	t.Parallel()
	c, _ := coloniaNoBairro(t)
	uc := c.novaUC()
	m := c.novoConselheiro(uc)
	atual, x := c.novaDemanda(uc)
	must(t, x == m, "first demand drawn to %v, want %v", x, m)
	base := func(d uuid.UUID) string {
		return h3linha(c, `SELECT base FROM d6a.auditoria_sorteios WHERE demanda_id = $1`, d)
	}
	for i := range 12 {
		cicloID, _ := c.publicar(evento.CicloConcluido, "1.0.0", ciclo(m, atual, uc))
		d := uuid.New()
		agendaID, _ := c.publicar(evento.AgendaItemDisponivel, "1.0.0", agenda(d, uc))
		c.esperarProcessado(cicloID)
		c.esperarProcessado(agendaID)
		must(t, c.ativa(d) == m, "pair %d (cycle, then agenda): demand drawn to %v, want %v", i, c.ativa(d), m)
		must(t, base(d) == agendaID.String(), "pair %d (cycle, then agenda): draw follows %s, want the agenda item %s", i, base(d), agendaID)
		atual = d
	}
	for i := range 12 {
		d := uuid.New()
		agendaID, _ := c.publicar(evento.AgendaItemDisponivel, "1.0.0", agenda(d, uc))
		cicloID, _ := c.publicar(evento.CicloConcluido, "1.0.0", ciclo(m, atual, uc))
		c.esperarProcessado(agendaID)
		c.esperarProcessado(cicloID)
		must(t, c.ativa(d) == m, "pair %d (agenda, then cycle): demand drawn to %v, want %v by the cycle's sweep", i, c.ativa(d), m)
		must(t, base(d) == cicloID.String(), "pair %d (agenda, then cycle): draw follows %s, want the cycle %s", i, base(d), cicloID)
		atual = d
	}
	c.esperarOutboxVazio()
	sem := c.publicados(evento.SorteioSemCandidatos)
	must(t, len(sem) == 12, "%d sorteio.sem_candidatos, want 12 (one per agenda-first pair)", len(sem))
	c.semDLQ()
}
