package promql

import (
	"context"
	"errors"
	"sync"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/ttftop/ttftop/sanitize"
	"github.com/ttftop/ttftop/telemetry"
)

type jobKind uint8

const (
	instantJob jobKind = iota // gauge signals and the freshness query
	rangeJob                  // histogram windows, step R
	namesJob                  // metric names present (label values of __name__)
)

// job is one API request of a refresh.
type job struct {
	kind   jobKind
	signal telemetry.Signal // "" for the freshness and names queries
	query  string           // expanded PromQL, or the match[] selector of namesJob
	rng    v1.Range         // rangeJob: windows; namesJob: Start and End only
}

// answer is a job's outcome. Warnings and infos are sanitised here, where
// they enter.
type answer struct {
	job
	value    model.Value
	names    model.LabelValues
	warnings []string
	infos    []string
	err      error
	// sent and received bound, on the local clock, when the server
	// evaluated the query: they date its evaluation timestamp.
	sent, received time.Time
}

// runJobs runs jobs with at most Config.Concurrency in flight and returns
// their answers in job order. Every goroutine ends before it returns.
func (s *Source) runJobs(ctx context.Context, jobs []job) []answer {
	out := make([]answer, len(jobs))
	sem := make(chan struct{}, s.cfg.Concurrency)
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = s.do(ctx, j)
		})
	}
	wg.Wait()
	return out
}

// do runs one job under the query timeout. The server-side timeout is a
// little shorter so that the server's own timeout error arrives first.
func (s *Source) do(ctx context.Context, j job) answer {
	qctx, cancel := context.WithTimeout(ctx, s.cfg.HTTP.Timeout)
	defer cancel()
	opt := v1.WithTimeout(s.cfg.HTTP.Timeout * 9 / 10)
	a := answer{job: j}
	t0 := s.now()
	var w v1.Warnings
	var inf v1.Infos
	switch j.kind {
	case instantJob:
		a.value, w, inf, a.err = s.api.Query(qctx, j.query, time.Time{}, opt)
	case rangeJob:
		a.value, w, inf, a.err = s.api.QueryRange(qctx, j.query, j.rng, opt)
	case namesJob:
		a.names, w, inf, a.err = s.api.LabelValues(qctx, model.MetricNameLabel, []string{j.query}, j.rng.Start, j.rng.End)
	}
	a.sent, a.received = t0, s.now()
	if !errors.Is(a.err, context.DeadlineExceeded) && !errors.Is(a.err, context.Canceled) {
		s.answered(a.received) // the store answered, if only with an error
	}
	for _, x := range w {
		a.warnings = append(a.warnings, sanitize.Text(x))
	}
	for _, x := range inf {
		a.infos = append(a.infos, sanitize.Text(x))
	}
	return a
}

// evalTime returns the server's evaluation time of an instant answer.
func evalTime(v model.Value) (time.Time, bool) {
	switch x := v.(type) {
	case model.Vector:
		if len(x) > 0 {
			return x[0].Timestamp.Time(), true
		}
	case *model.Scalar:
		return x.Timestamp.Time(), true
	}
	return time.Time{}, false
}

// mergeAnswers combines the answers of one signal's split queries (same
// kind and signal) into one, in the place of the first: their series
// concatenated, warnings and infos joined, the first error kept. The
// freshness and name answers stay apart.
func mergeAnswers(ans []answer) []answer {
	type key struct {
		kind   jobKind
		signal telemetry.Signal
	}
	at := map[key]int{}
	out := ans[:0:0]
	for _, a := range ans {
		k := key{a.kind, a.signal}
		i, ok := at[k]
		if a.signal == "" || !ok {
			if a.signal != "" {
				at[k] = len(out)
			}
			out = append(out, a)
			continue
		}
		m := &out[i]
		m.warnings = append(m.warnings, a.warnings...)
		m.infos = append(m.infos, a.infos...)
		if m.err == nil {
			m.err = a.err
		}
		if a.sent.Before(m.sent) {
			m.sent = a.sent
		}
		if a.received.After(m.received) {
			m.received = a.received
		}
		switch v := m.value.(type) {
		case model.Vector:
			if w, ok := a.value.(model.Vector); ok {
				m.value = append(v, w...)
			}
		case model.Matrix:
			if w, ok := a.value.(model.Matrix); ok {
				m.value = append(v, w...)
			}
		case nil:
			m.value = a.value
		}
	}
	return out
}
