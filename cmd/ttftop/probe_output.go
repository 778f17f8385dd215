package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ttftop/ttftop/internal/config"
	"github.com/ttftop/ttftop/sources/probe"
	"github.com/ttftop/ttftop/telemetry"
)

// probeRequestJSON is one request in --json/--jsonl, with vLLM `bench serve`
// field names. Latencies are absent on failed requests and where undefined.
type probeRequestJSON struct {
	// Schema is set on a --jsonl line, a document of its own.
	Schema         string    `json:"schema,omitempty"`
	Request        int       `json:"request"`
	OK             bool      `json:"ok"`
	TTFTms         *float64  `json:"ttft_ms,omitempty"`
	TPOTms         *float64  `json:"tpot_ms,omitempty"`
	ITLms          []float64 `json:"itl_ms,omitempty"`
	E2Ems          *float64  `json:"e2e_ms,omitempty"`
	DecodeTPS      *float64  `json:"decode_tokens_per_s,omitempty"`
	OutputTokens   int       `json:"output_tokens"`
	TokensSource   string    `json:"output_tokens_source"`
	PromptTokens   int       `json:"prompt_tokens"`
	Events         int       `json:"events"`
	TokensPerEvent []int     `json:"tokens_per_event,omitempty"`
	DNSms          float64   `json:"dns_ms,omitempty"`
	ConnectMS      float64   `json:"connect_ms"`
	TLSms          float64   `json:"tls_ms,omitempty"`
	TTFBms         float64   `json:"ttfb_ms"`
	Reused         bool      `json:"reused"`
	Status         int       `json:"status,omitempty"`
	Model          string    `json:"model,omitempty"`
	Error          string    `json:"error,omitempty"`
	ErrorKind      string    `json:"error_kind,omitempty"`
	// Cancelled: the user stopped the run (Ctrl-C) while this request was
	// in flight; it did not fail and counts in no failure or goodput.
	Cancelled bool              `json:"cancelled,omitempty"`
	Warnings  []string          `json:"warnings,omitempty"`
	Server    *probeServerTimes `json:"server_timings,omitempty"`
	// Phases of a stream that reasons first (see Phases).
	TTFAms            *float64 `json:"ttfa_ms,omitempty"`
	FirstToolCallms   *float64 `json:"first_tool_call_ms,omitempty"`
	ReasoningTokens   *int     `json:"reasoning_tokens,omitempty"`
	AnswerTokens      *int     `json:"answer_tokens,omitempty"`
	PhaseTokensSource string   `json:"phase_tokens_source,omitempty"`
	ReasoningTPOTms   *float64 `json:"reasoning_tpot_ms,omitempty"`
	AnswerTPOTms      *float64 `json:"answer_tpot_ms,omitempty"`
	// Where the time went: client timings and the engine's, with sources.
	Breakdown []telemetry.ProbePart `json:"breakdown,omitempty"`
}

// probeServerTimes are the engine's own figures, next to the client's.
type probeServerTimes struct {
	Engine          string  `json:"engine"`
	TotalMS         float64 `json:"total_ms,omitempty"`
	LoadMS          float64 `json:"load_ms,omitempty"`
	PromptEvalCount int     `json:"prompt_eval_tokens,omitempty"`
	PromptEvalMS    float64 `json:"prompt_eval_ms,omitempty"`
	EvalCount       int     `json:"eval_tokens,omitempty"`
	EvalMS          float64 `json:"eval_ms,omitempty"`
	ServerDecodeTPS float64 `json:"decode_tokens_per_s,omitempty"`
	// The engine's own objects as it sent them, with its own names.
	LlamaCppTimings *probe.LlamaCppTimings `json:"timings,omitempty"`
	VLLMMetrics     *probe.VLLMMetrics     `json:"metrics,omitempty"`
}

