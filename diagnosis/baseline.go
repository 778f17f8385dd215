package diagnosis

import (
	"math"
	"time"
)

// ewma is one figure's baseline: an exponential average over time with
// time constant tau, fed once per refresh while the endpoint is well.
type ewma struct {
	value  float64
	weight float64 // the kernel's mass over the history held (→ 1 after a few tau)
	last   time.Time
	held   time.Duration // how much history the average rests on
}

// add folds v observed at now into the average: each refresh weighs by
// the time it covers, the past decaying as exp(−Δt/τ), and the average is
// normalised by the weight of the history held, so a baseline warmed for
// 30 s of a 5 min τ is the mean of those 30 s, not 90 % of its first
// sample (an engine starting up idle read as a batch of 1).
func (e *ewma) add(v float64, now time.Time, tau time.Duration) {
	if e.last.IsZero() {
		e.value, e.last = v, now
		return
	}
	dt := now.Sub(e.last)
	if dt <= 0 {
		return
	}
	decay := math.Exp(-float64(dt) / float64(tau))
	e.weight = e.weight*decay + (1 - decay)
	e.value += (1 - decay) / e.weight * (v - e.value)
	e.held += dt
	e.last = now
}

// baselines are one endpoint's per-figure averages.
type baselines map[string]*ewma

// update feeds every current figure; a figure that is missing this
// refresh keeps its average (missing is not zero).
func (b baselines) update(f figures, now time.Time, tau time.Duration) {
	for k, v := range f {
		e := b[k]
		if e == nil {
			e = &ewma{}
			b[k] = e
		}
		e.add(v.value, now, tau)
	}
}

// warmUp feeds the current figures whose baselines rest on less than warm
// of history (or none yet); the others keep their averages.
func (b baselines) warmUp(f figures, now time.Time, tau, warm time.Duration) {
	cold := figures{}
	for k, v := range f {
		if e := b[k]; e == nil || e.held < warm {
			cold[k] = v
		}
	}
	b.update(cold, now, tau)
}

// get is the baseline of key once it rests on at least warm of history.
func (b baselines) get(key string, warm time.Duration) (float64, bool) {
	e := b[key]
	if e == nil || e.held < warm {
		return 0, false
	}
	return e.value, true
}

// warmth is how much history the longest-held baseline rests on.
func (b baselines) warmth() time.Duration {
	var h time.Duration
	for _, e := range b {
		h = max(h, e.held)
	}
	return h
}
