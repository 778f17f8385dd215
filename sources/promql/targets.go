package promql

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/ttftop/ttftop/sanitize"
	"github.com/ttftop/ttftop/sources/httpclient"
	"github.com/ttftop/ttftop/telemetry"
)

// Target health (docs/failures.md): each refresh asks the store for `up`
// by the replica labels, joined to the replicas by the labels their series
// are joined by. A replica whose target is up reads up; one at 0 is DOWN
// since ttftop first read it so, with the store's own reason where it
// has a targets API (Prometheus, VictoriaMetrics' scraper); one whose up
// series the store no longer has (removed from discovery, or its series
// gone) is GONE, and stays listed for the viewed window, then leaves.

// upSignal tags the answer of the up query; it is not a signal of any
// endpoint.
const upSignal telemetry.Signal = "ttftop_target_up"

// targetHealth is what the source knows of a replica's target.
type targetHealth struct {
	known bool // an up series joined it at least once
	up    bool
	gone  bool
	// since is when it went down or gone (local); reason says why.
	since  time.Time
	reason string
}

// targetsRetry is how soon the targets API is asked again for the reason
// of targets still down, or after it failed.
const targetsRetry = 30 * time.Second

// targetsBook is the source's memory of the store's targets API.
type targetsBook struct {
	askedAt time.Time
	errs    map[string]string // replica key → the store's last scrape error
	failed  string            // why the last ask gave no answer ("" when it did)
}

// upQuery is the up query: one series per replica identity, and its
// process start (processstart.go).
func (g generator) upQuery() string {
	by := strings.Join(append(append([]string{}, g.replicas...), g.groupBy...), ", ")
	return "min by (" + by + ") (up) or " + startExpr(by)
}

// replicaKeyOf is the replica identity of a series of up or of a target's
// labels: the replica labels' values as seriesID keys them ("" without
// any).
func (p parser) replicaKeyOf(get func(string) string) string {
	var key []string
	set := false
	for _, l := range p.replicas {
		v := sanitize.Text(get(l))
		key = append(key, v)
		set = set || v != ""
	}
	if !set {
		return ""
	}
	return strings.Join(key, "\x00") // as seriesID.replicaKey
}

// targets reads the up answer and judges every replica's target: up,
// DOWN or GONE; GONE ones leave once gone for the viewed window (at least
// MaxLag). Without an up answer (failed, or nothing), a replica the store
// has given no sample for MaxLag is GONE too. It runs once the freshness
// answer is read, before any value is mapped.
func (rd *round) targets(ctx context.Context, a *answer) {
	ups, starts, answered := rd.upAnswer(a)
	rd.noteStarts(starts)
	var newlyDown bool
	for _, e := range rd.reg.all() {
		if e.aggregate == nil {
			continue
		}
		h := &e.health
		v, ok := ups[e.target]
		switch {
		case answered && ok && v >= 0.5:
			*h = targetHealth{known: true, up: true}
		case answered && ok:
			if !h.known || h.up || h.gone {
				*h = targetHealth{known: true, since: rd.began}
				newlyDown = true
			}
		case answered && h.known && !h.gone:
			*h = targetHealth{known: true, gone: true, since: rd.began,
				reason: "the store no longer has the target (removed from service discovery or the scrape config)"}
		case !h.known && !h.gone && rd.silentFor(e) > rd.s.cfg.MaxLag:
			*h = targetHealth{gone: true, since: rd.began,
				reason: fmt.Sprintf("no sample for %s, and the store has no up series of the target", promDuration(rd.s.cfg.MaxLag))}
		}
	}
	rd.downReasons(ctx, newlyDown)
	rd.retireGone()
}

// silentFor is how long e has had no sample (since found, if never).
func (rd *round) silentFor(e *endpointState) time.Duration {
	last := e.dataAt
	if last.IsZero() {
		last = e.foundAt
	}
	if last.IsZero() {
		return 0
	}
	return rd.began.Sub(last)
}

// upAnswer maps the up answer by replica key, and the process starts
// apart; answered is false when the query failed or was not run.
func (rd *round) upAnswer(a *answer) (ups, starts map[string]float64, answered bool) {
	if a == nil {
		return nil, nil, false
	}
	// Target health adds to the figures: a store that cannot answer it
	// is warned about, not failing.
	if a.err != nil {
		rd.warn("target health: the up query failed: " + describeError(a.err, rd.s.cfg.HTTP.Timeout, rd.s.creds.secrets()))
		return nil, nil, false
	}
	vec, ok := a.value.(model.Vector)
	if !ok {
		rd.warn("target health: the up query returned a " + valueType(a.value) + ", want an instant vector")
		return nil, nil, false
	}
	ups, starts = make(map[string]float64, len(vec)), map[string]float64{}
	for _, smp := range vec {
		v := float64(smp.Value)
		if math.IsNaN(v) {
			continue
		}
		key := rd.reg.parser.replicaKeyOf(func(l string) string { return string(smp.Metric[model.LabelName(l)]) })
		if key == "" {
			continue
		}
		if smp.Metric[partTag] == startPart {
			starts[key] = max(starts[key], v)
			continue
		}
		if old, seen := ups[key]; !seen || v < old {
			ups[key] = v
		}
	}
	return ups, starts, true
}

