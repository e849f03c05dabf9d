package colonia

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/formigueiro/d6a/internal/config"
	"github.com/formigueiro/d6a/internal/transparencia"
)

// chaveLog loads the checkpoint signer key of D6A_LOG_KEY_FILE. Without it
// the process keeps (and creates on first start) a key under D6A_DATA_DIR
// and says so loudly: checkpoints signed by a key nobody published are
// only good for development (docs/decisions.md).
func chaveLog(cfg config.Config, log *slog.Logger) (transparencia.Chave, error) {
	var c transparencia.Chave
	var err error
	if cfg.LogKeyFile != "" {
		if c, err = transparencia.CarregarChave(cfg.LogKeyFile); err != nil {
			return c, &ConfigError{Var: "D6A_LOG_KEY_FILE", Err: err}
		}
	} else {
		var path string
		var criada bool
		if c, path, criada, err = transparencia.ChaveLocal(cfg.DataDir, cfg.LogOrigin); err != nil {
			return c, &ConfigError{Var: "D6A_DATA_DIR", Err: fmt.Errorf("transparency log key: %w", err)}
		}
		msg := "D6A_LOG_KEY_FILE não definido: checkpoints do log de transparência assinados com a chave local de desenvolvimento; em produção gere uma com `d6a log-keygen` e publique a chave verificadora"
		if criada {
			msg = "D6A_LOG_KEY_FILE não definido: chave local de desenvolvimento CRIADA para os checkpoints do log de transparência; em produção gere uma com `d6a log-keygen` e publique a chave verificadora"
		}
		log.Warn(msg, "arquivo", path, "chave_verificadora", c.Verificador)
	}
	if c.Signer.Name() != cfg.LogOrigin {
		return c, &ConfigError{Var: "D6A_LOG_KEY_FILE", Err: fmt.Errorf("key name %q differs from D6A_LOG_ORIGIN %q", c.Signer.Name(), cfg.LogOrigin)}
	}
	return c, nil
}

// assinarFinal signs the draws of the last second before the process
// exits, so a clean shutdown leaves no leaf outside a checkpoint.
func (w *Instancia) assinarFinal(ctx context.Context) {
	if _, err := transparencia.Assinar(ctx, w.Store.Pool, w.Assinador.Chave, w.Assinador.Origem); err != nil {
		w.log.Warn("transparência: checkpoint final não assinado; o próximo início assina", "erro", err)
	}
}
