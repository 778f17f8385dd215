package discover

import (
	"os"
	"testing"

	"github.com/ttftop/ttftop/internal/discover/enginetest"
)

func TestMain(m *testing.M) {
	enginetest.ChildMain()
	os.Exit(m.Run())
}
