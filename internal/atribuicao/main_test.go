package atribuicao_test

import (
	"testing"

	"github.com/formigueiro/d6a/internal/atribuicao/atribuicaotest"
)

func TestMain(m *testing.M) { atribuicaotest.Main(m) }
