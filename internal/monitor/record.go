package monitor

import (
	"errors"
	"time"

	"github.com/ttftop/ttftop/record"
	"github.com/ttftop/ttftop/slo"
)

// AddRecorder writes every observation and alert transition to path as
// JSON lines (gzip when it ends in .gz), flushed every second, until Run
// returns. It refuses to overwrite an existing recording. The recording
// starts with the settings that decide what is shown (the objectives as
// the engine judges them, its options, the store's configuration), so a
// replay judges as live did; call it before Run.
func (m *Monitor) AddRecorder(path string) error {
	w, err := record.NewWriter(path)
	if err != nil {
		return err
	}
	store := m.Store.Config()
	settings := record.Settings{
		SLO:   &record.SLOSettings{Objectives: m.SLO.Objectives(), Options: m.opts.SLO, EvalEvery: m.opts.EvalEvery},
		Store: &store,
	}
	if settings.SLO.Objectives == nil {
		settings.SLO.Objectives = []slo.Objective{} // none, not unknown
	}
	if err := w.WriteSettings(settings); err != nil {
		return errors.Join(err, w.Close())
	}
	m.AddSink(w)
	m.OnTransitions(func(trs []slo.Transition) {
		for _, tr := range trs {
			// A failed write is reported by Close, when Run returns.
			_ = w.WriteTransition(tr)
		}
	})
	m.mu.Lock()
	m.closers = append(m.closers, w.Close)
	m.recordings = append(m.recordings, path)
	m.mu.Unlock()
	return nil
}

// Recording names the file the monitor records to ("" = none), for the
// views' REC badge.
func (m *Monitor) Recording() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.recordings) == 0 {
		return ""
	}
	return m.recordings[0]
}

// RecordView adds the view's window and refresh to the recordings'
// settings, so a replay shows the same window. Call it before Run (a
// recording takes settings only before its first observation); without a
// recorder it does nothing.
func (m *Monitor) RecordView(window, refresh time.Duration) error {
	m.mu.Lock()
	sinks := m.sinks
	m.mu.Unlock()
	var errs []error
	for _, s := range sinks {
		// The recorders are the sinks that are record.Writers.
		if w, ok := s.(*record.Writer); ok {
			errs = append(errs, w.WriteSettings(record.Settings{View: &record.ViewSettings{Window: window, Refresh: refresh}}))
		}
	}
	return errors.Join(errs...)
}
