package gpu

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ttftop/ttftop/sanitize"
	"github.com/ttftop/ttftop/sources/httpclient"
	"github.com/ttftop/ttftop/sources/internal/loop"
	"github.com/ttftop/ttftop/sources/scrape/expo"
	"github.com/ttftop/ttftop/telemetry"
)

// DCGM field names read from dcgm-exporter.
const (
	DRAMActive  = "DCGM_FI_PROF_DRAM_ACTIVE"             // ratio 0–1
	MemCopyUtil = "DCGM_FI_DEV_MEM_COPY_UTIL"            // percent 0–100, busy time
	FBUsed      = "DCGM_FI_DEV_FB_USED"                  // MiB
	FBFree      = "DCGM_FI_DEV_FB_FREE"                  // MiB
	FBReserved  = "DCGM_FI_DEV_FB_RESERVED"              // MiB
	FBTotal     = "DCGM_FI_DEV_FB_TOTAL"                 // MiB (not in the default field list)
	GPUUtil     = "DCGM_FI_DEV_GPU_UTIL"                 // percent 0–100 of time a kernel ran
	Power       = "DCGM_FI_DEV_POWER_USAGE"              // W
	PowerLimit  = "DCGM_FI_DEV_POWER_MGMT_LIMIT"         // W
	Energy      = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" // mJ since the driver loaded (counter)
	GPUTemp     = "DCGM_FI_DEV_GPU_TEMP"                 // °C
)

// dcgmFields are the fields read, in the order the status lists them.
func dcgmFields() []string {
	return []string{DRAMActive, MemCopyUtil, FBUsed, FBFree, FBReserved, FBTotal, GPUUtil, Power, PowerLimit, Energy, GPUTemp}
}

// dcgmSentinel: DCGM reports unsupported fields as int64 values near
// 2^63; values at or above it mean "no value".
const dcgmSentinel = float64(0x7ffffffffffffff0)

// DCGM scrapes one dcgm-exporter. Create it with New.
type DCGM struct {
	cfg        Config
	sink       telemetry.Sink
	client     *httpclient.Client
	initErr    error
	metricsURL string
	source     string
	host       string

	mu        sync.Mutex
	failures  int
	lastOK    time.Time
	endpoints []string
	energy    energyMeter
}

// New returns a dcgm-exporter scraper reporting to sink.
func New(cfg Config, sink telemetry.Sink) *DCGM {
	cfg = cfg.WithDefaults()
	base := strings.TrimRight(cfg.URL, "/")
	d := &DCGM{cfg: cfg, sink: sink, metricsURL: base + "/" + strings.TrimLeft(cfg.Path, "/")}
	d.source = telemetry.SourceDCGM.At(httpclient.Redact(d.metricsURL))
	u, err := url.Parse(base)
	switch {
	case err != nil:
		d.initErr = fmt.Errorf("dcgm URL: %w", err)
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		d.initErr = fmt.Errorf("dcgm URL %s: want http(s)://host:port", httpclient.Redact(base))
	default:
		d.host = sanitize.Text(u.Host)
		if cfg.Via != "" {
			d.host = sanitize.Text(cfg.Via + " " + u.Host)
			d.source = telemetry.SourceDCGM.At(d.host)
		}
		d.client, d.initErr = httpclient.New(cfg.HTTP)
	}
	return d
}

// Run scrapes every Interval ± Jitter until ctx is done and returns
// ctx.Err().
func (d *DCGM) Run(ctx context.Context) error {
	return loop.Run(ctx, d.cfg.Interval, d.cfg.Jitter, d.ScrapeOnce)
}

// ScrapeOnce scrapes once and emits the readings.
func (d *DCGM) ScrapeOnce(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	at := d.cfg.Now()
	start := time.Now()
	if d.initErr != nil {
		d.fail(at, 0, d.initErr)
		return d.initErr
	}
	resp, err := d.client.Get(ctx, d.metricsURL, expo.AcceptText)
	if err != nil && ctx.Err() != nil {
		return ctx.Err() // shutting down: a scrape cut short is no failure of the exporter
	}
	if err != nil {
		d.fail(at, time.Since(start), err)
		return err
	}
	om, _, err := expo.FormatOf(resp.Header)
	if err != nil {
		d.fail(at, time.Since(start), err)
		return err
	}
	fields := dcgmFields()
	page, err := expo.Parse(resp.Body, expo.Options{OpenMetrics: om, Want: func(n string) bool {
		return slices.Contains(fields, n)
	}})
	if err != nil {
		d.fail(at, time.Since(start), err)
		return err
	}
	readings, warnings := dcgmReadings(page)
	d.energy.update(readings, at)
	targets := d.cfg.Targets
	if d.cfg.MoreTargets != nil {
		targets = append(slices.Clip(targets), d.cfg.MoreTargets()...)
	}
	groups, unmapped := assign(readings, targets, d.cfg.EmitUnmapped)
	base := telemetry.Observation{At: at, Source: d.source, Interval: d.cfg.Interval}
	d.endpoints = d.endpoints[:0]
	for _, g := range groups {
		d.endpoints = append(d.endpoints, g.endpoint)
	}
	for _, o := range observations(readings, groups, base) {
		d.sink.Observe(o)
	}
	d.failures, d.lastOK = 0, at
	st := d.status(time.Since(start))
	st.State = telemetry.Live
	if len(readings) == 0 {
		st.State = telemetry.NoData
	}
	st.Recognised = recognised(page)
	st.Warnings = append(st.Warnings, warnings...)
	if len(unmapped) > 0 && !d.cfg.EmitUnmapped {
		st.Warnings = append(st.Warnings, unmappedWarning(unmapped, targets))
	}
	st.Description = describe(readings, groups)
	d.sink.Observe(telemetry.Observation{Kind: telemetry.KindSource, At: at, Source: d.source, Interval: d.cfg.Interval, Status: &st})
	return nil
}

