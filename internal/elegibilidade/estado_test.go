package elegibilidade

import (
	"testing"
	"time"
)

// The state machine of spec 4.6 (what each input does with it is
// decisao.Passo, tested there).
func TestMaquinaDeEstados(t *testing.T) {
	agora := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	passou, falta := agora.Add(-time.Hour), agora.Add(time.Hour)
	proibidas := [][2]string{{Suspenso, Ocupado}, {Ocupado, Suspenso}, {Inativo, Disponivel}, {Inativo, Ocupado}, {Disponivel, Inativo}}
	for _, p := range proibidas {
		if Transicao(p[0], p[1]) {
			t.Errorf("%s → %s allowed", p[0], p[1])
		}
	}
	for _, p := range [][2]string{{Disponivel, Ocupado}, {Disponivel, Suspenso}, {Ocupado, Disponivel}, {Suspenso, Disponivel}, {Inativo, Inativo}} {
		if !Transicao(p[0], p[1]) {
			t.Errorf("%s → %s forbidden", p[0], p[1])
		}
	}
	casos := []struct {
		nome, got, want string
	}{
		{"reactivation, suspension pending", StatusReativado(&falta, agora), Suspenso},
		{"reactivation, suspension ended", StatusReativado(&passou, agora), Disponivel},
		{"reactivation, never suspended", StatusReativado(nil, agora), Disponivel},
	}
	for _, c := range casos {
		if c.got != c.want {
			t.Errorf("%s: %s, want %s", c.nome, c.got, c.want)
		}
	}
	if PodeSuspender(Ocupado) || PodeSuspender(Inativo) || !PodeSuspender(Disponivel) || !PodeSuspender(Suspenso) {
		t.Error("suspension allowed from the wrong statuses")
	}
}

// The console's transitions (spec 4.6): into inativo from disponivel or
// suspenso, out of it to what StatusReativado gives; never from ocupado,
// never inativo → inativo or inativo → ocupado, and no bus transition
// among them.
func TestTransicaoAdministrativa(t *testing.T) {
	todos := []string{Disponivel, Ocupado, Suspenso, Inativo}
	permitidas := map[[2]string]bool{
		{Disponivel, Inativo}: true, {Suspenso, Inativo}: true,
		{Inativo, Disponivel}: true, {Inativo, Suspenso}: true,
	}
	for _, de := range todos {
		for _, para := range todos {
			if got, want := TransicaoAdministrativa(de, para), permitidas[[2]string{de, para}]; got != want {
				t.Errorf("TransicaoAdministrativa(%s, %s) = %v, want %v", de, para, got, want)
			}
		}
	}
	agora := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	passou, falta := agora.Add(-time.Hour), agora.Add(time.Hour)
	for _, ate := range []*time.Time{nil, &passou, &falta} {
		if novo := StatusReativado(ate, agora); !TransicaoAdministrativa(Inativo, novo) {
			t.Errorf("reactivation to %s (ate %v) refused", novo, ate)
		}
	}
	for p := range permitidas {
		if Transicao(p[0], p[1]) {
			t.Errorf("%s → %s allowed on a bus input", p[0], p[1])
		}
	}
}

// A draw makes its winner ocupado only where spec 4.6 allows it: from
// disponivel, or from a suspension whose date has passed; never from a
// current suspension, inativo or ocupado.
func TestStatusAposSorteio(t *testing.T) {
	agora := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	ontem, amanha := agora.Add(-24*time.Hour), agora.Add(24*time.Hour)
	for _, c := range []struct {
		status string
		ate    *time.Time
		ok     bool
	}{
		{Disponivel, nil, true}, {Suspenso, &ontem, true}, {Suspenso, &amanha, false},
		{Suspenso, nil, false}, {Inativo, nil, false}, {Ocupado, nil, false},
	} {
		if got, ok := StatusAposSorteio(c.status, c.ate, agora); got != Ocupado || ok != c.ok {
			t.Errorf("StatusAposSorteio(%s, %v) = %s, %v; want ocupado, %v", c.status, c.ate, got, ok, c.ok)
		}
	}
}
