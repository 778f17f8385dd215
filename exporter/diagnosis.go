package exporter

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ttftop/ttftop/diagnosis"
)

// DiagnosisSource is what the diagnosis collector reads at scrape time;
// *diagnosis.Diagnoser satisfies it.
type DiagnosisSource interface {
	Latest() map[string]diagnosis.Diagnosis
}

// diagnosisCollector exports each diagnosed endpoint's causes as a
// one-hot set over the whole vocabulary, so a Grafana panel can show the
// named cause and a query for one cause never meets a missing series.
// Evidence stays out of labels (unbounded values): it is in the JSON
// read-outs.
type diagnosisCollector struct {
	src   DiagnosisSource
	cause *prometheus.Desc
	since *prometheus.Desc
}

func newDiagnosisCollector(src DiagnosisSource) *diagnosisCollector {
	return &diagnosisCollector{
		src: src,
		cause: prometheus.NewDesc("ttftop_diagnosis_cause",
			"1 for each cause the diagnosis names on the endpoint (none when healthy, unclear when the signals allow no call), 0 for the other causes of the vocabulary (docs/diagnosis.md).",
			[]string{"endpoint", "cause"}, nil),
		since: prometheus.NewDesc("ttftop_diagnosis_cause_since_seconds",
			"Unix time since which a named cause has been named without a break.",
			[]string{"endpoint", "cause"}, nil),
	}
}

// Describe sends the fixed descriptors.
func (c *diagnosisCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.cause
	ch <- c.since
}

// Collect exports the latest diagnosis of every endpoint.
func (c *diagnosisCollector) Collect(ch chan<- prometheus.Metric) {
	if c.src == nil {
		return
	}
	for ep, d := range c.src.Latest() {
		ep = cleanLabel(ep)
		named := map[diagnosis.Cause]bool{}
		for _, f := range d.Causes {
			named[f.Cause] = true
			if !f.Since.IsZero() {
				ch <- prometheus.MustNewConstMetric(c.since, prometheus.GaugeValue,
					float64(f.Since.UnixNano())/1e9, ep, string(f.Cause))
			}
		}
		for _, cause := range diagnosis.Vocabulary {
			v := 0.0
			if named[cause] {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(c.cause, prometheus.GaugeValue, v, ep, string(cause))
		}
	}
}
