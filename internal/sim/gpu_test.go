package sim

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttftop/ttftop/bandwidth"
)

// kvHeavyModel has a 10 ms step at batch 1 and KV traffic that doubles
// the step once 16 sequences hold 500 tokens each.
func kvHeavyModel() ModelSpec {
	spec := stepModel("m", 10*time.Millisecond, 1e6)
	spec.KVBytesPerToken = spec.Params * 2 / (16 * 500)
	return spec
}

func dcgmScrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	fams := scrape(t, url)
	out := map[string]float64{}
	for name, f := range fams {
		m := f.Metric[0]
		out[name] = m.GetGauge().GetValue() + m.GetCounter().GetValue() // one of them is set
	}
	return out
}

// More concurrency → longer steps (TPOT) and a busier memory system
// (DRAM-active, MEM_COPY_UTIL), with MBU matching the bytes per TPOT.
func TestConcurrencyRaisesTPOTAndDRAMActive(t *testing.T) {
	spec := kvHeavyModel()
	s := startServer(t, Config{DCGMListen: "127.0.0.1:0", Models: []ModelSpec{spec}})
	prompt := strings.Repeat("abcd", 450) // ~450 tokens
	retry(t, func() error {
		// Light: one client, short answers with pauses (a probe-like load).
		light := time.Now()
		var lightTPOT time.Duration
		for time.Since(light) < 1200*time.Millisecond {
			r := streamRequest(t, context.Background(), s.URL(), "/v1/completions",
				`{"model":"m","stream":true,"max_tokens":8,"ignore_eos":true,"prompt":"`+prompt+`"}`)
			lightTPOT = r.tpot()
			time.Sleep(60 * time.Millisecond)
		}
		lightDCGM := dcgmScrape(t, s.DCGMURL())

		// Heavy: 16 concurrent long streams.
		var wg sync.WaitGroup
		results := make([]streamResult, 16)
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = streamRequest(t, context.Background(), s.URL(), "/v1/completions",
					`{"model":"m","stream":true,"max_tokens":120,"ignore_eos":true,"prompt":"`+prompt+`"}`)
			}()
		}
		eventually(t, 5*time.Second, "16 running", func() bool { return s.Stats()[0].Running == 16 })
		time.Sleep(1150 * time.Millisecond)
		heavyStats, heavyDCGM := s.Stats()[0], dcgmScrape(t, s.DCGMURL())
		wg.Wait()
		heavyTPOT := results[0].tpot()

		if heavyTPOT < lightTPOT*3/2 || !within(lightTPOT, 10600*time.Microsecond, 3*time.Millisecond) {
			return fmt.Errorf("TPOT light %v heavy %v: want ≈10.6 ms and ≈2×", lightTPOT, heavyTPOT)
		}
		if heavyDCGM["DCGM_FI_PROF_DRAM_ACTIVE"] < lightDCGM["DCGM_FI_PROF_DRAM_ACTIVE"]+0.1 ||
			heavyDCGM["DCGM_FI_DEV_MEM_COPY_UTIL"] <= lightDCGM["DCGM_FI_DEV_MEM_COPY_UTIL"] {
			return fmt.Errorf("DCGM light %v heavy %v", lightDCGM, heavyDCGM)
		}
		// A fully busy decode engine moves bytes at Efficiency × peak.
		if d := heavyDCGM["DCGM_FI_PROF_DRAM_ACTIVE"]; d < 0.4 || d > 0.55 {
			return fmt.Errorf("heavy DRAM active %v, want ≈ efficiency 0.5", d)
		}
		// MBU from the Databricks formula with the TPOT clients saw agrees
		// with the engine's own figure.
		kvTokens := 16 * (450 + 60)
		bytes := spec.Params*2 + float64(kvTokens)*spec.KVBytesPerToken
		mbu := bytes / heavyTPOT.Seconds() / 3.35e12
		if mbu < 0.4 || mbu > 0.6 || heavyStats.MBU < 0.4 || heavyStats.MBU > 0.55 {
			return fmt.Errorf("MBU from TPOT %.3f, engine %.3f; want ≈ 0.5", mbu, heavyStats.MBU)
		}
		return nil
	})
}