func (d *DCGM) status(latency time.Duration) telemetry.SourceStatus {
	st := telemetry.SourceStatus{Name: "dcgm " + d.host, Kind: telemetry.SourceDCGM, URL: strings.TrimPrefix(d.source, "dcgm:"),
		LastOK: d.lastOK, Failures: d.failures, Latency: latency}
	if d.client != nil && d.client.Insecure() {
		st.Warnings = append(st.Warnings, "TLS NOT VERIFIED")
	}
	return st
}

func (d *DCGM) fail(at time.Time, latency time.Duration, err error) {
	d.failures++
	for _, ep := range d.endpoints {
		d.sink.Observe(telemetry.Observation{Kind: telemetry.KindFailure, At: at, Endpoint: ep, Source: d.source,
			Interval: d.cfg.Interval, Err: err.Error()})
	}
	st := d.status(latency)
	st.State, st.Err = telemetry.Error, err.Error()
	d.sink.Observe(telemetry.Observation{Kind: telemetry.KindSource, At: at, Source: d.source, Interval: d.cfg.Interval, Status: &st})
}

// dcgmReadings collects per-GPU values from a dcgm-exporter page.
func dcgmReadings(page *expo.Page) ([]*reading, []string) {
	byKey := map[string]*reading{}
	var order []*reading
	var warnings []string
	read := func(name string, set func(r *reading, v float64)) {
		f := page.Families[name]
		if f == nil {
			return
		}
		if f.Err != nil {
			warnings = append(warnings, f.Err.Error())
			return
		}
		for _, s := range f.Series {
			key, r := gpuKey(s)
			if key == "" {
				continue // label-less series: not a GPU
			}
			if prev := byKey[key]; prev == nil {
				byKey[key] = r
				order = append(order, r)
			} else {
				for k, v := range r.labels { // families can differ in labels (pod mapping)
					if _, ok := prev.labels[k]; !ok {
						prev.labels[k] = v
					}
				}
			}
			v := s.Value
			if math.IsNaN(v) || math.IsInf(v, 0) || v >= dcgmSentinel || v < 0 {
				continue
			}
			set(byKey[key], v)
		}
	}
	read(DRAMActive, func(r *reading, v float64) { r.dram = math.Min(v, 1) })
	read(MemCopyUtil, func(r *reading, v float64) { r.busy = math.Min(v/100, 1) })
	read(FBUsed, func(r *reading, v float64) { r.fbUsed = v })
	read(FBFree, func(r *reading, v float64) { r.fbFree = v })
	read(FBReserved, func(r *reading, v float64) { r.fbReserved = v })
	read(FBTotal, func(r *reading, v float64) { r.fbTotal = v })
	read(GPUUtil, func(r *reading, v float64) { r.util = math.Min(v/100, 1) })
	read(Power, func(r *reading, v float64) { r.power = v })
	read(PowerLimit, func(r *reading, v float64) { r.powerLimit = v })
	read(Energy, func(r *reading, v float64) { r.energy = v })
	read(GPUTemp, func(r *reading, v float64) { r.temp = v })
	sort.Slice(order, func(i, j int) bool { return order[i].key < order[j].key })
	return order, warnings
}

// gpuKey identifies the GPU (or MIG instance) of a series and builds its
// reading; label values are sanitised here, where they enter.
func gpuKey(s *expo.Series) (string, *reading) {
	r := newReading()
	for _, l := range s.Labels {
		r.labels[strings.ToLower(l.Name)] = sanitize.Text(l.Value)
	}
	r.host = r.label("hostname")
	r.index = r.label("gpu")
	r.uuid = r.label("uuid")
	r.model = r.label("modelname")
	id := r.uuid
	if id == "" {
		id = r.index
	}
	if id == "" {
		return "", nil
	}
	key := r.host + "/" + id
	if mig := r.label("GPU_I_ID"); mig != "" {
		key += "/mig" + mig
		r.mig = mig
	}
	r.key = key
	return key, r
}

func recognised(page *expo.Page) []string {
	var out []string
	for _, n := range dcgmFields() {
		if page.Families[n] != nil {
			out = append(out, n)
		}
	}
	return out
}

func describe(readings []*reading, groups []*group) string {
	var dram, busy, counter int
	for _, r := range readings {
		if !math.IsNaN(r.energy) {
			counter++
		}
		switch {
		case !math.IsNaN(r.dram):
			dram++
		case !math.IsNaN(r.busy):
			busy++
		}
	}
	desc := fmt.Sprintf("%d GPU(s) %v → %d endpoint(s)", len(readings), models(readings), len(groups))
	switch {
	case busy > 0 && dram == 0:
		desc += "; no DRAM_ACTIVE: showing MEM_COPY_UTIL memory busy time (approximate, not bandwidth)"
	case busy > 0:
		desc += fmt.Sprintf("; %d GPU(s) without DRAM_ACTIVE", busy)
	}
	switch {
	case counter == len(readings) && counter > 0:
		desc += "; power from the energy counter"
	case counter > 0:
		desc += fmt.Sprintf("; power from the energy counter on %d of %d GPU(s), sampled draw elsewhere", counter, len(readings))
	}
	return desc
}
