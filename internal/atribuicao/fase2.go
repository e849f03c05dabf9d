package atribuicao

import (
	"context"

	"github.com/formigueiro/d6a/internal/registro"
)

// registrarPortoes is the boot step that records the gates in force
// (CONTRACT §8: they are part of the parameter records) when they differ
// from the latest recorded; none recorded reads as both off, so an MVP
// deployment's log gains nothing.
func (s *Servico) registrarPortoes(ctx context.Context) error {
	return s.executar(ctx, func(ctx context.Context, u *uow) error {
		g := s.o.Portoes
		// None recorded reads as both off.
		versao, vigentes, _, err := u.tx.PortoesRegistrados(ctx)
		if err != nil || vigentes == g {
			return err
		}
		id := registro.IDRegras(int64(versao)+1, g)
		if err := u.tx.RegistrarPortoes(ctx, g, id, u.agora); err != nil {
			return err
		}
		u.registros = append(u.registros, registro.NovasRegras(id, g))
		s.log.Info("regras de elegibilidade em vigor", "capacitacao_externa", g.CapacitacaoExterna, "exigir_vinculo", g.ExigirVinculo)
		return nil
	})
}
