package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestSubstituirSecao(t *testing.T) {
	sec := tituloSecao + "\n\nnovo\n\n### Results\n\nx\n"
	outra := "## Draws at national scale\n\n<!-- a -->\nfoo\n<!-- b -->\n"
	casos := []struct{ nome, antes, depois string }{
		{"empty file", "", "# Benchmarks\n\n" + sec},
		{"appended at the end", "# Benchmarks\n\n" + outra, "# Benchmarks\n\n" + outra + "\n" + sec},
		{"appended after trailing blank lines", "# Benchmarks\n\n" + outra + "\n\n", "# Benchmarks\n\n" + outra + "\n" + sec},
		{"replaced at the end", "# Benchmarks\n\n" + outra + "\n" + tituloSecao + "\n\nvelho\n### Targets\nold\n", "# Benchmarks\n\n" + outra + "\n" + sec},
		{"replaced in the middle", "# Benchmarks\n\n" + tituloSecao + "\n\nvelho\n\n" + outra, "# Benchmarks\n\n" + sec + "\n" + outra},
		{"replaced at the start", tituloSecao + "\nvelho\n" + outra, sec + "\n" + outra},
	}
	for _, c := range casos {
		if got := substituirSecao(c.antes, sec); got != c.depois {
			t.Errorf("%s:\n got %q\nwant %q", c.nome, got, c.depois)
		}
	}
	// A heading that merely starts like ours is another section.
	antes := "# B\n\n" + tituloSecao + " (old)\n\nx\n"
	if got, want := substituirSecao(antes, sec), antes+"\n"+sec; got != want {
		t.Errorf("similar heading:\n got %q\nwant %q", got, want)
	}
}

func TestAtualizarDocKeepsOthers(t *testing.T) {
	p := filepath.Join(t.TempDir(), "docs", "bench.md")
	sec := tituloSecao + "\n\nprimeiro\n"
	if err := atualizarDoc(p, sec); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if err := os.WriteFile(p, append(b, "\n## Depois\n\nalheio\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := atualizarDoc(p, tituloSecao+"\n\nsegundo\n"); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(p)
	if want := "# Benchmarks\n\n" + tituloSecao + "\n\nsegundo\n\n## Depois\n\nalheio\n"; string(b) != want {
		t.Errorf("got %q\nwant %q", b, want)
	}
}

func TestResumir(t *testing.T) {
	var ds []time.Duration
	for i := 1000; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	l := resumir(ds)
	if l.N != 1000 || l.P50 != 500*time.Millisecond || l.P99 != 990*time.Millisecond || l.P999 != 999*time.Millisecond || l.Max != time.Second {
		t.Errorf("%+v", l)
	}
	if (resumir(nil) != latencias{}) {
		t.Error("empty input")
	}
}

func TestMilhar(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -4500: "-4,500"} {
		if got := milhar(n); got != want {
			t.Errorf("milhar(%d) = %q, want %q", n, got, want)
		}
	}
}
