package scrape

import (
	"strings"
	"testing"

	"github.com/ttftop/ttftop/telemetry"
)

// poolPage is an llm-d router's page serving two models from one
// InferencePool, table-generated from its metrics docs: request counters
// per model, the pool gauges labelled by the pool's name only; with old
// set, the inference_pool_* names it still writes beside them (here with
// other values, so a mix-up shows).
func poolPage(old bool) string {
	page := `# TYPE llm_d_epp_request_total counter
llm_d_epp_request_total{model_name="m",target_model_name="m"} 5
llm_d_epp_request_total{model_name="n",target_model_name="n"} 7
# TYPE llm_d_epp_ready_endpoints gauge
llm_d_epp_ready_endpoints{name="pool-a"} 3
# TYPE llm_d_epp_average_queue_size gauge
llm_d_epp_average_queue_size{name="pool-a"} 1.5
# TYPE llm_d_epp_average_kv_cache_utilization gauge
llm_d_epp_average_kv_cache_utilization{name="pool-a"} 0.4
`
	if old {
		page += `# TYPE inference_pool_ready_pods gauge
inference_pool_ready_pods{name="pool-a"} 9
# TYPE inference_pool_average_queue_size gauge
inference_pool_average_queue_size{name="pool-a"} 9
# TYPE inference_pool_average_kv_cache_utilization gauge
inference_pool_average_kv_cache_utilization{name="pool-a"} 0.9
`
	}
	return page
}

// The pool's gauges name no model: each model row of the router carries
// them (no row of their own), the current names winning over the old
// ones, which are read where they are the only ones.
func TestRouterPoolGauges(t *testing.T) {
	check := func(page string, ready, queue, kv float64) {
		t.Helper()
		tg := newTarget(t, page)
		_, obs := scrapeTwice(t, tg, Config{})
		eps := endpoints(obs)
		if len(eps) != 2 {
			t.Fatalf("endpoints %v, want the two models' only", eps)
		}
		for _, ep := range eps {
			checkGauge(t, obs, ep, telemetry.RouterPoolReady, ready)
			checkGauge(t, obs, ep, telemetry.RouterPoolQueue, queue)
			checkGauge(t, obs, ep, telemetry.RouterPoolKV, kv)
		}
	}
	check(poolPage(false), 3, 1.5, 0.4)
	check(poolPage(true), 3, 1.5, 0.4)
	onlyOld := poolPage(true)
	onlyOld = onlyOld[:strings.Index(onlyOld, "# TYPE llm_d_epp_ready_endpoints")] + onlyOld[strings.Index(onlyOld, "# TYPE inference_pool_ready_pods"):]
	check(onlyOld, 9, 9, 0.9)
}
