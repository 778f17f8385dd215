package sshhost

import (
	"os"
	"testing"

	"github.com/tokentop/tokentop/internal/discover/enginetest"
)

func TestMain(m *testing.M) {
	enginetest.ChildMain()
	os.Exit(m.Run())
}
