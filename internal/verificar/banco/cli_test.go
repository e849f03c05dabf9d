package banco_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/bus"
	"github.com/formigueiro/d6a/internal/bus/bustest"
	"github.com/formigueiro/d6a/internal/entradas"
	"github.com/formigueiro/d6a/internal/evento"
	"github.com/formigueiro/d6a/internal/hierarquia"
	"github.com/formigueiro/d6a/internal/outbox"
	"github.com/formigueiro/d6a/internal/pgtest"
	"github.com/formigueiro/d6a/internal/store"
	"github.com/formigueiro/d6a/internal/verificar/banco"
)

// TestCLIEventIDPontaAPonta is `d6a verify --event-id` on a draw made the
// way serve makes it: base read from a real JetStream bus, the draw by the
// service, conselheiro.sorteado published by the outbox relay; then the
// real binary verifies it, window included.
func TestCLIEventIDPontaAPonta(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := pgtest.URL(t)
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	natsURL, _ := bustest.Start(t)
	b, err := bus.Connect(ctx, bus.Config{URL: natsURL, Logger: slog.Default()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	if err := b.EnsureStream(ctx); err != nil {
		t.Fatal(err)
	}
	base := bustest.Envelope(evento.AgendaItemDisponivel, map[string]any{"demanda_id": uuid.NewString()})
	data, _ := json.Marshal(base)
	baseSeq, err := b.Publish(ctx, evento.AgendaItemDisponivel.Subject("eventos"), base["event_id"].(string), data)
	if err != nil {
		t.Fatal(err)
	}

	uc := uuid.New()
	if _, err := st.Pool.Exec(ctx, `INSERT INTO core.uc_polygons (id, parent_uc_id) VALUES ($1, NULL)`, uc); err != nil {
		t.Fatal(err)
	}
	cadastrar(t, st, uc, 5, time.Now().Add(-time.Hour))
	hier := hierarquia.New(st.CarregarHierarquia, time.Hour, nil)
	svc := atribuicao.New(atribuicao.Options{
		Store: st, Hierarquia: hier, Entradas: entradas.New(hier), Barramento: b, SubjectPrefix: "eventos",
		NRecusasSuspensao: 3, TSuspensao: time.Hour, Logger: slog.Default(),
	})
	t.Cleanup(svc.Close)
	demanda := uuid.New()
	r, err := svc.Sortear(ctx, atribuicao.Pedido{UC: uc, DemandaID: demanda, Dados: atribuicao.DadosDemanda{
		ScoreFinal: 1, CategoriaID: "SAU", NivelPrecedencia: 1, CorrelacaoID: demanda.String(), EventIDOrigem: uuid.New(),
	}})
	if err != nil || !r.Sucesso {
		t.Fatalf("draw: %+v %v", r, err)
	}
	if err := outbox.New(st, b, time.Second, nil).Flush(ctx); err != nil {
		t.Fatal(err)
	}

	bin := filepath.Join(t.TempDir(), "d6a")
	if out, err := exec.Command("go", "build", "-o", bin, "../../../cmd/d6a").CombinedOutput(); err != nil {
		t.Fatalf("building d6a: %v\n%s", err, out)
	}
	rodar := func(natsURL string, args ...string) (int, string, string) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"verify"}, args...)...)
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "D6A_") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, "D6A_DATABASE_URL="+dbURL, "D6A_NATS_URL="+natsURL, "D6A_LOG_LEVEL=error")
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), o.String(), e.String()
	}
	id := r.EventIDSorteio.String()

	code, out, errOut := rodar(natsURL, "--event-id", id)
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	t.Logf("d6a verify --event-id %s:\n%s", id, out)
	for _, want := range []string{
		"OK event_id=" + id + " selecionado=" + r.ConselheiroID.String() + " total=5 degrau=" + uc.String() + "\n",
		"base: " + base["event_id"].(string) + " (sequence " + itoa(baseSeq) + ")\n",
		// Under the trigger's rule (CONTRACT §4): T is the base's bus time,
		// checked exactly.
		"gatilho: base e T=", "são os da mensagem " + itoa(baseSeq) + " do barramento",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, banco.NotaSemBarramento) {
		t.Errorf("window not checked with the bus up:\n%s", out)
	}

	// Without the bus: still OK, with the note.
	code, out, _ = rodar(natsURL, "--event-id", id, "--no-bus")
	if code != 0 || !strings.Contains(out, banco.NotaSemBarramento) {
		t.Errorf("--no-bus: exit %d\n%s", code, out)
	}
	code, out, errOut = rodar("nats://127.0.0.1:1", "--event-id", id)
	if code != 0 || !strings.Contains(out, banco.NotaSemBarramento) || !strings.Contains(errOut, "bus unreachable") {
		t.Errorf("unreachable bus: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}

	// No such draw: exit 2.
	code, _, errOut = rodar(natsURL, "--event-id", uuid.NewString(), "--no-bus")
	if code != 2 || !strings.Contains(errOut, "no such draw") {
		t.Errorf("unknown draw: exit %d, stderr %q", code, errOut)
	}

	// Tampered: exit 1 naming the field.
	if _, err := st.Pool.Exec(ctx, `UPDATE d6a.auditoria_sorteios SET seed = md5('a') || md5('b') WHERE event_id_sorteio = $1`, r.EventIDSorteio); err != nil {
		t.Fatal(err)
	}
	code, out, _ = rodar(natsURL, "--event-id", id)
	t.Logf("tampered:\n%s", out)
	if code != 1 || !strings.HasPrefix(out, "MISMATCH auditoria.seed: ") {
		t.Errorf("tampered seed: exit %d, stdout %q", code, out)
	}
}

func itoa(n uint64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
