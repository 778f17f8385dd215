package gpu

import (
	"context"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttftop/ttftop/internal/fixtures"
	"github.com/ttftop/ttftop/telemetry"
)

func devices(obs []telemetry.Observation) map[string]*telemetry.GPUDevice {
	out := map[string]*telemetry.GPUDevice{}
	for _, o := range obs {
		if o.Kind == telemetry.KindGPU {
			out[o.GPU.Key] = o.GPU
		}
	}
	return out
}

func is(p *float64, want float64) bool {
	return p != nil && math.Abs(*p-want) <= 1e-9*math.Max(1, math.Abs(want))
}

// The per-GPU figures of the two real dcgm-exporter captures, each
// expected value read off the file by hand (grep), not by the parser:
//
//	RTX 4000 Ada (k8s): FB_USED 1 + FB_FREE 20015 + FB_RESERVED 457 =
//	20473 MiB total; POWER_USAGE 40.979 W; GPU_TEMP 48; GPU_UTIL 0;
//	DRAM_ACTIVE 0.003074; TOTAL_ENERGY_CONSUMPTION 455497156 mJ.
//	T4 424773df46e0: FB_USED 0 + FB_FREE 15109 (no RESERVED: driver 460)
//	= 15109 MiB; 8.969 W; 25 °C; energy 128996013 mJ.
//	T4 551bdf382151: FB_TOTAL 15109 (wins over used+free+reserved);
//	power limit 70 W; no power draw.
func TestDCGMCapturesPerGPU(t *testing.T) {
	k8s := fixtures.Read(t, "metrics", "dcgm-exporter-k8s-rtx4000ada-pod-labels.txt")
	spliced := fixtures.Read(t, "metrics", "dcgm-exporter-metrics.txt")
	for _, tc := range []struct {
		name, body string
		check      func(t *testing.T, devs map[string]*telemetry.GPUDevice, obs []telemetry.Observation)
	}{
		{"rtx4000ada", k8s, func(t *testing.T, devs map[string]*telemetry.GPUDevice, obs []telemetry.Observation) {
			d := devs["lke529760-766837-0a634ab30000/GPU-a8394b51-c086-568a-9f1a-c1e1c934c44c"]
			if d == nil || len(devs) != 1 {
				t.Fatalf("devices %+v", devs)
			}
			if d.Name != "NVIDIA RTX 4000 Ada Generation" || d.Index != "0" || !is(d.MemUsedBytes, 1*mib) ||
				!is(d.MemTotalBytes, 20473*mib) || !is(d.PowerW, 40.979) || !is(d.TemperatureCelsius, 48) ||
				!is(d.UtilRatio, 0) || !is(d.DRAMActiveRatio, 0.003074) || !is(d.EnergyJ, 455497.156) ||
				d.PowerLimitW != nil || len(d.Endpoints) != 1 || d.Endpoints[0] != "cuda" {
				t.Fatalf("device %+v", d)
			}
			// First scrape: no counter mean yet, so the endpoint's power is
			// the sampled draw.
			if o := get(t, obs, "cuda", telemetry.GPUPower); o.Kind != telemetry.KindSample || o.Value != 40.979 {
				t.Fatalf("power %+v", o)
			}
		}},
		{"spliced-t4", spliced, func(t *testing.T, devs map[string]*telemetry.GPUDevice, _ []telemetry.Observation) {
			a := devs["424773df46e0/GPU-20c56d28-0da5-6d26-a36a-e7af1ce2586e"]
			b := devs["551bdf382151/GPU-9ef1b6d0-3643-5dd7-b823-c0ec20dcf2d5"]
			if a == nil || b == nil || len(devs) != 3 {
				t.Fatalf("devices %+v", devs)
			}
			if !is(a.MemTotalBytes, 15109*mib) || !is(a.PowerW, 8.969) || !is(a.TemperatureCelsius, 25) ||
				!is(a.EnergyJ, 128996.013) || !is(a.MemBusyRatio, 0) || a.DRAMActiveRatio != nil {
				t.Fatalf("T4 a %+v", a)
			}
			if !is(b.MemTotalBytes, 15109*mib) || !is(b.PowerLimitW, 70) || b.PowerW != nil || b.MemUsedBytes != nil {
				t.Fatalf("T4 b %+v", b)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body, mu := tc.body, &sync.Mutex{}
			srv := serve(t, &body, mu)
			c := &collector{}
			d := New(Config{URL: srv.URL, Targets: []Target{{Endpoint: "cuda", Pod: "cuda-75454ffb9f-8ljq7"}}}, c)
			if err := d.ScrapeOnce(context.Background()); err != nil {
				t.Fatal(err)
			}
			obs := c.Take()
			tc.check(t, devices(obs), obs)
		})
	}
}

func energyPage(mJ ...float64) string {
	s := "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n"
	for i, e := range mJ {
		s += `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="` + strconv.Itoa(i) + `",UUID="GPU-` + strconv.Itoa(i) + `",Hostname="h"} ` +
			strconv.FormatFloat(e, 'f', -1, 64) + "\n"
	}
	s += "# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n"
	for i := range mJ {
		s += `DCGM_FI_DEV_POWER_USAGE{gpu="` + strconv.Itoa(i) + `",UUID="GPU-` + strconv.Itoa(i) + `",Hostname="h"} 99` + "\n"
	}
	return s
}

// The endpoint's power is the energy counters' increase ÷ elapsed time,
// summed over its GPUs; an unchanged counter (exporter not refreshed)
// holds the last mean; a counter that goes down starts over from the
// sampled draw.
func TestDCGMPowerFromEnergyCounter(t *testing.T) {
	body, mu := energyPage(1_000_000, 5_000_000), &sync.Mutex{}
	srv := serve(t, &body, mu)
	c := &collector{}
	now := time.Unix(1000, 0)
	d := New(Config{URL: srv.URL, Targets: []Target{{Endpoint: "e"}}, Now: func() time.Time { return now }}, c)
	power := func(mJ ...float64) telemetry.Observation {
		t.Helper()
		mu.Lock()
		body = energyPage(mJ...)
		mu.Unlock()
		if err := d.ScrapeOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		return get(t, c.Take(), "e", telemetry.GPUPower)
	}
	if o := power(1_000_000, 5_000_000); o.Value != 99+99 {
		t.Fatalf("first scrape: sampled draw, got %+v", o)
	}
	now = now.Add(2 * time.Second)
	// GPU 0: +600 J in 2 s = 300 W; GPU 1: +200 J in 2 s = 100 W.
	if o := power(1_600_000, 5_200_000); math.Abs(o.Value-400) > 1e-9 || o.Approx {
		t.Fatalf("counter power %+v, want 400 W", o)
	}
	now = now.Add(time.Second)
	if o := power(1_600_000, 5_200_000); math.Abs(o.Value-400) > 1e-9 {
		t.Fatalf("unchanged counter must hold 400 W, got %+v", o)
	}
	now = now.Add(time.Second)
	// GPU 0 moves again: +300 J since its last change 2 s ago = 150 W;
	// GPU 1 reset (driver reload): its sampled 99 W.
	if o := power(1_900_000, 10); math.Abs(o.Value-(150+99)) > 1e-9 {
		t.Fatalf("after a reset %+v, want 249 W", o)
	}
}

// A join that fails says why: the hosts the endpoints are on.
func TestUnmappedSaysWhy(t *testing.T) {
	body, mu := twoGPUs, &sync.Mutex{}
	srv := serve(t, &body, mu)
	c := &collector{}
	d := New(Config{URL: srv.URL, Targets: []Target{{Endpoint: "m", Host: "10.0.0.9"}}}, c)
	if err := d.ScrapeOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := statusOf(t, c.Take())
	if len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], "match no endpoint host: 10.0.0.9") {
		t.Fatalf("warnings %q", st.Warnings)
	}
}

