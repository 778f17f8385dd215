package scrape

import (
	"context"
	"hash/maphash"
	"math"
	"time"

	"github.com/ttftop/ttftop/engines"
	"github.com/ttftop/ttftop/sanitize"
	"github.com/ttftop/ttftop/sources/scrape/expo"
	"github.com/ttftop/ttftop/telemetry"
)

// scrape is one successful page being turned into observations.
type scrape struct {
	s        *Scraper
	ctx      context.Context
	page     *expo.Page
	at       time.Time
	det      engines.Detection
	spec     engines.Spec
	hasSpec  bool
	defModel string

	byRaw    map[string]*modelVals
	models   []*modelVals
	obs      []telemetry.Observation
	warnings []string
	// nRanks counts each raw model's data-parallel ranks; ranks are the
	// rank rows of models with two or more (ranks.go).
	nRanks map[string]int
	ranks  []*modelVals
}

// modelVals is one model (endpoint) of the target, or one data-parallel
// rank of it (parent set).
type modelVals struct {
	model, endpoint string
	parent          *modelVals
	rank            string
	ranks           map[string]*modelVals // by raw rank label
	// MBU inputs gathered while reading the signals.
	itl    histAcc
	hasITL bool
	kvSum  float64
	kvN    int
	// The engine's own bytes-read rate per GPU (measured MBU numerator).
	readBytesPerS float64
	hasReadBytes  bool
}

func (s *Scraper) newScrape(ctx context.Context, page *expo.Page, at time.Time) *scrape {
	s.st.gen++
	s.st.now = at
	s.st.newProcess = s.st.noteProcessStart(page, at)
	sc := &scrape{s: s, ctx: ctx, page: page, at: at, byRaw: map[string]*modelVals{}, nRanks: map[string]int{},
		obs: make([]telemetry.Observation, 0, s.st.observations)}
	sc.det = s.detect(page.Names)
	if s.cfg.Engine != "" {
		sc.det.Engine = s.cfg.Engine
	}
	sc.spec, sc.hasSpec = s.table.Lookup(sc.det.Engine)
	return sc
}

// detect runs engine detection, reusing the last result while the page's
// family names do not change (the common case: same server, same version).
func (s *Scraper) detect(names []string) engines.Detection {
	var h maphash.Hash
	h.SetSeed(s.seed)
	for _, n := range names {
		_, _ = h.WriteString(n)
		_ = h.WriteByte(0)
	}
	sum := h.Sum64()
	if s.st.detValid && s.st.detSum == sum {
		return s.st.det
	}
	d := s.table.Detect(names)
	s.st.det, s.st.detSum, s.st.detValid = d, sum, true
	return d
}

func (sc *scrape) warn(msg string) { sc.warnings = append(sc.warnings, msg) }

// run reads every signal of the engine.
func (sc *scrape) run() {
	if !sc.hasSpec {
		return
	}
	sc.defModel = sc.defaultModel()
	var pageWide []telemetry.Signal
	sc.countRanks()
	for _, sig := range sc.spec.SignalOrder() {
		a, ok := sc.choose(sc.spec.Signals[sig])
		if !ok {
			continue
		}
		if a.PageWide {
			pageWide = append(pageWide, sig) // once every model is known
			continue
		}
		if err := sc.familyErr(a); err != nil {
			sc.failSignal(sig, a, err)
			continue
		}
		switch a.Type {
		case engines.Histogram:
			sc.histogram(sig, a)
		case engines.Gauge:
			sc.gauge(sig, a)
		case engines.Counter:
			sc.counterRate(sig, a, false)
		case engines.HistogramSum:
			sc.counterRate(sig, a, true)
		case engines.CounterRatio, engines.CounterShare:
			sc.ratio(sig, a)
		}
	}
	for _, sig := range pageWide {
		a, _ := sc.choose(sc.spec.Signals[sig])
		if err := sc.familyErr(a); err != nil {
			sc.warn(err.Error())
			continue
		}
		sc.pageGauge(sig, a)
	}
	sc.errorRate()
	sc.mbu()
	sc.lora()
}