func probeRequestOf(r *probe.Result) probeRequestJSON {
	j := probeRequestJSON{
		Request: r.Seq, OK: r.OK, OutputTokens: r.OutputTokens, TokensSource: string(r.TokensSource),
		PromptTokens: r.PromptTokens, Events: r.Events, TokensPerEvent: r.TokensPerEvent,
		DNSms: ms(r.DNS), ConnectMS: ms(r.Connect), TLSms: ms(r.TLS), TTFBms: ms(r.TTFB), Reused: r.Reused,
		Status: r.Status, Model: r.Model, Error: r.Err, ErrorKind: string(r.ErrorKind), Warnings: r.Warnings,
		Cancelled: cancelled(r),
	}
	if r.OK {
		j.TTFTms, j.E2Ems = ptr(ms(r.TTFT)), ptr(ms(r.E2E))
		if tpot, ok := r.TPOT(); ok {
			j.TPOTms = ptr(ms(tpot))
		}
		if tps, ok := r.DecodeTPS(); ok {
			j.DecodeTPS = ptr(tps)
		}
		for _, g := range r.ITL() {
			j.ITLms = append(j.ITLms, ms(g))
		}
		j.setPhases(r.Phases())
		j.Breakdown = r.Breakdown()
	}
	if o := r.Ollama; o != nil {
		j.Server = &probeServerTimes{Engine: "ollama", TotalMS: ms(o.TotalDuration), LoadMS: ms(o.LoadDuration),
			PromptEvalCount: o.PromptEvalCount, PromptEvalMS: ms(o.PromptEvalDuration), EvalCount: o.EvalCount,
			EvalMS: ms(o.EvalDuration), ServerDecodeTPS: o.DecodeTPS()}
	}
	if t := r.LlamaCpp; t != nil {
		j.Server = &probeServerTimes{Engine: "llamacpp", LlamaCppTimings: t, ServerDecodeTPS: t.PredictedPerSecond}
	}
	if v := r.VLLM; v != nil && j.Server == nil {
		j.Server = &probeServerTimes{Engine: "vllm", VLLMMetrics: v}
		if v.TokensPerSecond != nil {
			j.Server.ServerDecodeTPS = *v.TokensPerSecond
		}
	}
	return j
}

func (j *probeRequestJSON) setPhases(ph probe.Phases) {
	if ph.HasAnswer {
		j.TTFAms = ptr(ms(ph.TTFA))
	}
	if ph.HasTool {
		j.FirstToolCallms = ptr(ms(ph.FirstTool))
	}
	if ph.Split {
		j.ReasoningTokens, j.AnswerTokens = &ph.Reasoning, &ph.Answer
		j.PhaseTokensSource = string(ph.TokensSource)
	}
	if ph.HasReasoningTPOT {
		j.ReasoningTPOTms = ptr(ms(ph.ReasoningTPOT))
	}
	if ph.HasAnswerTPOT {
		j.AnswerTPOTms = ptr(ms(ph.AnswerTPOT))
	}
}

// hasPhases reports whether the request showed more than one phase worth
// a column: reasoning (shown or counted) or a tool call.
func (j *probeRequestJSON) hasPhases() bool {
	return (j.ReasoningTokens != nil && *j.ReasoningTokens > 0) || j.FirstToolCallms != nil
}

func ptr(v float64) *float64 { return &v }

// cancelled reports whether the user stopped the run while r was in
// flight: not a failed request (the endpoint did nothing wrong), so it is
// said apart and kept out of failures, error kinds and goodput.
func cancelled(r *probe.Result) bool { return r.ErrorKind == probe.ErrCanceled }

