package store

import (
	"context"
	"time"

	"github.com/formigueiro/d6a/internal/store/dbsqlc"
)

// The parameters' versions (d6a.config): who changed what, and when.

// VersaoParametros is a version of the parameters (d6a.config), with who
// asked for it and why.
type VersaoParametros struct {
	// Versao is the version's number; set when read, ignored when written.
	Versao                                                  int32
	NRecusasSuspensao, TSuspensaoDias, TimeoutRespostaHoras int32
	Sub, Justificativa                                      string
	Em                                                      time.Time
}

func versaoParametros(r dbsqlc.D6aConfig) VersaoParametros {
	return VersaoParametros{
		Versao: r.Versao, NRecusasSuspensao: r.NRecusasSuspensao, TSuspensaoDias: r.TSuspensaoDias,
		TimeoutRespostaHoras: r.TimeoutRespostaHoras, Sub: r.Sub, Justificativa: r.Justificativa, Em: r.CriadoEm,
	}
}

// SemearVersaoInicial writes version 1 of the parameters (d6a.config) from
// v's three values at v.Em, unless a version 1 exists; its sub and reason
// are the environment's own (v.Versao, Sub and Justificativa are ignored).
func (t Tx) SemearVersaoInicial(ctx context.Context, v VersaoParametros) error {
	return t.q.SemearParametros(ctx, dbsqlc.SemearParametrosParams{
		NRecusasSuspensao: v.NRecusasSuspensao, TSuspensaoDias: v.TSuspensaoDias,
		TimeoutRespostaHoras: v.TimeoutRespostaHoras, Agora: v.Em,
	})
}

// InserirVersaoParametros writes v, numbered after the latest, and returns
// its number. The caller holds the executor's lock.
func (t Tx) InserirVersaoParametros(ctx context.Context, v VersaoParametros) (int32, error) {
	return t.q.InserirParametros(ctx, dbsqlc.InserirParametrosParams{
		NRecusasSuspensao: v.NRecusasSuspensao, TSuspensaoDias: v.TSuspensaoDias, TimeoutRespostaHoras: v.TimeoutRespostaHoras,
		Sub: v.Sub, Justificativa: v.Justificativa, Agora: v.Em,
	})
}

// VersaoVigente reads the version in force; none before the boot seeds
// version 1.
func (t Tx) VersaoVigente(ctx context.Context) (VersaoParametros, bool, error) {
	r, err := t.q.ParametrosVigentes(ctx)
	if achou, err := Found(err); !achou || err != nil {
		return VersaoParametros{}, false, err
	}
	return versaoParametros(r), true, nil
}

// VersoesParametros lists every version, oldest first.
func (t Tx) VersoesParametros(ctx context.Context) ([]VersaoParametros, error) {
	rows, err := t.q.HistoricoParametros(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]VersaoParametros, len(rows))
	for i, r := range rows {
		out[i] = versaoParametros(r)
	}
	return out, nil
}
