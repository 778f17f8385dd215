package promql

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"

	"github.com/ttftop/ttftop/telemetry"
)

func TestConfigDefaults(t *testing.T) {
	c := Config{URL: "http://p:9090"}.withDefaults()
	if c.Refresh != 5*time.Second || c.Window != 5*time.Minute || c.HistogramStep != 15*time.Second || c.Backfill != 5*time.Minute {
		t.Errorf("defaults %+v", c)
	}
	c = Config{URL: "http://p:9090", ScrapeInterval: time.Minute}.withDefaults()
	if c.HistogramStep != time.Minute {
		t.Errorf("step %s, want the scrape interval", c.HistogramStep)
	}
}

func TestConfigValidation(t *testing.T) {
	bad := []Config{
		{},
		{URL: "prom:9090"},
		{URL: "ftp://prom"},
		{URL: "http://prom:9090/api/v1/query"},
		{URL: "http://prom:9090/api/v1"},
		{URL: "http://engine:8000/metrics"},
		{URL: "http://p", HistogramStep: 500 * time.Millisecond},
		{URL: "http://p", GroupBy: []string{"le"}},
		{URL: "http://p", GroupBy: []string{"instance) or vector(1"}},
		{URL: "http://p", Quantile: 1.5},
		{URL: "http://p", Backfill: time.Second},
		{URL: "http://p", Refresh: -time.Second},
		{URL: "http://p", Queries: map[telemetry.Signal]string{telemetry.TTFT: ""}},
	}
	for i, c := range bad {
		if _, err := New(c, &recorder{}); err == nil {
			t.Errorf("case %d accepted: %+v", i, c)
		}
	}
	_, err := New(Config{URL: "http://user:hunter2@p:9090", Quantile: 2}, &recorder{})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("err = %v", err)
	}
	s, err := New(Config{URL: "http://user:hunter2@p:9090/prom/"}, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(s.id, "hunter2") {
		t.Errorf("source id %q shows the URL password", s.id)
	}
}

func TestQueriesExpand(t *testing.T) {
	e := newExpander(5*time.Minute, 30*time.Second, 0.95, []string{"instance", "namespace"})
	qs := newGenerator([]string{"namespace"}, []string{"pod", "instance"}, nil).generate(allFamilies())
	all := map[string]string{"fresh": strings.Join(qs.fresh, " or ")}
	for sig, q := range qs.hist {
		all["hist "+string(sig)] = strings.Join(q, " or ")
	}
	for sig, q := range qs.value {
		all["value "+string(sig)] = strings.Join(q, " or ")
	}
	for name, q := range all {
		x := e.expand(q)
		for _, left := range []string{"[W]", "[R]", "$Q", "$GROUP", "$_GROUP", "{by}"} {
			if strings.Contains(x, left) {
				t.Errorf("%s: %q left in %s", name, left, x)
			}
		}
		if strings.Count(x, "(") != strings.Count(x, ")") {
			t.Errorf("%s: unbalanced parentheses: %s", name, x)
		}
	}
	ttft := e.expand(all["hist ttft"])
	for _, want := range []string{
		`sum by (le, model_name, pod, instance, namespace) (vllm:time_to_first_token_seconds_bucket)`,
		`label_replace(sum by (model_name, pod, instance, namespace) (vllm:time_to_first_token_seconds_sum), "ttftop_part", "sum", "", "")`,
		`label_replace(count by (model_name, pod, instance, namespace) (vllm:time_to_first_token_seconds_count), "ttftop_part", "series", "", "")`,
		`"ttftop_engine", "sglang"`,
		`sum by (le, model, endpoint, pod, instance, namespace) (ttftop_probe_ttft_seconds_bucket)`,
		// Triton's millisecond histogram is scaled by the client.
		`label_replace(sum by (le, model, pod, instance, namespace) (nv_inference_first_response_histogram_ms_bucket), "ttftop_scale", "0.001", "", "")`,
	} {
		if !strings.Contains(ttft, want) {
			t.Errorf("TTFT query lacks %q:\n%s", want, ttft)
		}
	}
	itl := e.expand(all["hist itl"])
	if !strings.Contains(itl, `(sum by (le, model_name, pod, instance, namespace) (vllm:time_per_output_token_seconds_bucket) unless on(model_name, pod, instance, namespace) (group by (model_name, pod, instance, namespace) (vllm:inter_token_latency_seconds_count)))`) {
		t.Errorf("ITL lacks the old-name fallback: %s", itl)
	}
	if got := e.expand(all["value gpu_mem_bw"]); !strings.HasPrefix(got, `label_replace(avg by (Hostname, instance, pod, namespace, exported_pod, exported_namespace) (DCGM_FI_PROF_DRAM_ACTIVE <= 1 and (label_replace(topk by (UUID, GPU_I_ID, ttftop_host) (1, `) {
		t.Errorf("DCGM query %s", got)
	}
	if got := newExpander(time.Minute, 30*time.Second, 0.9, nil).expand(`histogram_quantile($Q, sum by (le, model_name$_GROUP) (rate(x[W])))`); got != `histogram_quantile(0.9, sum by (le, model_name) (rate(x[1m])))` {
		t.Errorf("custom query expands to %s", got)
	}
}

