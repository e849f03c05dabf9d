package evento

import "testing"

func TestTipoNomes(t *testing.T) {
	casos := []struct {
		tipo                 Tipo
		subject, durable, dl string
	}{
		{AgendaItemDisponivel, "eventos.agenda.item_disponivel", "d6a-agenda-item-disponivel", "d6a.dlq.agenda.item_disponivel"},
		{ConselheiroCadastrado, "eventos.conselheiro.cadastrado", "d6a-conselheiro-cadastrado", "d6a.dlq.conselheiro.cadastrado"},
		{CicloConcluido, "eventos.conselheiro.ciclo_concluido", "d6a-conselheiro-ciclo-concluido", "d6a.dlq.conselheiro.ciclo_concluido"},
		{AtribuicaoRecusada, "eventos.conselheiro.atribuicao_recusada", "d6a-conselheiro-atribuicao-recusada", "d6a.dlq.conselheiro.atribuicao_recusada"},
		{ElegibilidadeAtualizada, "eventos.conselheiro.elegibilidade_atualizada", "d6a-conselheiro-elegibilidade-atualizada", "d6a.dlq.conselheiro.elegibilidade_atualizada"},
		{DuplicidadeAgregada, "eventos.duplicidade.agregada", "d6a-duplicidade-agregada", "d6a.dlq.duplicidade.agregada"},
		{ConselheiroSorteado, "eventos.conselheiro.sorteado", "d6a-conselheiro-sorteado", "d6a.dlq.conselheiro.sorteado"},
		{SorteioSemCandidatos, "eventos.sorteio.sem_candidatos", "d6a-sorteio-sem-candidatos", "d6a.dlq.sorteio.sem_candidatos"},
		{DemandaIniciada, "eventos.conselheiro.demanda_iniciada", "d6a-conselheiro-demanda-iniciada", "d6a.dlq.conselheiro.demanda_iniciada"},
		{SuspensaoExpirada, "eventos.conselheiro.suspensao_expirada", "d6a-conselheiro-suspensao-expirada", "d6a.dlq.conselheiro.suspensao_expirada"},
		{Varredura, "eventos.d6a.varredura", "d6a-d6a-varredura", "d6a.dlq.d6a.varredura"},
		{CapacitacaoConcluida, "eventos.capacitacao.concluida", "d6a-capacitacao-concluida", "d6a.dlq.capacitacao.concluida"},
		{VinculoValidado, "eventos.vinculo.validado", "d6a-vinculo-validado", "d6a.dlq.vinculo.validado"},
		{ProgressaoHabilitada, "eventos.progressao.habilitada", "d6a-progressao-habilitada", "d6a.dlq.progressao.habilitada"},
	}
	for _, c := range casos {
		if got := c.tipo.Subject("eventos"); got != c.subject {
			t.Errorf("%s.Subject = %q, want %q", c.tipo, got, c.subject)
		}
		if got := c.tipo.Durable(); got != c.durable {
			t.Errorf("%s.Durable = %q, want %q", c.tipo, got, c.durable)
		}
		if got := c.tipo.DLQSubject(); got != c.dl {
			t.Errorf("%s.DLQSubject = %q, want %q", c.tipo, got, c.dl)
		}
		for _, s := range []string{string(c.tipo), c.tipo.ASCII()} {
			if got, ok := ParseTipo(s); !ok || got != c.tipo {
				t.Errorf("ParseTipo(%q) = %q, %v", s, got, ok)
			}
		}
		if got, ok := TipoDoSubject("eventos", c.subject); !ok || got != c.tipo {
			t.Errorf("TipoDoSubject(%q) = %q, %v", c.subject, got, ok)
		}
	}
	if len(Consumidos) != 12 {
		t.Fatalf("Consumidos has %d types", len(Consumidos))
	}
	for _, s := range []string{"", "agenda", "agenda.item_disponivel.x", "eventos.agenda.item_disponivel", "AGENDA.ITEM_DISPONIVEL"} {
		if _, ok := ParseTipo(s); ok {
			t.Errorf("ParseTipo(%q) accepted", s)
		}
	}
	if _, ok := TipoDoSubject("eventos", "outro.agenda.item_disponivel"); ok {
		t.Error("TipoDoSubject accepted a foreign prefix")
	}
}
