package promql

import (
	"sort"
	"strings"

	"github.com/ttftop/ttftop/engines"
	"github.com/ttftop/ttftop/telemetry"
)

// ttftopTag is the family of ttftop's own exporter (a fleet of probes).
const ttftopTag = "ttftop"

// family is one engine of the alias table, or ttftop's exporter, as the
// PromQL source reads it. Everything here is derived from engines.All():
// a signal, alias or engine added there is queried without a change here.
type family struct {
	tag    string // ttftop_engine value
	engine telemetry.Engine
	spec   engines.Spec
	// modelLabels name the model, tried in order; empty for engines
	// without a model label, whose model is the job label or a
	// Config.Models entry.
	modelLabels []string
	// identLabel names the endpoint when it is not the model (ttftop's
	// exporter: endpoint).
	identLabel string
	// claim restricts the family's series to the targets it owns, for
	// unprefixed names that several engines expose (NIM and TensorRT-LLM):
	// an "and on(job, instance) …" / "unless on(job, instance) …" suffix;
	// empty for names no other engine reads.
	claim string
	// shared are the series names other families read too: only their
	// selectors carry the claim.
	shared map[string]bool
	// hist and value are the signals whose absence is "no data": the
	// family has an alias read as histogram windows, or as an instant
	// value. Derived signals are not listed (they are optional).
	hist, value map[telemetry.Signal]bool
	// series are the names of every series the family reads (detection).
	series []string
}

// labelless reports whether the family's model comes from job (or config).
func (f *family) labelless() bool { return len(f.modelLabels) == 0 && f.identLabel == "" }

// allFamilies returns every engine of engines.All() in detection order,
// then ttftop's exporter.
func allFamilies() []*family {
	specs := engines.All()
	out := make([]*family, 0, len(specs)+1)
	for _, s := range specs {
		out = append(out, newFamily(string(s.Engine), s.Engine, s, s.ModelLabels, ""))
	}
	out = append(out, newFamily(ttftopTag, telemetry.EngineUnknown, exporterSpec(), []string{"model"}, "endpoint"))
	setClaims(out)
	return out
}

func newFamily(tag string, e telemetry.Engine, s engines.Spec, modelLabels []string, ident string) *family {
	f := &family{tag: tag, engine: e, spec: s, modelLabels: modelLabels, identLabel: ident,
		hist: map[telemetry.Signal]bool{}, value: map[telemetry.Signal]bool{}}
	seen := map[string]bool{}
	add := func(names ...string) {
		for _, n := range names {
			if n != "" && !seen[n] {
				seen[n] = true
				f.series = append(f.series, n)
			}
		}
	}
	for _, sig := range signalOrder(s) {
		for _, a := range s.Signals[sig] {
			if a.Type == engines.Histogram {
				f.hist[sig] = true
			} else {
				f.value[sig] = true
			}
			add(a.SeriesNames()...)
		}
	}
	if len(s.Errors) > 0 {
		f.value[telemetry.ErrorRate] = true
	}
	for _, ec := range s.Errors {
		add(ec.Names()...)
	}
	return f
}

// exporterSpec describes ttftop's exporter (package exporter) in the
// alias table's terms: its probe histograms and request counter.
func exporterSpec() engines.Spec {
	h := func(n string) []engines.Alias { return []engines.Alias{{Name: n, Type: engines.Histogram}} }
	return engines.Spec{
		Engine:   telemetry.EngineUnknown,
		Title:    "ttftop exporter",
		Prefixes: []string{"ttftop_probe_"},
		Signals: map[telemetry.Signal][]engines.Alias{
			telemetry.TTFT: h("ttftop_probe_ttft_seconds"),
			telemetry.TTFA: h("ttftop_probe_ttfa_seconds"),
			telemetry.TPOT: h("ttftop_probe_tpot_seconds"),
			telemetry.ITL:  h("ttftop_probe_itl_seconds"),
			telemetry.E2E:  h("ttftop_probe_e2e_seconds"),
		},
		Errors: []engines.ErrorCounters{{Failed: "ttftop_probe_requests_total", FailedLabel: "result",
			FailedValues: []string{"failure"}, All: "ttftop_probe_requests_total"}},
	}
}

// signalOrder returns a spec's signals in telemetry display order, then
// any others (engines.Queue, signals added later) by name.
func signalOrder(s engines.Spec) []telemetry.Signal {
	var out, extra []telemetry.Signal
	known := map[telemetry.Signal]bool{}
	for _, sig := range telemetry.Signals {
		known[sig] = true
		if _, ok := s.Signals[sig]; ok {
			out = append(out, sig)
		}
	}
	for sig := range s.Signals {
		if !known[sig] {
			extra = append(extra, sig)
		}
	}
	sort.Slice(extra, func(i, j int) bool { return extra[i] < extra[j] })
	return append(out, extra...)
}

// targetLabels identify one scrape target; markers are matched per target.
const targetLabels = "job, instance"

// setClaims gives families that share series names with other families
// (NIM's and TensorRT-LLM's unprefixed vLLM-style names) a claim on the
// targets they own, so one target's series are never read twice. As in
// engines.Detect, a family's markers win; the first such family in
// detection order also takes the targets that carry no family's markers.
func setClaims(fams []*family) {
	readers := map[string][]int{}
	for i, f := range fams {
		for _, n := range f.series {
			readers[n] = append(readers[n], i)
		}
	}
	sharing := map[int]map[int]bool{}
	for name, idx := range readers {
		if len(idx) < 2 {
			continue
		}
		for _, i := range idx {
			if fams[i].shared == nil {
				fams[i].shared = map[string]bool{}
			}
			fams[i].shared[name] = true
			for _, j := range idx {
				if i != j {
					if sharing[i] == nil {
						sharing[i] = map[int]bool{}
					}
					sharing[i][j] = true
				}
			}
		}
	}
	for i, others := range sharing {
		var before, after []string
		for j := range others {
			if j < i {
				before = append(before, fams[j].spec.Markers...)
			} else {
				after = append(after, fams[j].spec.Markers...)
			}
		}
		own := fams[i].spec.Markers
		var b strings.Builder
		switch first := len(before) == 0; {
		case first && len(after) > 0:
			// Everything but the targets only a later family's markers claim.
			b.WriteString(" unless on(" + targetLabels + ") (" + markerGroup(after))
			if len(own) > 0 {
				b.WriteString(" unless on(" + targetLabels + ") " + markerGroup(own))
			}
			b.WriteString(")")
		case !first && len(own) > 0:
			b.WriteString(" and on(" + targetLabels + ") " + markerGroup(own))
			b.WriteString(" unless on(" + targetLabels + ") " + markerGroup(before))
		case !first:
			b.WriteString(" unless on(" + targetLabels + ") " + markerGroup(append(before, after...)))
		}
		fams[i].claim = b.String()
	}
}

// markerGroup is the set of targets exposing any of the names: family
// names, so a histogram marker is matched by its _count series.
func markerGroup(names []string) string {
	var sorted []string
	for _, n := range names {
		sorted = append(sorted, n, n+"_count")
	}
	sort.Strings(sorted)
	return "group by (" + targetLabels + ") ({__name__=~\"" + strings.Join(sorted, "|") + "\"})"
}

// familyIndex finds families by tag.
type familyIndex map[string]*family

func indexFamilies(fams []*family) familyIndex {
	idx := familyIndex{}
	for _, f := range fams {
		idx[f.tag] = f
	}
	return idx
}
