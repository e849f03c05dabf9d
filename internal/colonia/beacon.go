package colonia

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/formigueiro/d6a/internal/atribuicao"
	"github.com/formigueiro/d6a/internal/beacon"
	"github.com/formigueiro/d6a/internal/config"
)

// PeriodoPrivado is the private beacon's period (CONTRACT §4a).
const PeriodoPrivado = time.Second

// abrirBeacon is the draw's public randomness (CONTRACT §4a): the relays
// of D6A_BEACON_URL under the key of D6A_BEACON_CHAVE, or, with no URL,
// the service's own private beacon, served on loopback and read through
// the same HTTP API as any other, the way the embedded NATS is started.
// parar stops the private one.
func abrirBeacon(ctx context.Context, cfg config.Config, log *slog.Logger) (b *atribuicao.Beacon, parar func(), err error) {
	parar = func() {}
	var (
		urls    []string
		chave   []byte
		privado bool
	)
	if len(cfg.BeaconURL) == 0 {
		p, err := beacon.AbrirPrivado(cfg.DataDir, PeriodoPrivado)
		if err != nil {
			return nil, parar, &ConfigError{Var: "D6A_DATA_DIR", Err: fmt.Errorf("private beacon: %w", err)}
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, parar, fmt.Errorf("private beacon: %w", err)
		}
		srv := &http.Server{Handler: p.Handler(), ReadHeaderTimeout: 5 * time.Second}
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("private beacon stopped", "erro", err)
			}
		}()
		parar = func() { _ = srv.Close() }
		urls, chave, privado = []string{"http://" + ln.Addr().String()}, p.Cadeia().ChavePublica, true
		log.Warn("beacon PRIVADO: as rodadas vêm da chave do próprio serviço, não de um beacon público (defina D6A_BEACON_URL e D6A_BEACON_CHAVE em produção)",
			"chave_publica", hex.EncodeToString(chave), "url", urls[0])
	} else {
		if chave, err = beacon.ChaveHex(cfg.BeaconChave); err != nil {
			return nil, parar, &ConfigError{Var: "D6A_BEACON_CHAVE", Err: err}
		}
		urls = cfg.BeaconURL
	}
	cli, err := beacon.NovoCliente(urls, chave)
	if err != nil {
		parar()
		return nil, parar, &ConfigError{Var: "D6A_BEACON_URL", Err: err}
	}
	var cadeia beacon.Cadeia
	if hex.EncodeToString(chave) == beacon.QuicknetChave {
		// Built in: a start does not depend on a relay answering.
		cadeia = beacon.Quicknet()
	} else {
		ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if cadeia, err = cli.Cadeia(ictx); err != nil {
			parar()
			return nil, parar, &ConfigError{Var: "D6A_BEACON_URL", Err: fmt.Errorf("the chain's info: %w", err)}
		}
	}
	margem := cfg.BeaconMargem
	if margem < 0 {
		margem = cadeia.Periodo
	}
	if cfg.LogTestemunhas != "" {
		// The witnesses' commitment time (CONTRACT §4a) is not built yet:
		// the rule record names no witnesses, so its C is T, and says so.
		log.Warn("beacon: com testemunhas, o compromisso ainda é T (o tempo das cossinaturas não é usado); o registro d6a.regras_sorteio diz isso")
	}
	return &atribuicao.Beacon{Fonte: cli, Cadeia: cadeia, Margem: margem, Privado: privado}, parar, nil
}
