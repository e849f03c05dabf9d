package atribuicao_test

import (
	"testing"

	"github.com/formigueiro/d6a/internal/atribuicaotest"
)

func TestMain(m *testing.M) { atribuicaotest.Main(m) }
