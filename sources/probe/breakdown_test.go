package probe

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ttftop/ttftop/telemetry"
)

func partsByName(parts []telemetry.ProbePart) map[string]telemetry.ProbePart {
	out := map[string]telemetry.ProbePart{}
	for _, p := range parts {
		out[p.Part] = p
	}
	return out
}

// TestBreakdownFromCaptures joins the client's timings with the engine's
// figures of real captures: Ollama's durations (ns) and llama.cpp's
// timings (ms), each part with its source.
func TestBreakdownFromCaptures(t *testing.T) {
	dir := fixtureDir(t)
	for _, c := range []struct {
		file   string
		api    API
		server map[string]float64 // part → ms the capture says
		src    map[string]string
	}{
		{"ollama_generate_dolphin3_8b_local.ndjson", OllamaGenerate,
			// load 1,667,241,100 ns, prompt_eval 123,822,500, eval
			// 133,173,800, total 1,926,263,700: other = 2.0263 ms.
			map[string]float64{PartLoad: 1667.2411, PartPrefill: 123.8225, PartDecode: 133.1738, PartServerOther: 2.0263},
			map[string]string{PartPrefill: "server: ollama prompt_eval_duration", PartServerOther: "derived: ollama total_duration − load − prompt_eval − eval"}},
		{"llamacpp_v1chat_b6290_tail_excerpt.sse.txt", OpenAIChat,
			map[string]float64{PartPrefill: 447.926, PartDecode: 1317.711},
			map[string]string{PartDecode: "server: llama.cpp timings.predicted_ms"}},
	} {
		t.Run(c.file, func(t *testing.T) {
			srv := server(t, scripted("text/event-stream", fixtureSteps(t, filepath.Join(dir, c.file), c.api, 0, false)))
			r := probeOnce(t, Options{URL: srv.URL, API: c.api})
			if !r.OK {
				t.Fatalf("%s: %s", r.ErrorKind, r.Err)
			}
			got := partsByName(r.Breakdown())
			for part, want := range c.server {
				if p, ok := got[part]; !ok || math.Abs(p.MS-want) > 1e-6 {
					t.Errorf("%s = %+v, want %.4f ms", part, p, want)
				}
			}
			for part, want := range c.src {
				if got[part].Source != want {
					t.Errorf("%s source %q, want %q", part, got[part].Source, want)
				}
			}
			engineTTFT := c.server[PartLoad] + c.server[PartPrefill]
			if p := got[PartOutsideTTFT]; math.Abs(p.MS-(ms(r.TTFT)-engineTTFT)) > 1e-6 || !strings.HasPrefix(p.Source, "derived:") {
				t.Errorf("outside TTFT %+v, want TTFT %.3f − %.3f", p, ms(r.TTFT), engineTTFT)
			}
			engineAll := engineTTFT + c.server[PartDecode]
			if p := got[PartOutsideEngine]; math.Abs(p.MS-(ms(r.E2E)-engineAll)) > 1e-6 {
				t.Errorf("outside engine %+v, want E2E %.3f − %.3f", p, ms(r.E2E), engineAll)
			}
			if p, ok := got[PartHeaders]; !ok || p.Source != "client" || p.MS != ms(r.TTFB) {
				t.Errorf("headers %+v, want client TTFB %v", p, r.TTFB)
			}
			if p, ok := got[PartConnect]; !ok || p.MS <= 0 || p.Source != "client (before start)" {
				t.Errorf("connect %+v on a new connection", p)
			}
			rec := r.Record()
			if len(rec.Breakdown) != len(r.Breakdown()) {
				t.Errorf("record breakdown %v", rec.Breakdown)
			}
		})
	}
	// A cloud model's final line has only total_duration: no engine
	// phases, so no outside_* parts either.
	srv := server(t, scripted("application/x-ndjson", fixtureSteps(t, filepath.Join(dir, "ollama_generate_cloud_deepseekv31_no_durations.ndjson"), OllamaGenerate, 0, false)))
	r := probeOnce(t, Options{URL: srv.URL, API: OllamaGenerate})
	got := partsByName(r.Breakdown())
	if _, ok := got[PartHeaders]; !ok || len(got) > 2 {
		t.Errorf("cloud model breakdown %v, want client parts only", r.Breakdown())
	}
}
