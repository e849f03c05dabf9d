package log_test

import (
	"os"
	"testing"

	"github.com/formigueiro/d6a/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(m)) }
