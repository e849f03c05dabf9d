package log_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/formigueiro/d6a/internal/eliminacao"
	"github.com/formigueiro/d6a/internal/historico"
	"github.com/formigueiro/d6a/internal/pgtest"
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/tiles"
	"github.com/formigueiro/d6a/internal/transparencia"
	"github.com/formigueiro/d6a/internal/verificar/log"
)

// CONTRACT §7 "Erasure is a record": a mirror and a monitor made before an
// erasure blank what they hold on their next run, led by the d6a.eliminacao
// record: the mirror's kept full bundle is fetched again, the monitor's
// kept state is rebuilt without the erased counsellor, and both still
// verify.
func TestEspelhoEMonitorApagam(t *testing.T) {
	bg := context.Background()
	// The test server admits few public reads at a time.
	emVoo := log.TilesEmVoo
	log.TilesEmVoo = 1
	t.Cleanup(func() { log.TilesEmVoo = emVoo })
	regs := historico.HistoriaSintetica("espelho", 100)
	st := pgtest.New(t)
	if err := pgx.BeginTxFunc(bg, st.Pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		e, err := transparencia.LerEstado(bg, tx)
		if err != nil {
			return err
		}
		return e.AnexarRegistraveis(bg, tx, regs)
	}); err != nil {
		t.Fatal(err)
	}
	l := novoLogPublico(t)
	if _, err := transparencia.Assinar(bg, st.Pool, l.chave, registro.OrigemPadrao); err != nil {
		t.Fatal(err)
	}
	// The first draw's winner: named in a full bundle and in their
	// registration record, further back.
	var cidadao string
	var primeiro int64
	for i, r := range regs {
		if s, ok := r.(registro.Registro); ok {
			cidadao, primeiro = s.ConselheiroID.String(), int64(i)
			break
		}
	}
	if (primeiro/tiles.Width+1)*tiles.Width > int64(len(regs)) {
		t.Fatalf("the first draw (%d) is not in a full bundle of %d records", primeiro, len(regs))
	}
	espelho, monitor := t.TempDir(), t.TempDir()
	antes := &log.Cliente{Base: Servir(t, st, l.chave.Verificador), Chave: l.chave.Verificador}
	if _, err := antes.Espelhar(bg, espelho, nil); err != nil {
		t.Fatal(err)
	}
	if m, err := antes.Monitorar(bg, monitor, nil); err != nil || !m.Salvo {
		t.Fatalf("first monitor run: %+v %v", m, err)
	}
	arquivo := func(n int64) string {
		return filepath.Join(espelho, "d6a", "transparencia", filepath.FromSlash(tiles.Path(tiles.Bundle(n, tiles.Width))))
	}
	if b, _ := os.ReadFile(arquivo(primeiro / tiles.Width)); !strings.Contains(string(b), cidadao) {
		t.Fatalf("the mirror's bundle does not name %s before the erasure", cidadao)
	}
	if b, _ := os.ReadFile(filepath.Join(monitor, log.ArquivoMonitor)); !strings.Contains(string(b), cidadao) {
		t.Fatalf("the monitor's state does not name %s before the erasure", cidadao)
	}
	id := uuid.MustParse(cidadao)
	res, err := eliminacao.Cidadao(bg, st, eliminacao.Assinador{Chave: l.chave, Origem: registro.OrigemPadrao}, id)
	if err != nil || len(res.Apagados) == 0 {
		t.Fatalf("erasure: %+v %v", res, err)
	}
	// A new server: the service keeps a bundle in memory at most a minute
	// (validadeBundle), the window docs/operacao.md states.
	depois := &log.Cliente{Base: Servir(t, st, l.chave.Verificador), Chave: l.chave.Verificador}
	e, err := depois.Espelhar(bg, espelho, nil)
	if err != nil || e.Reescritos == 0 {
		t.Fatalf("mirror after the erasure: %+v %v", e, err)
	}
	for _, a := range res.Apagados {
		n := a.Indice / tiles.Width
		if (n+1)*tiles.Width > int64(len(regs)) {
			continue // the partial bundle, fetched anyway
		}
		b, err := os.ReadFile(arquivo(n))
		if err != nil || strings.Contains(string(b), cidadao) {
			t.Fatalf("the mirror's bundle %d still holds %s after the erasure (%v)", n, cidadao, err)
		}
		es, err := tiles.ReadBundle(b, tiles.Width)
		if err != nil || len(es[a.Indice%tiles.Width]) != 0 {
			t.Errorf("mirror: record %d not blank (%v)", a.Indice, err)
		}
	}
	local := &log.Cliente{Base: espelho, Chave: l.chave.Verificador}
	if r, _, err := local.VerificarTudo(bg, nil); err != nil || r.Falhas != 0 || r.Eliminados != int64(len(res.Apagados)) {
		t.Fatalf("the mirror after the erasure: %+v %v", r, err)
	}
	m, err := depois.Monitorar(bg, monitor, nil)
	if err != nil || !m.Salvo || !m.Refeito || len(m.Replay.Divergencias) != 0 {
		t.Fatalf("monitor after the erasure: %+v %v", m, err)
	}
	if b, _ := os.ReadFile(filepath.Join(monitor, log.ArquivoMonitor)); strings.Contains(string(b), cidadao) {
		t.Fatalf("the monitor's kept state still names %s", cidadao)
	}
}
