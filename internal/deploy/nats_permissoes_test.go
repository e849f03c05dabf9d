package deploy

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/formigueiro/d6a/internal/evento"
)

// usuariosNATS are the users of deploy/nats/permissoes.conf and the
// variables their passwords come from.
var usuariosNATS = map[string]string{
	"d6a": "D6A_NATS_PASSWORD", "streams": "NATS_STREAMS_PASSWORD", "agenda": "NATS_AGENDA_PASSWORD",
	"cadastro": "NATS_CADASTRO_PASSWORD", "d6b": "NATS_D6B_PASSWORD", "d17": "NATS_D17_PASSWORD",
	"d9": "NATS_D9_PASSWORD", "capacitacao": "NATS_CAPACITACAO_PASSWORD", "duplicidade": "NATS_DUPLICIDADE_PASSWORD",
}

// servidorComPermissoes starts an embedded nats-server with JetStream from
// a configuration that includes deploy/nats/permissoes.conf, as every
// server of docker-compose.yml does, parsed by server.ProcessConfigFile.
func servidorComPermissoes(t *testing.T) string {
	t.Helper()
	for u, v := range usuariosNATS {
		t.Setenv(v, "senha-"+u)
	}
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "nats", "permissoes.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "permissoes.conf"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	conf := "listen: 127.0.0.1:-1\njetstream {\n  store_dir: " + filepath.Join(dir, "js") + "\n}\ninclude permissoes.conf\n"
	if err := os.WriteFile(filepath.Join(dir, "nats.conf"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(filepath.Join(dir, "nats.conf"))
	if err != nil {
		t.Fatalf("deploy/nats/permissoes.conf: %v", err)
	}
	if len(opts.Users) != len(usuariosNATS) {
		t.Fatalf("%d users in deploy/nats/permissoes.conf, want %d", len(opts.Users), len(usuariosNATS))
	}
	for _, u := range opts.Users {
		if u.Password != "senha-"+u.Username {
			t.Errorf("user %s: password not taken from $%s", u.Username, usuariosNATS[u.Username])
		}
	}
	opts.NoSigs, opts.NoLog = true, true
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	t.Cleanup(s.Shutdown)
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	return s.ClientURL()
}

type conexao struct {
	nc     *nats.Conn
	js     jetstream.JetStream
	negado chan error
}

func conectar(t *testing.T, url, usuario string) conexao {
	t.Helper()
	c := conexao{negado: make(chan error, 16)}
	var err error
	c.nc, err = nats.Connect(url, nats.UserInfo(usuario, "senha-"+usuario),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			if errors.Is(err, nats.ErrPermissionViolation) {
				c.negado <- err
			}
		}))
	if err != nil {
		t.Fatalf("connect as %s: %v", usuario, err)
	}
	t.Cleanup(c.nc.Close)
	if c.js, err = jetstream.New(c.nc); err != nil {
		t.Fatal(err)
	}
	return c
}

// publicar publishes on subject through JetStream and reports the
// server's answer: nil with a PubAck of want, or the refusal.
func (c conexao) publicar(t *testing.T, subject, stream string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	ack, err := c.js.Publish(ctx, subject, []byte(`{}`))
	if err == nil {
		if ack.Stream != stream {
			t.Errorf("%s: stored in %s, want %s", subject, ack.Stream, stream)
		}
		return nil
	}
	select {
	case e := <-c.negado:
		return e
	case <-time.After(2 * time.Second):
		return err
	}
}

// recusa publishes on subject (core NATS: a refused publish has no
// JetStream answer to wait for) and returns the server's permissions
// violation, or nil when none came.
func (c conexao) recusa(t *testing.T, subject string) error {
	t.Helper()
	if err := c.nc.Publish(subject, []byte(`{}`)); err != nil {
		return err
	}
	if err := c.nc.Flush(); err != nil {
		return err
	}
	select {
	case e := <-c.negado:
		return e
	case <-time.After(time.Second):
		return nil
	}
}

