package expo

import (
	"os"
	"path/filepath"
	"testing"
)

// fixtureDir finds shared/fixtures/metrics above the working directory.
func fixtureDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("TOKENTOP_FIXTURES"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		for _, c := range []string{"shared/fixtures/metrics", "../shared/fixtures/metrics"} {
			p := filepath.Join(dir, c)
			if st, err := os.Stat(p); err == nil && st.IsDir() {
				return p
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("shared/fixtures/metrics not found (set TOKENTOP_FIXTURES)")
		}
		dir = parent
	}
}

func readFixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func fixtureNames() []string {
	return []string{
		"vllm-v0.10-metrics.txt",
		"vllm-v0.4-metrics.txt",
		"sglang-metrics.txt",
		"tgi-metrics-excerpt.txt",
		"triton-metrics-excerpt.txt",
		"dcgm-exporter-metrics.txt",
	}
}