// probeSummaryJSON is the run summary (vLLM's names: mean_/median_/p90_/
// p95_/p99_; E2E is e2e_ms, as everywhere in ttftop, where vLLM says e2el;
// throughput output_tokens_per_s, where vLLM says output_throughput).
type probeSummaryJSON struct {
	Schema  string `json:"schema"`
	Summary bool   `json:"summary,omitempty"`
	URL     string `json:"url"`
	API     string `json:"api"`
	Model   string `json:"model"`
	// Found and Via: how discovery found the endpoint and the tunnel it
	// is reached through (its TTFT and E2E include the tunnel's time).
	Found     string `json:"found,omitempty"`
	Via       string `json:"via,omitempty"`
	Completed int    `json:"completed"`
	Failed    int    `json:"failed"`
	// Cancelled requests were in flight when the user stopped the run.
	Cancelled         int            `json:"cancelled"`
	ErrorKinds        map[string]int `json:"error_kinds,omitempty"`
	EstimatedCounts   int            `json:"estimated_token_counts"`
	DurationMS        float64        `json:"duration_ms"`
	TotalOutputTokens int            `json:"total_output_tokens"`
	OutputThroughput  float64        `json:"output_tokens_per_s"`
	MeanTTFTms        *float64       `json:"mean_ttft_ms"`
	MedianTTFTms      *float64       `json:"median_ttft_ms"`
	P90TTFTms         *float64       `json:"p90_ttft_ms"`
	P95TTFTms         *float64       `json:"p95_ttft_ms"`
	P99TTFTms         *float64       `json:"p99_ttft_ms"`
	MeanTPOTms        *float64       `json:"mean_tpot_ms"`
	MedianTPOTms      *float64       `json:"median_tpot_ms"`
	P90TPOTms         *float64       `json:"p90_tpot_ms"`
	P95TPOTms         *float64       `json:"p95_tpot_ms"`
	P99TPOTms         *float64       `json:"p99_tpot_ms"`
	MeanITLms         *float64       `json:"mean_itl_ms"`
	MedianITLms       *float64       `json:"median_itl_ms"`
	P90ITLms          *float64       `json:"p90_itl_ms"`
	P95ITLms          *float64       `json:"p95_itl_ms"`
	P99ITLms          *float64       `json:"p99_itl_ms"`
	MeanE2Ems         *float64       `json:"mean_e2e_ms"`
	MedianE2Ems       *float64       `json:"median_e2e_ms"`
	P90E2Ems          *float64       `json:"p90_e2e_ms"`
	P95E2Ems          *float64       `json:"p95_e2e_ms"`
	P99E2Ems          *float64       `json:"p99_e2e_ms"`
	// Time to the first answer token, over the requests that answered.
	MeanTTFAms   *float64 `json:"mean_ttfa_ms"`
	MedianTTFAms *float64 `json:"median_ttfa_ms"`
	P90TTFAms    *float64 `json:"p90_ttfa_ms"`
	P95TTFAms    *float64 `json:"p95_ttfa_ms"`
	P99TTFAms    *float64 `json:"p99_ttfa_ms"`
	// Reasoning and answer tokens of the completed requests whose phases
	// are known; estimated_phase_counts says how many splits are estimates.
	TotalReasoningTokens *int `json:"total_reasoning_tokens,omitempty"`
	TotalAnswerTokens    *int `json:"total_answer_tokens,omitempty"`
	EstimatedPhaseCounts int  `json:"estimated_phase_counts,omitempty"`
	// Goodput against the --slo-* bounds (absent when none is set).
	Goodput  *probe.Goodput     `json:"goodput,omitempty"`
	Requests []probeRequestJSON `json:"requests,omitempty"`
}

// stats are mean, median, p90, p95, p99 of samples (nil each when empty).
type stats [5]*float64

func statsOf(samples []float64) stats {
	if len(samples) == 0 {
		return stats{}
	}
	s := slices.Clone(samples) // SampleQuantile sorts in place
	sum := 0.0
	for _, v := range s {
		sum += v
	}
	q := func(p float64) *float64 { return ptr(telemetry.SampleQuantile(p, s)) }
	return stats{ptr(sum / float64(len(s))), q(0.5), q(0.9), q(0.95), q(0.99)}
}