// TestNATSPermissoes: with deploy/nats/permissoes.conf, only d6a publishes
// d6a's subjects (its decisions, eventos.d6a.>, its dead letters); every
// producer publishes its own types and is refused a subject of d6a's with
// a permissions violation.
func TestNATSPermissoes(t *testing.T) {
	url := servidorComPermissoes(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := conectar(t, url, "streams")
	for nome, subj := range map[string]string{"EVENTOS": "eventos.>", "D6A_DLQ": evento.PrefixoDLQ + ".>"} {
		if _, err := adm.js.CreateStream(ctx, jetstream.StreamConfig{Name: nome, Subjects: []string{subj}}); err != nil {
			t.Fatalf("streams user: create %s: %v", nome, err)
		}
	}
	if err := adm.recusa(t, evento.Varredura.Subject("eventos")); err == nil {
		t.Error("the streams user published an event")
	}

	d6a := conectar(t, url, "d6a")
	for _, tp := range evento.Publicados {
		if err := d6a.publicar(t, tp.Subject("eventos"), "EVENTOS"); err != nil {
			t.Errorf("d6a: publish %s: %v", tp.Subject("eventos"), err)
		}
	}
	if err := d6a.publicar(t, evento.Varredura.DLQSubject(), "D6A_DLQ"); err != nil {
		t.Errorf("d6a: dead letter: %v", err)
	}
	// d6a's durable on the stream, as the service creates it, and a fetch.
	cons, err := d6a.js.CreateOrUpdateConsumer(ctx, "EVENTOS", jetstream.ConsumerConfig{Durable: evento.DurableEntradas, AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatalf("d6a: durable: %v", err)
	}
	lote, err := cons.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
	if err != nil {
		t.Fatalf("d6a: fetch: %v", err)
	}
	for m := range lote.Messages() {
		if err := m.Ack(); err != nil {
			t.Errorf("d6a: ack: %v", err)
		}
	}
	if err := d6a.recusa(t, evento.AgendaItemDisponivel.Subject("eventos")); err == nil {
		t.Error("d6a published agenda.item_disponivel, a producer's subject")
	}

	// Every consumed type that d6a does not publish has a producer.
	exclusivos := map[string]bool{}
	for _, tp := range evento.Publicados {
		exclusivos[tp.Subject("eventos")] = true
	}
	delete(exclusivos, evento.AtribuicaoRecusada.Subject("eventos")) // D-6b's refusals too
	proprios := map[string][]string{
		"agenda":      {"agenda.item_disponivel"},
		"cadastro":    {"conselheiro.cadastrado"},
		"d6b":         {"conselheiro.ciclo_concluido", "conselheiro.atribuicao_recusada", "conselheiro.demanda_iniciada"},
		"d17":         {"conselheiro.elegibilidade_atualizada", "progressao.habilitada"},
		"d9":          {"vinculo.validado"},
		"capacitacao": {"capacitacao.concluida"},
		"duplicidade": {"duplicidade.agregada"},
	}
	cobertos := map[string]bool{}
	for usuario, subs := range proprios {
		c := conectar(t, url, usuario)
		for _, s := range subs {
			cobertos["eventos."+s] = true
			if err := c.publicar(t, "eventos."+s, "EVENTOS"); err != nil {
				t.Errorf("%s: publish its own eventos.%s: %v", usuario, s, err)
			}
		}
		for s := range exclusivos {
			err := c.recusa(t, s)
			if !errors.Is(err, nats.ErrPermissionViolation) {
				t.Errorf("%s: publish %s: %v, want a permissions violation", usuario, s, err)
			} else if s == evento.Varredura.Subject("eventos") {
				t.Logf("%s: %s refused: %v", usuario, s, err)
			}
		}
		if err := c.recusa(t, evento.Varredura.DLQSubject()); err == nil {
			t.Errorf("%s published a dead letter", usuario)
		}
	}
	for _, tp := range evento.Consumidos {
		if s := tp.Subject("eventos"); !exclusivos[s] && !cobertos[s] {
			t.Errorf("consumed type %s (%s) has no producer in deploy/nats/permissoes.conf", tp, s)
		}
	}
	if !strings.HasPrefix(evento.Varredura.Subject("eventos"), "eventos.d6a.") {
		t.Errorf("the sweep's subject %s is outside eventos.d6a.>", evento.Varredura.Subject("eventos"))
	}
}
