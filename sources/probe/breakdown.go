package probe

import (
	"time"

	"github.com/ttftop/ttftop/telemetry"
)

// Breakdown parts, in waterfall order.
const (
	PartDNS           = "dns"                    // before start: outside TTFT
	PartConnect       = "connect"                // before start
	PartTLS           = "tls"                    // before start
	PartHeaders       = "headers"                // response headers − start
	PartQueue         = "queue"                  // waiting in the engine's queue
	PartLoad          = "load"                   // loading the model (Ollama cold start)
	PartPrefill       = "prefill"                // prompt processing up to the first token
	PartDecode        = "decode"                 // generating the output tokens
	PartServerOther   = "server_other"           // engine time outside its named phases
	PartOutsideTTFT   = "outside_to_first_token" // TTFT not spent in the engine: network, gateway, tokenisation
	PartOutsideEngine = "outside_engine"         // E2E not spent in the engine
)

// serverPhases are the engine's own phase durations for one request; a
// negative duration is a phase it did not report.
type serverPhases struct {
	engine                       string
	queue, load, prefill, decode time.Duration
	queueSrc, loadSrc            string
	prefillSrc, decodeSrc        string
	other                        time.Duration
	otherSrc                     string
}

func unknownPhases(engine string) serverPhases {
	return serverPhases{engine: engine, queue: -1, load: -1, prefill: -1, decode: -1, other: -1}
}

// HasServerPhases reports whether the stream carried the engine's own
// phase timings (Ollama durations, llama.cpp timings, vLLM metrics), so
// the breakdown holds more than the client's parts.
func (r *Result) HasServerPhases() bool {
	_, ok := r.phasesOf()
	return ok
}

// phasesOf reads the engine timings the stream carried: Ollama's
// durations, llama.cpp's timings, vLLM's per-request metrics.
func (r *Result) phasesOf() (serverPhases, bool) {
	msDur := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	switch {
	case r.Ollama != nil:
		o := r.Ollama
		sp := unknownPhases("ollama")
		// Cloud models send only total_duration: no phases then.
		if o.PromptEvalDuration <= 0 && o.EvalDuration <= 0 {
			return sp, false
		}
		sp.load, sp.loadSrc = o.LoadDuration, "server: ollama load_duration"
		sp.prefill, sp.prefillSrc = o.PromptEvalDuration, "server: ollama prompt_eval_duration"
		sp.decode, sp.decodeSrc = o.EvalDuration, "server: ollama eval_duration"
		if o.TotalDuration > 0 {
			sp.other = o.TotalDuration - o.LoadDuration - o.PromptEvalDuration - o.EvalDuration
			sp.otherSrc = "derived: ollama total_duration − load − prompt_eval − eval"
		}
		return sp, true
	case r.LlamaCpp != nil:
		t := r.LlamaCpp
		sp := unknownPhases("llamacpp")
		sp.prefill, sp.prefillSrc = msDur(t.PromptMS), "server: llama.cpp timings.prompt_ms"
		sp.decode, sp.decodeSrc = msDur(t.PredictedMS), "server: llama.cpp timings.predicted_ms"
		return sp, true
	case r.VLLM != nil:
		v := r.VLLM
		sp := unknownPhases("vllm")
		if v.QueueTimeMS != nil {
			sp.queue, sp.queueSrc = msDur(*v.QueueTimeMS), "server: vllm metrics.queue_time_ms"
		}
		if v.TimeToFirstTokenMS != nil {
			// Counted from scheduling: the prefill, queue excluded.
			sp.prefill, sp.prefillSrc = msDur(*v.TimeToFirstTokenMS), "server: vllm metrics.time_to_first_token_ms"
		}
		if v.GenerationTimeMS != nil {
			sp.decode, sp.decodeSrc = msDur(*v.GenerationTimeMS), "server: vllm metrics.generation_time_ms"
		}
		return sp, sp.queue >= 0 || sp.prefill >= 0 || sp.decode >= 0
	}
	return serverPhases{}, false
}

// Breakdown is where the request's time went: the client's connection
// setup (before start, so outside TTFT) and time to headers, the engine's
// own queue, load, prefill and decode where its stream reports them, and
// what is left of TTFT and E2E outside the engine (network, gateway,
// tokenisation, framing). Nil for a failed request.
func (r *Result) Breakdown() []telemetry.ProbePart {
	if !r.OK {
		return nil
	}
	var out []telemetry.ProbePart
	add := func(part string, d time.Duration, source string) {
		out = append(out, telemetry.ProbePart{Part: part, MS: ms(d), Source: source})
	}
	if !r.Reused {
		if r.DNS > 0 {
			add(PartDNS, r.DNS, "client (before start)")
		}
		if r.Connect > 0 {
			add(PartConnect, r.Connect, "client (before start)")
		}
		if r.TLS > 0 {
			add(PartTLS, r.TLS, "client (before start)")
		}
	}
	if r.TTFB > 0 {
		add(PartHeaders, r.TTFB, "client")
	}
	sp, ok := r.phasesOf()
	if !ok {
		return out
	}
	var engineTTFT, engineAll time.Duration
	for _, p := range []struct {
		name   string
		d      time.Duration
		src    string
		toTTFT bool
	}{
		{PartQueue, sp.queue, sp.queueSrc, true},
		{PartLoad, sp.load, sp.loadSrc, true},
		{PartPrefill, sp.prefill, sp.prefillSrc, true},
		{PartDecode, sp.decode, sp.decodeSrc, false},
		{PartServerOther, sp.other, sp.otherSrc, false},
	} {
		if p.d < 0 || (p.d == 0 && p.name != PartPrefill && p.name != PartDecode) {
			continue // not reported, or a phase that did not happen (warm load)
		}
		add(p.name, p.d, p.src)
		if p.toTTFT {
			engineTTFT += p.d
		}
		if p.name != PartServerOther {
			engineAll += p.d
		}
	}
	if sp.prefill >= 0 {
		add(PartOutsideTTFT, r.TTFT-engineTTFT, "derived: TTFT − queue − load − prefill")
	}
	if sp.prefill >= 0 && sp.decode >= 0 {
		add(PartOutsideEngine, r.E2E-engineAll, "derived: E2E − queue − load − prefill − decode")
	}
	return out
}