// report collects results and prints them in the chosen format.
type probeReport struct {
	p         *probe.Prober
	cfg       probeConfig
	w         io.Writer
	results   []*probe.Result
	completed int
	duration  time.Duration
	csv       *csv.Writer
}

func newProbeReport(p *probe.Prober, cfg probeConfig, w io.Writer) *probeReport {
	return &probeReport{p: p, cfg: cfg, w: w}
}

func probeCSVHeader() []string {
	return []string{"request", "ok", "ttft_ms", "tpot_ms", "e2e_ms", "decode_tps", "output_tokens",
		"output_tokens_source", "prompt_tokens", "events", "tokens_per_event", "itl_ms", "connect_ms", "tls_ms",
		"ttfb_ms", "reused", "status", "error_kind", "error",
		// Appended, so scripts reading the columns above by position keep working.
		"ttfa_ms", "first_tool_call_ms", "reasoning_tokens", "answer_tokens", "phase_tokens_source",
		"reasoning_tpot_ms", "answer_tpot_ms", "good", "cancelled"}
}

// add records a finished request; JSONL and CSV print it at once.
func (rp *probeReport) add(r *probe.Result) error {
	rp.results = append(rp.results, r)
	if r.OK {
		rp.completed++
	}
	switch rp.cfg.format {
	case "jsonl":
		line := probeRequestOf(r)
		line.Schema = telemetry.JSONSchema
		return json.NewEncoder(rp.w).Encode(line)
	case "csv":
		if rp.csv == nil {
			rp.csv = csv.NewWriter(rp.w)
			if err := rp.csv.Write(probeCSVHeader()); err != nil {
				return err
			}
		}
		if err := rp.csv.Write(rp.csvRow(r)); err != nil {
			return err
		}
		rp.csv.Flush()
		return rp.csv.Error()
	}
	return nil
}

func (rp *probeReport) csvRow(r *probe.Result) []string {
	j := probeRequestOf(r)
	f := func(p *float64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatFloat(*p, 'f', 3, 64)
	}
	itl := make([]string, len(j.ITLms))
	for i, v := range j.ITLms {
		itl[i] = strconv.FormatFloat(v, 'f', 3, 64)
	}
	tpe := make([]string, len(j.TokensPerEvent))
	for i, v := range j.TokensPerEvent {
		tpe[i] = strconv.Itoa(v)
	}
	return []string{strconv.Itoa(j.Request), strconv.FormatBool(j.OK), f(j.TTFTms), f(j.TPOTms), f(j.E2Ems),
		f(j.DecodeTPS), strconv.Itoa(j.OutputTokens), j.TokensSource, strconv.Itoa(j.PromptTokens),
		strconv.Itoa(j.Events), strings.Join(tpe, " "), strings.Join(itl, " "), f(ptr(j.ConnectMS)), f(ptr(j.TLSms)),
		f(ptr(j.TTFBms)), strconv.FormatBool(j.Reused), strconv.Itoa(j.Status), j.ErrorKind, j.Error,
		f(j.TTFAms), f(j.FirstToolCallms), optInt(j.ReasoningTokens), optInt(j.AnswerTokens), j.PhaseTokensSource,
		f(j.ReasoningTPOTms), f(j.AnswerTPOTms), rp.good(r), strconv.FormatBool(j.Cancelled)}
}

// good is the goodput verdict of one request: "" without bounds.
func (rp *probeReport) good(r *probe.Result) string {
	if len(rp.cfg.bounds) == 0 || cancelled(r) {
		return ""
	}
	rec := r.Record()
	return strconv.FormatBool(rp.cfg.bounds.Good(&rec))
}

// optInt is "" for an unknown count, never "0".
func optInt(p *int) string {
	if p == nil {
		return ""
	}
	return strconv.Itoa(*p)
}

