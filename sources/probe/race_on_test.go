//go:build race

package probe

// raceEnabled: the race detector slows every goroutine several times, so
// timing bounds that hold on a plain build are not judged under it.
const raceEnabled = true
