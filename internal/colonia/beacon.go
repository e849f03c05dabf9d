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
	"github.com/formigueiro/d6a/internal/registro"
	"github.com/formigueiro/d6a/internal/testemunha"
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
				log.Error("beacon privado parado", "erro", err)
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
	// With witnesses, C is the K-th witness's first cosignature covering
	// the input (CONTRACT §4a): the rule record names their keys and K.
	ts, err := testemunha.Analisar(cfg.LogTestemunhas)
	if err != nil {
		parar()
		return nil, parar, &ConfigError{Var: "D6A_LOG_TESTEMUNHAS", Err: err}
	}
	var chaves []string
	for _, t := range ts {
		chaves = append(chaves, t.Chave)
	}
	quorum := 0
	if len(chaves) > 0 {
		if cfg.LogQuorum > len(chaves) {
			parar()
			return nil, parar, &ConfigError{Var: "D6A_LOG_QUORUM", Err: fmt.Errorf("%d, but D6A_LOG_TESTEMUNHAS names %d witnesses", cfg.LogQuorum, len(chaves))}
		}
		quorum = max(cfg.LogQuorum, 1)
		if margem < registro.MargemMinimaTestemunhas {
			parar()
			return nil, parar, &ConfigError{Var: "D6A_BEACON_MARGEM", Err: fmt.Errorf("%v: with witnesses at least %v (their cosignature times are whole seconds)", margem, registro.MargemMinimaTestemunhas)}
		}
	}
	return &atribuicao.Beacon{Fonte: cli, Cadeia: cadeia, Margem: margem, Privado: privado, Testemunhas: chaves, Quorum: quorum}, parar, nil
}
