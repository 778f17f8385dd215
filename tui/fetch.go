package tui

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/ttftop/ttftop/diagnosis"
	"github.com/ttftop/ttftop/slo"
	"github.com/ttftop/ttftop/telemetry"
	"github.com/ttftop/ttftop/tui/detail"
	"github.com/ttftop/ttftop/tui/table"
)

type tickMsg struct{ id int }

type liveTickMsg struct{ id int }

// dataMsg is one refresh, read off the update path.
type dataMsg struct {
	seq    uint64
	now    time.Time
	snap   telemetry.Snapshot
	alerts []slo.Alert
	// causes is each unwell endpoint's diagnosis, by name (none when
	// healthy or without a diagnoser).
	causes map[string]diagnosis.Diagnosis
	rows   []table.Row
	detail *detail.Data
	fp     uint64
}

type liveMsg struct {
	id   int
	ep   string
	live telemetry.LiveText
	at   time.Time
}

// fetchReq is what a refresh reads, copied out of the model so the
// command shares nothing mutable with Update.
type fetchReq struct {
	seq      uint64
	now      time.Time
	window   time.Duration
	sparkN   int
	detailEP string
	chartN   int
	server   bool // rows show the engine's own figures
}

// currentAlerts is what an SLO engine offers beyond Alerts: every
// objective on every endpoint, inactive ones included (the detail view
// lists them all).
type currentAlerts interface{ Current() []slo.Alert }

// serverSeries is what a store offers beyond Data for the server view;
// without it the sparklines stay the primary figures'.
type serverSeries interface {
	ServerSeries(endpoint string, sig telemetry.Signal, now time.Time, span time.Duration, n int) []float64
}

func (a *app) startTick() tea.Cmd {
	a.tickID++
	id := a.tickID
	return tea.Tick(a.ctx.Refresh, func(time.Time) tea.Msg { return tickMsg{id} })
}

// fetch issues a refresh unless one is still running (a slow store must
// not pile up goroutines).
func (a *app) fetch() tea.Cmd {
	if a.inflight {
		return nil
	}
	a.inflight = true
	a.seq++
	req := fetchReq{seq: a.seq, now: a.opts.Clock(), window: a.ctx.Window, sparkN: a.table.SeriesPoints(), server: a.serverSide}
	a.sparkN = req.sparkN
	if a.detailShown() {
		req.detailEP, req.chartN = a.detail.Name(), a.detail.ChartPoints()
	}
	data, al, thr, dg := a.data, a.alerts, a.opts.Thresholds, a.opts.Diagnosis
	return func() tea.Msg { return read(data, al, thr, dg, req) }
}

// refetchSeries reads again at once when the rows' charts now want
// another number of points than the last refresh asked for (the first
// data switched the table to charts, or a resize): drawn from the old
// count they would be stretched, a few wide steps, until the next
// refresh, which may be 10 s away.
func (a *app) refetchSeries() tea.Cmd {
	if a.frozen || !a.haveData || a.table.SeriesPoints() == a.sparkN {
		return nil
	}
	return a.refetch()
}

// read runs in a command goroutine: every store call happens here.
func read(data Data, al Alerts, thr Thresholds, dg Diagnoses, req fetchReq) tea.Msg {
	msg := dataMsg{seq: req.seq, now: req.now}
	msg.snap = data.Snapshot(req.now, req.window)
	if al != nil {
		msg.alerts = al.Alerts()
	}
	msg.causes = namedCauses(dg)
	th := thresholdsFor(thr, msg.alerts)
	end := detail.Align(req.now, req.window, req.sparkN)
	msg.rows = make([]table.Row, len(msg.snap.Endpoints))
	for i, ep := range msg.snap.Endpoints {
		r := table.Row{Endpoint: ep, Badge: slo.BadgeNone, Server: req.server}
		if d, ok := msg.causes[ep.Name]; ok {
			r.Cause, r.MoreCauses = &d.Causes[0], len(d.Causes)-1
		}
		if al != nil {
			r.Badge = al.Badge(ep.Name, req.now)
		}
		series := data.Series
		if ss, ok := data.(serverSeries); ok && req.server && len(ep.Server) > 0 {
			series = ss.ServerSeries
		}
		r.TTFT = series(ep.Name, telemetry.TTFT, end, req.window, req.sparkN)
		r.TPOT = series(ep.Name, telemetry.TPOT, end, req.window, req.sparkN)
		if v, ok := th(ep.Name, telemetry.TTFT); ok {
			r.TTFTThr, r.HasTTFTThr = v*telemetry.TTFT.Info().Scale, true
		}
		if v, ok := th(ep.Name, telemetry.TPOT); ok {
			r.TPOTThr, r.HasTPOTThr = v*telemetry.TPOT.Info().Scale, true
		}
		msg.rows[i] = r
	}
	if req.detailEP != "" {
		d := detail.Fetch(data, detail.ThresholdFunc(th), req.detailEP, req.now, req.window, req.chartN)
		if cur, ok := al.(currentAlerts); ok {
			d.HasObjectives = true
			for _, a := range cur.Current() {
				if a.Endpoint == req.detailEP {
					d.Objectives = append(d.Objectives, a)
				}
			}
		}
		if dd, ok := msg.causes[req.detailEP]; ok {
			d.Diagnosis = &dd
		}
		d.PD = pdModelOf(msg.snap, req.detailEP)
		d.Adapters = telemetry.AdaptersOf(msg.snap, req.detailEP)
		msg.detail = &d
	}
	msg.fp = fingerprint(&msg)
	return msg
}

