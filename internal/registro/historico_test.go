package registro_test

import (
	"github.com/formigueiro/d6a/internal/historico"
	"github.com/formigueiro/d6a/internal/registro"
)

func init() {
	registro.HistoriaSintetica = historico.HistoriaSintetica
	registro.RegistroSintetico = historico.RegistroSintetico
}
