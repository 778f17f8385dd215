package monitor

import (
	"github.com/tokentop/tokentop/record"
	"github.com/tokentop/tokentop/slo"
)

// AddRecorder writes every observation and alert transition to path as
// JSON lines (gzip when it ends in .gz), flushed every second, until Run
// returns. It refuses to overwrite an existing recording.
func (m *Monitor) AddRecorder(path string) error {
	w, err := record.NewWriter(path)
	if err != nil {
		return err
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
	m.mu.Unlock()
	return nil
}
