package gpu

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ttftop/ttftop/sanitize"
	"github.com/ttftop/ttftop/telemetry"
)

// SMI runs nvidia-smi in loop mode (-lms) and reports local GPUs. A
// missing binary is reported once as "nvidia-smi not found" and retried
// quietly.
type SMI struct {
	cfg    SMIConfig
	sink   telemetry.Sink
	source string

	mu       sync.Mutex
	failures int
	lastOK   time.Time
	lastErr  string
}

// NewSMI returns an nvidia-smi source reporting to sink.
func NewSMI(cfg SMIConfig, sink telemetry.Sink) *SMI {
	cfg = cfg.WithDefaults()
	if cfg.Host == "" {
		if h, err := os.Hostname(); err == nil {
			cfg.Host = sanitize.Text(h)
		} else {
			cfg.Host = "local"
		}
	}
	return &SMI{cfg: cfg, sink: sink, source: telemetry.SourceSMI.At(cfg.Host)}
}

// Run keeps nvidia-smi running until ctx is done and returns ctx.Err().
// When the binary is missing or exits, it waits SMIRetry and tries again,
// emitting a status only when the error changes.
func (s *SMI) Run(ctx context.Context) error {
	for {
		err := s.runOnce(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.report(err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(SMIRetry):
		}
	}
}

// runOnce runs one nvidia-smi process until it exits or ctx is done.
func (s *SMI) runOnce(ctx context.Context) error {
	if s.cfg.Exec != nil {
		return s.runElsewhere(ctx)
	}
	path, err := exec.LookPath(s.cfg.Binary)
	if err != nil {
		return errNotFound
	}
	cmd := exec.CommandContext(ctx, path, s.args()...)
	var stderr bytes.Buffer
	cmd.Stderr = &cappedWriter{buf: &stderr, max: 4096}
	cmd.WaitDelay = time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting nvidia-smi: %w", err)
	}
	s.read(out)
	err = cmd.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	msg := strings.TrimSpace(stderr.String())
	if msg == "" && err != nil {
		msg = err.Error()
	}
	if msg == "" {
		msg = "exited"
	}
	return fmt.Errorf("nvidia-smi: %s", sanitize.Text(msg))
}

// args are nvidia-smi's arguments: the query, every Interval.
func (s *SMI) args() []string {
	ms := max(s.cfg.Interval.Milliseconds(), 100)
	return []string{"--query-gpu=" + smiQuery, "--format=csv,noheader,nounits", "-lms", strconv.FormatInt(ms, 10)}
}

// runElsewhere runs one nvidia-smi through cfg.Exec (another host's)
// until it exits or ctx is done.
func (s *SMI) runElsewhere(ctx context.Context) error {
	out, wait, err := s.cfg.Exec(ctx, append([]string{s.cfg.Binary}, s.args()...))
	if err != nil {
		return err
	}
	s.read(out)
	err = wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err == nil {
		return errors.New("nvidia-smi: exited")
	}
	return fmt.Errorf("nvidia-smi: %s", sanitize.Text(err.Error()))
}

var errNotFound = errors.New("nvidia-smi not found")

// read consumes nvidia-smi's output, one batch of lines per refresh: a
// batch ends when an index repeats (or, once the GPU count is known, when
// it is complete).
func (s *SMI) read(out interface{ Read([]byte) (int, error) }) {
	sc := bufio.NewScanner(out)
	var batch []*reading
	seen := map[string]bool{}
	n := 0
	var warns []string
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		r, err := parseSMILine(line, s.cfg.Host)
		if err != nil {
			warns = append(warns, err.Error())
			continue
		}
		if seen[r.index] {
			n = len(batch)
			s.emit(batch, warns)
			batch, warns, seen = batch[:0], nil, map[string]bool{}
		}
		seen[r.index] = true
		batch = append(batch, r)
		if n > 0 && len(batch) == n {
			s.emit(batch, warns)
			batch, warns, seen = batch[:0], nil, map[string]bool{}
		}
	}
	if len(batch) > 0 {
		s.emit(batch, warns)
	}
}

func (s *SMI) emit(batch []*reading, warns []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at := s.cfg.Now()
	targets := s.cfg.Targets
	if s.cfg.MoreTargets != nil {
		targets = append(slices.Clip(targets), s.cfg.MoreTargets()...)
	}
	groups, unmapped := assign(batch, targets, s.cfg.EmitUnmapped)
	base := telemetry.Observation{At: at, Source: s.source, Interval: s.cfg.Interval}
	for _, o := range observations(batch, groups, base) {
		s.sink.Observe(o)
	}
	s.failures, s.lastOK, s.lastErr = 0, at, ""
	st := s.status()
	st.State = telemetry.Live
	st.Warnings = warns
	if len(unmapped) > 0 && !s.cfg.EmitUnmapped {
		st.Warnings = append(st.Warnings, unmappedWarning(unmapped, targets))
	}
	st.Description = fmt.Sprintf("%d GPU(s) %v; memory busy time (utilization.memory), not bandwidth; power is sampled power.draw", len(batch), models(batch))
	s.sink.Observe(telemetry.Observation{Kind: telemetry.KindSource, At: at, Source: s.source, Interval: s.cfg.Interval, Status: &st})
}

// report emits an error status, only when the error text changes.
func (s *SMI) report(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures++
	msg := err.Error()
	if msg == s.lastErr {
		return
	}
	s.lastErr = msg
	at := s.cfg.Now()
	if !errors.Is(err, errNotFound) {
		for _, t := range s.cfg.Targets {
			s.sink.Observe(telemetry.Observation{Kind: telemetry.KindFailure, At: at, Endpoint: t.Endpoint,
				Source: s.source, Interval: s.cfg.Interval, Err: msg})
		}
	}
	st := s.status()
	st.State, st.Err = telemetry.Error, msg
	s.sink.Observe(telemetry.Observation{Kind: telemetry.KindSource, At: at, Source: s.source, Interval: s.cfg.Interval, Status: &st})
}

func (s *SMI) status() telemetry.SourceStatus {
	return telemetry.SourceStatus{Name: "nvidia-smi " + s.cfg.Host, Kind: telemetry.SourceSMI, URL: s.cfg.Binary,
		LastOK: s.lastOK, Failures: s.failures}
}

// cappedWriter keeps at most max bytes (nvidia-smi's stderr).
type cappedWriter struct {
	buf *bytes.Buffer
	max int
}

func (w *cappedWriter) Write(p []byte) (int, error) {
	if room := w.max - w.buf.Len(); room > 0 {
		w.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
