package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/formigueiro/d6a/internal/bus"
	"github.com/formigueiro/d6a/internal/bus/bustest"
	"github.com/formigueiro/d6a/internal/evento"
)

func TestReplayRewindsTheDurable(t *testing.T) {
	bin := d6aBin(t)
	url, _ := bustest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := bus.Connect(ctx, bus.Config{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.EnsureStream(ctx); err != nil {
		t.Fatal(err)
	}
	js := bustest.Connect(t, url)
	subject := evento.AgendaItemDisponivel.Subject("eventos")
	for i := 0; i < 3; i++ {
		bustest.Publicar(t, js, subject, bustest.Envelope(evento.AgendaItemDisponivel, map[string]any{}))
	}
	// Created at the head: nothing already in the stream is pending.
	if err := b.EnsureConsumers(ctx); err != nil {
		t.Fatal(err)
	}
	pendentes := func() uint64 {
		c, err := js.Consumer(ctx, "EVENTOS", evento.DurableEntradas)
		if err != nil {
			t.Fatal(err)
		}
		info, err := c.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.NumPending
	}
	if n := pendentes(); n != 0 {
		t.Fatalf("new durable has %d pending, want 0 (created at the head)", n)
	}

	cmd := exec.Command(bin, "replay", "--from-seq", "1")
	cmd.Env = append(cleanEnv(), "D6A_NATS_URL="+url)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("d6a replay: %v\n%s", err, out)
	}
	for _, want := range []string{"d6a-entradas", "before:", "after:"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if n := pendentes(); n != 3 {
		t.Fatalf("after replay from 1: %d pending, want 3", n)
	}
	again := exec.Command(bin, "replay", "--from-seq", "2")
	again.Env = cmd.Env
	if out, err := again.CombinedOutput(); err != nil {
		t.Fatalf("replay from 2: %v\n%s", err, out)
	}
	if n := pendentes(); n != 2 {
		t.Fatalf("after replay from 2: %d pending, want 2", n)
	}
	// One durable carries every type in stream order (CONTRACT §3): a
	// replay of one type is refused, saying why (exit 2).
	if code, _, stderr := rodar(t, bin, "replay", "--type", "agenda.item_disponível", "--from-seq", "1"); code != 2 || !strings.Contains(stderr, "d6a-entradas") {
		t.Fatalf("--type: exit %d, %q", code, stderr)
	}
}

func cleanEnv() []string {
	var env []string
	for _, kv := range exec.Command("true").Environ() {
		if !strings.HasPrefix(kv, "D6A_") {
			env = append(env, kv)
		}
	}
	return env
}
