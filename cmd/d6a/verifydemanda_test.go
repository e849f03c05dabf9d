package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/pgtest"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/sorteio"
)

// filaSintetica is a consistent log of a one-counsellor neighbourhood
// under a city: counsellor a registered, d0 drawn to a, d1 then d2 queued
// while a is busy, a's cycle end, and the sweep's draw, of d1 (honest) or
// of the newer d2 (rigged). It returns the records and the sweep's index.
func filaSintetica(t *testing.T, servir uuid.UUID) (regs []registro.Registravel, d1, d2 uuid.UUID, varredura int) {
	t.Helper()
	id := func(s string) uuid.UUID { return uuid.NewSHA1(uuid.NameSpaceOID, []byte("demanda/"+s)) }
	bairro, cidade, a := id("bairro"), id("cidade"), id("a")
	cadeia := []uuid.UUID{bairro, cidade}
	d0, d1, d2 := id("d0"), id("d1"), id("d2")
	seq := func(n int64) *int64 { return &n }
	sortear := func(nome string, s int64, demanda uuid.UUID) registro.Registro {
		base, ts := id("gatilho-"+nome).String(), fmt.Sprintf("2026-12-03T10:00:%02d.000Z", s)
		res, err := sorteio.Sortear(base, ts, []string{a.String()})
		if err != nil {
			t.Fatal(err)
		}
		r, err := registro.NovoRegistro(id("sorteio-"+nome), demanda, bairro, base, seq(s), ts, res, bairro, cadeia, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	sem := func(nome string, s int64, demanda uuid.UUID) registro.SemCandidatos {
		return registro.NovoSemCandidatos(id("sem-"+nome), demanda, bairro, seq(s), fmt.Sprintf("2026-12-03T10:00:%02d.000Z", s), "todos_ocupados", cadeia, 1, 1, nil)
	}
	regs = []registro.Registravel{
		registro.NovoCadastro(id("cadastro"), seq(1), a, bairro, 1, "disponivel", true),
		registro.NovaVarredura(registro.IDVarredura(id("cadastro")), seq(1), &bairro, nil, "conselheiro.cadastrado"),
		registro.NovaHierarquia(id("h-bairro"), seq(2), bairro, &cidade, 1),
		registro.NovaHierarquia(id("h-cidade"), seq(2), cidade, nil, 0),
		sortear("d0", 2, d0),
		sem("d1", 3, d1),
		sem("d2", 4, d2),
		registro.NovoCicloConcluido(id("ciclo"), seq(5), a, d0, "disponivel"),
		registro.NovaVarredura(registro.IDVarredura(id("ciclo")), seq(5), &bairro, nil, "conselheiro.ciclo_concluído"),
		sortear("sweep", 5, servir),
	}
	return regs, d1, d2, 8
}

// `d6a verify --url --demanda` (CONTRACT §7 "A demand's own check"): the
// honest log lists the demand's draw and exits 0; the log whose sweep
// served the newer demand exits 1 naming that sweep and its draw's
// event_id; a malformed id exits 2.
func TestVerifyURLDemanda(t *testing.T) {
	bin := d6aBin(t)
	servir := func(regs []registro.Registravel) (url, chave string) {
		k, st := novaChave(t), pgtest.New(t)
		anexarAssinar(t, st, k, regs)
		return servirLog(t, st, k), k.Verificador
	}

	d1 := uuid.NewSHA1(uuid.NameSpaceOID, []byte("demanda/d1"))
	honesto, _, _, _ := filaSintetica(t, d1)
	url, chave := servir(honesto)
	code, out, errOut := rodar(t, bin, "verify", "--url", url, "--all", "--replay", "--chave", chave)
	if code != 0 || !strings.Contains(out, "divergencias=0 ") {
		t.Fatalf("--all --replay on the honest queue: %d %q %q", code, out, errOut)
	}
	code, out, errOut = rodar(t, bin, "verify", "--url", url, "--demanda", d1.String(), "--chave", chave)
	if code != 0 || !strings.Contains(out, "demanda "+d1.String()+": linha do tempo") || !strings.Contains(out, "[9] sorteada para o conselheiro") ||
		!strings.Contains(out, "[5] sem candidatos") || !strings.Contains(out, "nenhuma liberação a passou para trás") {
		t.Errorf("--demanda on the honest log: %d %q %q", code, out, errOut)
	}

	rigado, d1, d2, varredura := filaSintetica(t, uuid.NewSHA1(uuid.NameSpaceOID, []byte("demanda/d2")))
	if !slices.ContainsFunc(rigado, func(r registro.Registravel) bool {
		s, ok := r.(registro.Registro)
		return ok && s.DemandaID == d2
	}) {
		t.Fatal("the rigged log does not draw d2")
	}
	url, chave = servir(rigado)
	code, out, errOut = rodar(t, bin, "verify", "--url", url, "--demanda", d1.String(), "--chave", chave)
	// The draw that passed it over is named by its event_id too: what
	// `--event-id` checks next.
	sweep := uuid.NewSHA1(uuid.NameSpaceOID, []byte("demanda/sorteio-sweep"))
	if code != 1 || !strings.Contains(errOut, fmt.Sprintf("PASSADA PARA TRÁS registro %d event_id=%s:", varredura, sweep)) || !strings.Contains(errOut, d2.String()) {
		t.Errorf("--demanda on the rigged queue: %d %q %q", code, out, errOut)
	}
	code, out, errOut = rodar(t, bin, "verify", "--url", url, "--all", "--replay", "--chave", chave)
	if code != 1 || !strings.Contains(errOut, "a devida era a demanda "+d1.String()) {
		t.Errorf("--all --replay on the rigged queue: %d %q %q", code, out, errOut)
	}
	if code, _, errOut = rodar(t, bin, "verify", "--url", url, "--demanda", "d1"); code != 2 || !strings.Contains(errOut, `--demanda "d1" is not a UUID`) {
		t.Errorf("--demanda malformed: %d %q", code, errOut)
	}
}