func TestDescribeError(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{context.DeadlineExceeded, "query timed out: no answer within 10s"},
		{&url.Error{Op: "Post", URL: "http://p", Err: context.DeadlineExceeded}, "query timed out: no answer within 10s"},
		{&v1.Error{Type: v1.ErrBadData, Msg: "parse error"}, "bad query (bad_data): parse error"},
		{&v1.Error{Type: v1.ErrServer, Msg: "server error: 503", Detail: `{"status":"error","errorType":"timeout","error":"query timed out"}`},
			"query timed out on the server (server error: 503): query timed out"},
		{&v1.Error{Type: v1.ErrServer, Msg: "server error: 502", Detail: "<!DOCTYPE html><html><body><h1>Bad   Gateway</h1></body></html>"},
			"server error: 502: HTML page instead of an API answer (a proxy?): Bad Gateway"},
		{fmt.Errorf("wrapped: %w", errors.New("token abc123 rejected")), "wrapped: token <secret> rejected"},
		{&v1.Error{Type: v1.ErrClient, Msg: "client error: 404", Detail: "404 page not found"},
			"client error: 404: 404 page not found (no Prometheus API there: is the URL the store's API root, with its prefix if any, e.g. Mimir's /prometheus?)"},
	}
	for _, c := range cases {
		if got := describeError(c.err, 10*time.Second, []string{"abc123"}); got != c.want {
			t.Errorf("describeError(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}

func TestStepPlan(t *testing.T) {
	at := func(s int64) time.Time { return time.Unix(s, 0) }
	step, delay, back, maxLag := 30*time.Second, 5*time.Second, 5*time.Minute, 5*time.Minute
	end := settledEnd(at(1000), time.Time{}, delay, maxLag, step)
	start, ok := stepPlan(end, time.Time{}, step, back)
	if !ok || !end.Equal(at(990)) || !start.Equal(at(690)) {
		t.Errorf("first plan %v..%v %v, want 690..990 (a baseline and 10 windows)", start.Unix(), end.Unix(), ok)
	}
	if _, ok := stepPlan(settledEnd(at(1010), time.Time{}, delay, maxLag, step), at(990), step, back); ok {
		t.Error("no window has ended since 990")
	}
	end = settledEnd(at(1030), time.Time{}, delay, maxLag, step)
	start, ok = stepPlan(end, at(990), step, back)
	if !ok || !start.Equal(at(1020)) || !end.Equal(at(1020)) {
		t.Errorf("next plan %v..%v", start.Unix(), end.Unix())
	}
	// After a long stall the catch-up is bounded by the backfill.
	start, _ = stepPlan(settledEnd(at(100000), time.Time{}, delay, maxLag, step), at(990), step, back)
	if !start.Equal(at(99990 - 300)) {
		t.Errorf("catch-up starts at %v, want %v", start.Unix(), 99990-300)
	}
	// A lagging store: no step after its newest sample, but no more than
	// maxLag behind.
	if end := settledEnd(at(1030), at(995), delay, maxLag, step); !end.Equal(at(990)) {
		t.Errorf("end %v with the newest sample at 995, want 990", end.Unix())
	}
	if end := settledEnd(at(1030), at(1029), delay, maxLag, step); !end.Equal(at(1020)) {
		t.Errorf("end %v with a fresh store, want 1020 (the delay rules)", end.Unix())
	}
	if end := settledEnd(at(2000), at(100), delay, maxLag, step); !end.Equal(at(1680)) {
		t.Errorf("end %v with the store 31m behind, want 1680 (max lag 5m)", end.Unix())
	}
}
