package sim

import "testing"

// referenceTokenText is tokenText as it was before its tables.
func referenceTokenText(seed uint64, i int) string {
	if isPeriod(seed, i) && !isPeriod(seed, i-1) {
		return "."
	}
	w := words[mix(seed+uint64(i))%uint64(len(words))]
	if i == 0 || isPeriod(seed, i-1) {
		w = string(w[0]&^0x20) + w[1:]
		if i == 0 {
			return w
		}
	}
	return " " + w
}

func TestTokenTextUnchanged(t *testing.T) {
	for seed := range uint64(50) {
		seed = mix(seed)
		for i := range 600 {
			if got, want := tokenText(seed, i), referenceTokenText(seed, i); got != want {
				t.Fatalf("tokenText(%x, %d) = %q, want %q", seed, i, got, want)
			}
		}
	}
}
