package config

import "testing"

// The example config loads, and every URL it writes resolves to the page
// meant: the dcgm entry names its /metrics page, which must not become
// /metrics/metrics.
func TestExampleConfigResolvesURLs(t *testing.T) {
	c, err := Load("../../examples/ttftop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ep := c.Endpoints[0]
	sc, ok := ep.Scrape()
	if !ok {
		t.Fatal("the example endpoint is not scraped")
	}
	sc = sc.WithDefaults()
	if got := sc.URL + sc.Path; got != "http://llm-1.internal:8000/metrics" {
		t.Errorf("endpoint metrics at %s", got)
	}
	if len(c.DCGM) != 1 {
		t.Fatalf("dcgm entries %+v", c.DCGM)
	}
	d := c.DCGM[0].Config(nil).WithDefaults()
	if got := d.URL + d.Path; got != "http://llm-1.internal:9400/metrics" {
		t.Errorf("dcgm metrics at %s, want http://llm-1.internal:9400/metrics", got)
	}
	o, err := ep.ProbeOptions()
	if err != nil {
		t.Fatal(err)
	}
	if o.URL != "http://llm-1.internal:8000" || o.Name != "llama-prod/meta-llama/Llama-3.1-8B-Instruct" {
		t.Errorf("probe %s named %s", o.URL, o.Name)
	}
	p := c.Prometheus[0].Config()
	if p.URL != "http://prometheus.monitoring:9090" {
		t.Errorf("prometheus at %s", p.URL)
	}
	// The fleet's model descriptions parse as an endpoint's weights do.
	if m, ok := p.MBU["Qwen/Qwen2.5-14B-Instruct"]; !ok || m.Parameters != 14.7e9 || m.BytesPerParameter != 2 || m.GPU != "NVIDIA H100 80GB HBM3" {
		t.Errorf("prometheus MBU models %+v", p.MBU)
	}
	if m := sc.MBU["meta-llama/Llama-3.1-8B-Instruct"]; m.TensorParallel != 2 || m.BytesPerParameter != 2 {
		t.Errorf("endpoint MBU models %+v", sc.MBU)
	}
	// In the fleet, the endpoint's model is described by its weights too.
	fleet := c.PromQL(c.Prometheus[0])
	if len(fleet.MBU) != 2 || fleet.MBU["meta-llama/Llama-3.1-8B-Instruct"] != sc.MBU["meta-llama/Llama-3.1-8B-Instruct"] ||
		fleet.MBU["Qwen/Qwen2.5-14B-Instruct"] != p.MBU["Qwen/Qwen2.5-14B-Instruct"] {
		t.Errorf("fleet MBU models %+v", fleet.MBU)
	}
	if w := c.Notify.Webhook; w == nil || w.URL != "http://alertmanager.monitoring:9093/api/v2/alerts" {
		t.Errorf("webhook %+v", w)
	}
	objs, err := Objectives(c.SLOs)
	if err != nil || len(objs) != len(c.SLOs) {
		t.Errorf("objectives %d of %d: %v", len(objs), len(c.SLOs), err)
	}
}
