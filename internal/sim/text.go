package sim

import "hash/fnv"

// words is the fixed vocabulary of generated answers: plain ASCII so a
// token never needs JSON escaping on the hot path.
var words = [...]string{
	"the", "model", "serves", "tokens", "with", "a", "batch", "of", "requests", "and",
	"each", "step", "reads", "weights", "from", "memory", "so", "latency", "grows", "when",
	"more", "sequences", "share", "bandwidth", "in", "practice", "this", "means", "that", "throughput",
	"rises", "while", "time", "per", "output", "token", "slowly", "increases", "for", "every",
	"user", "queue", "waits", "before", "prefill", "which", "is", "compute", "bound", "then",
	"decode", "runs", "as", "long", "answer", "continues", "cache", "blocks", "hold", "keys",
	"values", "attention", "layers", "GPU", "kernel", "launches", "scheduler", "picks", "next", "request",
	"engine", "stream", "server", "client", "measures", "first", "second", "quickly", "under", "load",
	"it", "can", "also", "be", "useful", "to", "watch", "how", "percentiles", "move",
	"over", "minutes", "not", "just", "averages", "because", "tails", "matter", "most", "here",
	"simple", "systems", "often", "hide", "small", "delays", "behind", "large", "numbers", "we",
	"see", "one", "clear", "signal", "on", "our", "dashboard", "today", "after", "all",
	"good", "results", "depend", "careful", "tuning", "data", "shows", "steady", "progress", "overall",
}

// textSeed derives the per-request text seed: identical prompts give
// identical answers for a given simulator seed, like greedy decoding.
func textSeed(seed int64, model, prompt string) uint64 {
	h := fnv.New64a()
	var b [8]byte
	for i := range b {
		b[i] = byte(uint64(seed) >> (8 * i))
	}
	h.Write(b[:])
	h.Write([]byte(model))
	h.Write([]byte{0})
	h.Write([]byte(prompt))
	return h.Sum64()
}

// mix is splitmix64: a cheap, well-spread hash of (seed, i).
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// isPeriod reports whether token i of the answer is a full stop (about
// one in ten tokens, never the first).
func isPeriod(seed uint64, i int) bool {
	return i > 0 && mix(seed^uint64(i)*0x100000001b3)%10 == 0
}

// tokenText returns token i (0-based) of the answer: a word piece with a
// leading space, capitalised at the start of a sentence, or ".". The
// pieces come from tables: this runs for every streamed token.
func tokenText(seed uint64, i int) string {
	if isPeriod(seed, i) && !isPeriod(seed, i-1) {
		return "."
	}
	k := mix(seed+uint64(i)) % uint64(len(words))
	switch {
	case i == 0:
		return wordForms.capitalised[k]
	case isPeriod(seed, i-1):
		return wordForms.spacedCapitalised[k]
	}
	return wordForms.spaced[k]
}

// wordForms are the words as tokens: " word", "Word" and " Word".
var wordForms = func() (f struct{ spaced, capitalised, spacedCapitalised [len(words)]string }) {
	for i, w := range words {
		c := string(w[0]&^0x20) + w[1:]
		f.spaced[i], f.capitalised[i], f.spacedCapitalised[i] = " "+w, c, " "+c
	}
	return f
}()