// DCGM series carry the fixture's labels plus the pod mapping.
func TestDCGMLabels(t *testing.T) {
	s := startServer(t, Config{DCGMListen: "127.0.0.1:0", Hostname: "node-1", Models: []ModelSpec{
		stepModel("a/b", time.Millisecond, 1e6),
		{Name: "big", Params: 70e9, GPU: "H100 SXM", NumGPUs: 4},
	}})
	resp, err := http.Get(s.DCGMURL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fams := parseMetrics(t, b)
	dram := fams["DCGM_FI_PROF_DRAM_ACTIVE"]
	if dram == nil || len(dram.Metric) != 5 {
		t.Fatalf("DRAM_ACTIVE series: %v", dram)
	}
	for _, name := range []string{"DCGM_FI_DEV_MEM_COPY_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_GPU_UTIL"} {
		if fams[name] == nil {
			t.Errorf("%s missing", name)
		}
	}
	gpus := s.GPUs()
	for i, m := range dram.Metric {
		l := map[string]string{}
		for _, lp := range m.Label {
			l[lp.GetName()] = lp.GetValue()
		}
		g := gpus[i]
		if l["gpu"] != itoa(i) || l["UUID"] != g.UUID || !strings.HasPrefix(g.UUID, "GPU-") || l["device"] != "nvidia"+itoa(i) ||
			l["Hostname"] != "node-1" || l["pod"] != PodName(g.Model) || l["namespace"] != PodNamespace || l["container"] != PodContainer {
			t.Errorf("gpu %d labels %v (info %+v)", i, l, g)
		}
	}
	if gpus[0].ModelName != "NVIDIA H100 80GB HBM3" || gpus[0].Pod != "a-b-0" || gpus[4].Model != "big" {
		t.Errorf("GPUs %+v", gpus)
	}
	if !strings.Contains(string(b), `DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-`) {
		t.Error("label order differs from dcgm-exporter")
	}
}

func itoa(i int) string { return strings.TrimSuffix(pyFloat(float64(i)), ".0") }

// The simulator's GPUs are bandwidth.Table's: every one it plays is in the
// table with the table's peak, and the name its dcgm-exporter reports maps
// back to the same entry, so ttftop's MBU of the simulator divides by
// the peak the simulator used.
func TestGPUsAreBandwidthTableEntries(t *testing.T) {
	names := GPUNames()
	if len(names) != len(simulatedGPUs()) {
		t.Fatalf("simulated GPUs %v, but the table only has %v of them", simulatedGPUs(), names)
	}
	for _, name := range names {
		g, err := LookupGPU(name)
		if err != nil {
			t.Fatal(err)
		}
		b, ok := bandwidth.Lookup(g.DCGMName)
		if !ok || b.Name != g.Name || b.Peak != g.PeakBW {
			t.Errorf("%s reports itself as %q, which the bandwidth table reads as %+v (ok %v)", g.Name, g.DCGMName, b, ok)
		}
	}
	// Names as GPUs report them, and the short A100 name, find the entry.
	for in, want := range map[string]string{"A100 80GB": "A100 80GB SXM", "NVIDIA H100 80GB HBM3": "H100 SXM", "h100-sxm": "H100 SXM"} {
		if g, err := LookupGPU(in); err != nil || g.Name != want {
			t.Errorf("LookupGPU(%q) = %q, %v; want %q", in, g.Name, err, want)
		}
	}
}

// DCGM power follows activity: an idle GPU draws exactly its idle power
// (H100 SXM: 70 W of 700 W, so 30 + 45×70/700 = 34.5 → 34 or 35 °C) and
// its energy counter grows by idle power × elapsed time; under load the
// draw rises and the counter's increase over an interval is the draw
// integrated over it (idle + weighted busy and DRAM-active time).
func TestDCGMPowerEnergyTemperature(t *testing.T) {
	idle := startServer(t, Config{DCGMListen: "127.0.0.1:0", Models: []ModelSpec{stepModel("m", 10*time.Millisecond, 1e6)}})
	g, err := LookupGPU(idle.cfg.Models[0].GPU)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	a := dcgmScrape(t, idle.DCGMURL())
	time.Sleep(300 * time.Millisecond) // real time must pass for the counter to move
	b := dcgmScrape(t, idle.DCGMURL())
	dt := time.Since(t0).Seconds()
	if a["DCGM_FI_DEV_POWER_USAGE"] != g.IdleWatts || a["DCGM_FI_DEV_POWER_MGMT_LIMIT"] != g.TDPWatts {
		t.Fatalf("idle power %v limit %v, want %v %v", a["DCGM_FI_DEV_POWER_USAGE"], a["DCGM_FI_DEV_POWER_MGMT_LIMIT"], g.IdleWatts, g.TDPWatts)
	}
	if temp := a["DCGM_FI_DEV_GPU_TEMP"]; math.Abs(temp-(30+45*g.IdleWatts/g.TDPWatts)) > 0.5 {
		t.Fatalf("idle temperature %v", temp)
	}
	de := (b["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"] - a["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"]) / 1000
	// The counter moved by idle × (time between the two reads) ≤ idle × dt.
	if de <= 0 || de > g.IdleWatts*dt+0.01 || de < g.IdleWatts*0.25 {
		t.Fatalf("idle energy %.3f J over ≤ %.3f s at %v W", de, dt, g.IdleWatts)
	}
	if a["DCGM_FI_DEV_FB_USED"]+a["DCGM_FI_DEV_FB_FREE"] != float64(g.MemMiB) {
		t.Fatalf("used+free %v, want %d MiB", a["DCGM_FI_DEV_FB_USED"]+a["DCGM_FI_DEV_FB_FREE"], g.MemMiB)
	}

	// Under load: the counter's mean power over 1.5 s agrees with the
	// draw sampled every 100 ms over the same span.
	busy := startServer(t, Config{DCGMListen: "127.0.0.1:0", Load: 8, Models: []ModelSpec{kvHeavyModel()}})
	retry(t, func() error {
		time.Sleep(1100 * time.Millisecond) // fill the 1 s activity window
		start, first := time.Now(), dcgmScrape(t, busy.DCGMURL())
		var sum float64
		n := 0
		for time.Since(start) < 1500*time.Millisecond {
			time.Sleep(100 * time.Millisecond) // sampling period, not synchronisation
			sum += dcgmScrape(t, busy.DCGMURL())["DCGM_FI_DEV_POWER_USAGE"]
			n++
		}
		last, dt := dcgmScrape(t, busy.DCGMURL()), time.Since(start).Seconds()
		mean := sum / float64(n)
		counter := (last["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"] - first["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"]) / 1000 / dt
		t.Logf("loaded: sampled mean %.1f W, counter %.1f W (idle %v, limit %v)", mean, counter, g.IdleWatts, g.TDPWatts)
		if mean <= g.IdleWatts*1.2 || mean > g.TDPWatts {
			return fmt.Errorf("loaded power %.1f W, want well above idle %v and ≤ %v", mean, g.IdleWatts, g.TDPWatts)
		}
		if math.Abs(counter-mean) > 0.15*mean {
			return fmt.Errorf("energy counter %.1f W vs sampled power %.1f W", counter, mean)
		}
		return nil
	})
}
