//go:build integration

package promql

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ttftop/ttftop/engines"
	"github.com/ttftop/ttftop/internal/promtest"
	"github.com/ttftop/ttftop/telemetry"
)

// The failure matcher selects the same series on real Prometheus and
// VictoriaMetrics: each of LMDeploy's failure values, neither their
// look-alikes (the dot replaced) nor the normal finish.
func TestFailureMatcherOnBothStores(t *testing.T) {
	// Parallel: two stores scraping one tiny page load the machine little;
	// serial, it held the package's other integration tests back 30 s.
	t.Parallel()
	if promtest.Binary() == "" || promtest.VictoriaMetricsBinary() == "" {
		t.Skip("prometheus or victoria-metrics binary not found: " + promtest.InstallHint)
	}
	spec, _ := engines.Lookup(telemetry.EngineLMDeploy)
	ec := spec.Errors[0]
	var page strings.Builder
	fmt.Fprintf(&page, "# TYPE %s counter\n", ec.Failed)
	series := func(v string) { fmt.Fprintf(&page, "%s{%s=%q} 1\n", ec.Failed, ec.FailedLabel, v) }
	for _, v := range ec.FailedValues {
		series(v)
		series(strings.ReplaceAll(v, ".", "X"))
	}
	series("ResponseType.FINISH")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if _, err := w.Write([]byte(page.String())); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	}))
	t.Cleanup(srv.Close)
	target := promtest.Target{Job: "lmdeploy", URL: srv.URL + "/metrics"}
	for name, start := range map[string]func(testing.TB, ...promtest.Target) *promtest.Server{
		// What the matcher selects, not when: VictoriaMetrics without its
		// 30 s latency offset, so that its series show within seconds.
		"prometheus": promtest.Start, "victoria": promtest.StartVictoriaMetricsUnlagged,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store := start(t, target)
			store.WaitForSeries(t, ec.Failed, 2*len(ec.FailedValues)+1, 90*time.Second)
			var got []string
			for _, s := range store.Query(t, selector(ec.Failed, nil, failedMatcher(ec)), time.Time{}) {
				got = append(got, s.Metric[ec.FailedLabel])
			}
			sort.Strings(got)
			want := append([]string(nil), ec.FailedValues...)
			sort.Strings(want)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("matched %v, want %v", got, want)
			}
		})
	}
}
