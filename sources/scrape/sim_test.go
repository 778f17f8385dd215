package scrape

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/tokentop/tokentop/bandwidth"
	"github.com/tokentop/tokentop/internal/sim"
	"github.com/tokentop/tokentop/telemetry"
)

// simModels are two small models so the test machine keeps up.
func simModels() []sim.ModelSpec {
	return []sim.ModelSpec{
		{Name: "org/small-a", Params: 1.24e9, DtypeBytes: 2, KVBytesPerToken: 32768, GPU: "L4", MaxBatch: 8, MeanOutputTokens: 16},
		{Name: "org/small-b", Params: 3.21e9, DtypeBytes: 2, KVBytesPerToken: 114688, GPU: "H100 SXM", MaxBatch: 8, MeanOutputTokens: 16},
	}
}

func startSim(t *testing.T, format string) *sim.Server {
	t.Helper()
	s, err := sim.New(sim.Config{Listen: "127.0.0.1:0", DCGMListen: "127.0.0.1:0", Seed: 1, Load: 2,
		Models: simModels(), MetricsFormat: format})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// scrapeSim scrapes a running simulator twice, 800 ms apart.
func scrapeSim(t *testing.T, cfg Config) []telemetry.Observation {
	t.Helper()
	c := &collector{}
	s := New(cfg, c)
	if err := s.ScrapeOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.Take()
	time.Sleep(800 * time.Millisecond)
	if err := s.ScrapeOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c.Take()
}

func TestScrapeSimulator(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a simulator for a second")
	}
	for _, format := range []string{sim.FormatVLLM, sim.FormatSGLang} {
		t.Run(format, func(t *testing.T) {
			srv := startSim(t, format)
			mbu := map[string]bandwidth.Model{}
			for _, m := range simModels() {
				g, err := sim.LookupGPU(m.GPU)
				if err != nil {
					t.Fatal(err)
				}
				mbu[m.Name] = bandwidth.Model{Parameters: m.Params, BytesPerParameter: m.DtypeBytes,
					KVBytesPerToken: m.KVBytesPerToken, GPU: g.DCGMName}
				if b, ok := bandwidth.Lookup(g.DCGMName); !ok || b.Peak != g.PeakBW {
					t.Errorf("peak of %q: %+v, simulator %v", g.DCGMName, b, g.PeakBW)
				}
			}
			obs := scrapeSim(t, Config{URL: srv.URL(), MBU: mbu})
			host := srv.URL()[len("http://"):]
			want := map[string]telemetry.Engine{sim.FormatVLLM: telemetry.EngineVLLM, sim.FormatSGLang: telemetry.EngineSGLang}[format]
			for _, m := range simModels() {
				ep := host + "/" + m.Name
				if info := one(t, obs, telemetry.KindEndpoint, ep, "").Info; info.Engine != want {
					t.Fatalf("engine %q", info.Engine)
				}
				one(t, obs, telemetry.KindHistogram, ep, telemetry.E2E) // requests may not finish within the interval
				for _, sig := range []telemetry.Signal{telemetry.ITL, telemetry.TTFT} {
					h := one(t, obs, telemetry.KindHistogram, ep, sig)
					if n := h.Buckets[len(h.Buckets)-1].Count; n <= 0 || h.Value <= 0 {
						t.Errorf("%s %s: no traffic in the interval (%v, %v)", ep, sig, n, h.Value)
					}
				}
				if o := one(t, obs, telemetry.KindSample, ep, telemetry.OutputTPS); o.Value <= 0 {
					t.Errorf("%s tok/s %v", ep, o.Value)
				}
				if o := one(t, obs, telemetry.KindSample, ep, telemetry.KVCache); o.Value < 0 || o.Value > 1 {
					t.Errorf("%s KV %v", ep, o.Value)
				}
				one(t, obs, telemetry.KindSample, ep, telemetry.Running)
				if mb := find(obs, telemetry.KindSample, ep, telemetry.MBU); len(mb) == 1 {
					if v := mb[0].Value; v <= 0 || v > 1.2 || math.IsNaN(v) || !mb[0].Approx {
						t.Errorf("%s MBU %v", ep, v)
					}
					t.Logf("%s %s MBU estimate %.3f", format, ep, mb[0].Value)
				} else if format == sim.FormatVLLM {
					t.Errorf("%s: no MBU estimate", ep)
				}
			}
			if st := status(t, obs); st.State != telemetry.Live || len(st.Warnings) != 0 {
				t.Errorf("status %+v", st)
			}
		})
	}
}