// downReasons fills the reason of every DOWN replica: the store's own
// last scrape error, from its targets API, asked when a target went down
// and every targetsRetry while some stay down; else what up says.
func (rd *round) downReasons(ctx context.Context, newlyDown bool) {
	book := &rd.s.state.targets
	var down []*endpointState
	for _, e := range rd.reg.all() {
		if e.aggregate != nil && e.health.known && !e.health.up && !e.health.gone {
			down = append(down, e)
		}
	}
	if len(down) == 0 {
		return
	}
	if newlyDown || rd.began.Sub(book.askedAt) >= targetsRetry {
		book.askedAt = rd.began
		errs, err := rd.s.fetchTargetErrors(ctx, rd.reg.parser)
		book.errs, book.failed = errs, ""
		if err != nil {
			book.failed = err.Error()
		}
	}
	if book.failed != "" {
		rd.warn("target health: the store's targets API gave no reasons (" + book.failed + "): down targets read from up alone")
	}
	for _, e := range down {
		reason := "up = 0: the store's scrapes of the target fail"
		if msg := book.errs[e.target]; msg != "" {
			reason = "scrape failed: " + msg
		}
		e.health.reason = reason
	}
}

// targetsAnswer is the part of /api/v1/targets read here.
type targetsAnswer struct {
	Status string `json:"status"`
	Data   struct {
		ActiveTargets []struct {
			Labels    map[string]string `json:"labels"`
			Health    string            `json:"health"`
			LastError string            `json:"lastError"`
		} `json:"activeTargets"`
	} `json:"data"`
}

// maxTargetsBody bounds the targets API's answer (a large fleet's is a
// few MB).
const maxTargetsBody = 32 << 20

// fetchTargetErrors asks the store's targets API for the last scrape
// error of each target that is down, by replica key. Thanos and Mimir
// have none: an error, and reasons come from up alone.
func (s *Source) fetchTargetErrors(ctx context.Context, p parser) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.HTTP.Timeout)
	defer cancel()
	u := *s.base
	u.Path = path.Join(u.Path, "/api/v1/targets")
	u.RawQuery = url.Values{"state": {"active"}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s", describeError(err, s.cfg.HTTP.Timeout, s.creds.secrets()))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTargetsBody))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	var ta targetsAnswer
	if err := json.Unmarshal(body, &ta); err != nil || ta.Status != "success" {
		return nil, fmt.Errorf("not a targets API answer")
	}
	out := map[string]string{}
	for _, t := range ta.Data.ActiveTargets {
		if t.Health == "up" || t.LastError == "" {
			continue
		}
		key := p.replicaKeyOf(func(l string) string { return t.Labels[l] })
		if key != "" {
			out[key] = sanitize.Capped(httpclient.Scrub(t.LastError, s.creds.secrets()), maxErrLen)
		}
	}
	return out, nil
}

// emitTargets says every replica's target health: TargetUp 1 or 0 (none
// while GONE: the store no longer says), its LabelTarget, and each model
// row's share of replicas up with LabelReplicasDown.
func (rd *round) emitTargets() {
	for _, e := range rd.reg.all() {
		switch {
		case e.aggregate != nil:
			rd.emitReplicaTarget(e)
		case len(e.members) > 0:
			rd.emitModelTargets(e)
		}
	}
}

func (rd *round) emitReplicaTarget(e *endpointState) {
	h := e.health
	label := ""
	switch {
	case h.gone:
		label = telemetry.FormatTarget(telemetry.TargetHealth{State: telemetry.TargetGone, Since: h.since, Reason: h.reason})
		rd.add(telemetry.Observation{Kind: telemetry.KindNoData, At: rd.began, Endpoint: e.info.Name, Signal: telemetry.TargetUp,
			Interval: rd.s.cfg.Refresh})
	case h.known && h.up:
		rd.add(telemetry.Observation{Kind: telemetry.KindSample, At: rd.began, Endpoint: e.info.Name, Signal: telemetry.TargetUp,
			Value: 1, Interval: rd.s.cfg.Refresh})
	case h.known:
		label = telemetry.FormatTarget(telemetry.TargetHealth{State: telemetry.TargetDown, Since: h.since, Reason: h.reason})
		rd.add(telemetry.Observation{Kind: telemetry.KindSample, At: rd.began, Endpoint: e.info.Name, Signal: telemetry.TargetUp,
			Value: 0, Interval: rd.s.cfg.Refresh})
	}
	rd.reg.setLabel(e, telemetry.LabelTarget, label)
}

func (rd *round) emitModelTargets(agg *endpointState) {
	var up, judged, down int
	for _, m := range agg.members {
		switch h := m.health; {
		case h.gone:
			down++
		case h.known && h.up:
			up++
			judged++
		case h.known:
			down++
			judged++
		}
	}
	label := ""
	if down > 0 {
		label = fmt.Sprintf("%d of %d replicas down", down, len(agg.members))
	}
	rd.reg.setLabel(agg, telemetry.LabelReplicasDown, label)
	if judged > 0 {
		rd.add(telemetry.Observation{Kind: telemetry.KindSample, At: rd.began, Endpoint: agg.info.Name, Signal: telemetry.TargetUp,
			Value: float64(up) / float64(judged), Interval: rd.s.cfg.Refresh})
	}
}