// namedCauses is the latest diagnosis of every endpoint that names a
// cause (healthy ones are left out: nothing to show).
func namedCauses(dg Diagnoses) map[string]diagnosis.Diagnosis {
	if dg == nil {
		return nil
	}
	out := map[string]diagnosis.Diagnosis{}
	for name, d := range dg.Latest() {
		if d.Named() {
			d.At = time.Time{} // moves every evaluation while nothing shown does
			out[name] = d
		}
	}
	return out
}

// thresholdsFor returns the configured thresholds, or the strictest
// objective threshold per endpoint and signal found in the alerts.
func thresholdsFor(thr Thresholds, al []slo.Alert) func(string, telemetry.Signal) (float64, bool) {
	if thr != nil {
		return thr.Threshold
	}
	type key struct {
		ep  string
		sig telemetry.Signal
	}
	m := map[key]float64{}
	for _, a := range al {
		if a.Threshold <= 0 || math.IsNaN(a.Threshold) {
			continue
		}
		k := key{a.Endpoint, a.Signal}
		if v, ok := m[k]; !ok || a.Threshold < v {
			m[k] = a.Threshold
		}
	}
	return func(ep string, sig telemetry.Signal) (float64, bool) {
		v, ok := m[key{ep, sig}]
		return v, ok
	}
}

// liveTick schedules the next read of the live token pane. A data
// refresh carries the live text too, so the reads fill the time between
// refreshes, phase-locked to them (liveRestart after each): at the
// default 1 s refresh, 4 reads at 200 ms steps and the refresh make 5
// repaints a second while a response streams, where free-running 100 ms
// reads plus the refresh made up to 11. Each repaint costs the renderer a
// diff of the whole screen (~2 ms at 160×50): that, not drawing the pane,
// is what the live pane costs.
func (a *app) liveTick() tea.Cmd {
	a.liveID++
	a.liveOn = true
	id := a.liveID
	iv, _ := a.liveInterval()
	return tea.Tick(iv, func(time.Time) tea.Msg { return liveTickMsg{id} })
}

// liveRestart starts the live reads again from a refresh just applied.
func (a *app) liveRestart() tea.Cmd {
	_, n := a.liveInterval()
	a.liveLeft = n - 1
	return a.liveTick()
}

// liveInterval divides the refresh interval into n steps of at least
// 200 ms (5 Hz; at most the FPS), the last of which is the refresh.
func (a *app) liveInterval() (time.Duration, int) {
	minIv := max(200*time.Millisecond, time.Second/time.Duration(a.opts.FPS))
	n := max(int(a.ctx.Refresh/minIv), 1)
	return a.ctx.Refresh / time.Duration(n), n
}

// onLiveTick reads the live text, except in the refresh's own slot; if
// that refresh is late (slow store), reads go on at the same pace.
func (a *app) onLiveTick(msg liveTickMsg) tea.Cmd {
	if msg.id != a.liveID || !a.liveOn {
		return nil
	}
	a.liveLeft--
	if a.liveLeft == -1 {
		return a.liveTick()
	}
	return a.readLive(msg.id)
}

func (a *app) readLive(id int) tea.Cmd {
	data, ep := a.data, a.detail.Name()
	return func() tea.Msg {
		l, at := data.Live(ep)
		return liveMsg{id: id, ep: ep, live: l, at: at}
	}
}

// fingerprint hashes what the frame shows from a refresh, so an unchanged
// refresh costs no re-render. It hashes the JSON of the rows (endpoint
// snapshot included), sources, alerts and detail data, so a field added to
// any of them is covered without a list to keep up to date; NaN (a gap in
// a series) is written as a sentinel, since JSON has no NaN. Times that
// move on every refresh without changing what is drawn (a snapshot's and
// an evaluation's instant) are left out. A value that cannot be encoded
// makes every fingerprint distinct: a render too many, never one missed.
func fingerprint(m *dataMsg) uint64 {
	h := fnv.New64a()
	enc := json.NewEncoder(h)
	put := func(v any) {
		if err := enc.Encode(v); err != nil {
			fmt.Fprintf(h, "unencodable %d", m.seq)
		}
	}
	for _, r := range m.rows {
		r.TTFT, r.TPOT = denan(r.TTFT), denan(r.TPOT)
		put(r)
	}
	put(m.snap.Sources)
	put(m.snap.GPUs) // the GPU panel
	put(quietAlerts(m.alerts))
	put(m.causes)
	if d := m.detail; d != nil {
		dd := *d
		dd.At = time.Time{}
		dd.TTFT, dd.TPOT, dd.DRAM, dd.MBU, dd.FB = denan(d.TTFT), denan(d.TPOT), denan(d.DRAM), denan(d.MBU), denan(d.FB)
		dd.Power = denan(d.Power)
		dd.Objectives = quietAlerts(d.Objectives)
		put(dd)
	}
	return h.Sum64()
}

// nanSentinel stands for NaN in hashed series.
const nanSentinel = -math.MaxFloat64

func denan(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x
		if math.IsNaN(x) || math.IsInf(x, 0) {
			out[i] = nanSentinel
		}
	}
	return out
}

// quietAlerts are the alerts without their evaluation instant, which
// changes every second while nothing shown does.
func quietAlerts(as []slo.Alert) []slo.Alert {
	out := make([]slo.Alert, len(as))
	for i, a := range as {
		a.EvaluatedAt = time.Time{}
		out[i] = a
	}
	return out
}