func (rp *probeReport) summary() probeSummaryJSON {
	sort.Slice(rp.results, func(i, k int) bool { return rp.results[i].Seq < rp.results[k].Seq })
	labels := rp.p.Options().Labels
	s := probeSummaryJSON{Schema: telemetry.JSONSchema, URL: rp.p.URL(), API: string(rp.p.API()), Model: rp.p.Model(), DurationMS: ms(rp.duration),
		Found: labels[config.LabelFound], Via: labels[config.LabelVia]}
	var ttft, ttfa, tpot, itl, e2e []float64
	for _, r := range rp.results {
		if cancelled(r) {
			s.Cancelled++
			continue
		}
		if !r.OK {
			s.Failed++
			if s.ErrorKinds == nil {
				s.ErrorKinds = map[string]int{}
			}
			s.ErrorKinds[string(r.ErrorKind)]++
			continue
		}
		s.Completed++
		s.TotalOutputTokens += r.OutputTokens
		if r.Approx() {
			s.EstimatedCounts++
		}
		ttft, e2e = append(ttft, ms(r.TTFT)), append(e2e, ms(r.E2E))
		if v, ok := r.TPOT(); ok {
			tpot = append(tpot, ms(v))
		}
		for _, g := range r.ITL() {
			itl = append(itl, ms(g))
		}
		ph := r.Phases()
		if ph.HasAnswer {
			ttfa = append(ttfa, ms(ph.TTFA))
		}
		if ph.Split {
			s.TotalReasoningTokens = addInt(s.TotalReasoningTokens, ph.Reasoning)
			s.TotalAnswerTokens = addInt(s.TotalAnswerTokens, ph.Answer)
			if ph.Approx() {
				s.EstimatedPhaseCounts++
			}
		}
	}
	if rp.duration > 0 {
		// vLLM's output_throughput: output tokens of completed requests
		// over the wall time of the run.
		s.OutputThroughput = float64(s.TotalOutputTokens) / rp.duration.Seconds()
	}
	records := make([]telemetry.ProbeRecord, 0, len(rp.results))
	for _, r := range rp.results {
		if !cancelled(r) {
			records = append(records, r.Record())
		}
	}
	s.Goodput = probe.GoodputOf(records, rp.cfg.bounds, rp.duration)
	t := statsOf(ttft)
	s.MeanTTFTms, s.MedianTTFTms, s.P90TTFTms, s.P95TTFTms, s.P99TTFTms = t[0], t[1], t[2], t[3], t[4]
	t = statsOf(ttfa)
	s.MeanTTFAms, s.MedianTTFAms, s.P90TTFAms, s.P95TTFAms, s.P99TTFAms = t[0], t[1], t[2], t[3], t[4]
	t = statsOf(tpot)
	s.MeanTPOTms, s.MedianTPOTms, s.P90TPOTms, s.P95TPOTms, s.P99TPOTms = t[0], t[1], t[2], t[3], t[4]
	t = statsOf(itl)
	s.MeanITLms, s.MedianITLms, s.P90ITLms, s.P95ITLms, s.P99ITLms = t[0], t[1], t[2], t[3], t[4]
	t = statsOf(e2e)
	s.MeanE2Ems, s.MedianE2Ems, s.P90E2Ems, s.P95E2Ems, s.P99E2Ems = t[0], t[1], t[2], t[3], t[4]
	return s
}

func addInt(p *int, v int) *int {
	if p == nil {
		return &v
	}
	v += *p
	return &v
}

// finish prints what comes after the requests.
func (rp *probeReport) finish() error {
	s := rp.summary()
	switch rp.cfg.format {
	case "json":
		for _, r := range rp.results {
			s.Requests = append(s.Requests, probeRequestOf(r))
		}
		enc := json.NewEncoder(rp.w)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	case "jsonl":
		s.Summary = true
		return json.NewEncoder(rp.w).Encode(s)
	case "csv":
		if rp.csv == nil { // no request finished: still print the header
			rp.csv = csv.NewWriter(rp.w)
			if err := rp.csv.Write(probeCSVHeader()); err != nil {
				return err
			}
		}
		rp.csv.Flush()
		return rp.csv.Error()
	}
	return rp.table(s)
}