// choose returns the first alias whose families are present with a
// matching series: first present wins, so newer names beat old ones.
func (sc *scrape) choose(aliases []engines.Alias) (engines.Alias, bool) {
	for _, a := range aliases {
		f := sc.page.Families[a.Name]
		if f == nil || !anyMatch(f, a) || !typeFits(f, a) {
			continue
		}
		if a.Per != "" && sc.page.Families[a.Per] == nil {
			continue
		}
		return a, true
	}
	return engines.Alias{}, false
}

// typeFits reports whether a family declared gauge can carry the alias:
// a gauge alias a gauge, a histogram alias a histogram. One name is
// exposed as either by different versions (SGLang's
// kv_transfer_latency_ms, a gauge before it was a histogram); other
// families keep being read as the table says.
func typeFits(f *expo.Family, a engines.Alias) bool {
	histogram := a.Type == engines.Histogram || a.Type == engines.HistogramSum
	switch f.Type {
	case expo.Gauge:
		return !histogram
	case expo.Histogram:
		return histogram
	}
	return true
}

func anyMatch(f *expo.Family, a engines.Alias) bool {
	for _, ser := range f.Series {
		if matches(a, ser) {
			return true
		}
	}
	return false
}

func matches(a engines.Alias, ser *expo.Series) bool {
	for k, v := range a.Match {
		if ser.Label(k) != v {
			return false
		}
	}
	return true
}

func (sc *scrape) familyErr(a engines.Alias) error {
	for _, n := range a.Names() {
		if f := sc.page.Families[n]; f != nil && f.Err != nil {
			return f.Err
		}
	}
	return nil
}

// failSignal reports a broken family as a failure of that signal for the
// models it names, and forgets its state so the next good scrape starts a
// fresh baseline.
func (sc *scrape) failSignal(sig telemetry.Signal, a engines.Alias, err error) {
	sc.warn(err.Error())
	seen := map[*modelVals]bool{}
	for _, n := range a.Names() {
		delete(sc.s.st.fams, n)
		if f := sc.page.Families[n]; f != nil {
			for _, ser := range f.Series {
				rows, n := sc.rowsOf(ser)
				for _, mv := range rows[:n] {
					if !seen[mv] {
						seen[mv] = true
						sc.emit(mv, telemetry.Observation{Kind: telemetry.KindFailure, Signal: sig, Err: err.Error()})
					}
				}
			}
		}
	}
}

// model returns the model of a series (first model label present, else
// the target's default model), registering it on first sight.
func (sc *scrape) model(ser *expo.Series) *modelVals {
	raw := sc.rawModel(ser)
	if mv := sc.byRaw[raw]; mv != nil {
		return mv
	}
	name := sc.defModel
	if raw != "" {
		name = sanitize.Text(raw) // label values enter here
	}
	mv := &modelVals{model: name, endpoint: sc.s.host}
	if name != "" {
		mv.endpoint = sc.s.host + "/" + name
	}
	sc.byRaw[raw] = mv
	sc.models = append(sc.models, mv)
	return mv
}

// rawModel is a series' model label value as exposed (first model label
// present), "" when it has none.
func (sc *scrape) rawModel(ser *expo.Series) string {
	for _, l := range sc.spec.ModelLabels {
		if v := ser.Label(l); v != "" {
			return v
		}
	}
	return ""
}

// emit queues an observation for model mv.
func (sc *scrape) emit(mv *modelVals, o telemetry.Observation) {
	o.At = sc.at
	o.Endpoint = mv.endpoint
	o.Source = sc.s.source
	o.Interval = sc.s.cfg.Interval
	sc.obs = append(sc.obs, o)
}

// emitRate emits a rate or ratio of counter increases over the rate
// window; span, the time those increases cover, is its RateWindow (shorter
// than the window while the scraper or the series is younger).
func (sc *scrape) emitRate(mv *modelVals, sig telemetry.Signal, v float64, approx bool, span time.Duration) {
	sc.emitValue(mv, sig, v, approx)
	if o := &sc.obs[len(sc.obs)-1]; o.Kind == telemetry.KindSample && !sig.Info().Distribution {
		o.RateWindow = span
	}
}

func (sc *scrape) emitValue(mv *modelVals, sig telemetry.Signal, v float64, approx bool) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		sc.emit(mv, telemetry.Observation{Kind: telemetry.KindNoData, Signal: sig})
		return
	}
	sc.emit(mv, telemetry.Observation{Kind: telemetry.KindSample, Signal: sig, Value: v, Approx: approx})
}
