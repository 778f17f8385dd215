package engines

// Type says how a metric is read.
type Type uint8

const (
	// Gauge is read as is (aggregated by Alias.Agg across series).
	Gauge Type = iota + 1
	// Counter is read as a rate: Δvalue/Δt between scrapes.
	Counter
	// Histogram is read as bucket increments between scrapes (window
	// quantiles) and Δsum/Δcount (mean).
	Histogram
	// HistogramSum is a histogram whose _sum is used as a counter
	// (TGI's tgi_request_generated_tokens_sum).
	HistogramSum
	// CounterRatio is a mean from two counters: Δ(Name)/Δ(Per) per
	// interval (Triton's cumulative µs durations / request count).
	CounterRatio
	// CounterShare is Name's share of two counters that count the two
	// outcomes of one event: Δ(Name) / (Δ(Name) + Δ(Per)) per interval
	// (llama.cpp's cached / (cached + evaluated) prompt tokens,
	// TensorRT-LLM's reused / (reused + missed) KV blocks). 0/0 is no data.
	CounterShare
)

func (t Type) String() string {
	switch t {
	case Gauge:
		return "gauge"
	case Counter:
		return "counter"
	case Histogram:
		return "histogram"
	case HistogramSum:
		return "histogram_sum"
	case CounterRatio:
		return "counter_ratio"
	case CounterShare:
		return "counter_share"
	}
	return "unknown"
}

// Agg says how several series of one model (data-parallel engines, ranks)
// are combined into one value. Histograms are always summed (buckets per
// le, never averaged quantiles); counters are summed unless they count per
// GPU (Mean).
type Agg uint8

const (
	// Sum adds the series (running and waiting requests).
	Sum Agg = iota
	// Max keeps the largest (KV-cache usage: the fullest engine).
	Max
	// Mean averages the series' values or rates: a per-GPU counter
	// (bytes read per GPU) summed over data-parallel ranks would count
	// one GPU's traffic once per rank.
	Mean
)

// Alias is one metric that can carry a signal.
type Alias struct {
	// Name is the family name: gauge or counter name as exposed
	// ("vllm:generation_tokens_total", "tgi_request_count"), or the base
	// name of a histogram ("vllm:time_to_first_token_seconds").
	Name string
	Type Type
	// Per is the denominator counter of a CounterRatio, or the other
	// outcome's counter of a CounterShare.
	Per string
	// Scale converts the exposed unit to ttftop's base unit (seconds,
	// ratio 0–1): 1e-3 for milliseconds, 1e-6 for microseconds. For
	// histograms it scales the bucket bounds and the sum. 0 means 1.
	Scale float64
	// Offset is added after scaling: a CounterRatio of accepted tokens per
	// draft plus 1 is vLLM's mean acceptance length. 0 for nearly all.
	Offset float64
	// Agg combines several series of one model (gauges; counters: Sum or Mean).
	Agg Agg
	// Match restricts the series to those with these label values
	// (Triton TRT-LLM backend: request_type="active").
	Match map[string]string
	// Note says how the metric differs from the signal's definition, for
	// display ("includes prefill", "token-weighted").
	Note string
	// PerStep marks a per-token histogram that takes one observation per
	// engine step (vLLM's ITL): under speculative decoding a step emits
	// several tokens, so its mean is no time per token.
	PerStep bool
	// PageWide marks a gauge whose series name no model (a router's
	// pool gauges, labelled by the pool): combined over its series by Agg,
	// it is the figure of every model the page serves.
	PageWide bool
	// Buckets are a histogram's default upper bounds as the engine
	// exposes them (before Scale, without +Inf); nil where unknown. They
	// say what a query on the histogram can resolve: nothing inside a
	// bucket.
	Buckets []float64
}

// TwoCounters reports whether the alias is read from two counters (Name
// and Per): a CounterRatio or a CounterShare.
func (a Alias) TwoCounters() bool { return a.Type == CounterRatio || a.Type == CounterShare }

// Factor returns Scale, or 1 when Scale is unset.
func (a Alias) Factor() float64 {
	if a.Scale == 0 {
		return 1
	}
	return a.Scale
}

// Bucket returns the name of a histogram's bucket series.
func (a Alias) Bucket() string { return a.Name + "_bucket" }

// Sum returns the name of a histogram's sum series.
func (a Alias) Sum() string { return a.Name + "_sum" }

// Count returns the name of a histogram's count series.
func (a Alias) Count() string { return a.Name + "_count" }

// Names returns every family name the alias reads.
func (a Alias) Names() []string {
	if a.Per != "" {
		return []string{a.Name, a.Per}
	}
	return []string{a.Name}
}

// Matches reports whether a series with the given label lookup belongs to
// the alias (all Match labels equal).
func (a Alias) Matches(label func(name string) string) bool {
	for k, v := range a.Match {
		if label(k) != v {
			return false
		}
	}
	return true
}