func (rp *probeReport) table(s probeSummaryJSON) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "probe %s  api %s  model %s  max_tokens %d  n %d  c %d\n\n", s.URL, s.API, s.Model,
		rp.p.Options().MaxTokens, rp.cfg.n, rp.p.Options().Concurrency)
	rows := make([]probeRequestJSON, len(rp.results))
	phases := false
	for i, r := range rp.results {
		rows[i] = probeRequestOf(r)
		phases = phases || rows[i].hasPhases()
	}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "#\tttft_ms\ttpot_ms\te2e_ms\ttok/s\toutput_tokens\tevents\tconnect_ms\tttfb_ms\treused\tresult\t"
	if phases {
		// Reasoning or tool calls: the answer's own figures too.
		head += "ttfa_ms\ttool_ms\treasoning_tok\tanswer_tok\treasoning_tpot\tanswer_tpot\t"
	}
	fmt.Fprintln(tw, head)
	warnings := map[string][]int{}
	for i, r := range rp.results {
		j := rows[i]
		result := "ok"
		switch {
		case cancelled(r):
			result = "cancelled"
		case !r.OK:
			result = string(r.ErrorKind)
		}
		tokens := strconv.Itoa(r.OutputTokens)
		if r.Approx() {
			tokens = "~" + tokens // estimated from events
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%d\t%.1f\t%.1f\t%s\t%s\t", r.Seq, num(j.TTFTms), num(j.TPOTms),
			num(j.E2Ems), num(j.DecodeTPS), tokens, r.Events, j.ConnectMS, j.TTFBms, yesNo(r.Reused), result)
		if phases {
			est := ""
			if j.PhaseTokensSource == string(probe.TokensEvents) {
				est = "~"
			}
			count := func(p *int) string {
				if p == nil {
					return "-"
				}
				return est + strconv.Itoa(*p)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t", num(j.TTFAms), num(j.FirstToolCallms), count(j.ReasoningTokens),
				count(j.AnswerTokens), num(j.ReasoningTPOTms), num(j.AnswerTPOTms))
		}
		fmt.Fprintln(tw)
		for _, w := range r.Warnings {
			warnings[w] = append(warnings[w], r.Seq)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var failures []string
	for _, r := range rp.results {
		if !r.OK && !cancelled(r) {
			failures = append(failures, fmt.Sprintf("  #%d %s: %s", r.Seq, r.ErrorKind, r.Err))
		}
	}
	if len(failures) > 0 {
		fmt.Fprintf(b, "\nfailures:\n%s\n", strings.Join(failures, "\n"))
	}
	var server []string
	for _, r := range rp.results {
		if o := r.Ollama; o != nil {
			server = append(server, fmt.Sprintf("  #%d ollama: total %.1f ms, load %.1f ms, prompt eval %d tok in %.1f ms, eval %d tok in %.1f ms (%.1f tok/s)",
				r.Seq, ms(o.TotalDuration), ms(o.LoadDuration), o.PromptEvalCount, ms(o.PromptEvalDuration), o.EvalCount, ms(o.EvalDuration), o.DecodeTPS()))
		}
		if l := r.LlamaCpp; l != nil {
			server = append(server, fmt.Sprintf("  #%d llama.cpp: prompt %d tok in %.1f ms, predicted %d tok in %.1f ms (%.1f tok/s)",
				r.Seq, l.PromptN, l.PromptMS, l.PredictedN, l.PredictedMS, l.PredictedPerSecond))
		}
	}
	if len(server) > 0 {
		fmt.Fprintf(b, "\nserver-side timings (the engine's own clock, next to ours):\n%s\n", strings.Join(server, "\n"))
	}
	var spent []string
	for i, r := range rp.results {
		if !r.HasServerPhases() || !r.OK {
			continue
		}
		parts := make([]string, 0, len(rows[i].Breakdown))
		for _, p := range rows[i].Breakdown {
			parts = append(parts, fmt.Sprintf("%s %.1f", p.Part, p.MS))
		}
		spent = append(spent, fmt.Sprintf("  #%d %s ms", r.Seq, strings.Join(parts, " · ")))
	}
	if len(spent) > 0 {
		fmt.Fprintf(b, "\nwhere the time went (dns/connect/tls before start; outside_* = ours − the engine's: network, gateway, tokenisation):\n%s\n", strings.Join(spent, "\n"))
	}
	if len(warnings) > 0 {
		b.WriteString("\nwarnings:\n")
		keys := make([]string, 0, len(warnings))
		for w := range warnings {
			keys = append(keys, w)
		}
		sort.Strings(keys)
		for _, w := range keys {
			fmt.Fprintf(b, "  %s (requests %v)\n", w, warnings[w])
		}
	}
	fmt.Fprintf(b, "\ncompleted %d  failed %d", s.Completed, s.Failed)
	if s.Cancelled > 0 {
		fmt.Fprintf(b, "  cancelled %d (stopped by the user in flight: not failed, not in goodput)", s.Cancelled)
	}
	fmt.Fprintf(b, "  duration %.2f s  output_throughput %.1f tok/s", s.DurationMS/1000, s.OutputThroughput)
	if s.EstimatedCounts > 0 {
		fmt.Fprintf(b, "  (%d token counts estimated from events, marked ~)", s.EstimatedCounts)
	}
	if s.Goodput != nil {
		fmt.Fprintf(b, "\n%s", s.Goodput.Text())
	}
	if phases && s.TotalReasoningTokens != nil {
		fmt.Fprintf(b, "\nreasoning_tokens %d  answer_tokens %d", *s.TotalReasoningTokens, *s.TotalAnswerTokens)
		if s.EstimatedPhaseCounts > 0 {
			fmt.Fprintf(b, "  (%d split estimated from events, marked ~)", s.EstimatedPhaseCounts)
		}
	}
	b.WriteString("\n\n")
	type statRow struct {
		name string
		v    stats
	}
	statRows := []statRow{{"ttft_ms", stats{s.MeanTTFTms, s.MedianTTFTms, s.P90TTFTms, s.P95TTFTms, s.P99TTFTms}}}
	if phases {
		statRows = append(statRows, statRow{"ttfa_ms", stats{s.MeanTTFAms, s.MedianTTFAms, s.P90TTFAms, s.P95TTFAms, s.P99TTFAms}})
	}
	statRows = append(statRows,
		statRow{"tpot_ms", stats{s.MeanTPOTms, s.MedianTPOTms, s.P90TPOTms, s.P95TPOTms, s.P99TPOTms}},
		statRow{"itl_ms", stats{s.MeanITLms, s.MedianITLms, s.P90ITLms, s.P95ITLms, s.P99ITLms}},
		statRow{"e2e_ms", stats{s.MeanE2Ems, s.MedianE2Ems, s.P90E2Ems, s.P95E2Ems, s.P99E2Ems}})
	tw = tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tmean\tmedian\tp90\tp95\tp99\t")
	for _, row := range statRows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", row.name, num(row.v[0]), num(row.v[1]), num(row.v[2]), num(row.v[3]), num(row.v[4]))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString("\n(client-side probe figures; definitions: ttftop probe --help, docs/definitions.md)\n")
	_, err := io.WriteString(rp.w, b.String())
	return err
}

func num(p *float64) string {
	if p == nil || math.IsNaN(*p) {
		return "-"
	}
	return strconv.FormatFloat(*p, 'f', 1, 64)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// ms is a duration in milliseconds, the unit of every figure printed.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
