// The command line: which mode runs, and the helpers every mode shares
// (flags, printing and writing the report, logging).

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

func main() {
	// The HTTP mode re-executes this binary as its server process.
	if os.Getenv(envPapel) == papelServidor {
		sair("d6a-bench (server)", servir(), 1)
		return
	}
	if os.Getenv(envPapel) == papelInundacao {
		sair("d6a-bench (flood)", servirInundacao(), 1)
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	modo := ""
	if len(os.Args) > 1 {
		modo = os.Args[1]
	}
	switch modo {
	case "escala":
		sair("d6a-bench escala", executarEscala(os.Args[2:]), 2)
	case "verificar":
		sair("d6a-bench verificar", executarVerificar(ctx, os.Args[2:]), 1)
	case "replay":
		sair("d6a-bench replay", executarReplay(ctx, os.Args[2:]), 1)
	case "catchup":
		sair("d6a-bench catchup", executarRecuperacao(ctx, os.Args[2:]), 1)
	case "pagina":
		sair("d6a-bench pagina", executarPagina(ctx, os.Args[2:]), 1)
	case "flood":
		o, err := lerFlagsInundacao(os.Args[2:])
		sair("d6a-bench flood", err, 2)
		sair("d6a-bench flood", executarInundacao(ctx, o), 1)
	case "http":
		o, err := lerFlagsHTTP(os.Args[2:])
		sair("d6a-bench http", err, 2)
		sair("d6a-bench http", executarHTTP(ctx, o), 1)
	default:
		o, err := lerFlags(os.Args[1:])
		sair("d6a-bench", err, 2)
		sair("d6a-bench", executar(ctx, o), 1)
	}
}

// rapido reports whether args hold -quick: its defaults are the flags'.
func rapido(args []string) bool {
	return slices.ContainsFunc(args, func(a string) bool {
		return slices.Contains([]string{"-quick", "--quick", "-quick=true", "--quick=true"}, a)
	})
}

// se is a when c, else b.
func se[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}

// sair exits with code on an error (0 after -h).
func sair(quem string, err error, code int) {
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, quem+":", err)
		os.Exit(code)
	}
}

// analisarFlags parses args into fs, refusing positional arguments, and
// returns the names of the flags given (either mode's -quick leaves those
// alone).
func analisarFlags(fs *flag.FlagSet, args []string) (map[string]bool, error) {
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	dado := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { dado[f.Name] = true })
	return dado, nil
}

// publicar prints md, the report as docs/bench.md gets it, then, when
// escrever, writes each file given (a path relative to raiz, or absolute).
func publicar(raiz, md string, escrever bool, arquivos map[string]func(string) error) error {
	fmt.Print("\n" + md)
	for p, f := range arquivos {
		if !escrever || p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(raiz, p)
		}
		if err := f(p); err != nil {
			return err
		}
		logf("wrote %s", p)
	}
	return nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func mb(b int64) float64         { return float64(b) / (1 << 20) }