// A guessed join (IfMatched) that matches none of this exporter's GPUs
// reports nothing for its endpoint, not "no data".
func TestIfMatchedTargetIsSilentWithoutGPUs(t *testing.T) {
	body, mu := twoGPUs, &sync.Mutex{}
	srv := serve(t, &body, mu)
	c := &collector{}
	d := New(Config{URL: srv.URL, Targets: []Target{{Endpoint: "here"}, {Endpoint: "elsewhere", Host: "10.0.0.9", IfMatched: true}}}, c)
	if err := d.ScrapeOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, o := range c.Take() {
		if o.Endpoint == "elsewhere" {
			t.Fatalf("observation for an endpoint this exporter does not serve: %+v", o)
		}
	}
}

// nvidia-smi in quick mode: the models found after start (MoreTargets)
// get the local GPUs; each GPU's device state names them.
func TestSMIMoreTargets(t *testing.T) {
	fakeSMI(t, loopScript)
	c := &collector{}
	s := NewSMI(SMIConfig{Host: "node", Interval: 20 * time.Millisecond,
		MoreTargets: func() []Target { return []Target{{Endpoint: "local/m", IfMatched: true}} }}, c)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, o := range c.Take() {
			if o.Kind == telemetry.KindGPU && len(o.GPU.Endpoints) == 1 && o.GPU.Endpoints[0] == "local/m" {
				return
			}
			if strings.HasPrefix(o.Endpoint, "gpu:") {
				t.Fatalf("phantom row %+v", o)
			}
		}
		time.Sleep(10 * time.Millisecond) // polling the collector, with a deadline
	}
	t.Fatal("local GPUs not joined to the model found after start")
}
