package promql

import (
	"math"
	"time"
)

// Process starts. A restart between two scrapes (kill -9 and an immediate
// restart) leaves no gap: the histogram chain sees its counter reset only
// once the next step has settled (a step and the Delay later), and an
// engine without histograms (llama.cpp) never shows one. The client
// libraries export process_start_time_seconds by default (vLLM, NIM; see
// internal/fixtures/testdata/metrics): a new value is a new process, seen
// at the first refresh after its first scrape. The up query carries it
// (no request more), tagged startPart, one series per replica identity.

// startPart tags the process-start part of the up query.
const startPart = "start"

// startExpr is the newest process start (Unix seconds) per replica
// identity, by the labels up is grouped by.
func startExpr(by string) string {
	return labelTag("max by ("+by+") (process_start_time_seconds)", partTag, startPart)
}

// noteStarts restarts every replica whose process started anew since the
// last refresh: dated by the new start, "process restarted". The first
// start seen of a replica is its birth, not a restart (young.go dates
// that from the range answers). Run before noteRestarts, so that a return
// after a stop that a new process explains reads as that.
func (rd *round) noteStarts(starts map[string]float64) {
	for _, e := range rd.reg.all() {
		if e.aggregate == nil || e.target == "" {
			continue
		}
		v, ok := starts[e.target]
		if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		old := e.processStart
		e.processStart = v
		if old == 0 || v <= old {
			continue
		}
		at := time.UnixMilli(int64(math.Round(v * 1000)))
		if at.After(rd.lag.serverNow) {
			at = rd.lag.serverNow // the target's clock ahead of the store's
		}
		rd.restart(e, at, at, processRestarted)
	}
}

// processRestarted says how a restart seen by a new process start was seen.
const processRestarted = "process restarted"
