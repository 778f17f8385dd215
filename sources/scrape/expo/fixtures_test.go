package expo

import (
	"testing"

	"github.com/ttftop/ttftop/internal/fixtures"
)

func readFixture(t testing.TB, name string) string {
	t.Helper()
	return fixtures.Read(t, "metrics", name)
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
